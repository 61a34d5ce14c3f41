package runtime

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/memstore"
	"github.com/harness-dev/harness/tools"
)

// sessionWithCalls is a session over an in-memory store whose history
// holds calls tool calls of real-length IDs (29 characters), 50 per
// assistant message, with its first checkpoint written.
func sessionWithCalls(b *testing.B, calls int) *turn {
	b.Helper()
	ctx := b.Context()
	st := memstore.New(memstore.Options{})
	id := event.NewID("sess")
	if _, err := st.CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
		b.Fatal(err)
	}
	who, err := st.Acquire(ctx, id, store.Owner{ID: "bench"}, store.AcquireOptions{})
	if err != nil {
		b.Fatal(err)
	}
	log, err := store.NewSessionLog(ctx, st, id, who)
	if err != nil {
		b.Fatal(err)
	}
	set := checkpoint.Settings{Model: "m", System: "sys", Tools: tools.ModelSpecs()}
	rt := &Runtime{cfg: Config{Now: time.Now, NewID: event.NewID}}
	s := &Session{rt: rt, log: log, id: id, settings: set}
	s.state = newState(set)
	s.state.turns = []string{"turn-1"}
	s.state.addQuiet(model.Message{ID: "msg-u", Role: model.RoleUser, Content: "go"})
	for n := 0; n < calls; {
		a := model.Message{ID: fmt.Sprintf("msg-a%d", n), Role: model.RoleAssistant}
		var results []model.Message
		for j := 0; j < 50 && n < calls; j++ {
			cid := fmt.Sprintf("call_%024x", n)
			a.ToolCalls = append(a.ToolCalls, model.ToolCall{ID: cid, Name: "fs.read", Arguments: json.RawMessage(`{"path":"a.go"}`)})
			results = append(results, model.Message{ID: fmt.Sprintf("msg-t%d", n), Role: model.RoleTool, ToolCallID: cid, Name: "fs.read", Content: "{}"})
			s.state.seenCalls[cid] = true
			n++
		}
		s.state.addQuiet(a)
		for _, r := range results {
			s.state.addQuiet(r)
		}
	}
	t := &turn{s: s, r: &run{sess: s, id: "run-1", turnID: "turn-1", grants: map[string]bool{}}, ctx: ctx}
	if err := t.checkpoint(checkpoint.PhaseModel, &checkpoint.NextRequest{RequestID: "req-0"}, nil); err != nil {
		b.Fatal(err)
	}
	return t
}

// BenchmarkCheckpointSeenCalls times a round's checkpoint (the event and
// the row save) in a session that has seen 5,000 tool calls against one
// that has seen 50, alternately in the same run: the IDs are derived from
// the history, not listed in every checkpoint, so the ratio stays near 1.
func BenchmarkCheckpointSeenCalls(b *testing.B) {
	small, large := sessionWithCalls(b, 50), sessionWithCalls(b, 5000)
	var ds, dl time.Duration
	listed := 0
	for i := 0; b.Loop(); i++ {
		for _, t := range []*turn{small, large} {
			t0 := time.Now()
			if err := t.checkpoint(checkpoint.PhaseModel, &checkpoint.NextRequest{RequestID: fmt.Sprintf("req-%d", i+1)}, nil); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			if t == small {
				ds += d
			} else {
				dl += d
				listed = len(t.snapshot(checkpoint.PhaseModel, &checkpoint.NextRequest{RequestID: "req"}, nil).Control.SeenModelCallIDs)
			}
		}
	}
	b.ReportMetric(float64(ds.Nanoseconds())/float64(b.N)/1e3, "µs-at-50")
	b.ReportMetric(float64(dl.Nanoseconds())/float64(b.N)/1e3, "µs-at-5000")
	b.ReportMetric(float64(dl)/float64(ds), "ratio")
	b.ReportMetric(float64(listed), "ids-listed-at-5000")
}
