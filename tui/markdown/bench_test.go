package markdown

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/tui/theme"
)

// goBlock is a fenced Go block of about 60 lines.
var goBlock = func() string {
	var b strings.Builder
	b.WriteString("Here is the change:\n\n```go\n")
	for i := range 10 {
		b.WriteString("// Parse reads one list; a trailing comma is allowed.\nfunc Parse(s string) ([]int, error) {\n\tvar out []int\n\tfor _, f := range strings.Split(s, \",\") {\n\t\tout = append(out, len(f)+" + strings.Repeat("1", i+1) + ")\n\t}\n")
	}
	b.WriteString("```\n")
	return b.String()
}()

// BenchmarkRenderCode renders a message with a 60-line Go block, as a
// finished block is rendered once per width: the first render lexes it,
// later ones (another width) reuse the lexed runs.
func BenchmarkRenderCode(b *testing.B) {
	th := theme.New(true)
	Render(goBlock, 80, th)
	for b.Loop() {
		Render(goBlock, 80, th)
	}
}

// BenchmarkRenderCodePlain is the same block with an unknown language: the
// cost of rendering without colour, for comparison.
func BenchmarkRenderCodePlain(b *testing.B) {
	th := theme.New(true)
	src := strings.Replace(goBlock, "```go", "```unknown", 1)
	for b.Loop() {
		Render(src, 80, th)
	}
}
