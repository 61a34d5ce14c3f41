package markdown

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/harness-dev/harness/tui/theme"
)

const sample = "# Plan\n\nI will change **three** files, keep `go test` green and *not* touch snake_case_names.\nA soft break joins the paragraph.\n\n## Steps\n\n1. Read `cmd/main.go`\n2. Add the flag, documented in the [README](https://example.com/readme)\n   with a lazy continuation line\n- nested:\n  - inner item with a very long text that has to wrap around at the narrow width\n\n```go\nfunc main() {\n\tfmt.Println(\"a line long enough to be hard-wrapped inside the fenced block at the narrow width\")\n}\n```\n\n> A quote, *emphasised*.\n\n---\n\n| a | table |\n|---|---|\n"

func TestGolden(t *testing.T) {
	for _, w := range []int{40, 80} {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			golden.RequireEqual(t, strings.Join(Render(sample, w, theme.New(true)), "\n")+"\n")
		})
	}
}

func TestWidthAndText(t *testing.T) {
	th := theme.New(true)
	for _, w := range []int{MinWidth, 40, 80} {
		for i, l := range Render(sample, w, th) {
			if got := ansi.StringWidth(l); got > w {
				t.Errorf("width %d, line %d is %d cells: %q", w, i, got, ansi.Strip(l))
			}
		}
	}
	text := ansi.Strip(strings.Join(Render(sample, 80, th), "\n"))
	for _, want := range []string{"Plan", "three files", "snake_case_names", "• inner item", "1. Read cmd/main.go", "README", "│ A quote, emphasised."} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered text lacks %q:\n%s", want, text)
		}
	}
	for _, absent := range []string{"**", "# Plan", "```", "](https"} {
		if strings.Contains(text, absent) {
			t.Errorf("markup %q left in:\n%s", absent, text)
		}
	}
}

// Streaming text is rendered at every delta: unfinished markup must show
// as written, and an open fence as code.
func TestUnfinishedInput(t *testing.T) {
	th := theme.New(true)
	for _, c := range []struct{ in, want string }{
		{"a **bold", "a **bold"},
		{"call `fs.re", "call `fs.re"},
		{"```go\nfunc main() {", "func main() {"},
		{"- item\n- ", "• item"},
		{"", ""},
	} {
		got := ansi.Strip(strings.Join(Render(c.in, 60, th), "\n"))
		if !strings.Contains(got, c.want) {
			t.Errorf("Render(%q) = %q, want it to contain %q", c.in, got, c.want)
		}
	}
}

func TestWrapKeepsHyphenatedWords(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"run go test --count=1 now", 14, "run go test\n--count=1 now"},
		{"a read-only tree", 12, "a read-only\ntree"},
		{"--max-workspace-bytes", 8, "--max-wo\nrkspace-\nbytes"}, // longer than the line: cut
		{"plain words only", 6, "plain\nwords\nonly"},
		{"keeps \u2011 and - apart", 40, "keeps \u2011 and - apart"},
	} {
		if got := WrapPlain(tc.in, tc.width); got != tc.want {
			t.Errorf("WrapPlain(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
		if got := ansi.Strip(Wrap("\x1b[1m"+tc.in+"\x1b[m", tc.width)); strings.ReplaceAll(got, " \n", "\n") != tc.want {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// A pipe table is drawn as a table: no delimiter row, its columns lined up
// (every row's separators at the same cells), within the width; a cell
// too wide for its column wraps onto more lines of its row, nothing cut.
func TestTable(t *testing.T) {
	src := "Results:\n\n| package | tests | time | note |\n| :--- | ---: | :-: | --- |\n| `tui` | 212 | 3.1s | **all pass** |\n| tuiengine | 9 | 0.4s | a very long note that cannot fit in a narrow terminal at all |\n| a \\| b | 1 | 0s | |\n\nDone."
	for _, p := range []colorprofile.Profile{colorprofile.TrueColor, colorprofile.ANSI256, colorprofile.ANSI} {
		th := theme.NewFor(true, p)
		for _, w := range []int{40, 80, 120} {
			lines := Render(src, w, th)
			text := ansi.Strip(strings.Join(lines, "\n"))
			if strings.Contains(text, "---") || strings.Contains(text, "| package") || strings.Contains(text, "| `tui`") {
				t.Errorf("profile %v width %d: the table shows raw:\n%s", p, w, text)
			}
			var cols []int
			var notes []string // the last column, line by line
			rows := 0
			for _, l := range lines {
				plain := ansi.Strip(l)
				if n := ansi.StringWidth(l); n > w {
					t.Errorf("width %d: a line is %d cells: %q", w, n, plain)
				}
				if !strings.Contains(plain, "│") && !strings.Contains(plain, "┼") {
					continue
				}
				rows++
				if k := strings.LastIndexAny(plain, "│┼"); k >= 0 {
					notes = append(notes, plain[k+len("│"):])
				}
				var at []int
				cell := 0
				for _, r := range plain {
					if r == '│' || r == '┼' {
						at = append(at, cell)
					}
					cell += ansi.StringWidth(string(r))
				}
				if cols == nil {
					cols = at
				} else if fmt.Sprint(at) != fmt.Sprint(cols) {
					t.Errorf("width %d: columns do not line up: %v then %v in %q", w, cols, at, plain)
				}
			}
			if want := map[int]int{40: 10, 80: 6, 120: 5}[w]; rows != want || len(cols) != 3 {
				t.Errorf("width %d: %d table lines with %d separators, want %d and 3:\n%s", w, rows, len(cols), want, text)
			}
			if note := strings.Join(strings.Fields(strings.Join(notes, " ")), " "); !strings.Contains(note, "a very long note that cannot fit in a narrow terminal at all") {
				t.Errorf("width %d: the long cell is not whole across its lines: %q\n%s", w, note, text)
			}
			for _, want := range []string{"package", "tuiengine", "a | b", "all pass"} {
				if !strings.Contains(text, want) {
					t.Errorf("width %d: the table lacks %q:\n%s", w, want, text)
				}
			}
			if strings.Contains(text, "…") {
				t.Errorf("width %d: a cell is cut:\n%s", w, text)
			}
		}
	}
}
