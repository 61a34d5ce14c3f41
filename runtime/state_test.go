package runtime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/tools"
)

func mustState(t *testing.T, s *runtime.Session, want runtime.SessionState) {
	t.Helper()
	if got, _ := s.State(); got != want {
		t.Fatalf("state = %s, want %s", got, want)
	}
}

// The owner publishes its state: idle, running while the turn runs, no
// longer running as soon as Cancel is called (told through the change
// channel, with no command asking), idle after the end, closed after
// Close, which refuses every command with SESS_CLOSED.
func TestStatePublished(t *testing.T) {
	inner := script(t, `[{"content":"never sent"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{1: true}}
	f := newFixture(t, gm, inner, nil)
	ctx := t.Context()
	mustState(t, f.sess, runtime.StateIdle)
	if _, err := f.sess.Send(ctx, "task"); err != nil {
		t.Fatal(err)
	}
	<-gm.started
	st, changed := f.sess.State()
	if st != runtime.StateRunning || !st.Busy() {
		t.Fatalf("state while the model answers = %s, want running", st)
	}
	f.sess.Cancel()
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("the state did not change after Cancel")
	}
	if st, _ := f.sess.State(); st == runtime.StateRunning {
		t.Fatal("still running after Cancel")
	}
	if out, err := f.sess.Wait(ctx); err != nil || out.Status != runtime.StatusCanceled {
		t.Fatalf("wait = %+v, %v", out, err)
	}
	mustState(t, f.sess, runtime.StateIdle)
	if err := f.sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mustState(t, f.sess, runtime.StateClosed)
	_, err := f.sess.Send(ctx, "after close")
	mustCode(t, err, errcode.SessClosed)
	mustCode(t, f.sess.Withdraw(ctx, "msg-x"), errcode.SessClosed)
	_, err = f.sess.SetSettings(ctx, runtime.SettingsChange{})
	mustCode(t, err, errcode.SessClosed)
}

// A closed session takes no more writes: the application's records of
// what the user did (patch.applied, permission.revoked) are refused with
// SESS_CLOSED like the commands, and nothing reaches the log. The
// workspace's own record is the one write it still takes, for the
// application records the workspace's disposal after Close.
func TestWritesAfterClose(t *testing.T) {
	m := script(t, `[{"content":"done"}]`)
	f := newFixture(t, m, m, nil)
	ctx := t.Context()
	sent, err := f.sess.Send(ctx, "task")
	if err != nil {
		t.Fatal(err)
	}
	if out := f.wait(sent.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("turn: %+v", out)
	}
	applied := event.PatchApplied{SessionID: f.sess.ID(), TurnID: sent.TurnID, Root: f.root,
		SHA256: strings.Repeat("0", 64), Files: []event.PatchFile{{Path: "a.txt", Added: 1}}, Patch: "+a\n"}
	if err := f.sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	before := len(f.events())
	mustCode(t, f.sess.RecordApplied(ctx, applied), errcode.SessClosed)
	mustCode(t, f.sess.Revoke(ctx, "fs.read"), errcode.SessClosed)
	_, err = f.sess.Queue(ctx, "after close")
	mustCode(t, err, errcode.SessClosed)
	if evs := f.events(); len(evs) != before {
		t.Fatalf("writes after close reached the log: %v", types(evs[before:]))
	}
	if err := f.sess.RecordWorkspace(ctx, event.PhaseDisposed); err != nil {
		t.Fatal(err)
	}
	if wl := ofType[event.WorkspaceLifecycle](f.events()); len(wl) != 1 || wl[0].Phase != event.PhaseDisposed {
		t.Fatalf("workspace.lifecycle after close = %+v", wl)
	}
}

// The same records while the session is open are taken in any state of
// its turn, a running one's too (restore folds or passes over them
// wherever they stand).
func TestRecordAppliedWhileRunning(t *testing.T) {
	inner := script(t, `[{"content":"done"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{1: true}}
	f := newFixture(t, gm, inner, nil)
	ctx := t.Context()
	sent, err := f.sess.Send(ctx, "task")
	if err != nil {
		t.Fatal(err)
	}
	<-gm.started
	mustState(t, f.sess, runtime.StateRunning)
	applied := event.PatchApplied{SessionID: f.sess.ID(), TurnID: sent.TurnID, Root: f.root,
		SHA256: strings.Repeat("0", 64), Files: []event.PatchFile{{Path: "a.txt", Added: 1}}, Patch: "+a\n"}
	if err := f.sess.RecordApplied(ctx, applied); err != nil {
		t.Fatal(err)
	}
	close(gm.release)
	if out := f.wait(sent.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("turn: %+v", out)
	}
	if pa := ofType[event.PatchApplied](f.events()); len(pa) != 1 {
		t.Fatalf("patch.applied = %+v", pa)
	}
}

// A reader that reads the state and then drains its subscription, as
// tuiengine does, never sees idle without the events that ended the
// turn: they are published before the state leaves the turn.
func TestStateAfterItsEvents(t *testing.T) {
	m := script(t, `[{"content":"one"},{"content":"two"}]`)
	f := newFixture(t, m, m, nil)
	ctx := t.Context()
	sub, err := f.sess.Events(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := f.sess.Send(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sess.Queue(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for {
		st, changed := f.sess.State()
		for _, p := range sub.Drain() {
			seen = append(seen, string(p.Event.Type))
		}
		if st == runtime.StateIdle {
			break
		}
		select {
		case <-changed:
		case <-sub.Ready():
		case <-ctx.Done():
			t.Fatal("never idle")
		}
	}
	all := strings.Join(seen, " ")
	if n := strings.Count(all, string(event.TypeTurnCompleted)); n != 2 || !strings.HasSuffix(all, string(event.TypeAgentStopped)) {
		t.Errorf("idle after %s; want both turns' ends first", all)
	}
}

// A run leaves the Runtime's registry when it ends: over more turns than
// it keeps outcomes of, nothing live remains and the kept outcomes stay
// bounded; Wait answers for a recent run and RUNTIME_RUN_NOT_FOUND for one
// that ended longer ago.
func TestRunsDoNotGrow(t *testing.T) {
	const turns = runtime.KeptOutcomes + 16
	var steps []string
	for i := range turns {
		steps = append(steps, fmt.Sprintf(`{"content":"answer %d"}`, i))
	}
	m := script(t, "["+strings.Join(steps, ",")+"]")
	f := newFixture(t, m, m, nil)
	ctx := t.Context()
	var ids []string
	for i := range turns {
		sent, err := f.sess.Send(ctx, fmt.Sprintf("turn %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sent.RunID)
		if out, err := f.sess.Wait(ctx); err != nil || out.Status != runtime.StatusCompleted {
			t.Fatalf("turn %d: %+v, %v", i, out, err)
		}
		open, live, kept := f.rt.Registry()
		if open != 1 || live != 0 || kept != min(i+1, runtime.KeptOutcomes) {
			t.Fatalf("after turn %d: %d open sessions, %d live runs, %d kept outcomes", i, open, live, kept)
		}
	}
	if out, err := f.rt.Wait(ctx, ids[turns-1]); err != nil || out.RunID != ids[turns-1] || out.Status != runtime.StatusCompleted {
		t.Errorf("wait for the last run = %+v, %v", out, err)
	}
	_, err := f.rt.Wait(ctx, ids[0])
	mustCode(t, err, errcode.RuntimeRunNotFound)
	select {
	case <-f.rt.Done(ids[0]):
	default:
		t.Error("Done of an ended run is not closed")
	}
}

// One Runtime serves every session of a process: a session leaves its
// registry when it closes, so opening and closing many sessions in one
// process grows nothing; Wait and Done answer for a run of any session;
// a live session's ID is refused, a closed one's opens again.
func TestSessionsDoNotGrow(t *testing.T) {
	const sessions = runtime.KeptOutcomes + 16
	ctx := t.Context()
	rt := runtime.New(runtime.Config{})
	ws := mustLocal(t, t.TempDir())
	settings := checkpoint.Settings{Model: "fake", Tools: tools.ModelSpecs()}
	open := func(id, js string) (*runtime.Session, *store.SessionLog) {
		t.Helper()
		_, log := memLog(t, id, "test-owner")
		s, err := rt.OpenSession(ctx, log, runtime.SessionConfig{Model: script(t, js), Workspace: ws}, settings)
		if err != nil {
			t.Fatal(err)
		}
		return s, log
	}

	// A session that stays open with a turn running, beside the others.
	hung, hungLog := open("sess-hung", `[{"content":"thinking","hang":true}]`)
	hungRun, err := hung.Start(ctx, runtime.StartRequest{Input: "wait"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.OpenSession(ctx, hungLog, runtime.SessionConfig{Model: script(t, `[]`), Workspace: ws}, settings)
	mustCode(t, err, errcode.RuntimeInvalidInput)
	if !rt.IsOpen(hung.ID()) {
		t.Fatal("an open session is not open")
	}

	var runs []string
	for i := range sessions {
		s, _ := open(fmt.Sprintf("sess-%03d", i), fmt.Sprintf(`[{"content":"answer %d"}]`, i))
		sent, err := s.Send(ctx, "go")
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, sent.RunID)
		if out, err := s.Wait(ctx); err != nil || out.Status != runtime.StatusCompleted {
			t.Fatalf("session %d: %+v, %v", i, out, err)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			// The run of the session closed before this one.
			if out, err := rt.Wait(ctx, runs[i-1]); err != nil || out.RunID != runs[i-1] || out.Status != runtime.StatusCompleted {
				t.Fatalf("wait for session %d's run = %+v, %v", i-1, out, err)
			}
		}
		open, live, kept := rt.Registry()
		if open != 1 || live != 1 || kept != min(i+1, runtime.KeptOutcomes) {
			t.Fatalf("after session %d: %d open sessions, %d live runs, %d kept outcomes", i, open, live, kept)
		}
	}
	_, err = rt.Wait(ctx, runs[0])
	mustCode(t, err, errcode.RuntimeRunNotFound)

	select {
	case <-rt.Done(hungRun):
		t.Fatal("Done of a running run is closed")
	default:
	}
	hung.Cancel()
	<-rt.Done(hungRun)
	if out, err := rt.Wait(ctx, hungRun); err != nil || out.Status != runtime.StatusCanceled {
		t.Fatalf("wait for the canceled run = %+v, %v", out, err)
	}
	if err := hung.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if rt.IsOpen(hung.ID()) {
		t.Fatal("a closed session is open")
	}
	if open, live, kept := rt.Registry(); open != 0 || live != 0 || kept != runtime.KeptOutcomes {
		t.Fatalf("at the end: %d open sessions, %d live runs, %d kept outcomes", open, live, kept)
	}
	// A closed session's ID opens again in the same Runtime.
	if _, err := rt.OpenSession(ctx, hungLog, runtime.SessionConfig{Model: script(t, `[]`), Workspace: ws}, settings); err != nil {
		t.Fatalf("reopen a closed session: %v", err)
	}
}
