package app

import (
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// TurnLines is what one turn itself changed in the workspace: the files
// and lines that differ between the state it started from and the state
// it ended in.
type TurnLines struct {
	Files, Added, Deleted int
}

// PatchDelta counts what changed from the workspace that patch prev
// describes to the one patch cur describes, both against the same tree
// (a session's patches are against its start): so a turn's own changes
// are its patch's delta from the patch of the turn it continued from.
// Each file's two versions are rebuilt from the patches' hunks over the
// lines of the tree the hunks show (a line neither shows is the same in
// both) and compared line by line. A binary file counts as a changed
// file with no lines. A patch that does not parse counts as empty.
func PatchDelta(prev, cur string) TurnLines {
	a, b := patchByPath(prev), patchByPath(cur)
	var n TurnLines
	seen := map[string]bool{}
	for _, p := range append(keysOf(a), keysOf(b)...) {
		if seen[p] {
			continue
		}
		seen[p] = true
		fa, fb := a[p], b[p]
		switch {
		case fa == nil: // the tree's version, then fb's
			add, del := fileLines(fb)
			n.Files, n.Added, n.Deleted = n.Files+1, n.Added+add, n.Deleted+del
		case fb == nil: // fa's version, then the tree's again
			add, del := fileLines(fa)
			n.Files, n.Added, n.Deleted = n.Files+1, n.Added+del, n.Deleted+add
		case fa.IsBinary || fb.IsBinary:
			if fa.String() != fb.String() {
				n.Files++
			}
		default:
			add, del := imagesDelta(fa, fb)
			if add > 0 || del > 0 || fa.IsDelete != fb.IsDelete || fa.IsNew != fb.IsNew || fa.NewMode != fb.NewMode {
				n.Files++
			}
			n.Added, n.Deleted = n.Added+add, n.Deleted+del
		}
	}
	return n
}

// patchByPath parses patch into its files by path (none when it does not
// parse).
func patchByPath(patch string) map[string]*gitdiff.File {
	out := map[string]*gitdiff.File{}
	if strings.TrimSpace(patch) == "" {
		return out
	}
	files, _, err := gitdiff.Parse(strings.NewReader(patch))
	if err != nil {
		return out
	}
	for _, f := range files {
		p := f.NewName
		if f.IsDelete || p == "" {
			p = f.OldName
		}
		out[p] = f
	}
	return out
}

// keysOf lists m's keys in no particular order.
func keysOf(m map[string]*gitdiff.File) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// fileLines sums the lines f adds and deletes.
func fileLines(f *gitdiff.File) (add, del int) {
	for _, fr := range f.TextFragments {
		add, del = add+int(fr.LinesAdded), del+int(fr.LinesDeleted)
	}
	return add, del
}

// imagesDelta counts the lines that differ between the file as a and as b
// leave it, both patches of the same original.
func imagesDelta(a, b *gitdiff.File) (add, del int) {
	base := knownBase(a, b)
	from, to := image(base, a), image(base, b)
	if from == to {
		return 0, 0
	}
	u, err := udiff.ToUnifiedDiff("a", "b", from, udiff.Lines(from, to), 0)
	if err != nil {
		return 0, 0 // edits from udiff.Lines are consistent: not reached
	}
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				add++
			case udiff.Delete:
				del++
			}
		}
	}
	return add, del
}

// knownBase is the original's lines as far as the hunks of fs reach, one
// per element with its newline: those a hunk shows (context and deleted
// lines), and in between a placeholder that stands for a line no hunk
// shows, the same in every version.
func knownBase(fs ...*gitdiff.File) []string {
	var base []string
	for _, f := range fs {
		for _, fr := range f.TextFragments {
			at := int(fr.OldPosition) - 1
			for _, l := range fr.Lines {
				if l.Op == gitdiff.OpAdd {
					continue
				}
				for len(base) <= at {
					base = append(base, "\x00"+strconv.Itoa(len(base))+"\n")
				}
				base[at] = l.Line
				at++
			}
		}
	}
	return base
}

// image is base as f's hunks leave it, up to base's end (what follows is
// the same in every version).
func image(base []string, f *gitdiff.File) string {
	if f.IsDelete {
		return ""
	}
	var b strings.Builder
	next := 0 // the first line of base not yet copied or replaced
	for _, fr := range f.TextFragments {
		start := int(fr.OldPosition) - 1
		if fr.OldLines == 0 { // an insertion after line OldPosition
			start = int(fr.OldPosition)
		}
		for ; next < start && next < len(base); next++ {
			b.WriteString(base[next])
		}
		for _, l := range fr.Lines {
			if l.Op != gitdiff.OpDelete {
				b.WriteString(l.Line)
			}
		}
		next = start + int(fr.OldLines)
	}
	for ; next < len(base); next++ {
		b.WriteString(base[next])
	}
	return b.String()
}
