package markdown

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// hyphenStandIns are one-cell runes that stand for "-" while text is
// wrapped; the first one the text does not contain is used.
var hyphenStandIns = []string{"\u2011", "\ue000", "\ue001"}

// Wrap word-wraps styled text (ANSI sequences allowed; styles carry over
// line breaks) to width cells: lines break at spaces, and a word wider
// than a line is cut where the line ends. Unlike lipgloss.Wrap it never
// breaks at a hyphen, so "--flags" and "read-only" stay whole.
func Wrap(s string, width int) string {
	return keepHyphens(s, func(s string) string { return lipgloss.Wrap(s, width, "") })
}

// WrapPlain is Wrap for unstyled text, with ansi.Wrap's handling of the
// spaces at a break.
func WrapPlain(s string, width int) string {
	return keepHyphens(s, func(s string) string { return ansi.Wrap(s, width, "") })
}

// keepHyphens runs wrap with every "-" replaced by a one-cell stand-in the
// wrapper does not break at, and puts the hyphens back.
func keepHyphens(s string, wrap func(string) string) string {
	if !strings.Contains(s, "-") {
		return wrap(s)
	}
	for _, stand := range hyphenStandIns {
		if !strings.Contains(s, stand) {
			return strings.ReplaceAll(wrap(strings.ReplaceAll(s, "-", stand)), stand, "-")
		}
	}
	return wrap(s)
}
