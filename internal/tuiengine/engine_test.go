package tuiengine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/tui"
)

// newTestEngine wires a real app (SQLite, the read-only local workspace, a
// scripted model) and the TUI's engine over it, in this process, so that
// the race detector sees the adapter's goroutines.
func newTestEngine(t *testing.T, script string, approve string) (*Engine, *app.App) {
	t.Helper()
	return newEngineAt(t, t.TempDir(), app.Options{FakeModel: script, Approve: approve})
}

// newEngineAt is newTestEngine on the store of home, with options o (the
// local workspace unless o names one).
func newEngineAt(t *testing.T, home string, o app.Options) (*Engine, *app.App) {
	t.Helper()
	e := app.Env{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	o.DB = filepath.Join(home, "h.db")
	if o.Workspace == "" {
		o.Workspace = "local"
	}
	held := &Held{}
	a, err := app.New(t.Context(), o, e, held)
	if err != nil {
		t.Fatal(err)
	}
	eng := New(a, held)
	t.Cleanup(func() {
		eng.Close()
		a.Close()
	})
	return eng, a
}

// untilType reads updates until an event of type T arrives, and returns
// its data.
func untilType[T event.Data](t *testing.T, eng *Engine) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		u, err := eng.Next(ctx)
		if err != nil {
			var zero T
			t.Fatalf("Next while waiting for %T: %v", zero, err)
		}
		for _, r := range u.Events {
			if d, ok := r.Event.Data.(T); ok {
				return d
			}
		}
	}
}

// collect reads Next until a turn.completed arrives, answering questions
// through the engine with answer; it returns the events seen and the
// questions asked.
func collect(t *testing.T, eng *Engine, answer func(*tui.Approval) tui.Answer) ([]event.Event, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var evs []event.Event
	var asked []string
	for {
		u, err := eng.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v (events so far: %d)", err, len(evs))
		}
		if u.Approval != nil {
			asked = append(asked, u.Approval.Tool+" "+u.Approval.Subject)
			if err := eng.Answer(ctx, u.Approval.PermissionID, answer(u.Approval)); err != nil && errcode.Of(err) != errcode.RuntimeInvalidInput {
				t.Errorf("answer: %v", err)
			}
		}
		for _, r := range u.Events {
			evs = append(evs, r.Event)
			if _, done := r.Event.Data.(event.TurnCompleted); done {
				return evs, asked
			}
		}
	}
}

