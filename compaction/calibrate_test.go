package compaction

import "testing"

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
