package tools

import (
	"fmt"
	"strings"
	"testing"
)

// The listing git.diff gives with TOOL_OUTPUT_LIMIT names the changed files
// by their ---/+++ lines, once each, in order: at most 50 names, then how
// many more; a timestamp after a tab is not part of a name; at most 4 KiB
// of names (cut with "…"); a patch with no names says so.
func TestChangedFilesListing(t *testing.T) {
	file := func(name string) string {
		return "diff --git a/" + name + " b/" + name + "\n--- a/" + name + "\n+++ b/" + name + "\n@@ -1 +1 @@\n-a\n+b\n"
	}
	var fifty, fiftyOne strings.Builder
	var want []string
	for i := range 51 {
		name := fmt.Sprintf("f%02d.txt", i)
		if i < 50 {
			fifty.WriteString(file(name))
			want = append(want, name)
		}
		fiftyOne.WriteString(file(name))
	}
	long := strings.Repeat("x", 4096-len(", b.txt")) // joined with b.txt: exactly 4096 bytes
	for _, c := range []struct{ name, patch, want string }{
		{"fifty", fifty.String(), strings.Join(want, ", ")},
		{"fifty-one", fiftyOne.String(), strings.Join(want, ", ") + " and 1 more"},
		{"timestamp", "--- a/a.txt\t2026-01-01 10:00\n+++ b/a.txt\t2026-01-01 10:01\n", "a.txt"},
		{"only a timestamp", "+++ b/\t2026-01-01\n", "(no file names found in the patch)"},
		{"none", "", "(no file names found in the patch)"},
		// A binary patch names its file only on its diff --git line, once
		// for each side; a line naming two different files names neither.
		{"binary", "diff --git a/img.png b/img.png\nindex 0000000..1111111\nGIT binary patch\nliteral 3\nKcmZQz\n\n", "img.png"},
		{"binary pair differs", "diff --git a/x.bin b/y.bin\nGIT binary patch\n", "(no file names found in the patch)"},
		{"exactly 4 KiB", file(long) + file("b.txt"), long + ", b.txt"},
		{"over 4 KiB", file(long+"y") + file("b.txt"), long + "y, b.tx…"},
	} {
		if got := changedFiles(c.patch); got != c.want {
			t.Errorf("%s: changedFiles = %.80q…, want %.80q…", c.name, got, c.want)
		}
	}
}
