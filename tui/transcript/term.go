package transcript

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// termLines splits a command's output into the lines a terminal would
// leave on screen, as plain text safe to draw inside the transcript: a
// carriage return starts its line over (a progress bar's last state is
// what stays), escape sequences (colours, cursor moves, titles) are
// dropped, tabs become four spaces, and other control bytes and bytes
// that are not UTF-8 are shown as U+FFFD. Raw, they moved the cursor,
// recoloured the screen or broke the layout.
func termLines(text string) []string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = termLine(l)
	}
	return lines
}

// termLine is termLines of one line (no "\n" in it).
func termLine(l string) string {
	l = strings.TrimSuffix(l, "\r")
	if j := strings.LastIndexByte(l, '\r'); j >= 0 {
		l = l[j+1:]
	}
	return termText(l)
}

// termText is one line of output made safe to draw (see termLines).
func termText(l string) string {
	if strings.IndexFunc(l, unsafeRune) < 0 && utf8.ValidString(l) {
		return l
	}
	l = ansi.Strip(strings.ToValidUTF8(l, "\uFFFD"))
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return r
		case unsafeRune(r):
			return '\uFFFD'
		}
		return r
	}, l)
}

// unsafeRune reports a control character (C0 but tab, DEL, C1) or the
// escape that starts a sequence.
func unsafeRune(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0)
}
