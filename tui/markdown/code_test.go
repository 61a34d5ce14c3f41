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

// codeSample has a fenced block in each language coloured, and one not.
const codeSample = "Go:\n\n```go\n// Sum adds the values.\nfunc Sum(xs []int) (n int) {\n\tfor _, x := range xs {\n\t\tn += x // 0x1F\n\t}\n\treturn n\n}\n```\n\n" +
	"Python:\n\n```python\n@cache\ndef fib(n: int) -> int:\n    \"\"\"Fibonacci.\"\"\"\n    return n if n < 2 else fib(n - 1) + fib(n - 2)  # slow\n```\n\n" +
	"```ts\nexport const greet = (name: string): string => `hi ${name}`;\n```\n\n" +
	"```sh\nexport GOFLAGS=-count=1\nif [ -n \"$CI\" ]; then go test ./... 2>&1 | tee log; fi # ci\n```\n\n" +
	"```json\n{\"name\": \"harness\", \"tags\": [\"tui\", null], \"v\": 1.5}\n```\n\n" +
	"```yaml\non:\n  push: {branches: [main]}\njobs: # all\n  - run: make test\n    retries: 2\n```\n\n" +
	"```diff\n--- a/main.go\n+++ b/main.go\n@@ -1,2 +1,2 @@\n package main\n-var v = 1\n+var v = 2\n```\n\n" +
	"```rust\nfn main() { let s: &str = \"x\"; println!(\"{s}\"); }\n```\n\n" +
	"```c\n#include <stdio.h>\nint main(void) { return printf(\"%d\\n\", 42) < 0; }\n```\n\n" +
	"```mermaid\ngraph TD; A-->B\n```\n"

// profiles are the colour profiles and backgrounds the goldens cover.
var profiles = []struct {
	name string
	dark bool
	prof colorprofile.Profile
}{
	{"truecolor-dark", true, colorprofile.TrueColor},
	{"truecolor-light", false, colorprofile.TrueColor},
	{"256-dark", true, colorprofile.ANSI256},
	{"16-dark", true, colorprofile.ANSI},
	{"16-light", false, colorprofile.ANSI},
	{"nocolor", true, colorprofile.ASCII},
}

// TestCodeGolden renders the sample at 80 and 120 columns in each profile.
func TestCodeGolden(t *testing.T) {
	for _, p := range profiles {
		for _, w := range []int{80, 120} {
			t.Run(fmt.Sprintf("%s/w%d", p.name, w), func(t *testing.T) {
				lines := Render(codeSample, w, theme.NewFor(p.dark, p.prof))
				for i, l := range lines {
					if n := ansi.StringWidth(l); n > w {
						t.Errorf("line %d is %d cells, over %d: %q", i, n, w, ansi.Strip(l))
					}
				}
				golden.RequireEqual(t, strings.Join(lines, "\n")+"\n")
			})
		}
	}
}

// codeLines are the rendered lines of the sample's code blocks: those
// indented two cells.
func codeLines(t *testing.T, th *theme.Theme) []string {
	t.Helper()
	var out []string
	for _, l := range Render(codeSample, 80, th) {
		if strings.HasPrefix(l, "  ") {
			out = append(out, l)
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d code lines", len(out))
	}
	return out
}

// Each profile gets its own palette: true colour sequences only in true
// colour, 256-colour ones only there, basic colours only in 16, and no
// sequence at all without colour.
func TestCodeColoursByProfile(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			code := strings.Join(codeLines(t, theme.NewFor(p.dark, p.prof)), "\n")
			has := func(seq string) bool { return strings.Contains(code, seq) }
			switch p.prof {
			case colorprofile.TrueColor:
				if !has("38;2;") || !has("48;2;") || has("38;5;") {
					t.Errorf("true colour code lacks true colours or has 256 ones:\n%q", code)
				}
			case colorprofile.ANSI256:
				if !has("38;5;") || !has("48;5;") || has("38;2;") {
					t.Errorf("256-colour code lacks 256 colours or has true ones:\n%q", code)
				}
			case colorprofile.ANSI:
				if has("38;2;") || has("38;5;") || has("48;") || !has("\x1b[9") && !has("\x1b[3") {
					t.Errorf("16-colour code uses other colours, a background, or none:\n%q", code)
				}
			default:
				if has("\x1b[") {
					t.Errorf("no-colour code has escape sequences:\n%q", code)
				}
			}
		})
	}
}

// A language's words get their classes' colours; an unknown language's
// block is one colour.
func TestCodeIsHighlighted(t *testing.T) {
	th := theme.New(true)
	lines := Render("```go\nfunc main() { return }\n```\n\n```mermaid\nfunc main() { return }\n```", 40, th)
	kw, _, _ := strings.Cut(th.Syntax.Keyword.Render("\x00"), "\x00")
	plain, _, _ := strings.Cut(th.Syntax.Plain.Render("\x00"), "\x00")
	if kw == plain {
		t.Fatal("keywords and plain code look the same")
	}
	if !strings.Contains(lines[0], kw+"func") || !strings.Contains(lines[0], kw+"return") {
		t.Errorf("go: the keywords are not coloured: %q", lines[0])
	}
	if last := lines[len(lines)-1]; strings.Contains(last, kw) || strings.Count(last, "\x1b[") != 2 {
		t.Errorf("an unknown language is coloured: %q", last)
	}
}

// An open fence (the answer still streaming) is coloured like a closed
// one, and lines longer than the block are cut, not lost.
func TestCodeOpenAndWrapped(t *testing.T) {
	th := theme.New(true)
	long := "x := \"" + strings.Repeat("abcdefghij", 10) + "\" // end"
	closed := Render("```go\n"+long+"\nreturn\n```", 40, th)
	open := Render("```go\n"+long+"\nreturn", 40, th)
	if strings.Join(closed, "\n") != strings.Join(open, "\n") {
		t.Errorf("open and closed blocks differ:\n%q\n%q", open, closed)
	}
	var text strings.Builder
	for _, l := range closed {
		if n := ansi.StringWidth(l); n != 40 {
			t.Errorf("a code line is %d cells, want the block's 40: %q", n, ansi.Strip(l))
		}
		text.WriteString(strings.TrimRight(strings.TrimPrefix(ansi.Strip(l), "  "), " "))
	}
	if !strings.Contains(text.String(), long) {
		t.Errorf("the wrapped lines lose text: %q", text.String())
	}
}
