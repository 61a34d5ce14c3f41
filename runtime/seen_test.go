package runtime_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/tools"
)

// callID is a tool-call ID of the length real providers give (29
// characters, like call_ and 24 more).
func callID(i int) string { return fmt.Sprintf("call_%024x", i) }

// longSession is the terminal checkpoint of a session of turns turns whose
// history holds calls tool calls (calls/turns per turn, 50 per assistant
// message), as restore reads it (parsed strictly).
func longSession(t testing.TB, sessionID string, turns, calls int, legacy []string) *checkpoint.Checkpoint {
	t.Helper()
	var msgs []model.Message
	var turnIDs []string
	n := 0
	for k := range turns {
		turnIDs = append(turnIDs, fmt.Sprintf("turn-%d", k))
		msgs = append(msgs, model.Message{ID: fmt.Sprintf("msg-u%d", k), Role: model.RoleUser, Content: "read the files"})
		for n < calls*(k+1)/turns {
			a := model.Message{ID: fmt.Sprintf("msg-a%d", n), Role: model.RoleAssistant}
			var results []model.Message
			for j := 0; j < 50 && n < calls*(k+1)/turns; j++ {
				a.ToolCalls = append(a.ToolCalls, model.ToolCall{ID: callID(n), Name: "fs.read", Arguments: json.RawMessage(`{"path":"README.md"}`)})
				results = append(results, model.Message{ID: fmt.Sprintf("msg-t%d", n), Role: model.RoleTool, ToolCallID: callID(n), Name: "fs.read",
					Content: `{"path":"README.md","content":"# demo\n","size":7}`})
				n++
			}
			msgs = append(append(msgs, a), results...)
		}
		msgs = append(msgs, model.Message{ID: fmt.Sprintf("msg-d%d", k), Role: model.RoleAssistant, Content: "read"})
	}
	cp := &checkpoint.Checkpoint{
		Version:        1,
		Identity:       checkpoint.Identity{RunID: "run-last", SessionID: sessionID, TurnID: turnIDs[len(turnIDs)-1], Phase: checkpoint.PhaseTerminal, SessionTurns: turnIDs},
		History:        checkpoint.NewHistory(len(msgs), msgs, nil),
		Settings:       checkpoint.Settings{Model: "fake", System: "you are a test", Tools: tools.ModelSpecs()},
		Control:        checkpoint.Control{SeenModelCallIDs: legacy, RunGrants: []string{}, WarnedBudgets: []string{}, PendingSteering: []checkpoint.Input{}, QueuedInputs: []checkpoint.Input{}},
		TerminalStatus: &checkpoint.TerminalStatus{Status: checkpoint.StatusCompleted},
		Workspace:      &checkpoint.Workspace{Backend: "local"},
	}
	b, err := checkpoint.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := checkpoint.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

// answer is one round: a call with this ID, or (id "") a text answer.
func answer(id string) []model.Chunk {
	if id == "" {
		c := model.Completion{Content: "done", FinishReason: model.FinishStop}
		return []model.Chunk{{Kind: model.ChunkDelta, Delta: "done"}, {Kind: model.ChunkCompletion, Completion: &c}}
	}
	call := model.ToolCall{ID: id, Name: "fs.read", Arguments: json.RawMessage(`{"path":"README.md"}`)}
	c := model.Completion{ToolCalls: []model.ToolCall{call}, FinishReason: model.FinishToolCalls}
	return []model.Chunk{{Kind: model.ChunkToolCall, ToolCall: &call}, {Kind: model.ChunkCompletion, Completion: &c}}
}

// A session that has seen 5,000 tool-call IDs does not carry them in its
// checkpoints: each runtime.checkpoint of a new round is the size of the
// same round's in a session that has seen 50 (they were listed whole in
// every checkpoint before, 160 KB each). Restore derives them from the
// history, so a reused one is still known (and renamed: "<id>~2"), and a
// list an older checkpoint carried is still honored.
func TestSeenCallIDsAreNotCheckpointed(t *testing.T) {
	sizes := map[int][]int{}
	for _, calls := range []int{50, 5000} {
		m := &chunkModel{answers: [][]model.Chunk{answer("call_new"), answer(""), answer(callID(7)), answer("")}}
		f := newFixture(t, m, nil, nil)
		cp := longSession(t, f.sess.ID(), 10, calls, []string{"legacy_id_not_in_the_history"})
		f.sess.Close(t.Context())
		rt := runtime.New(runtime.Config{})
		s, err := rt.RestoreSession(t.Context(), f.log, runtime.SessionConfig{Model: m, Workspace: mustLocal(t, f.root)}, cp, checkpoint.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		sent, err := s.Send(t.Context(), "one more")
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := rt.Wait(t.Context(), sent.RunID); out.Status != runtime.StatusCompleted {
			t.Fatalf("%d calls: outcome %+v", calls, out)
		}
		for _, d := range ofType[event.RuntimeCheckpoint](f.events()) {
			sizes[calls] = append(sizes[calls], len(d.Payload))
		}
		// A call ID of the restored history is known as used: the call
		// runs under a new ID, which the next request sends back.
		sent, err = s.Send(t.Context(), "and again")
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := rt.Wait(t.Context(), sent.RunID); out.Status != runtime.StatusCompleted {
			t.Errorf("%d calls: a reused call ID gave %+v", calls, out)
		}
		tc := ofType[event.ToolCall](f.events())
		if got := tc[len(tc)-1].ModelCallID; got != callID(7)+"~2" {
			t.Errorf("%d calls: the reused ID %s ran as %s, want %s~2", calls, callID(7), got, callID(7))
		}
		if reqs := m.requests(); len(reqs) == 4 {
			msgs := reqs[3].Messages
			a, r := msgs[len(msgs)-2], msgs[len(msgs)-1]
			if len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != callID(7)+"~2" || r.ToolCallID != callID(7)+"~2" {
				t.Errorf("%d calls: the next request sends %+v and %+v", calls, a.ToolCalls, r.ToolCallID)
			}
		}
		s.Close(t.Context())
	}
	small, large := sizes[50], sizes[5000]
	if len(small) != 3 || len(large) != 3 {
		t.Fatalf("checkpoints per turn: %d and %d, want 3", len(small), len(large))
	}
	for i := range small {
		if d := large[i] - small[i]; d < -64 || d > 64 {
			t.Errorf("checkpoint %d of the turn: %d bytes after 5,000 calls, %d after 50", i+1, large[i], small[i])
		}
	}
	t.Logf("a round's runtime.checkpoint: %v bytes after 50 calls, %v after 5,000", small, large)

	// The list an older checkpoint carried is honored, and carried on by
	// the checkpoints after it.
	legacy := "legacy_id_not_in_the_history"
	m := &chunkModel{answers: [][]model.Chunk{answer(legacy), answer(""), answer(legacy), answer("")}}
	f := newFixture(t, m, nil, nil)
	cp := longSession(t, f.sess.ID(), 1, 50, []string{legacy})
	f.sess.Close(t.Context())
	for range 2 {
		rt := runtime.New(runtime.Config{})
		s, err := rt.RestoreSession(t.Context(), f.log, runtime.SessionConfig{Model: m, Workspace: mustLocal(t, f.root)}, cp, checkpoint.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		sent, err := s.Send(t.Context(), "go")
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := rt.Wait(t.Context(), sent.RunID); out.Status != runtime.StatusCompleted {
			t.Errorf("an ID an old checkpoint listed gave %+v", out)
		}
		tc := ofType[event.ToolCall](f.events())
		if got := tc[len(tc)-1].ModelCallID; got == legacy || !strings.HasPrefix(got, legacy+"~") {
			t.Errorf("an ID an old checkpoint listed ran as %s, not under a new ID", got)
		}
		s.Close(t.Context())
		rp, err := runtime.LatestTerminal(t.Context(), f.st, f.sess.ID())
		if err != nil {
			t.Fatal(err)
		}
		if cp = rp.Checkpoint; len(cp.Control.SeenModelCallIDs) != 1 {
			t.Fatalf("the next checkpoint lists %v", cp.Control.SeenModelCallIDs)
		}
	}
}
