package compaction_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name string
		p    compaction.Policy
		code errcode.Code
	}{
		{"typical", compaction.Policy{WindowTokens: 1000, ThresholdTokens: 800, TailMessages: 12, ReserveTokens: 100}, ""},
		{"threshold plus reserve equals window", compaction.Policy{WindowTokens: 1000, ThresholdTokens: 900, TailMessages: 1, ReserveTokens: 100}, ""},
		{"threshold equals window, no reserve", compaction.Policy{WindowTokens: 1000, ThresholdTokens: 1000, TailMessages: 1}, ""},
		{"smallest", compaction.Policy{WindowTokens: 1, ThresholdTokens: 1, TailMessages: 1}, ""},
		{"zero", compaction.Policy{}, errcode.RuntimeInvalidInput},
		{"zero threshold", compaction.Policy{WindowTokens: 1000, TailMessages: 1}, errcode.RuntimeInvalidInput},
		{"negative threshold", compaction.Policy{WindowTokens: 1000, ThresholdTokens: -1, TailMessages: 1}, errcode.RuntimeInvalidInput},
		{"threshold above window", compaction.Policy{WindowTokens: 1000, ThresholdTokens: 1001, TailMessages: 1}, errcode.RuntimeInvalidInput},
		{"negative window", compaction.Policy{WindowTokens: -5, ThresholdTokens: 1, TailMessages: 1}, errcode.RuntimeInvalidInput},
		{"negative reserve", compaction.Policy{WindowTokens: 1000, ThresholdTokens: 800, TailMessages: 1, ReserveTokens: -1}, errcode.RuntimeInvalidInput},
		{"reserve equals window", compaction.Policy{WindowTokens: 1000, ThresholdTokens: 1, TailMessages: 1, ReserveTokens: 1000}, errcode.RuntimeInvalidInput},
		{"threshold plus reserve above window", compaction.Policy{WindowTokens: 1000, ThresholdTokens: 901, TailMessages: 1, ReserveTokens: 100}, errcode.RuntimeInvalidInput},
		{"zero tail", compaction.Policy{WindowTokens: 1000, ThresholdTokens: 800, TailMessages: 0}, errcode.RuntimeInvalidInput},
		{"huge figures", compaction.Policy{WindowTokens: math.MaxInt, ThresholdTokens: math.MaxInt - 1, TailMessages: 1, ReserveTokens: 1}, ""},
		{"huge reserve and threshold", compaction.Policy{WindowTokens: math.MaxInt, ThresholdTokens: math.MaxInt, TailMessages: 1, ReserveTokens: math.MaxInt - 1}, errcode.RuntimeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustCode(t, tt.p.Validate(), tt.code)
		})
	}
}

