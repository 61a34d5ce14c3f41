package patchtext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aymanbagabas/go-udiff"
)

// An excerpt never hides what a change writes: an overwrite of 140 lines
// with 3 shows the head of both sides and says how many of each it left
// out; whatever follows is counted on the last line.
func TestExcerpt(t *testing.T) {
	var old strings.Builder
	for i := range 140 {
		fmt.Fprintf(&old, "line %d of a long README\n", i+1)
	}
	overwrite := Hunks(udiff.Unified("a/README.md", "b/README.md", old.String(), "# Short\nthree lines\nnow\n"))
	var added strings.Builder
	for i := range 30 {
		fmt.Fprintf(&added, "new %d\n", i+1)
	}
	for _, c := range []struct {
		name  string
		patch string
		n     int
		want  []string
		cut   bool
	}{
		{"overwrite", overwrite, 12, []string{"@@ -1,140 +1,3 @@",
			"-line 1 of a long README", "-line 2 of a long README", "-line 3 of a long README", "-line 4 of a long README",
			"-line 5 of a long README", "-line 6 of a long README", "-line 7 of a long README",
			"… 133 more removed lines", "+# Short", "+three lines", "+now"}, true},
		{"a new file", Hunks(udiff.Unified("/dev/null", "b/n.txt", "", added.String())), 6, []string{"@@ -0,0 +1,30 @@",
			"+new 1", "+new 2", "+new 3", "+new 4", "… 26 more added lines"}, true},
		{"both sides long, more after", "@@ -1,20 +1,20 @@\n" + strings.Repeat("-a\n", 20) + strings.Repeat("+b\n", 20) + "@@ -40,1 +40,1 @@\n-c\n+d\n", 8,
			[]string{"@@ -1,20 +1,20 @@", "-a", "-a", "… 18 more removed lines", "+b", "+b", "… 18 more added lines", "… 3 more lines"}, true},
		{"context first", "@@ -1,12 +1,12 @@\n" + strings.Repeat(" ctx\n", 12), 5,
			[]string{"@@ -1,12 +1,12 @@", " ctx", " ctx", " ctx", "… 9 more lines"}, true},
		{"a line that looks like a header", "@@ -1,2 +1,1 @@\n--- not a header\n-x\n+y\n", 12,
			[]string{"@@ -1,2 +1,1 @@", "--- not a header", "-x", "+y"}, false},
		{"short", "@@ -1 +1 @@\n-x\n+y\n", 12, []string{"@@ -1 +1 @@", "-x", "+y"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, cut := Excerpt(c.patch, c.n)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") || cut != c.cut {
				t.Errorf("Excerpt (cut %v, want %v):\n%s\nwant:\n%s", cut, c.cut, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			if len(got) > c.n {
				t.Errorf("%d lines, over %d", len(got), c.n)
			}
		})
	}
}
