package model_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/model"
)

func checkString(t *testing.T, s string) {
	t.Helper()
	want, err := model.MarshalCanonical(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := model.AppendCanonicalString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
		t.Fatalf("AppendCanonicalString(%q) = %s, MarshalCanonical = %s", s, got[1:], want)
	}
	if got := model.AppendCanonicalString(nil, []byte(s)); !bytes.Equal(got, want) {
		t.Fatalf("AppendCanonicalString of the bytes of %q = %s, MarshalCanonical = %s", s, got, want)
	}
}

// The fast string encoding writes exactly what MarshalCanonical writes.
func TestAppendCanonicalString(t *testing.T) {
	src, err := os.ReadFile("model.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"", "plain ascii of more than eight bytes", `"quoted" \ back\slash`, "\b\f\n\r\t\x00\x01\x1f\x7f",
		"<b>&amp;</b>", "café 😀 \u2028 \u2029 \u2027 \u202a", "bad \xff utf-8 \xe2\x82", "\xed\xa0\x80 surrogate",
		string(src), strings.Repeat("a", 7) + `"` + strings.Repeat("b", 9) + "\xc3",
	} {
		checkString(t, s)
	}
	// Every byte at every position of a word, among plain neighbours.
	for c := range 256 {
		for pos := range 9 {
			b := []byte(strings.Repeat("a", 9))
			b[pos] = byte(c)
			checkString(t, string(b))
		}
	}
}

func FuzzAppendCanonicalString(f *testing.F) {
	for _, s := range []string{"a\"b\\c\nd", "é\u2028\xff", strings.Repeat("x", 17)} {
		f.Add(s)
	}
	f.Fuzz(checkString)
}
