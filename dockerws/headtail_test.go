package dockerws

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// seq is what `seq 1 n` prints.
func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// headTailOf is what a command printing s keeps under a cap of max bytes.
func headTailOf(s string, max int) string {
	c := newHeadTail(max)
	for len(s) > 0 { // in pieces of odd sizes, as a pipe delivers them
		k := min(len(s), 777)
		_, _ = c.Write([]byte(s[:k]))
		s = s[k:]
	}
	return c.String()
}

// Capped output keeps its start and its end, cut at line ends, with a
// line saying how much was left out between; output within the cap is
// kept whole, and no cut splits a UTF-8 sequence.
func TestHeadTail(t *testing.T) {
	out := headTailOf(seq(20000), 1000)
	head, rest, ok := strings.Cut(out, "[… ")
	if !ok {
		t.Fatalf("no mark of what was left out:\n%s", out)
	}
	n, tail, _ := strings.Cut(rest, " bytes of output left out here …]\n")
	if !strings.HasPrefix(head, "1\n2\n3\n") || !strings.HasSuffix(head, "\n") || !strings.HasSuffix(tail, "19999\n20000\n") || !strings.HasPrefix(tail, "19") {
		t.Errorf("head %q…, tail …%q", head[:min(len(head), 20)], tail[max(len(tail)-20, 0):])
	}
	if left, err := strconv.Atoi(n); err != nil || left+len(head)+len(tail) != len(seq(20000)) {
		t.Errorf("says %q bytes left out; head %d + tail %d of %d", n, len(head), len(tail), len(seq(20000)))
	}
	if len(out) > 1000 || len(tail) < 600 {
		t.Errorf("%d bytes (head %d, tail %d) under a cap of 1000", len(out), len(head), len(tail))
	}
	for _, s := range []string{"", "short\n", strings.Repeat("x", 1000), strings.Repeat("y", 999) + "\n"} {
		if got := headTailOf(s, 1000); got != s {
			t.Errorf("%d bytes within the cap came back as %d", len(s), len(got))
		}
		c := newHeadTail(1000)
		_, _ = c.Write([]byte(s))
		if c.truncated() {
			t.Errorf("%d bytes within the cap are flagged as truncated", len(s))
		}
	}
	// No line ends near the cuts, and multi-byte runes across them.
	wide := strings.Repeat("é", 3000) + "END"
	got := headTailOf(wide, 1001)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "ééEND") || !strings.HasPrefix(got, "éé") {
		t.Errorf("cut inside a sequence or lost an end: %q … %q", got[:10], got[len(got)-10:])
	}
}
