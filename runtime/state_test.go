package runtime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
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
// Close, which refuses every command with RUNTIME_INVALID_INPUT.
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
	mustCode(t, err, errcode.RuntimeInvalidInput)
	mustCode(t, f.sess.Withdraw(ctx, "msg-x"), errcode.RuntimeInvalidInput)
	_, err = f.sess.SetSettings(ctx, runtime.SettingsChange{})
	mustCode(t, err, errcode.RuntimeInvalidInput)
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
		live, kept := f.rt.Registry()
		if live != 0 || kept != min(i+1, runtime.KeptOutcomes) {
			t.Fatalf("after turn %d: %d live runs, %d kept outcomes", i, live, kept)
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
