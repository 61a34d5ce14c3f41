// Package patchtext reads unified diffs as text: their size, their hunks
// without a single file's header, and a bounded excerpt that shows both
// sides of a change. It is the part of showing a diff that needs no
// terminal (tui/diffview colours what it returns), so the headless runner
// shows a question's diff exactly as the screen does without linking a
// terminal UI.
package patchtext

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Stat is the size of a patch.
type Stat struct {
	Files   int
	Added   int
	Deleted int
}

// StatOf counts the files and the added and deleted lines of a patch.
func StatOf(patch string) Stat {
	var s Stat
	inHeader := false
	for line := range strings.Lines(patch) {
		switch {
		case strings.HasPrefix(line, "diff --git "):
			s.Files++
			inHeader = true
		case strings.HasPrefix(line, "--- "):
			if !inHeader {
				s.Files++ // a patch without "diff --git" headers
			}
			inHeader = true
		case strings.HasPrefix(line, "+++ "):
		case strings.HasPrefix(line, "@@"):
			inHeader = false
		case strings.HasPrefix(line, "+") && !inHeader:
			s.Added++
		case strings.HasPrefix(line, "-") && !inHeader:
			s.Deleted++
		}
	}
	return s
}

// Hunks drops a single-file patch's ---/+++ header, for a view whose title
// already names the file.
func Hunks(patch string) string {
	if i := strings.Index(patch, "\n@@"); i >= 0 && strings.HasPrefix(patch, "--- ") && strings.Count(patch[:i], "\n") == 1 {
		return patch[i+1:]
	}
	return patch
}

// hunkHeader reads the line counts of a hunk's "@@ -a,b +c,d @@" line.
var hunkHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@`) })

// Excerpt is the head of a patch in at most n lines (n ≥ 4), for a
// collapsed view that must not hide what a change writes. Lines come in
// the patch's order, except that a change (a run of removed and added
// lines) too long for the room left keeps the head of each side: its first
// removed lines, a line saying how many more were removed, its first added
// lines, a line saying how many more were added; so an overwrite shows
// some of the new text, not only the old. A line saying how many lines
// follow ends an excerpt cut short. The lines it adds start with "…",
// which no patch line does; cut reports whether anything was left out.
func Excerpt(patch string, n int) (lines []string, cut bool) {
	patch = strings.TrimSuffix(patch, "\n")
	if patch == "" {
		return nil, false
	}
	raw := strings.Split(patch, "\n")
	if len(raw) <= n {
		return raw, false
	}
	n = max(n, 4)
	type item struct{ line, dels, adds []string }
	var items []item
	oldLeft, newLeft := 0, 0 // lines left in the hunk being read
	for i := 0; i < len(raw); {
		l := raw[i]
		if oldLeft+newLeft == 0 {
			if m := hunkHeader().FindStringSubmatch(l); m != nil {
				oldLeft, newLeft = hunkCount(m[1]), hunkCount(m[2])
			}
			items = append(items, item{line: []string{l}})
			i++
			continue
		}
		if !strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "+") {
			if strings.HasPrefix(l, " ") {
				oldLeft, newLeft = oldLeft-1, newLeft-1
			}
			items = append(items, item{line: []string{l}})
			i++
			continue
		}
		var it item
		side := &it.dels
		for ; i < len(raw) && oldLeft+newLeft > 0; i++ {
			l := raw[i]
			switch {
			case strings.HasPrefix(l, "-"):
				side, oldLeft = &it.dels, oldLeft-1
			case strings.HasPrefix(l, "+"):
				side, newLeft = &it.adds, newLeft-1
			case strings.HasPrefix(l, `\`): // "\ No newline at end of file", of the side before it
			default:
				goto done
			}
			*side = append(*side, l)
		}
	done:
		items = append(items, it)
	}
	more := func(k int, what string) string { return "… " + strconv.Itoa(k) + " more " + what }
	left := len(raw)
	for _, it := range items {
		size := len(it.line) + len(it.dels) + len(it.adds)
		left -= size
		room := n - len(lines)
		reserve := 0
		if left > 0 {
			reserve = 1 // for the line saying how many follow
		}
		if size <= room-reserve {
			lines = append(append(append(lines, it.line...), it.dels...), it.adds...)
			continue
		}
		if it.line != nil {
			return append(lines, more(left+size, "lines")), true
		}
		d, a := fitSides(len(it.dels), len(it.adds), room-reserve)
		lines = append(lines, it.dels[:d]...)
		if d < len(it.dels) {
			lines = append(lines, more(len(it.dels)-d, "removed lines"))
		}
		lines = append(lines, it.adds[:a]...)
		if a < len(it.adds) {
			lines = append(lines, more(len(it.adds)-a, "added lines"))
		}
		if left > 0 {
			lines = append(lines, more(left, "lines"))
		}
		return lines, true
	}
	return lines, false
}

func hunkCount(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s)
	return n
}

// fitSides shares room lines between the dels removed and adds added
// lines of a change, each side cut short taking one line more for saying
// so: turn about, the added side first (it is what gets written).
func fitSides(dels, adds, room int) (d, a int) {
	used := func(d, a int) int {
		u := d + a
		if d < dels {
			u++
		}
		if a < adds {
			u++
		}
		return u
	}
	for {
		switch {
		case a < adds && (a <= d || d == dels) && used(d, a+1) <= room:
			a++
		case d < dels && used(d+1, a) <= room:
			d++
		case a < adds && used(d, a+1) <= room:
			a++
		default:
			return d, a
		}
	}
}
