package diffview

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/harness-dev/harness/tui/theme"
)

const patch = `diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1,3 +1,4 @@
 # demo
-old line
+new line
+	a tabbed line that is long enough to be cut at the narrower of the two widths in this test
 end
diff --git a/new.txt b/new.txt
new file mode 100644
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+hello
\ No newline at end of file
`

func TestStat(t *testing.T) {
	if got, want := StatOf(patch), (Stat{Files: 2, Added: 3, Deleted: 1}); got != want {
		t.Errorf("StatOf = %+v, want %+v", got, want)
	}
	if got := StatOf(""); got != (Stat{}) {
		t.Errorf("StatOf(\"\") = %+v", got)
	}
	// A bare ---/+++ patch (what Unified returns) counts one file.
	u := Unified("a.txt", "x\ny\n", "x\nz\n", false)
	if got, want := StatOf(u), (Stat{Files: 1, Added: 1, Deleted: 1}); got != want {
		t.Errorf("StatOf(Unified) = %+v, want %+v\n%s", got, want, u)
	}
	if Unified("a.txt", "same\n", "same\n", false) != "" {
		t.Error("equal contents gave a diff")
	}
	if c := Unified("b.txt", "", "new\n", true); !strings.HasPrefix(c, "--- /dev/null\n+++ b/b.txt\n") {
		t.Errorf("a created file's diff:\n%s", c)
	}
}

func TestLinesGolden(t *testing.T) {
	th := theme.New(true)
	for _, w := range []int{40, 100} {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			lines := Lines(patch, w, th)
			for i, l := range lines {
				if ansi.StringWidth(l) > w {
					t.Errorf("line %d is wider than %d: %q", i, w, ansi.Strip(l))
				}
			}
			golden.RequireEqual(t, strings.Join(lines, "\n")+"\n"+Summary(StatOf(patch), th)+"\n")
		})
	}
}
