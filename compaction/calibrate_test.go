package compaction

import (
	"strings"
	"testing"
)

func TestCalibrateRejectsImplausibleReports(t *testing.T) {
	cases := []struct {
		name          string
		bytes, tokens int
		ok            bool
	}{
		{"realistic", 40000, 10000, true},
		{"one token a byte", 1000, 1000, true},
		{"exactly a tenth", 1000, 100, true},
		{"under a tenth", 1000, 99, false},
		{"more tokens than bytes", 1000, 1001, false},
		{"no tokens", 1000, 0, false},
		{"no bytes", 0, 10, false},
		{"nothing", 0, 0, false},
		{"one token", 10, 1, true},
	}
	for _, tc := range cases {
		if _, ok := Calibrate("p", "m", tc.bytes, tc.tokens); ok != tc.ok {
			t.Errorf("%s: Calibrate(%d, %d) ok = %v", tc.name, tc.bytes, tc.tokens, ok)
		}
	}
}

func TestEstimate(t *testing.T) {
	var none Calibration
	if n, rule := none.Estimate("p", "m", 5000); n != 5000 || rule != Algorithm {
		t.Fatalf("no calibration: %d %s", n, rule)
	}
	c, ok := Calibrate("p", "m", 40000, 10000)
	if !ok {
		t.Fatal("calibrate")
	}
	cases := []struct {
		bytes, want int
	}{
		{40000, 10000},         // the calibrated request itself
		{20000, 5000},          // smaller (after a compaction): the ratio alone
		{60000, 15000 + 500},   // 5000 tokens added, 10 % margin on them
		{40001, 10000 + 1 + 1}, // rounding up
		{0, 0},
	}
	for _, tc := range cases {
		if n, rule := c.Estimate("p", "m", tc.bytes); n != tc.want || rule != AlgorithmReported {
			t.Errorf("Estimate(%d) = %d %s, want %d", tc.bytes, n, rule, tc.want)
		}
	}
	// Another model starts afresh.
	if n, rule := c.Estimate("p", "other", 60000); n != 60000 || rule != Algorithm {
		t.Errorf("other model: %d %s", n, rule)
	}
	// So does the same model name behind another provider.
	if n, rule := c.Estimate("q", "m", 60000); n != 60000 || rule != Algorithm {
		t.Errorf("other provider: %d %s", n, rule)
	}
}

// MixTokens counts a word (up to MixRun letters) as 1.35 tokens, a space
// as nothing, an escape or another ASCII byte as 0.39 and a non-ASCII
// byte as 0.5, rounding up.
func TestMixTokens(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 2},                     // 1.35
		{"hello world", 3},           // 2.7
		{"hello, world.", 4},         // 2.7 + 0.78
		{strings.Repeat("a", 24), 3}, // two words of 12 letters: 2.7
		{strings.Repeat("a", 25), 5}, // three: 4.05
		{"12345678", 4},              // 3.12
		{"日本", 3},                    // six bytes: 3.0
		{`{"path":"a.go"}`, 8},       // three words (4.05) and eight other bytes (3.12)
		{`\n\tfunc`, 3},              // two escapes (0.78) and a word (1.35)
		{`\\n`, 2},                   // an escaped backslash (0.39), then the word n (1.35)
	}
	for _, c := range cases {
		if got := MixTokens([]byte(c.text)); got != c.want {
			t.Errorf("MixTokens(%q) = %d, want %d", c.text, got, c.want)
		}
	}
	// English prose, about 4.9 bytes per real token, is estimated at 4 to
	// 4.5 bytes per token (the old single ratio, 3.6, counted it +35 %).
	prose := []byte("Introducing a new holiday that celebrates the magic of light, community, and personal growth. ")
	if got := MixTokens(prose); got*4 > len(prose) || got*9 < len(prose)*2 {
		t.Errorf("prose of %d bytes: %d tokens", len(prose), got)
	}
}
