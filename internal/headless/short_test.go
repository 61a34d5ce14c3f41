package headless

import (
	"testing"
	"unicode/utf8"
)

// Short keeps a value on one line and cuts it where a character starts,
// so a cut title or input still prints as UTF-8.
func TestShort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"two\nlines", 20, "two lines"},
		{"abcdef", 3, "abc…"},
		{"café au lait", 4, "caf…"}, // é is two bytes: not cut in half
		{"日本語", 4, "日…"},
	} {
		got := Short(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Short(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
