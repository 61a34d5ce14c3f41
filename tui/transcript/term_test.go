package transcript

import (
	"strings"
	"testing"
)

// Command output is drawn as a terminal would leave it, and never as raw
// control bytes: a carriage return starts the line over, escape
// sequences are dropped, other control bytes and bytes that are not UTF-8
// show as U+FFFD.
func TestTermLines(t *testing.T) {
	for in, want := range map[string]string{
		"downloading  10%\rdownloading  50%\rdone": "done",
		"crlf line\r\nnext":                        "crlf line|next",
		"A\x1b[31mRED\x1b[0m B":                    "ARED B",
		"title\x1b]0;pwned\x07 after":              "title after",
		"bell\x07 nul\x00 del\x7f":                 "bell\uFFFD nul\uFFFD del\uFFFD",
		"bad \xff\xfe utf8":                        "bad \uFFFD utf8",
		"tab\tkept, é kept":                        "tab\tkept, é kept",
		"progress 1/3\rprogress 2/3\r":             "progress 2/3",
		"\x1b[2K\x1b[1Gclean":                      "clean",
	} {
		if got := strings.Join(termLines(in), "|"); got != want {
			t.Errorf("termLines(%q) = %q, want %q", in, got, want)
		}
	}
}
