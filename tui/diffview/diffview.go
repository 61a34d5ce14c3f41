// Package diffview computes and colours unified diffs for the terminal: the
// change an fs.write made (from the file's previous contents, when the
// session saw them), git.diff output, and the whole workspace patch of
// /diff and /apply.
package diffview

import (
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/patchtext"
	"github.com/harness-dev/harness/tui/theme"
)

// Unified returns the unified diff from old to new contents of path, or ""
// when they are equal. A new file (created true) is diffed against
// /dev/null.
func Unified(path, old, new string, created bool) string {
	from := "a/" + path
	if created {
		from = "/dev/null"
	}
	return udiff.Unified(from, "b/"+path, old, new)
}

// Stat is the size of a patch (patchtext.Stat).
type Stat = patchtext.Stat

// StatOf counts the files and the added and deleted lines of a patch
// (patchtext.StatOf).
func StatOf(patch string) Stat { return patchtext.StatOf(patch) }

// Lines colours each line of a patch and cuts it to width cells.
func Lines(patch string, width int, th *theme.Theme) []string {
	patch = strings.TrimSuffix(patch, "\n")
	if patch == "" {
		return nil
	}
	raw := strings.Split(patch, "\n")
	out := make([]string, len(raw))
	for i, l := range raw {
		out[i] = Line(l, width, th)
	}
	return out
}

// Line colours one patch line and cuts it to width cells.
func Line(l string, width int, th *theme.Theme) string {
	l = strings.ReplaceAll(strings.TrimRight(l, "\r"), "\t", "    ")
	if width > 0 && ansi.StringWidth(l) > width {
		l = ansi.Truncate(l, width, "…")
	}
	switch {
	case strings.HasPrefix(l, "diff --git"), strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		return th.DiffFile.Render(l)
	case strings.HasPrefix(l, "@@"):
		return th.DiffHunk.Render(l)
	case strings.HasPrefix(l, "+"):
		return th.DiffAdd.Render(l)
	case strings.HasPrefix(l, "-"):
		return th.DiffDel.Render(l)
	case strings.HasPrefix(l, " "), l == "":
		return th.Text.Render(l)
	default: // index, mode and rename lines, "\ No newline at end of file"
		return th.Muted.Render(l)
	}
}

// Summary is "+a −d" coloured, or "" for an empty stat.
func Summary(s Stat, th *theme.Theme) string {
	if s.Added == 0 && s.Deleted == 0 {
		return ""
	}
	return th.DiffAdd.Render("+"+strconv.Itoa(s.Added)) + " " + th.DiffDel.Render("−"+strconv.Itoa(s.Deleted))
}

// Hunks drops a single-file patch's ---/+++ header (patchtext.Hunks).
func Hunks(patch string) string { return patchtext.Hunks(patch) }

// Excerpt is the head of a patch in at most n lines (patchtext.Excerpt).
func Excerpt(patch string, n int) (lines []string, cut bool) { return patchtext.Excerpt(patch, n) }
