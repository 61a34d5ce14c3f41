package tui

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// The header names the model the session asks after a settings change (a
// resume with --model, /model X) and the context against its window; a
// summary request's own size does not replace the occupancy shown, the
// compaction's result does.
func TestViewHeaderFollowsSettingsAndCompaction(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		s.events(
			ev(1, event.AgentStarted{AgentID: "agent-1", SessionID: sessID, Model: "gpt-x", RunID: "run-1", TurnID: "turn-1"}),
			ev(2, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
			ev(3, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "read everything"}),
			ev(4, event.ContextAccounted{RunID: "run-1", RequestID: "req-1", OccupancyTokens: 102400, WindowTokens: 128000}),
			ev(5, event.ContextAccounted{RunID: "run-1", RequestID: "req-2", OccupancyTokens: 70000, WindowTokens: 128000, SummaryRequest: true}),
		)
		s.wantText("ctx 80%")
		s.events(
			ev(6, event.ContextCompacted{RunID: "run-1", SummaryMessageID: "summary-1", Summary: "The user wants everything read.",
				BeforeMessages: 30, AfterMessages: 5, BeforeTokens: 102400, AfterTokens: 19200}),
			ev(7, event.TurnCompleted{RunID: "run-1", SessionID: sessID, TurnID: "turn-1", Status: event.StatusCompleted, ModelRequests: 2, Usage: u15}),
			ev(8, event.SettingsChanged{SessionID: sessID, Changed: []string{"model", "contextWindow"}, Model: "fake:b.json",
				WindowTokens: 64000, ThresholdTokens: 51200, TailMessages: 12, ReserveTokens: 8000}),
		)
		s.wantText("fake:b.json", "ctx 30% of 64k", "context compacted")
		return s
	})
}

// On a narrow screen the header gives up the session ID, then the model,
// before the tokens and the context: 60 columns still show what a turn
// costs, not "harness" alone.
func TestNarrowHeaderKeepsTokensAndContext(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 60, 20)
	s.events(
		ev(1, event.AgentStarted{AgentID: "agent-1", SessionID: sessID, Model: "fake:s1.json", RunID: "run-1", TurnID: "turn-1"}),
		ev(2, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
		ev(3, event.ContextAccounted{RunID: "run-1", RequestID: "req-1", OccupancyTokens: 1280, WindowTokens: 128000}),
		ev(4, event.TurnCompleted{RunID: "run-1", SessionID: sessID, TurnID: "turn-1", Status: event.StatusCompleted, ModelRequests: 1, Usage: u15}),
	)
	head, _, _ := strings.Cut(s.text(), "\n")
	for _, want := range []string{"harness", " tok", "ctx 1%"} {
		if !strings.Contains(head, want) {
			t.Errorf("the 60-column header %q lacks %q", head, want)
		}
	}
}
