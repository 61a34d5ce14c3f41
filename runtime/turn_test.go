package runtime_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/tools"
)

func TestTurnEventOrder(t *testing.T) {
	m := script(t, `[
	 {"content":"","toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}}],"usage":{"promptTokens":10,"completionTokens":5}},
	 {"content":"done","deltas":["do","ne"],"usage":{"promptTokens":20,"completionTokens":2}}]`)
	f := newFixture(t, m, m, nil)
	out := f.wait(f.start("read the readme"))
	if out.Status != runtime.StatusCompleted || out.ErrorCode != "" {
		t.Fatalf("outcome = %+v", out)
	}
	if out.Usage.TotalTokens != 37 || out.ModelRequests != 2 || out.ToolCalls != 1 {
		t.Errorf("usage/counters = %+v", out)
	}
	want := []string{
		"agent.started", "turn.started", "message.completed",
		"context.accounted", "model.request", "runtime.checkpoint", "model.response", "message.completed",
		"tool.call", "policy.decision", "tool.result", "message.completed",
		"context.accounted", "model.request", "runtime.checkpoint", "message.delta", "model.response", "message.completed",
		"runtime.checkpoint", "turn.completed", "agent.stopped",
	}
	evs := f.events()
	got := types(evs)
	// Deltas may be coalesced: compare with runs of message.delta folded.
	if diff := cmp.Diff(want, foldDeltas(got)); diff != "" {
		t.Errorf("event order (-want +got):\n%s", diff)
	}
	res := ofType[event.ToolResult](evs)
	if len(res) != 1 || !res[0].OK {
		t.Fatalf("tool results = %+v", res)
	}
	var out1 struct{ Content string }
	json.Unmarshal(res[0].Output, &out1)
	if out1.Content != "# demo\n" {
		t.Errorf("fs.read output = %s", res[0].Output)
	}
	// The second request carries the tool call and its result.
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	msgs := reqs[1].Messages
	if len(msgs) != 3 || msgs[1].ToolCalls[0].ID != "c1" || msgs[2].ToolCallID != "c1" || msgs[2].Name != "fs.read" {
		t.Errorf("second request messages = %+v", msgs)
	}
	if reqs[0].System != "you are a test" || len(reqs[0].Tools) != 5 {
		t.Errorf("first request = %+v", reqs[0])
	}
}

func foldDeltas(ts []string) []string {
	var out []string
	for _, ty := range ts {
		if ty == "message.delta" && len(out) > 0 && out[len(out)-1] == "message.delta" {
			continue
		}
		out = append(out, ty)
	}
	return out
}