func TestPolicyFor(t *testing.T) {
	tests := []struct {
		name                           string
		window, percent, tail, reserve int
		want                           compaction.Policy
		code                           errcode.Code
	}{
		{name: "80 percent", window: 128000, percent: 80, tail: 12, reserve: 8192,
			want: compaction.Policy{WindowTokens: 128000, ThresholdTokens: 102400, TailMessages: 12, ReserveTokens: 8192}},
		{name: "rounded down", window: 999, percent: 50, tail: 1, reserve: 0,
			want: compaction.Policy{WindowTokens: 999, ThresholdTokens: 499, TailMessages: 1}},
		{name: "capped by the reserve", window: 1000, percent: 100, tail: 4, reserve: 250,
			want: compaction.Policy{WindowTokens: 1000, ThresholdTokens: 750, TailMessages: 4, ReserveTokens: 250}},
		{name: "no overflow on a huge window", window: math.MaxInt, percent: 100, tail: 1, reserve: 0,
			want: compaction.Policy{WindowTokens: math.MaxInt, ThresholdTokens: math.MaxInt, TailMessages: 1}},
		// 1..100 is inclusive at both ends.
		{name: "one percent", window: 1000, percent: 1, tail: 1, reserve: 0,
			want: compaction.Policy{WindowTokens: 1000, ThresholdTokens: 10, TailMessages: 1}},
		{name: "percent zero", window: 1000, percent: 0, tail: 1, code: errcode.RuntimeInvalidInput},
		{name: "percent above 100", window: 1000, percent: 101, tail: 1, code: errcode.RuntimeInvalidInput},
		{name: "window zero", window: 0, percent: 80, tail: 1, code: errcode.RuntimeInvalidInput},
		{name: "threshold rounds to zero", window: 1, percent: 50, tail: 1, code: errcode.RuntimeInvalidInput},
		{name: "reserve fills the window", window: 1000, percent: 80, tail: 1, reserve: 1000, code: errcode.RuntimeInvalidInput},
		{name: "negative reserve", window: 1000, percent: 80, tail: 1, reserve: -1, code: errcode.RuntimeInvalidInput},
		{name: "zero tail", window: 1000, percent: 80, tail: 0, code: errcode.RuntimeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := compaction.PolicyFor(tt.window, tt.percent, tt.tail, tt.reserve)
			mustCode(t, err, tt.code)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PolicyFor (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultPolicy(t *testing.T) {
	tests := []struct {
		window int
		want   compaction.Policy
	}{
		{128000, compaction.Policy{WindowTokens: 128000, ThresholdTokens: 102400, TailMessages: 12, ReserveTokens: 8192}},
		{32000, compaction.Policy{WindowTokens: 32000, ThresholdTokens: 25600, TailMessages: 12, ReserveTokens: 4000}},
		{10, compaction.Policy{WindowTokens: 10, ThresholdTokens: 8, TailMessages: 12, ReserveTokens: 1}},
		{1, compaction.Policy{WindowTokens: 1, ThresholdTokens: 1, TailMessages: 12}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("window-%d", tt.window), func(t *testing.T) {
			got := compaction.DefaultPolicy(tt.window)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DefaultPolicy (-want +got):\n%s", diff)
			}
			mustCode(t, got.Validate(), "")
		})
	}
}

func TestPolicyJSON(t *testing.T) {
	p := compaction.Policy{WindowTokens: 1000, ThresholdTokens: 800, TailMessages: 12, ReserveTokens: 125}
	got, err := model.MarshalCanonical(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"windowTokens":1000,"thresholdTokens":800,"tailMessages":12,"reserveTokens":125}`
	if string(got) != want {
		t.Errorf("policy JSON = %s, want %s", got, want)
	}
}

func TestDueAndFits(t *testing.T) {
	p := compaction.Policy{WindowTokens: 1000, ThresholdTokens: 800, TailMessages: 12, ReserveTokens: 100}
	tests := []struct {
		occupancy int
		due, fits bool
	}{
		{0, false, true},
		{799, false, true},
		{800, true, true},
		{900, true, true},
		{901, true, false},
		{5000, true, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("occupancy-%d", tt.occupancy), func(t *testing.T) {
			if got := compaction.Due(p, tt.occupancy); got != tt.due {
				t.Errorf("Due = %v, want %v", got, tt.due)
			}
			if got := compaction.Fits(p, tt.occupancy); got != tt.fits {
				t.Errorf("Fits = %v, want %v", got, tt.fits)
			}
		})
	}
}

func TestOutputLimit(t *testing.T) {
	tests := []struct {
		name                          string
		maxTokens, remaining, reserve int
		want                          int
	}{
		{"none given", 0, 0, 0, 0},
		{"max tokens only", 4096, 0, 0, 4096},
		{"budget only", 0, 700, 0, 700},
		{"reserve only", 0, 0, 8192, 8192},
		{"smallest wins", 4096, 700, 8192, 700},
		{"reserve smallest", 4096, 70000, 1024, 1024},
		{"negative ignored", -5, -1, 300, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compaction.OutputLimit(tt.maxTokens, tt.remaining, tt.reserve); got != tt.want {
				t.Errorf("OutputLimit = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	p := compaction.Policy{WindowTokens: 1000, ThresholdTokens: 800, TailMessages: 12, ReserveTokens: 100}
	tests := []struct {
		name          string
		before, after int
		code          errcode.Code
	}{
		{"smaller and fits", 950, 300, ""},
		{"fits exactly", 2000, 900, ""},
		{"not smaller", 850, 850, errcode.RuntimeContextOverflow},
		{"larger", 850, 860, errcode.RuntimeContextOverflow},
		{"smaller but does not fit", 3000, 901, errcode.RuntimeContextOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustCode(t, compaction.Check(p, tt.before, tt.after), tt.code)
		})
	}
}
