package compaction

import (
	"cmp"
	"fmt"

	"github.com/harness-dev/harness/internal/errcode"
)

// Defaults used by DefaultPolicy; the command line shows them as the
// defaults of --compact-at and friends.
const (
	DefaultCompactAtPercent = 80   // compact when 80 % of the window is occupied
	DefaultTailMessages     = 12   // keep the last 12 messages verbatim
	DefaultReserveCap       = 8192 // reserve min(8192, window/8) for the answer
)

// Policy says when to compact and what to keep. All figures are occupancy
// tokens (see Algorithm).
type Policy struct {
	// WindowTokens is the context window of the model.
	WindowTokens int `json:"windowTokens"`
	// ThresholdTokens: compaction is due at an occupancy at or above it.
	ThresholdTokens int `json:"thresholdTokens"`
	// TailMessages is how many of the latest messages are kept verbatim, at
	// least; the boundary may move back to keep tool calls with their results.
	TailMessages int `json:"tailMessages"`
	// ReserveTokens is kept free for the answer: a request is sent only when
	// occupancy + reserve ≤ window, and the answer is limited to it.
	ReserveTokens int `json:"reserveTokens"`
}

// Validate returns RUNTIME_INVALID_INPUT unless 0 < threshold ≤ window,
// 0 ≤ reserve < window, threshold + reserve ≤ window and tailMessages ≥ 1.
func (p Policy) Validate() error {
	bad := func(format string, args ...any) error {
		return &errcode.Error{
			Code:    errcode.RuntimeInvalidInput,
			Op:      "compaction.policy",
			Message: "validate context policy: " + fmt.Sprintf(format, args...),
		}
	}
	switch {
	case p.ThresholdTokens <= 0:
		return bad("threshold %d is not positive", p.ThresholdTokens)
	case p.ThresholdTokens > p.WindowTokens:
		return bad("threshold %d exceeds the window %d", p.ThresholdTokens, p.WindowTokens)
	case p.ReserveTokens < 0:
		return bad("reserve %d is negative", p.ReserveTokens)
	case p.ReserveTokens >= p.WindowTokens:
		return bad("reserve %d is not below the window %d", p.ReserveTokens, p.WindowTokens)
	case p.ThresholdTokens > p.WindowTokens-p.ReserveTokens:
		return bad("threshold %d plus reserve %d exceeds the window %d",
			p.ThresholdTokens, p.ReserveTokens, p.WindowTokens)
	case p.TailMessages < 1:
		return bad("tail of %d messages is below 1", p.TailMessages)
	}
	return nil
}

// PolicyFor builds a policy from the command line's --context-window and
// --compact-at (a percent of the window, 1..100): the threshold is
// window*percent/100, lowered if needed so that threshold + reserve ≤ window.
// It returns RUNTIME_INVALID_INPUT for a percent outside 1..100 or a policy
// that does not validate.
func PolicyFor(window, compactAtPercent, tailMessages, reserve int) (Policy, error) {
	if compactAtPercent < 1 || compactAtPercent > 100 {
		return Policy{}, &errcode.Error{
			Code:    errcode.RuntimeInvalidInput,
			Op:      "compaction.policy",
			Message: fmt.Sprintf("validate context policy: compact-at %d%% is outside 1..100", compactAtPercent),
		}
	}
	p := Policy{
		WindowTokens: window,
		// A negative reserve lowers nothing (Validate refuses it).
		ThresholdTokens: min(percentOf(window, compactAtPercent), window-max(reserve, 0)),
		TailMessages:    tailMessages,
		ReserveTokens:   reserve,
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// DefaultPolicy is the policy for a window when nothing else is given:
// compact at 80 %, keep 12 messages, reserve min(8192, window/8). The
// threshold is at least 1, so the policy validates for any window ≥ 1:
// 80 % of the window is below the seven eighths the reserve leaves, so
// threshold + reserve ≤ window without lowering the threshold
// (TestDefaultPolicy validates every policy it checks).
func DefaultPolicy(window int) Policy {
	reserve := min(DefaultReserveCap, window/8)
	return Policy{
		WindowTokens:    window,
		ThresholdTokens: max(percentOf(window, DefaultCompactAtPercent), 1),
		TailMessages:    DefaultTailMessages,
		ReserveTokens:   max(reserve, 0),
	}
}

// percentOf returns n*percent/100 rounded down, without overflowing for
// large n.
func percentOf(n, percent int) int {
	return n/100*percent + n%100*percent/100
}

// Due reports whether compaction is due: occupancy ≥ threshold.
func Due(p Policy, occupancy int) bool {
	return occupancy >= p.ThresholdTokens
}

// Fits reports whether a request of this occupancy may be sent:
// occupancy + reserve ≤ window.
func Fits(p Policy, occupancy int) bool {
	return occupancy <= p.WindowTokens-p.ReserveTokens
}

// OutputLimit returns the smallest positive value among the request's max
// tokens, the remaining token budget and the reserve; a value ≤ 0 means
// that limit is not given. It returns 0 (no limit) when none is given.
func OutputLimit(maxTokens, remainingBudget, reserve int) int {
	limit := 0
	for _, v := range [...]int{maxTokens, remainingBudget, reserve} {
		if v > 0 {
			limit = min(v, cmp.Or(limit, v)) // v is the first limit given, or the smaller one
		}
	}
	return limit
}

// Check judges a compaction: before is the occupancy of the request the
// view replaces, after the occupancy of the request built on the view. It
// returns RUNTIME_CONTEXT_OVERFLOW when the view is not smaller, or when it
// is smaller but still does not fit (occupancy + reserve > window), and nil
// otherwise.
func Check(p Policy, before, after int) error {
	switch {
	case after >= before:
		return &errcode.Error{
			Code: errcode.RuntimeContextOverflow,
			Op:   "compaction.check",
			Message: fmt.Sprintf("compact context: the compacted view (%d tokens) is not smaller than the history it replaces (%d tokens)",
				after, before),
		}
	case !Fits(p, after):
		return &errcode.Error{
			Code: errcode.RuntimeContextOverflow,
			Op:   "compaction.check",
			Message: fmt.Sprintf("compact context: the compacted view (%d tokens) plus the reserve (%d) still exceeds the window (%d)",
				after, p.ReserveTokens, p.WindowTokens),
		}
	}
	return nil
}
