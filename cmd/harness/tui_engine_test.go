package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/app"
	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/tui"
)

// newTestEngine wires a real app (SQLite, the read-only local workspace, a
// scripted model) and the TUI's engine over it, in this process, so that
// the race detector sees the adapter's goroutines.
func newTestEngine(t *testing.T, script string, approve string) (*tuiEngine, *cli) {
	t.Helper()
	home := t.TempDir()
	e := app.Env{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	o := options{Options: app.Options{DB: filepath.Join(home, "h.db"), FakeModel: script, Workspace: "local", Approve: approve}}
	held := &heldWriter{}
	a, err := newCLI(t.Context(), o, e, io.Discard, held)
	if err != nil {
		t.Fatal(err)
	}
	eng := newTUIEngine(a, held)
	t.Cleanup(func() {
		eng.close()
		a.Close()
	})
	return eng, a
}

// collect reads Next until a turn.completed arrives, answering questions
// with answer; it returns the event types seen and the questions asked.
func collect(t *testing.T, eng *tuiEngine, answer func(*tui.Approval) tui.Answer) ([]event.Event, []string) {
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
			u.Approval.Reply(answer(u.Approval))
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
	u := newUser(t)
	script := u.script(`[
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
	run, err := eng.Start(ctx, "write a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Steer(ctx, run, "and be quick"); err != nil {
		t.Fatalf("steer: %v", err)
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
	if s2.ID == s.ID || eng.sessionID() != s2.ID {
		t.Fatalf("after /new: %s (engine %s), was %s", s2.ID, eng.sessionID(), s.ID)
	}
	if _, err := eng.Start(ctx, "hello"); err != nil {
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
// program: Resolve returns with the turn's context.
func TestEngineCancelWhileAsking(t *testing.T) {
	u := newUser(t)
	script := u.script(`[{"toolCalls": [{"id": "c1", "name": "process.exec", "arguments": {"argv": ["ls"]}}]}, {"content": "never"}]`)
	eng, _ := newTestEngine(t, script, "ask")
	ctx := t.Context()
	if _, err := eng.Open(ctx, tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	run, err := eng.Start(ctx, "go")
	if err != nil {
		t.Fatal(err)
	}
	evs, asked := collect(t, eng, func(*tui.Approval) tui.Answer {
		if err := eng.Cancel(run); err != nil {
			t.Errorf("cancel: %v", err)
		}
		return tui.Answer{Allow: true} // too late: the turn is canceled
	})
	last := evs[len(evs)-1].Data.(event.TurnCompleted)
	if len(asked) != 1 || last.Status != event.StatusCanceled {
		t.Errorf("asked %v, turn ended %s", asked, last.Status)
	}
	if _, err := eng.Steer(ctx, run, "late"); errcode.Of(err) != errcode.RuntimeRunTerminal {
		t.Errorf("steering a canceled run: %v, want RUNTIME_RUN_TERMINAL", err)
	}
}

func TestEngineResumeUnknownFails(t *testing.T) {
	eng, _ := newTestEngine(t, "", "")
	if _, err := eng.Open(t.Context(), tui.OpenRequest{ID: "sess-nope"}); errcode.Of(err) != errcode.SessNotFound {
		t.Errorf("open an unknown session: %v, want SESS_NOT_FOUND", err)
	}
	if eng.sessionID() != "" {
		t.Errorf("a failed open left session %q", eng.sessionID())
	}
	if _, err := eng.Start(t.Context(), "x"); errcode.Of(err) != errcode.SessNotFound {
		t.Errorf("start with no session: %v", err)
	}
}
