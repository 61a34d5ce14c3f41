package app

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/runtime"
)

// newTestApp is an App on a SQLite file in dir, the read-only local
// workspace and a scripted model.
func newTestApp(t *testing.T, dir string, takeOver bool) *App {
	t.Helper()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`[{"content":"hi"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := Env{"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	a, err := New(t.Context(), Options{DB: filepath.Join(dir, "h.db"), Workspace: "local", FakeModel: script, TakeOver: takeOver}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func TestTakeOverTellsTheLoserAtOnce(t *testing.T) {
	dir := t.TempDir()
	a1 := newTestApp(t, dir, false)
	s1, err := a1.Open(t.Context(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()

	busy := newTestApp(t, dir, false)
	if _, err := busy.Open(t.Context(), OpenRequest{ResumeID: s1.ID()}); errcode.Of(err) != errcode.SessBusy {
		t.Fatalf("open of a held session: %v, want %s", err, errcode.SessBusy)
	}

	a2 := newTestApp(t, dir, true)
	s2, err := a2.Open(t.Context(), OpenRequest{ResumeID: s1.ID()})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	select {
	case <-s1.Lost:
	case <-time.After(20 * time.Second):
		t.Fatal("the process that lost the session was not told")
	}
	select {
	case <-s2.Lost:
		t.Fatal("the process that took the session over was told it lost it")
	default:
	}
}

func TestForkInheritsTheTranscriptItContinues(t *testing.T) {
	dir := t.TempDir()
	a := newTestApp(t, dir, false)
	s, err := a.Open(t.Context(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.Start(t.Context(), runtime.StartRequest{Input: "remember the milk"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Runtime.Wait(t.Context(), run); err != nil || out.Status != runtime.StatusCompleted {
		t.Fatalf("turn: %+v, %v", out, err)
	}
	parent := s.ID()
	s.Close()

	f, err := a.Open(t.Context(), OpenRequest{ResumeID: parent, Fork: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inh, err := Inherited(t.Context(), a.Store, f.ID())
	if err != nil {
		t.Fatal(err)
	}
	var user []string
	for _, rec := range inh {
		ev, err := event.Decode(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := ev.Data.(event.MessageCompleted); ok && d.Role == "user" {
			user = append(user, d.Content)
		}
	}
	if len(user) != 1 || user[0] != "remember the milk" || inh[len(inh)-1].Type != string(event.TypeAgentStopped) {
		t.Fatalf("inherited %d records, user messages %q", len(inh), user)
	}
	if own, err := Inherited(t.Context(), a.Store, parent); err != nil || len(own) != 0 {
		t.Fatalf("a session that is no fork inherits %d records (%v)", len(own), err)
	}
}
