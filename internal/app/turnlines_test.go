package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aymanbagabas/go-udiff"
)

// gitPatch is one file's part of a workspace patch, from old to nw
// (existed false: a new file; gone: a deleted one), as dockerws writes it.
func gitPatch(t *testing.T, path, old, nw string, existed, gone bool) string {
	t.Helper()
	from, to, head := "a/"+path, "b/"+path, "diff --git a/"+path+" b/"+path+"\n"
	switch {
	case !existed:
		from, head = "/dev/null", head+"new file mode 100644\n"
	case gone:
		to, head = "/dev/null", head+"deleted file mode 100644\n"
	}
	u, err := udiff.ToUnified(from, to, old, udiff.Lines(old, nw), udiff.DefaultContextLines)
	if err != nil {
		t.Fatal(err)
	}
	return head + u
}

func numbered(n int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := change[i]; ok {
			b.WriteString(s)
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// A turn's own changes are its patch's difference from the patch it
// started from, both against the session's start: a second write to a
// new file counts its own lines, not the file's; a change far from an
// earlier one in the same file counts only itself.
func TestPatchDeltaIsPerTurn(t *testing.T) {
	orig := numbered(40, nil)
	at3 := numbered(40, map[int]string{3: "three\n"})
	at3and30 := numbered(40, map[int]string{3: "three\n", 30: "thirty\n"})
	for _, c := range []struct {
		name      string
		prev, cur string
		want      TurnLines
	}{
		{"first turn", "", gitPatch(t, "a.txt", "", "one\ntwo\n", false, false), TurnLines{1, 2, 0}},
		{"nothing changed", gitPatch(t, "a.txt", "", "one\n", false, false), gitPatch(t, "a.txt", "", "one\n", false, false), TurnLines{}},
		{"new file grows", gitPatch(t, "a.txt", "", "one\n", false, false), gitPatch(t, "a.txt", "", "one\ntwo\n", false, false), TurnLines{1, 1, 0}},
		{"line rewritten", gitPatch(t, "a.txt", "zero\n", "one\n", true, false), gitPatch(t, "a.txt", "zero\n", "two\n", true, false), TurnLines{1, 1, 1}},
		{"far hunk", gitPatch(t, "n.txt", orig, at3, true, false), gitPatch(t, "n.txt", orig, at3and30, true, false), TurnLines{1, 1, 1}},
		{"change undone", gitPatch(t, "n.txt", orig, at3, true, false), "", TurnLines{1, 1, 1}},
		{"file deleted", gitPatch(t, "a.txt", "", "one\ntwo\n", false, false), "", TurnLines{1, 0, 2}},
		{"tree file deleted", gitPatch(t, "n.txt", orig, at3, true, false), gitPatch(t, "n.txt", orig, "", true, true), TurnLines{1, 0, 40}},
		{"other file", gitPatch(t, "a.txt", "", "one\n", false, false),
			gitPatch(t, "a.txt", "", "one\n", false, false) + gitPatch(t, "b.txt", "", "bee\n", false, false), TurnLines{1, 1, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := PatchDelta(c.prev, c.cur); got != c.want {
				t.Errorf("PatchDelta = %+v, want %+v\nprev:\n%s\ncur:\n%s", got, c.want, c.prev, c.cur)
			}
		})
	}
}
