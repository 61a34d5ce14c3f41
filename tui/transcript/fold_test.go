package transcript

import (
	"testing"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// A summary request's accounting is the size of the summary request, not
// what the model sees next: the occupancy shown stays until the
// compaction says what is left.
func TestSummaryAccountingKeepsOccupancy(t *testing.T) {
	tr := New()
	tr.Apply(ev(1, event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", InputMessageID: "msg-u"}))
	tr.Apply(ev(2, event.ContextAccounted{RunID: "run-1", RequestID: "req-1", OccupancyTokens: 100000, WindowTokens: 128000}))
	tr.Apply(ev(3, event.ContextAccounted{RunID: "run-1", RequestID: "req-2", OccupancyTokens: 60000, WindowTokens: 128000, SummaryRequest: true}))
	if used, win := tr.Occupancy(); used != 100000 || win != 128000 {
		t.Errorf("after the summary request's accounting: %d of %d, want 100000 of 128000", used, win)
	}
	tr.Apply(ev(4, event.ContextCompacted{RunID: "run-1", SummaryMessageID: "summary-1", Summary: "s", BeforeMessages: 40, AfterMessages: 6,
		BeforeTokens: 100000, AfterTokens: 21000}))
	if used, win := tr.Occupancy(); used != 21000 || win != 128000 {
		t.Errorf("after the compaction: %d of %d, want 21000 of 128000", used, win)
	}
	tr.Apply(ev(5, event.ContextAccounted{RunID: "run-1", RequestID: "req-3", OccupancyTokens: 23000, WindowTokens: 128000}))
	if used, _ := tr.Occupancy(); used != 23000 {
		t.Errorf("the next request's accounting: %d, want 23000", used)
	}
}

// settings.changed (a resume with --model or --fake-model, /model X) is
// what the session asks from then on: the model and the window shown
// follow it, and a later agent.started agrees.
func TestSettingsChangedNamesTheModel(t *testing.T) {
	tr := New()
	tr.Apply(ev(1, event.AgentStarted{AgentID: "agent-1", SessionID: "sess-1", Model: "gpt-a", RunID: "run-1", TurnID: "turn-1"}))
	tr.Apply(ev(2, event.ContextAccounted{RunID: "run-1", RequestID: "req-1", OccupancyTokens: 32000, WindowTokens: 128000}))
	tr.Apply(ev(3, event.TurnCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", Status: event.StatusCompleted, Usage: usage}))
	tr.Apply(ev(4, event.SettingsChanged{SessionID: "sess-1", Changed: []string{"model", "contextWindow"}, Model: "fake:b.json",
		WindowTokens: 64000, ThresholdTokens: 51200, TailMessages: 12, ReserveTokens: 8000}))
	if got := tr.Model(); got != "fake:b.json" {
		t.Errorf("model after settings.changed = %q, want fake:b.json", got)
	}
	if used, win := tr.Occupancy(); used != 32000 || win != 64000 {
		t.Errorf("occupancy after settings.changed = %d of %d, want 32000 of 64000", used, win)
	}
	tr.Apply(ev(5, event.AgentStarted{AgentID: "agent-2", SessionID: "sess-1", Model: "fake:b.json", RunID: "run-2", TurnID: "turn-2"}))
	tr.Apply(ev(6, event.MessageCompleted{RunID: "run-2", MessageID: "msg-u", Role: model.RoleUser, Content: "hi"}))
	if got := tr.Model(); got != "fake:b.json" {
		t.Errorf("model after the next turn = %q", got)
	}
}
