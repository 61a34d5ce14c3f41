package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/memstore"
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
	defer s1.Close(t.Context())

	busy := newTestApp(t, dir, false)
	if _, err := busy.Open(t.Context(), OpenRequest{ResumeID: s1.ID()}); errcode.Of(err) != errcode.SessBusy {
		t.Fatalf("open of a held session: %v, want %s", err, errcode.SessBusy)
	}

	a2 := newTestApp(t, dir, true)
	s2, err := a2.Open(t.Context(), OpenRequest{ResumeID: s1.ID()})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close(t.Context())
	select {
	case <-s1.Lost():
	case <-time.After(20 * time.Second):
		t.Fatal("the process that lost the session was not told")
	}
	select {
	case <-s2.Lost():
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
	_, err = s.rt.Start(t.Context(), runtime.StartRequest{Input: "remember the milk"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Wait(t.Context()); err != nil || out.Status != runtime.StatusCompleted {
		t.Fatalf("turn: %+v, %v", out, err)
	}
	parent := s.ID()
	s.Close(t.Context())

	f, err := a.Open(t.Context(), OpenRequest{ResumeID: parent, Fork: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(t.Context())
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

// poisoned is a store whose writes of a session's first event fail inside
// the store's own transaction: each carries, after it, an event ID that
// another session holds, so SQLite rolls the whole write back.
type poisoned struct {
	store.Store
	poison store.EventIn
}

func (p *poisoned) Append(ctx context.Context, id string, who store.Owner, ev store.EventIn) (store.Record, error) {
	_, err := p.Store.AppendBatch(ctx, id, who, []store.EventIn{ev, p.poison})
	return store.Record{}, err
}

func (p *poisoned) StartSession(ctx context.Context, init store.SessionInit, who store.Owner, first []store.EventIn) (store.Owner, []store.Record, error) {
	return p.Store.StartSession(ctx, init, who, append(first, p.poison))
}

// rawCount is how many session rows the store holds, empty ones included.
func rawCount(t *testing.T, st store.Reader) int {
	t.Helper()
	list, err := st.ListSessions(t.Context(), store.ListCursor{}, store.MaxPage)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// A new session, or a fork, whose first event cannot be stored leaves no
// session row: the row and the event are written together.
func TestFailedFirstEventLeavesNoSession(t *testing.T) {
	dir := t.TempDir()
	a := newTestApp(t, dir, false)
	s, err := a.Open(t.Context(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.rt.Start(t.Context(), runtime.StartRequest{Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	parent := s.ID()
	s.Close(t.Context())
	recs, err := a.Store.ReadEvents(t.Context(), parent, -1, 1)
	if err != nil {
		t.Fatal(err)
	}
	real := a.Store
	a.Store = &poisoned{Store: real, poison: store.EventIn{ID: recs[0].ID, Type: recs[0].Type, Body: recs[0].Body}}
	before := rawCount(t, real)
	for _, req := range []OpenRequest{{}, {ResumeID: parent, Fork: true}} {
		if _, err := a.Open(t.Context(), req); err == nil {
			t.Fatalf("open %+v with a failing first event succeeded", req)
		}
		if n := rawCount(t, real); n != before {
			t.Fatalf("open %+v failed and left %d session rows (%d before)", req, n, before)
		}
	}
	a.Store = real
}

// Sessions without events left by a killed process (created before a
// lease ago, held by nobody) are removed when a session is opened; a
// session being created right now is left alone.
func TestOpenRemovesEmptySessions(t *testing.T) {
	dir := t.TempDir()
	a := newTestApp(t, dir, false)
	if _, err := a.Store.CreateSession(t.Context(), store.SessionInit{ID: "sess-orphan", CreatedAt: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store.CreateSession(t.Context(), store.SessionInit{ID: "sess-being-made"}); err != nil {
		t.Fatal(err)
	}
	s, err := a.Open(t.Context(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	if _, err := a.Store.Session(t.Context(), "sess-orphan"); errcode.Of(err) != errcode.SessNotFound {
		t.Fatalf("the orphan is still there: %v", err)
	}
	if _, err := a.Store.Session(t.Context(), "sess-being-made"); err != nil {
		t.Fatalf("a session created a moment ago was removed: %v", err)
	}
}

// The listing pages through the store: sessions without events, more
// than one page of them, never push a real one off the list.
func TestSessionsPagesPastEmptyRows(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := memstore.New(memstore.Options{Now: func() time.Time { return now }})
	if _, err := st.CreateSession(ctx, store.SessionInit{ID: "sess-real"}); err != nil {
		t.Fatal(err)
	}
	who, err := st.Acquire(ctx, "sess-real", store.Owner{ID: "me"}, store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"v":1,"type":"test.note","eventId":"evt-1","at":"2026-01-02T03:04:05.000Z","actor":"kernel","data":{}}`
	if _, err := st.Append(ctx, "sess-real", who, store.EventIn{ID: "evt-1", Type: "test.note", Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second) // the empty rows are the most recent
	for i := range store.MaxPage + 1 {
		if _, err := st.CreateSession(ctx, store.SessionInit{ID: fmt.Sprintf("sess-empty-%05d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := Sessions(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "sess-real" {
		t.Fatalf("sessions = %d, want only sess-real", len(list))
	}
}

// gapStore runs before ahead of every Acquire: what another process does
// between a take-over's check and its acquire.
type gapStore struct {
	store.Store
	before func()
}

func (g *gapStore) Acquire(ctx context.Context, id string, who store.Owner, opts store.AcquireOptions) (store.Owner, error) {
	g.before()
	return g.Store.Acquire(ctx, id, who, opts)
}

// A turn the holder starts between a take-over's check and its acquire is
// not killed: the take-over is refused with SESS_BUSY and the turn ends as
// its holder says.
func TestTakeOverRacingANewTurnTakesNothing(t *testing.T) {
	dir := t.TempDir()
	a1 := newTestApp(t, dir, false)
	if err := os.WriteFile(filepath.Join(dir, "script.json"), []byte(`[{"content":"thinking","hang":true}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	s1, err := a1.Open(t.Context(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close(t.Context())

	a2 := newTestApp(t, dir, true)
	a2.Store = &gapStore{Store: a2.Store, before: func() {
		if _, err := s1.rt.Start(t.Context(), runtime.StartRequest{Input: "go"}); err != nil {
			t.Error(err)
		}
	}}
	if _, err := a2.Open(t.Context(), OpenRequest{ResumeID: s1.ID()}); errcode.Of(err) != errcode.SessBusy {
		t.Fatalf("take-over racing a new turn: %v, want %s", err, errcode.SessBusy)
	}
	s1.Cancel()
	out, err := s1.Wait(t.Context())
	if err != nil || out.Status != runtime.StatusCanceled || out.ErrorCode != "" {
		t.Fatalf("the holder's turn: %+v, %v; want canceled by its holder", out, err)
	}
	select {
	case <-s1.Lost():
		t.Fatal("the holder lost the session to a refused take-over")
	default:
	}
}

// A take-over of a session whose turn runs in another live process is
// SESS_BUSY naming that process, not "interrupted".
func TestTakeOverOfARunningTurnNamesItsProcess(t *testing.T) {
	dir := t.TempDir()
	a1 := newTestApp(t, dir, false)
	if err := os.WriteFile(filepath.Join(dir, "script.json"), []byte(`[{"content":"thinking","hang":true}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	s1, err := a1.Open(t.Context(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close(t.Context())
	if _, err := s1.rt.Start(t.Context(), runtime.StartRequest{Input: "go"}); err != nil {
		t.Fatal(err)
	}
	a2 := newTestApp(t, dir, true)
	_, err = a2.Open(t.Context(), OpenRequest{ResumeID: s1.ID()})
	if errcode.Of(err) != errcode.SessBusy || !strings.Contains(errcode.Message(err), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("take-over of a running turn: %v, want %s naming pid %d", err, errcode.SessBusy, os.Getpid())
	}
	// harness discard (and diff, apply) take a session the same way.
	if _, err := a2.Discard(t.Context(), s1.ID()); errcode.Of(err) != errcode.SessBusy || !strings.Contains(errcode.Message(err), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("discard --take-over of a running turn: %v, want %s naming pid %d", err, errcode.SessBusy, os.Getpid())
	}
	s1.Cancel()
}

// Every session of an App runs in its one runtime: a second open of a
// session open in this process is refused before its lease is touched
// (the open one goes on writing), a fork of it is not, and once closed it
// opens again.
func TestOpenOfASessionOpenHere(t *testing.T) {
	dir := t.TempDir()
	a := newTestApp(t, dir, false)
	if err := os.WriteFile(filepath.Join(dir, "script.json"), []byte(`[{"content":"hi"},{"content":"again"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s, err := a.Open(ctx, OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	turn := func(s *Session) {
		t.Helper()
		if _, err := s.Send(ctx, "hello"); err != nil {
			t.Fatal(err)
		}
		if out, err := s.Wait(ctx); err != nil || out.Status != runtime.StatusCompleted {
			t.Fatalf("turn: %+v, %v", out, err)
		}
	}
	turn(s)
	if _, err := a.Open(ctx, OpenRequest{ResumeID: s.ID()}); errcode.Of(err) != errcode.RuntimeInvalidInput {
		t.Fatalf("second open: %v, want %s", err, errcode.RuntimeInvalidInput)
	}
	turn(s) // still the lease's holder
	f, err := a.Open(ctx, OpenRequest{ResumeID: s.ID(), Fork: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := a.Open(ctx, OpenRequest{ResumeID: s.ID()})
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	defer again.Close(ctx)
}

// Without a reachable Docker daemon a session opens read-only, and its
// banner says what a user does on their own machine: start the daemon.
// It named scripts/docker.sh, a path of Harness's own repository.
func TestReadOnlyBannerSaysHowToStartDocker(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(dir, "no-daemon.sock"))
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`[{"content":"hi"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := Env{"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	a, err := New(t.Context(), Options{DB: filepath.Join(dir, "h.db"), FakeModel: script}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	s, err := a.Open(t.Context(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	if !strings.Contains(s.Note, "read-only") || !strings.Contains(s.Note, "start the Docker daemon") {
		t.Errorf("banner %q does not say the session is read-only and how to start Docker", s.Note)
	}
	if strings.Contains(s.Note, "scripts/") {
		t.Errorf("banner %q names a path of Harness's repository", s.Note)
	}
}
