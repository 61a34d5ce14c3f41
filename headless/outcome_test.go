package headless

import (
	"bytes"
	"testing"

	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/model"
)

// The outcome line counts in words that agree with the number.
func TestOutcomeLineCounts(t *testing.T) {
	for _, c := range []struct {
		requests, calls, tokens int
		want                    string
	}{
		{1, 1, 1, "turn turn-1: completed · 1 model request · 1 tool call · 1 token\n"},
		{2, 0, 15, "turn turn-1: completed · 2 model requests · 0 tool calls · 15 tokens\n"},
	} {
		var stderr bytes.Buffer
		a := &run{Options: Options{Stderr: &stderr}}
		a.printOutcome(event.TurnCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", Status: event.StatusCompleted,
			ModelRequests: c.requests, ToolCalls: c.calls, Usage: model.Usage{TotalTokens: c.tokens}})
		if got := stderr.String(); got != c.want {
			t.Errorf("outcome line %q, want %q", got, c.want)
		}
	}
}
