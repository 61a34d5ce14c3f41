package compaction_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/model"
)

// TestCompactionRounds runs the runtime's sequence twice over a growing
// session: meter, Due, Boundary, SummaryRequest, View, Reset, Check. The
// second round starts from the first round's view, so summaries chain and
// the first request stays pinned exactly once.
func TestCompactionRounds(t *testing.T) {
	const system = "You are Harness."
	first := model.Message{ID: "msg-first", Role: model.RoleUser, Content: "Port the parser; " + strings.Repeat("keep the API. ", 1000)}
	p := compaction.DefaultPolicy(64 << 10)
	msgs := []model.Message{{Role: model.RoleSystem, Content: "workspace: /w"}, first}
	meter := compaction.NewMeter(system, benchTools)
	meter.Reset(msgs)

	next := 0
	for round := 1; round <= 2; round++ {
		for !compaction.Due(p, meter.Tokens()) {
			// One more exchange, with IDs unique in the session.
			for _, m := range benchHistory(4) {
				m.ID = fmt.Sprintf("%s-%d", m.ID, next)
				if m.ToolCallID != "" {
					m.ToolCallID = fmt.Sprintf("%s-%d", m.ToolCallID, next)
				}
				if len(m.ToolCalls) > 0 {
					m.ToolCalls = []model.ToolCall{m.ToolCalls[0]}
					m.ToolCalls[0].ID = fmt.Sprintf("%s-%d", m.ToolCalls[0].ID, next)
				}
				msgs = append(msgs, m)
				meter.Add(m)
			}
			next++
		}
		before := meter.Tokens()
		b, err := compaction.Boundary(msgs, p.TailMessages)
		mustCode(t, err, "")
		t.Logf("round %d: %d messages, boundary %d, %d tokens", round, len(msgs), b, before)

		req := compaction.SummaryRequest(msgs[:b])
		for _, m := range req {
			if m.Role == model.RoleTool || len(m.ToolCalls) > 0 {
				t.Fatalf("round %d: summary request carries a tool message or call", round)
			}
		}
		if occ := compaction.Occupancy("", nil, req); occ >= before {
			t.Errorf("round %d: summary request of %d tokens is not smaller than the history of %d", round, occ, before)
		}

		view, err := compaction.View(msgs, b, fmt.Sprintf("summary %d", round), &first)
		mustCode(t, err, "")
		if diff := cmp.Diff(msgs[b:], view[len(view)-(len(msgs)-b):]); diff != "" {
			t.Errorf("round %d: the view does not end with the tail (-tail +view):\n%s", round, diff)
		}
		meter.Reset(view)
		if got, want := meter.Tokens(), compaction.Occupancy(system, benchTools, view); got != want {
			t.Fatalf("round %d: Tokens after Reset = %d, Occupancy = %d", round, got, want)
		}
		mustCode(t, compaction.Check(p, before, meter.Tokens()), "")

		var summaries, pins int
		for _, m := range view {
			if compaction.IsSummary(m) {
				summaries++
			}
			if m.ID == first.ID {
				pins++
				if len(m.Content) > compaction.PinBound+len(compaction.PinMarker) {
					t.Errorf("round %d: pinned request of %d bytes", round, len(m.Content))
				}
			}
		}
		if summaries != 1 || pins != 1 {
			t.Errorf("round %d: %d summaries and %d pinned requests in the view, want 1 and 1", round, summaries, pins)
		}
		if view[0].Content != "workspace: /w" {
			t.Errorf("round %d: view starts with %q, not the system message", round, view[0].Content)
		}
		msgs = view
	}
}