func TestEngineTurnSteerApproveSwitch(t *testing.T) {
	script := writeScript(t, `[
		{"content": "Writing.", "toolCalls": [
			{"id": "c1", "name": "fs.write", "arguments": {"path": "a.txt", "contents": "a\n"}},
			{"id": "c2", "name": "process.exec", "arguments": {"argv": ["ls"]}}]},
		{"content": "Done."},
		{"content": "Second session."}
	]`)
	eng, _ := newTestEngine(t, script, "ask")
	ctx := t.Context()
	s, err := eng.Open(ctx, tui.OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.ReadOnly || s.Workspace != "local · read-only" || !s.Approve || !strings.Contains(s.Note, "read-only") {
		t.Errorf("session = %+v", s)
	}
	if len(s.History) == 0 || s.History[0].Event.Type != event.TypeWorkspaceLifecycle {
		t.Errorf("history of a new session = %+v, want its workspace.lifecycle", s.History)
	}
	if sent, err := eng.Send(ctx, "write a.txt"); err != nil || sent.Kind != "started" {
		t.Fatalf("send = %+v, %v", sent, err)
	}
	if sent, err := eng.Send(ctx, "and be quick"); err != nil || sent.Kind != "steered" {
		t.Fatalf("steer = %+v, %v", sent, err)
	}
	evs, asked := collect(t, eng, func(a *tui.Approval) tui.Answer {
		return tui.Answer{Allow: a.Tool == "fs.write"}
	})
	if got := strings.Join(asked, ","); got != "fs.write a.txt,process.exec ls" {
		t.Errorf("questions = %s", got)
	}
	var results, decisions []string
	steered := false
	for _, e := range evs {
		switch d := e.Data.(type) {
		case event.ToolResult:
			code := "ok"
			if d.Error != nil {
				code = d.Error.Code
			}
			results = append(results, d.Tool+":"+code)
		case event.PermissionResolved:
			decisions = append(decisions, d.Decision)
		case event.SteeringApplied:
			steered = true
		}
	}
	// The write was allowed, then refused by the read-only workspace
	// before any effect; the command was denied by the user.
	if got := strings.Join(results, ","); got != "fs.write:WORKSPACE_ISOLATION_REQUIRED,process.exec:TOOL_PERMISSION_DENIED" {
		t.Errorf("results = %s", got)
	}
	if got := strings.Join(decisions, ","); got != "allow,deny" || !steered {
		t.Errorf("decisions = %s, steering applied %v", got, steered)
	}

	if p, err := eng.Diff(ctx); err != nil || p != "" {
		t.Errorf("Diff of the local workspace = %q, %v", p, err)
	}
	if plan, err := eng.CheckApply(ctx); err != nil || plan.Patch != "" {
		t.Errorf("CheckApply = %+v, %v", plan, err)
	}
	list, err := eng.Sessions(ctx)
	if err != nil || len(list) != 1 || list[0].ID != s.ID || list[0].Turns != 1 {
		t.Errorf("Sessions = %+v, %v", list, err)
	}

	// A Next waiting on the first session returns, empty, when it is
	// replaced (events of it still queued come first, labeled with its ID,
	// which the screen ignores); the new session streams its own events.
	w := eng.watch()
	returned := make(chan []tui.Update, 1)
	go func() {
		var got []tui.Update
		for {
			u, err := eng.next(ctx, w)
			if err != nil {
				break
			}
			got = append(got, u)
			if len(u.Events) == 0 && u.Approval == nil {
				break
			}
		}
		returned <- got
	}()
	s2, err := eng.Open(ctx, tui.OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-returned:
		for _, u := range got[:len(got)-1] {
			if u.SessionID != s.ID {
				t.Errorf("an update of %s from a watch on %s", u.SessionID, s.ID)
			}
		}
		if last := got[len(got)-1]; len(last.Events) != 0 {
			t.Errorf("the switch ended with %+v, want an empty update", last)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not return when the session changed")
	}
	if s2.ID == s.ID || eng.SessionID() != s2.ID {
		t.Fatalf("after /new: %s (engine %s), was %s", s2.ID, eng.SessionID(), s.ID)
	}
	if _, err := eng.Send(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	evs, _ = collect(t, eng, func(*tui.Approval) tui.Answer { return tui.Answer{} })
	for _, e := range evs {
		if d, ok := e.Data.(event.TurnStarted); ok && d.SessionID != s2.ID {
			t.Errorf("event of session %s after switching to %s", d.SessionID, s2.ID)
		}
	}
	// The first session was released: it can be resumed.
	s1, err := eng.Open(ctx, tui.OpenRequest{ID: s.ID})
	if err != nil {
		t.Fatalf("resume the first session: %v", err)
	}
	if n := len(s1.History); n < len(evs) {
		t.Errorf("resumed history has %d events", n)
	}
}

// Canceling the turn while a question waits ends the question, not the
// program; an answer after that is refused; text sent after the cancel
// starts the next turn.
func TestEngineCancelWhileAsking(t *testing.T) {
	script := writeScript(t, `[{"toolCalls": [{"id": "c1", "name": "process.exec", "arguments": {"argv": ["ls"]}}]}, {"content": "next"}]`)
	eng, _ := newTestEngine(t, script, "ask")
	ctx := t.Context()
	if _, err := eng.Open(ctx, tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	var late error
	evs, asked := collect(t, eng, func(a *tui.Approval) tui.Answer {
		if err := eng.Cancel(ctx); err != nil {
			t.Errorf("cancel: %v", err)
		}
		// Too late: the canceled turn dropped its question.
		late = waitRefused(t, eng, a.PermissionID)
		return tui.Answer{Allow: true}
	})
	last := evs[len(evs)-1].Data.(event.TurnCompleted)
	if len(asked) != 1 || last.Status != event.StatusCanceled {
		t.Errorf("asked %v, turn ended %s", asked, last.Status)
	}
	if errcode.Of(late) != errcode.RuntimeInvalidInput {
		t.Errorf("answer after cancel: %v, want RUNTIME_INVALID_INPUT", late)
	}
	sent, err := eng.Send(ctx, "late")
	if err != nil || sent.Kind != "started" {
		t.Fatalf("send after the cancel = %+v, %v; want a new turn", sent, err)
	}
	evs, _ = collect(t, eng, func(*tui.Approval) tui.Answer { return tui.Answer{} })
	if last := evs[len(evs)-1].Data.(event.TurnCompleted); last.Status != event.StatusCompleted || last.RunID != sent.RunID {
		t.Errorf("the next turn ended %+v", last)
	}
}

// waitRefused answers permissionID until the session says no such
// question waits (the canceled turn drops it as it ends).
func waitRefused(t *testing.T, eng *Engine, permissionID string) error {
	t.Helper()
	cur, err := eng.current()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cur.sess.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	return eng.Answer(t.Context(), permissionID, tui.Answer{Allow: true})
}

func TestEngineResumeUnknownFails(t *testing.T) {
	eng, _ := newTestEngine(t, "", "")
	if _, err := eng.Open(t.Context(), tui.OpenRequest{ID: "sess-nope"}); errcode.Of(err) != errcode.SessNotFound {
		t.Errorf("open an unknown session: %v, want SESS_NOT_FOUND", err)
	}
	if eng.SessionID() != "" {
		t.Errorf("a failed open left session %q", eng.SessionID())
	}
	if _, err := eng.Send(t.Context(), "x"); errcode.Of(err) != errcode.SessNotFound {
		t.Errorf("send with no session: %v", err)
	}
}

// The queued next turn through the TUI engine: queued while a turn runs,
// it waits after that turn is canceled, and StartQueued starts it; text
// queued while idle starts at once. Each turn ends exactly once.
func TestEngineQueuedTurn(t *testing.T) {
	script := writeScript(t, `[{"content": "thinking", "hang": true}, {"content": "queued done"}, {"content": "idle done"}]`)
	eng, _ := newTestEngine(t, script, "")
	ctx := t.Context()
	if _, err := eng.Open(ctx, tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	q, err := eng.Queue(ctx, "then this")
	if err != nil || q.Kind != "queued" {
		t.Fatalf("queue while running = %+v, %v", q, err)
	}
	// The first turn has the hanging answer only once its request is out:
	// canceled before that, it would leave the answer to the queued turn.
	first := untilType[event.ModelRequest](t, eng)
	if err := eng.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	evs, _ := collect(t, eng, nil)
	if last := evs[len(evs)-1].Data.(event.TurnCompleted); last.Status != event.StatusCanceled || last.RunID != first.RunID {
		t.Fatalf("first turn ended %+v", last)
	}
	cur, err := eng.current()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cur.sess.Wait(ctx); err != nil || out.Status != "canceled" {
		t.Fatalf("after the cancel: %+v, %v; want the queue to wait", out, err)
	}
	sent, err := eng.StartQueued(ctx)
	if err != nil || sent.Kind != "started" || sent.MessageID != q.MessageID {
		t.Fatalf("start queued = %+v, %v", sent, err)
	}
	evs, _ = collect(t, eng, nil)
	if last := evs[len(evs)-1].Data.(event.TurnCompleted); last.Status != event.StatusCompleted || last.RunID != sent.RunID {
		t.Fatalf("queued turn ended %+v", last)
	}
	if _, err := cur.sess.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	idle, err := eng.Queue(ctx, "now")
	if err != nil || idle.Kind != "started" {
		t.Fatalf("queue while idle = %+v, %v; want a turn at once", idle, err)
	}
	evs, _ = collect(t, eng, nil)
	if last := evs[len(evs)-1].Data.(event.TurnCompleted); last.Status != event.StatusCompleted {
		t.Fatalf("last turn ended %+v", last)
	}
}

// writeScript writes a scripted model's answers (model/fake) to a file and
// returns its path.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A session another process takes over is reported by Next at once (the
// lease watch's poll), not at the screen's next send.
func TestEngineReportsATakeOver(t *testing.T) {
	home := t.TempDir()
	script := writeScript(t, `[{"content":"hi"}]`)
	eng, _ := newEngineAt(t, home, app.Options{FakeModel: script})
	s, err := eng.Open(t.Context(), tui.OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newEngineAt(t, home, app.Options{FakeModel: script, TakeOver: true})
	if _, err := other.Open(t.Context(), tui.OpenRequest{ID: s.ID}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		u, err := eng.Next(ctx)
		if err != nil {
			t.Fatalf("Next did not report the take-over: %v", err)
		}
		if u.Lost != "" {
			if u.SessionID != s.ID || !strings.Contains(u.Lost, s.ID) || !strings.Contains(u.Lost, "pid") {
				t.Fatalf("lost update = %+v", u)
			}
			break
		}
	}
	// Reported once: the next Next waits for events again.
	short, cancel2 := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel2()
	if u, err := eng.Next(short); err == nil {
		t.Fatalf("a second update after the loss: %+v", u)
	}
}

// gate is a store whose first append of one event type waits until the
// test opens it; reached is closed when that append arrives.
type gate struct {
	store.Store
	typ     string
	reached chan struct{}
	open    chan struct{}
	once    sync.Once
}

func (g *gate) Append(ctx context.Context, id string, who store.Owner, ev store.EventIn) (store.Record, error) {
	if ev.Type == g.typ {
		first := false
		g.once.Do(func() { first = true })
		if first {
			close(g.reached)
			<-g.open
		}
	}
	return g.Store.Append(ctx, id, who, ev)
}

// Text sent while the turn is ending (its turn.completed being stored)
// starts the next turn once that one has ended; each ends once.
func TestEngineSendWhileTheTurnIsEnding(t *testing.T) {
	script := writeScript(t, `[{"content": "first done"}, {"content": "second done"}]`)
	eng, a := newTestEngine(t, script, "")
	g := &gate{Store: a.Store, typ: string(event.TypeTurnCompleted), reached: make(chan struct{}), open: make(chan struct{})}
	a.Store = g
	ctx := t.Context()
	if _, err := eng.Open(ctx, tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	first, err := eng.Send(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	<-g.reached // the first turn is ending
	type sent struct {
		s   tui.Sent
		err error
	}
	got := make(chan sent, 1)
	go func() {
		s, err := eng.Send(ctx, "and then")
		got <- sent{s, err}
	}()
	close(g.open)
	var second sent
	select {
	case second = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("Send while the turn ended did not return")
	}
	if second.err != nil || second.s.Kind != "started" || second.s.RunID == first.RunID {
		t.Fatalf("send while ending = %+v, %v; want a new turn after %s", second.s, second.err, first.RunID)
	}
	ends := turnsEnded(collectTurns(t, eng, 2, nil))
	if len(ends) != 2 || ends[0].RunID != first.RunID || ends[1].RunID != second.s.RunID ||
		ends[0].Status != event.StatusCompleted || ends[1].Status != event.StatusCompleted {
		t.Fatalf("turns ended %+v", ends)
	}
}

// collectTurns reads Next until n turn.completed events arrived (the
// batch they come in whole), answering questions with answer.
func collectTurns(t *testing.T, eng *Engine, n int, answer func(*tui.Approval) tui.Answer) []event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var evs []event.Event
	for len(turnsEnded(evs)) < n {
		u, err := eng.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v (turns ended so far: %+v)", err, turnsEnded(evs))
		}
		if u.Approval != nil {
			if err := eng.Answer(ctx, u.Approval.PermissionID, answer(u.Approval)); err != nil {
				t.Errorf("answer: %v", err)
			}
		}
		for _, r := range u.Events {
			evs = append(evs, r.Event)
		}
	}
	return evs
}

func turnsEnded(evs []event.Event) []event.TurnCompleted {
	var out []event.TurnCompleted
	for _, e := range evs {
		if d, ok := e.Data.(event.TurnCompleted); ok {
			out = append(out, d)
		}
	}
	return out
}

// A turn queued while one runs is started by the session itself when the
// running one completes: the screen sees both turns through Next, with
// no StartQueued.
func TestEngineAutoStartsTheQueuedTurn(t *testing.T) {
	script := writeScript(t, `[
		{"toolCalls": [{"id": "c1", "name": "process.exec", "arguments": {"argv": ["ls"]}}]},
		{"content": "first done"},
		{"content": "queued done"}
	]`)
	eng, _ := newTestEngine(t, script, "ask")
	ctx := t.Context()
	if _, err := eng.Open(ctx, tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	asked := 0
	evs := collectTurns(t, eng, 2, func(*tui.Approval) tui.Answer {
		// The turn waits on its question: queue behind it, then deny.
		asked++
		if q, err := eng.Queue(ctx, "then this"); err != nil || q.Kind != "queued" {
			t.Errorf("queue while running = %+v, %v", q, err)
		}
		return tui.Answer{}
	})
	var inputs []string
	for _, e := range evs {
		if d, ok := e.Data.(event.MessageCompleted); ok && d.Role == "user" {
			inputs = append(inputs, d.Content)
		}
	}
	ends := turnsEnded(evs)
	if asked != 1 || strings.Join(inputs, "|") != "go|then this" || ends[0].Status != event.StatusCompleted || ends[1].Status != event.StatusCompleted {
		t.Fatalf("asked %d; inputs %q; turns ended %+v", asked, inputs, ends)
	}
}

// The question carries its subject: the screen's approval holds the call's
// input and the write's diff exactly as permission.requested recorded them
// (against the workspace file as it is), paired with no tool.call.
func TestEngineQuestionCarriesItsSubject(t *testing.T) {
	// The local workspace is this package's folder: the write overwrites
	// engine.go, which the read-only workspace then refuses.
	script := writeScript(t, `[
		{"toolCalls": [{"id": "c1", "name": "fs.write", "arguments": {"path": "engine.go", "contents": "// gone\n"}}]},
		{"content": "Done."}
	]`)
	eng, _ := newTestEngine(t, script, "ask")
	ctx := t.Context()
	if _, err := eng.Open(ctx, tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(ctx, "shorten engine.go"); err != nil {
		t.Fatal(err)
	}
	var asked []tui.Approval
	evs, _ := collect(t, eng, func(a *tui.Approval) tui.Answer {
		asked = append(asked, *a)
		return tui.Answer{}
	})
	var req *event.PermissionRequested
	var call string
	for _, e := range evs {
		switch d := e.Data.(type) {
		case event.PermissionRequested:
			req = &d
		case event.ToolCall:
			call = string(d.Input)
		}
	}
	if len(asked) != 1 || req == nil {
		t.Fatalf("asked %d questions, recorded %v", len(asked), req)
	}
	a := asked[0]
	if string(a.Input) != `{"path":"engine.go","contents":"// gone\n"}` || string(req.Input) != string(a.Input) || call != string(a.Input) {
		t.Errorf("input: asked with %s, recorded %s, the tool.call's %s", a.Input, req.Input, call)
	}
	src, err := os.ReadFile("engine.go")
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Count(string(src), "\n")
	if req.Lines == nil || req.Lines.Deleted != old || req.Lines.Added != 1 {
		t.Errorf("recorded lines %+v, want +1 -%d", req.Lines, old)
	}
	if a.Diff != req.Patch || a.Unchanged ||
		!strings.HasPrefix(a.Diff, "--- a/engine.go\n+++ b/engine.go\n") || !strings.Contains(a.Diff, "\n+// gone\n") || !strings.Contains(a.Diff, "\n-// Package tuiengine") {
		t.Errorf("the approval's diff is not the recorded one against engine.go:\n%.400s\nrecorded:\n%.400s", a.Diff, req.Patch)
	}
}

// The screen is told the owner's state with each batch: a question comes
// from a running turn, and idle comes only with (or after) the end of the
// turn, never before it; the screen need not guess busy from the events.
func TestEngineReportsTheOwnersState(t *testing.T) {
	script := writeScript(t, `[
		{"toolCalls": [{"id": "c1", "name": "process.exec", "arguments": {"argv": ["ls"]}}]},
		{"content": "done"}
	]`)
	eng, _ := newTestEngine(t, script, "ask")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := eng.Open(ctx, tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	ended, busy := false, false
	for {
		u, err := eng.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v (turn ended: %v)", err, ended)
		}
		if u.State == "" {
			t.Fatalf("an update without the owner's state: %+v", u)
		}
		busy = busy || u.State.Busy()
		for _, r := range u.Events {
			if _, ok := r.Event.Data.(event.TurnCompleted); ok {
				ended = true
			}
		}
		if u.Approval != nil {
			if u.State != tui.StateRunning {
				t.Errorf("question asked in state %s, want running", u.State)
			}
			if err := eng.Answer(ctx, u.Approval.PermissionID, tui.Answer{Allow: true}); err != nil {
				t.Fatal(err)
			}
		}
		if u.State == tui.StateIdle && busy {
			if !ended {
				t.Fatal("idle before the turn's turn.completed")
			}
			return
		}
	}
}
