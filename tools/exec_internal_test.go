package tools

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
)

// keepEnds keeps at most n bytes: a string that fits (n bytes exactly
// included) comes back as it is, its truncated flag unchanged; a longer one
// is cut to at most n bytes, however small n is, and marked truncated; the
// mark says how many bytes were left out: all those not kept.
func TestKeepEndsBound(t *testing.T) {
	if got, tr := keepEnds("abcd", 4, false); got != "abcd" || tr {
		t.Errorf("keepEnds of a string of exactly n bytes = %q, %v", got, tr)
	}
	long := strings.Repeat("0123456789", 1000) // no line ends: the mark is the only line
	mark := regexp.MustCompile(`\n?\[… (\d+) bytes of output left out here …\]\n`)
	for _, n := range []int{0, 10, 100, 1000} {
		got, tr := keepEnds(long, n, false)
		if !tr || len(got) > max(n, 64) {
			t.Errorf("keepEnds(10000 bytes, %d) = %d bytes, truncated %v", n, len(got), tr)
		}
		m := mark.FindStringSubmatch(got)
		if m == nil {
			t.Fatalf("keepEnds(10000 bytes, %d) = %q: no mark", n, got)
		}
		if left, _ := strconv.Atoi(m[1]); len(got)-len(m[0])+left != len(long) {
			t.Errorf("keepEnds(10000 bytes, %d) kept %d bytes and says %d left out", n, len(got)-len(m[0]), left)
		}
	}
}

// cut keeps at most n bytes ending on a rune boundary: a string that fits
// (n bytes exactly included) is kept whole and its flag unchanged; a cut
// inside a character drops the whole character; text that starts inside a
// character is cut to nothing rather than read out of bounds.
func TestCutOnRuneBoundary(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
		tr   bool
	}{
		{"abcd", 4, "abcd", false},
		{"abcd", 3, "abc", true},
		{"aé", 2, "a", true},
		{"a€b", 3, "a", true},
		{"\x80\x80\x80", 2, "", true},
	} {
		got, tr := cut(c.s, c.n, false)
		if got != c.want || tr != c.tr || !utf8.ValidString(got) && c.want != "" {
			t.Errorf("cut(%q, %d) = %q, %v; want %q, %v", c.s, c.n, got, tr, c.want, c.tr)
		}
	}
}

// fitExec's bound is inclusive: a result whose encoding is exactly
// MaxOutputBytes is kept as it is; one byte more cuts the larger stream,
// stdout on a tie.
func TestFitExecBoundIsInclusive(t *testing.T) {
	base, err := model.MarshalCanonical(workspace.ExecResult{})
	if err != nil {
		t.Fatal(err)
	}
	// \x01 is written as \u0001: 6 bytes each.
	const k = 17000
	plain := MaxOutputBytes - len(base) - 6*k
	r := workspace.ExecResult{Stdout: strings.Repeat("\x01", k) + strings.Repeat("o", plain)}
	if b, _ := model.MarshalCanonical(r); len(b) != MaxOutputBytes {
		t.Fatalf("the test's result is %d bytes, want %d", len(b), MaxOutputBytes)
	}
	if got := fitExec(r, MaxOutputBytes); got.Stdout != r.Stdout || got.StdoutTruncated {
		t.Fatalf("a result of exactly MaxOutputBytes was cut to %d bytes of stdout", len(got.Stdout))
	}
	r.Stdout += "o"
	if got := fitExec(r, MaxOutputBytes); !got.StdoutTruncated || got.StderrTruncated {
		t.Fatalf("one byte over: stdout truncated %v, stderr truncated %v", got.StdoutTruncated, got.StderrTruncated)
	}
	tie := strings.Repeat("\x01", MaxStreamBytes)
	got := fitExec(workspace.ExecResult{Stdout: tie, Stderr: tie}, MaxOutputBytes)
	if b, _ := model.MarshalCanonical(got); len(b) > MaxOutputBytes || len(got.Stdout) > len(got.Stderr) {
		t.Fatalf("a tie: %d bytes, stdout %d, stderr %d; want stdout cut first", len(b), len(got.Stdout), len(got.Stderr))
	}
}