// The steering fixture of issue 3: two messages steered while the first
// model request is in flight, two while a tool runs.
func TestSteeringFixture(t *testing.T) {
	inner := script(t, `[
	 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"main.go"}}]},
	 {"content":"ok"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{1: true}}
	root := t.TempDir()
	writeFile(t, root, "main.go", "package main\n")
	local := mustLocal(t, root)
	gw := &gatedWorkspace{Workspace: local, started: make(chan string), release: make(chan struct{})}
	f := newFixtureWS(t, gm, inner, gw, root, nil)
	ctx := t.Context()
	runID := f.start("task")

	<-gm.started
	var ids []string
	for _, s := range []string{"model A", "model B"} {
		sent, err := f.sess.Send(ctx, s)
		if err != nil || sent.Kind != runtime.SentSteered || sent.RunID != runID {
			t.Fatalf("send %q = %+v, %v; want steering of %s", s, sent, err, runID)
		}
		ids = append(ids, sent.MessageID)
	}
	gm.release <- struct{}{}
	<-gw.started
	for _, s := range []string{"tool A", "tool B"} {
		sent, err := f.sess.Send(ctx, s)
		if err != nil || sent.Kind != runtime.SentSteered || sent.RunID != runID {
			t.Fatalf("send %q = %+v, %v; want steering of %s", s, sent, err, runID)
		}
		ids = append(ids, sent.MessageID)
	}
	close(gw.release)
	out := f.wait(runID)
	if out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	reqs := inner.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	for _, m := range reqs[0].Messages {
		if strings.Contains(m.Content, " A") || strings.Contains(m.Content, " B") {
			t.Errorf("first request carries steering: %q", m.Content)
		}
	}
	var steered []string
	for _, m := range reqs[1].Messages {
		if m.Role == model.RoleUser && m.Content != "task" {
			steered = append(steered, m.Content)
		}
	}
	if diff := cmp.Diff([]string{"model A", "model B", "tool A", "tool B"}, steered); diff != "" {
		t.Errorf("second request steering (-want +got):\n%s", diff)
	}
	applied := ofType[event.SteeringApplied](f.events())
	if len(applied) != 1 || !cmp.Equal(applied[0].MessageIDs, ids) {
		t.Errorf("steering.applied = %+v, want ids %v", applied, ids)
	}
	if n := len(ofType[event.SteeringQueued](f.events())); n != 4 {
		t.Errorf("steering.queued = %d", n)
	}
}

// Steering accepted while the final answer streams causes another round.
func TestSteeringDuringFinalAnswer(t *testing.T) {
	inner := script(t, `[{"content":"first"},{"content":"second"},{"content":"third"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{1: true}}
	f := newFixture(t, gm, inner, nil)
	runID := f.start("go")
	<-gm.started
	if _, err := f.sess.Send(t.Context(), "one more thing"); err != nil {
		t.Fatal(err)
	}
	close(gm.release)
	out := f.wait(runID)
	if out.Status != runtime.StatusCompleted || out.ModelRequests != 2 {
		t.Fatalf("outcome = %+v", out)
	}
	last := inner.Requests()[1].Messages
	if last[len(last)-1].Content != "one more thing" {
		t.Errorf("last message of the second request = %+v", last[len(last)-1])
	}
	// After the end, the same command starts the next turn.
	sent, err := f.sess.Send(t.Context(), "late")
	if err != nil || sent.Kind != runtime.SentStarted || sent.RunID == runID {
		t.Fatalf("send after the end = %+v, %v", sent, err)
	}
	if out := f.wait(sent.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("next turn = %+v", out)
	}
}

// A steering append in progress when cancel wins completes and stays in
// the log; text sent after the cancel waits for the turn's end and starts
// the next turn, which inherits the accepted steering; the canceled turn
// ends exactly once.
func TestCancelWhileSteeringAppendInFlight(t *testing.T) {
	// The first request is held at the gate until the cancel aborts it,
	// so the script's one answer is the next turn's.
	inner := script(t, `[{"content":"next"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{1: true}}
	f := newFixture(t, gm, inner, nil)
	gl := &gatedLog{SessionLog: f.log, block: event.TypeSteeringQueued, entered: make(chan struct{}), release: make(chan struct{})}
	f.swapLog(gl, gm)
	ctx := t.Context()
	runID := f.start("go")
	<-gm.started
	steerDone := make(chan error)
	go func() {
		_, err := f.sess.Send(ctx, "in flight")
		steerDone <- err
	}()
	<-gl.entered
	if !f.sess.Cancel() {
		t.Fatal("cancel found no active turn")
	}
	after := make(chan runtime.Sent)
	go func() {
		sent, err := f.sess.Send(ctx, "after cancel")
		if err != nil {
			t.Errorf("send after cancel: %v", err)
		}
		after <- sent
	}()
	close(gl.release)
	if err := <-steerDone; err != nil {
		t.Fatalf("in-flight steer: %v", err)
	}
	out := f.wait(runID)
	if out.Status != runtime.StatusCanceled {
		t.Fatalf("outcome = %+v", out)
	}
	sent := <-after
	if sent.Kind != runtime.SentStarted || sent.RunID == runID {
		t.Fatalf("send after cancel = %+v, want a new turn", sent)
	}
	if out := f.wait(sent.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("next turn = %+v", out)
	}
	evs := f.events()
	q := ofType[event.SteeringQueued](evs)
	if len(q) != 1 || q[0].Content != "in flight" || q[0].RunID != runID {
		t.Errorf("steering.queued = %+v", q)
	}
	if n := count(evs, event.TypeTurnCompleted); n != 2 {
		t.Errorf("turn.completed = %d, want one per turn", n)
	}
	// The next turn's request carries the inherited steering, then its own
	// message.
	msgs := inner.Requests()[0].Messages
	var users []string
	for _, m := range msgs {
		if m.Role == model.RoleUser {
			users = append(users, m.Content)
		}
	}
	if diff := cmp.Diff([]string{"go", "after cancel", "in flight"}, users); diff != "" {
		t.Errorf("user messages of the next request (-want +got):\n%s", diff)
	}
}

// A cancel racing the final completion yields exactly one terminal outcome.
func TestCancelRacesCompletion(t *testing.T) {
	for i := range 60 {
		m := script(t, `[{"content":"answer","deltas":["ans","wer"]}]`)
		f := newFixture(t, m, m, nil)
		runID := f.start(fmt.Sprintf("race %d", i))
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.sess.Cancel()
		}()
		out := f.wait(runID)
		wg.Wait()
		evs := f.events()
		tc := ofType[event.TurnCompleted](evs)
		if len(tc) != 1 {
			t.Fatalf("round %d: %d turn.completed; outcome %+v; events %v", i, len(tc), out, types(evs))
		}
		if tc[0].Status != string(out.Status) {
			t.Fatalf("round %d: stored %s, outcome %s", i, tc[0].Status, out.Status)
		}
		if out.Status != runtime.StatusCompleted && out.Status != runtime.StatusCanceled {
			t.Fatalf("round %d: status %s", i, out.Status)
		}
		if n := count(evs, event.TypeAgentStopped); n != 1 {
			t.Fatalf("round %d: %d agent.stopped", i, n)
		}
		if ty := evs[len(evs)-1].Type; ty != event.TypeAgentStopped {
			t.Fatalf("round %d: last event %s", i, ty)
		}
	}
}

func TestCancelDuringTool(t *testing.T) {
	inner := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"main.go"}},{"id":"c2","name":"fs.list","arguments":{"path":"."}}]}]`)
	root := t.TempDir()
	writeFile(t, root, "main.go", "package main\n")
	gw := &gatedWorkspace{Workspace: mustLocal(t, root), started: make(chan string), release: make(chan struct{})}
	f := newFixtureWS(t, inner, inner, gw, root, nil)
	runID := f.start("go")
	<-gw.started
	f.sess.Cancel()
	out := f.wait(runID)
	if out.Status != runtime.StatusCanceled {
		t.Fatalf("outcome = %+v", out)
	}
	res := ofType[event.ToolResult](f.events())
	if len(res) != 2 {
		t.Fatalf("tool results = %+v", res)
	}
	for _, r := range res {
		if r.OK || r.Error == nil || r.Error.Code != string(errcode.ToolCanceled) {
			t.Errorf("result = %+v, want TOOL_CANCELED", r)
		}
	}
}

func TestFollowUpKeepsHistoryPrefix(t *testing.T) {
	m := script(t, `[
	 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}}],"usage":{"promptTokens":3,"completionTokens":1}},
	 {"content":"read it","usage":{"promptTokens":3,"completionTokens":1}},
	 {"content":"follow-up answer","usage":{"promptTokens":3,"completionTokens":1}}]`)
	f := newFixture(t, m, m, nil)
	if out := f.wait(f.start("first")); out.Status != runtime.StatusCompleted {
		t.Fatalf("first = %+v", out)
	}
	before := f.rawEvents()
	out := f.wait(f.start("second"))
	if out.Status != runtime.StatusCompleted {
		t.Fatalf("second = %+v", out)
	}
	after := f.rawEvents()
	if len(after) <= len(before) {
		t.Fatal("follow-up appended nothing")
	}
	for i := range before {
		if !bytes.Equal(before[i], after[i]) {
			t.Fatalf("event %d changed by the follow-up", i)
		}
	}
	req := m.Requests()[2]
	var sawCall, sawResult bool
	for _, msg := range req.Messages {
		if len(msg.ToolCalls) > 0 && msg.ToolCalls[0].ID == "c1" {
			sawCall = true
		}
		if msg.ToolCallID == "c1" && strings.Contains(msg.Content, "# demo") {
			sawResult = true
		}
	}
	if !sawCall || !sawResult || req.Messages[len(req.Messages)-1].Content != "second" {
		t.Errorf("follow-up request = %+v", req.Messages)
	}
	if u := f.sess.Usage(); u.TotalTokens != 12 {
		t.Errorf("cumulative usage = %+v", u)
	}
}

func TestFollowUpAdmission(t *testing.T) {
	inner := script(t, `[{"content":"x","hang":true},{"content":"y"}]`)
	f := newFixture(t, inner, inner, nil)
	ctx := t.Context()
	runID, err := f.sess.Start(ctx, runtime.StartRequest{Input: "a", TurnID: "turn-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.sess.Start(ctx, runtime.StartRequest{Input: "b"})
	mustCode(t, err, errcode.RuntimeInvalidInput) // second active turn
	f.sess.Cancel()
	f.wait(runID)
	_, err = f.sess.Start(ctx, runtime.StartRequest{Input: "b", TurnID: "turn-1"})
	mustCode(t, err, errcode.RuntimeInvalidInput) // reused turn id
	_, err = f.sess.Start(ctx, runtime.StartRequest{Input: "b", Messages: []model.Message{{Role: model.RoleUser, Content: "x"}}})
	mustCode(t, err, errcode.RuntimeInvalidInput) // replacement context
	other := newFixture(t, inner, inner, nil)
	_, err = f.sess.Start(ctx, runtime.StartRequest{Input: "b", Log: other.log})
	mustCode(t, err, errcode.RuntimeInvalidInput) // different store
	_, err = f.sess.Start(ctx, runtime.StartRequest{Input: ""})
	mustCode(t, err, errcode.RuntimeInvalidInput)
}

func TestQueueForNextTurn(t *testing.T) {
	inner := script(t, `[{"content":"one"},{"content":"two"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{1: true}}
	f := newFixture(t, gm, inner, nil)
	runID := f.start("first")
	<-gm.started
	sent, err := f.sess.Queue(t.Context(), "after this")
	if err != nil || sent.Kind != runtime.SentQueued {
		t.Fatalf("queue = %+v, %v", sent, err)
	}
	close(gm.release)
	if out := f.wait(runID); out.Status != runtime.StatusCompleted || out.ModelRequests != 1 {
		t.Fatalf("first = %+v", out)
	}
	// The session starts the queued turn on its own.
	out, err := f.sess.Wait(t.Context())
	if err != nil || out.Status != runtime.StatusCompleted || out.RunID == runID {
		t.Fatalf("second = %+v, %v", out, err)
	}
	if q := f.sess.Queued(); len(q) != 0 {
		t.Errorf("still queued: %q", q)
	}
	reqs := inner.Requests()
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Content != "after this" {
		t.Errorf("queued input became %+v", last)
	}
	q := ofType[event.InputQueued](f.events())
	ts := ofType[event.TurnStarted](f.events())
	if len(q) != 1 || len(ts) != 2 || ts[1].InputMessageID != q[0].MessageID {
		t.Errorf("queued %+v, turns %+v", q, ts)
	}
}

// A turn whose answer has no text says so in its turn.completed; one
// with text has no note.
func TestEmptyAnswerNote(t *testing.T) {
	m := script(t, `[{"content":""},{"content":"hello"}]`)
	f := newFixture(t, m, m, nil)
	for _, want := range []string{runtime.EmptyAnswerNote, ""} {
		if out := f.wait(f.start("hi")); out.Status != runtime.StatusCompleted {
			t.Fatalf("outcome = %+v", out)
		}
		tc := ofType[event.TurnCompleted](f.events())
		if got := tc[len(tc)-1].Note; got != want {
			t.Errorf("turn.completed note %q, want %q", got, want)
		}
	}
}

func TestBudgets(t *testing.T) {
	t.Run("tokens", func(t *testing.T) {
		m := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.list","arguments":{"path":"."}}],"usage":{"promptTokens":60,"completionTokens":40}}]`)
		f := newFixture(t, m, m, func(_ *runtime.SessionConfig, s *checkpoint.Settings) { s.Budget.MaxModelTokens = 100 })
		out := f.wait(f.start("go"))
		if out.Status != runtime.StatusBudgetExceeded || out.ErrorCode != errcode.RuntimeBudgetExceeded {
			t.Fatalf("outcome = %+v", out)
		}
		evs := f.events()
		for _, r := range ofType[event.ToolResult](evs) {
			if r.OK {
				t.Error("a tool ran past the token budget")
			}
		}
		w := ofType[event.BudgetWarning](evs)
		if len(w) != 1 || w[0].Metric != "tokens" {
			t.Errorf("warnings = %+v", w)
		}
		// The next turn makes no request: the budget stays spent.
		out = f.wait(f.start("and another"))
		if out.Status != runtime.StatusBudgetExceeded || out.ModelRequests != 0 || len(m.Requests()) != 1 {
			t.Errorf("a turn after the budget was spent: %+v, %d requests in all", out, len(m.Requests()))
		}
	})
	t.Run("steps", func(t *testing.T) {
		m := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.list","arguments":{"path":"."}}]},{"toolCalls":[{"id":"c2","name":"fs.list","arguments":{"path":"."}}]}]`)
		f := newFixture(t, m, m, func(_ *runtime.SessionConfig, s *checkpoint.Settings) { s.Budget.MaxSteps = 2 })
		out := f.wait(f.start("go"))
		if out.Status != runtime.StatusBudgetExceeded || out.ModelRequests != 2 {
			t.Fatalf("outcome = %+v", out)
		}
	})
	t.Run("tool calls", func(t *testing.T) {
		m := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.list","arguments":{"path":"."}},{"id":"c2","name":"fs.list","arguments":{"path":"."}}]}]`)
		f := newFixture(t, m, m, func(_ *runtime.SessionConfig, s *checkpoint.Settings) { s.Budget.MaxToolCalls = 1 })
		out := f.wait(f.start("go"))
		if out.Status != runtime.StatusBudgetExceeded || out.ToolCalls != 1 {
			t.Fatalf("outcome = %+v", out)
		}
		res := ofType[event.ToolResult](f.events())
		if len(res) != 2 || !res[0].OK || res[1].OK {
			t.Errorf("results = %+v", res)
		}
	})
}

func TestStreamValidation(t *testing.T) {
	cases := map[string]string{
		"text after tool call": `[{"chunks":[{"toolCall":{"id":"c1","name":"fs.list","arguments":{"path":"."}}},{"delta":"x"},{"completion":{"content":"x"}}]}]`,
		"missing completion":   `[{"content":"x","omitCompletion":true}]`,
		"content differs":      `[{"chunks":[{"delta":"abc"},{"completion":{"content":"abd"}}]}]`,
		"past the script":      `[]`,
		"reused call id":       `[{"chunks":[{"toolCall":{"id":"c1","name":"fs.list","arguments":{"path":"."}}},{"toolCall":{"id":"c1","name":"fs.list","arguments":{"path":"."}}},{"completion":{"content":""}}]}]`,
	}
	for name, js := range cases {
		t.Run(name, func(t *testing.T) {
			m := script(t, js)
			f := newFixture(t, m, m, nil)
			out := f.wait(f.start("go"))
			if out.Status != runtime.StatusFailed || out.ErrorCode != errcode.RuntimeModelStreamInvalid {
				t.Fatalf("outcome = %+v", out)
			}
			if n := count(f.events(), event.TypeTurnCompleted); n != 1 {
				t.Errorf("turn.completed = %d", n)
			}
		})
	}
	t.Run("model error keeps its code", func(t *testing.T) {
		m := script(t, `[{"error":"MODEL_RATE_LIMITED"}]`)
		f := newFixture(t, m, m, nil)
		out := f.wait(f.start("go"))
		if out.Status != runtime.StatusFailed || out.ErrorCode != errcode.ModelRateLimited {
			t.Fatalf("outcome = %+v", out)
		}
	})
	t.Run("round deadline", func(t *testing.T) {
		m := script(t, `[{"content":"x","hang":true}]`)
		f := newFixture(t, m, m, func(_ *runtime.SessionConfig, s *checkpoint.Settings) { s.ModelTimeoutMs = 50 })
		out := f.wait(f.start("go"))
		if out.ErrorCode != errcode.RuntimeModelTimeout {
			t.Fatalf("outcome = %+v", out)
		}
	})
}

// answerer answers every permission question of f's session through
// Session.Answer, as a front end does, with answer(n) for the n-th (from 1).
func answerer(t *testing.T, f *fixture, answer func(n int) runtime.PermissionAnswer) (asked func() int) {
	t.Helper()
	sub, err := f.sess.Events(t.Context(), -1)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	done := make(chan struct{})
	t.Cleanup(func() { close(done); sub.Close() })
	go func() {
		for {
			select {
			case <-sub.Ready():
			case <-done:
				return
			}
			for _, p := range sub.Drain() {
				if q, ok := p.Event.Data.(event.PermissionRequested); ok {
					mu.Lock()
					n++
					a := answer(n)
					mu.Unlock()
					if err := f.sess.Answer(t.Context(), q.PermissionID, a); err != nil {
						t.Errorf("answer %s: %v", q.PermissionID, err)
					}
				}
			}
		}
	}()
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

func TestPermissions(t *testing.T) {
	askReads := runtime.PolicyFunc(func(c tools.Call) runtime.Decision {
		return runtime.Decision{Effect: runtime.Ask, RuleID: "ask-all"}
	})
	calls := `[{"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}},{"id":"c2","name":"fs.read","arguments":{"path":"main.go"}}]},{"content":"ok"}]`
	t.Run("denied with a reason that reaches the model", func(t *testing.T) {
		m := script(t, calls)
		f := newFixture(t, m, m, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { c.Policy = askReads })
		answerer(t, f, func(int) runtime.PermissionAnswer {
			return runtime.PermissionAnswer{Note: "denied in a test", Reason: "read go.mod instead"}
		})
		f.wait(f.start("go"))
		evs := f.events()
		for _, r := range ofType[event.ToolResult](evs) {
			if r.Error == nil || r.Error.Code != string(errcode.ToolPermissionDenied) || !strings.Contains(r.Error.Message, "read go.mod instead") {
				t.Errorf("result = %+v", r)
			}
		}
		if n := count(evs, event.TypePermissionRequested); n != 2 {
			t.Errorf("permission.requested = %d", n)
		}
		for _, pr := range ofType[event.PermissionResolved](evs) {
			if pr.Decision != "deny" || pr.Note != "denied in a test" {
				t.Errorf("permission.resolved = %+v", pr)
			}
		}
	})
	t.Run("the question carries its subject", func(t *testing.T) {
		m := script(t, `[{"toolCalls":[
			{"id":"c1","name":"fs.write","arguments":{"path":"README.md","contents":"# new\n"}},
			{"id":"c2","name":"fs.write","arguments":{"path":"docs/x.md","contents":"x\n"}},
			{"id":"c3","name":"fs.write","arguments":{"path":"main.go","contents":"package main\n"}},
			{"id":"c4","name":"fs.read","arguments":{"path":"README.md"}}]},{"content":"ok"}]`)
		f := newFixture(t, m, m, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { c.Policy = askReads })
		answerer(t, f, func(int) runtime.PermissionAnswer { return runtime.PermissionAnswer{Note: "no"} })
		f.wait(f.start("go"))
		evs := f.events()
		calls, qs := ofType[event.ToolCall](evs), ofType[event.PermissionRequested](evs)
		if len(calls) != 4 || len(qs) != 4 {
			t.Fatalf("%d calls, %d questions", len(calls), len(qs))
		}
		for i, q := range qs {
			if q.CallID != calls[i].CallID || string(q.Input) != string(calls[i].Input) {
				t.Errorf("question %d input %s, its tool.call's %s", i, q.Input, calls[i].Input)
			}
		}
		want := []struct {
			patch []string
			lines *event.LineCounts
		}{
			{[]string{"--- a/README.md\n+++ b/README.md\n@@", "\n-# demo\n+# new\n"}, &event.LineCounts{Added: 1, Deleted: 1}},
			{[]string{"--- /dev/null\n+++ b/docs/x.md\n@@", "\n+x\n"}, &event.LineCounts{Added: 1}},
			{nil, &event.LineCounts{}}, // the file's own contents
			{nil, nil},                 // a read changes nothing
		}
		for i, w := range want {
			q := qs[i]
			if (q.Lines == nil) != (w.lines == nil) || (q.Lines != nil && *q.Lines != *w.lines) || (w.patch == nil) != (q.Patch == "") {
				t.Errorf("question %d: lines %+v patch %q; want lines %+v", i, q.Lines, q.Patch, w.lines)
			}
			for _, p := range w.patch {
				if !strings.Contains(q.Patch, p) {
					t.Errorf("question %d: patch %q lacks %q", i, q.Patch, p)
				}
			}
		}
	})
	t.Run("arguments the tool refuses are not asked about", func(t *testing.T) {
		m := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.write","arguments":{"path":"notes.txt","content":"x"}},{"id":"c2","name":"fs.read","arguments":{"path":"README.md"}}]},{"content":"ok"}]`)
		f := newFixture(t, m, m, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { c.Policy = askReads })
		asked := answerer(t, f, func(int) runtime.PermissionAnswer { return runtime.PermissionAnswer{Allow: true} })
		f.wait(f.start("go"))
		if n := asked(); n != 1 {
			t.Errorf("asked %d times, want once (the valid read)", n)
		}
		res := ofType[event.ToolResult](f.events())
		if len(res) != 2 || res[0].Error == nil || res[0].Error.Code != string(errcode.ToolBadInput) || !strings.Contains(res[0].Error.Message, "content") || !res[1].OK {
			t.Errorf("results = %+v", res)
		}
	})
	t.Run("run grant is remembered", func(t *testing.T) {
		m := script(t, calls)
		f := newFixture(t, m, m, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { c.Policy = askReads })
		asked := answerer(t, f, func(int) runtime.PermissionAnswer {
			return runtime.PermissionAnswer{Allow: true, Scope: runtime.ScopeRun, Reason: "keep it short"}
		})
		f.wait(f.start("go"))
		if n := asked(); n != 1 {
			t.Errorf("asked %d times", n)
		}
		evs := f.events()
		for _, r := range ofType[event.ToolResult](evs) {
			if !r.OK {
				t.Errorf("result = %+v", r)
			}
		}
		if pd := ofType[event.PolicyDecision](evs); len(pd) != 2 || pd[0].Reason != "" ||
			pd[1].Effect != "ask" || pd[1].Reason != "not asked: the user allowed fs.read for this turn" {
			t.Errorf("policy.decision = %+v", pd)
		}
		// The approval's reason is steering for the next request.
		last := m.Requests()[1].Messages
		if got := last[len(last)-1]; got.Role != model.RoleUser || !strings.Contains(got.Content, "keep it short") {
			t.Errorf("last message of the next request = %+v", got)
		}
	})
	t.Run("cancel drops the question", func(t *testing.T) {
		m := script(t, calls)
		f := newFixture(t, m, m, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { c.Policy = askReads })
		sub, err := f.sess.Events(t.Context(), -1)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		runID := f.start("go")
		permID := waitEvent[event.PermissionRequested](t, sub).PermissionID
		f.sess.Cancel()
		if out := f.wait(runID); out.Status != runtime.StatusCanceled {
			t.Fatalf("outcome = %+v", out)
		}
		mustCode(t, f.sess.Answer(t.Context(), permID, runtime.PermissionAnswer{Allow: true}), errcode.RuntimeInvalidInput)
		if pr := ofType[event.PermissionResolved](f.events()); len(pr) != 1 || pr[0].Decision != "deny" {
			t.Errorf("permission.resolved = %+v", pr)
		}
	})
	t.Run("unknown question", func(t *testing.T) {
		m := script(t, calls)
		f := newFixture(t, m, m, nil)
		mustCode(t, f.sess.Answer(t.Context(), "perm-none", runtime.PermissionAnswer{}), errcode.RuntimeInvalidInput)
	})
	t.Run("deny policy", func(t *testing.T) {
		m := script(t, calls)
		f := newFixture(t, m, m, func(c *runtime.SessionConfig, _ *checkpoint.Settings) {
			c.Policy = runtime.PolicyFunc(func(tools.Call) runtime.Decision { return runtime.Decision{Effect: runtime.Deny, Reason: "no"} })
		})
		f.wait(f.start("go"))
		for _, r := range ofType[event.ToolResult](f.events()) {
			if r.Error == nil || r.Error.Code != string(errcode.ToolPolicyDenied) {
				t.Errorf("result = %+v", r)
			}
		}
	})
}

// Mutations on the read-only local workspace: tool.call, policy.decision
// (allow), tool.result with WORKSPACE_ISOLATION_REQUIRED, nothing written.
func TestMutationOnLocalWorkspace(t *testing.T) {
	m := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.write","arguments":{"path":"x.txt","contents":"hi"}},{"id":"c2","name":"process.exec","arguments":{"argv":["touch","y"]}}]},{"content":"ok"}]`)
	f := newFixture(t, m, m, nil)
	f.wait(f.start("go"))
	evs := f.events()
	pd := ofType[event.PolicyDecision](evs)
	res := ofType[event.ToolResult](evs)
	if len(pd) != 2 || pd[0].Effect != "allow" || len(res) != 2 {
		t.Fatalf("decisions %+v results %+v", pd, res)
	}
	for _, r := range res {
		if r.Error == nil || r.Error.Code != string(errcode.WorkspaceIsolationRequired) {
			t.Errorf("result = %+v", r)
		}
	}
	assertNoFile(t, f.root, "x.txt")
	assertNoFile(t, f.root, "y")
}

// A provider's retries are visible as model.retry events, before the answer.
func TestModelRetryIsRecorded(t *testing.T) {
	m := script(t, `[{"chunks":[{"retry":{"attempt":1,"code":"MODEL_RATE_LIMITED","delayMs":5,"message":"server answered 429 Too Many Requests"}},{"delta":"ok"},{"completion":{"content":"ok","finishReason":"stop"}}]}]`)
	f := newFixture(t, m, m, nil)
	if out := f.wait(f.start("go")); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	evs := f.events()
	r := ofType[event.ModelRetry](evs)
	if len(r) != 1 || r[0].Code != "MODEL_RATE_LIMITED" || r[0].Attempt != 1 || r[0].Message != "server answered 429 Too Many Requests" {
		t.Fatalf("model.retry = %+v", r)
	}
	got := foldDeltas(types(evs))
	i := slices.Index(got, "model.retry")
	if i < 0 || got[i-2] != "model.request" || got[i+1] != "message.delta" {
		t.Errorf("order = %v", got)
	}
}
