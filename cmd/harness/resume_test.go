package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/sqlite"
)

func eventsOf[T event.Data](evs []event.Event) []T {
	var out []T
	for _, e := range evs {
		if d, ok := e.Data.(T); ok {
			out = append(out, d)
		}
	}
	return out
}

// resultsByModelCall is a run's tool results by the model's call ID (the
// "id" its script gave the call).
func resultsByModelCall(evs []event.Event) map[string]event.ToolResult {
	ids := map[string]string{}
	for _, d := range eventsOf[event.ToolCall](evs) {
		ids[d.CallID] = d.ModelCallID
	}
	out := map[string]event.ToolResult{}
	for _, d := range eventsOf[event.ToolResult](evs) {
		out[ids[d.CallID]] = d
	}
	return out
}

func TestResumeFlagsOverrideSavedSettings(t *testing.T) {
	u := newUser(t)
	a := u.script(`[{"content":"first"}]`)
	r1 := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", a, "hello")
	if r1.code != 0 {
		t.Fatalf("first: exit %d: %s", r1.code, r1.stderr)
	}
	id := sessionOf(t, r1.events)

	b := filepath.Join(u.home, "B.json")
	if err := os.WriteFile(b, []byte(`[{"content":"second"},{"content":"third"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	r2 := u.run("", "exec", "--json", "--workspace", "local", "--resume", id, "--fake-model", b, "--context-window", "64000", "and now?")
	if r2.code != 0 {
		t.Fatalf("resume: exit %d: %s", r2.code, r2.stderr)
	}
	changes := eventsOf[event.SettingsChanged](r2.events)
	if len(changes) != 1 || !slices.Contains(changes[0].Changed, "model") || !slices.Contains(changes[0].Changed, "contextWindow") {
		t.Fatalf("settings.changed: %+v", changes)
	}
	reqs := eventsOf[event.ModelRequest](r2.events)
	if len(reqs) == 0 || reqs[0].Model != "fake:B.json" {
		t.Fatalf("model.request after resume with B: %+v", reqs)
	}
	acc := eventsOf[event.ContextAccounted](r2.events)
	if len(acc) == 0 || acc[0].WindowTokens != 64000 {
		t.Fatalf("context.accounted after --context-window 64000: %+v", acc)
	}
	types := typesOf(r2.events)
	if slices.Index(types, string(event.TypeSettingsChanged)) > slices.Index(types, string(event.TypeModelRequest)) {
		t.Fatalf("settings.changed after the request it governs: %v", types)
	}

	// Flags not given keep the saved values: B and the 64000 window.
	r3 := u.run("", "exec", "--json", "--workspace", "local", "--resume", id, "--fake-model", b, "once more")
	if r3.code != 0 {
		t.Fatalf("third: exit %d: %s", r3.code, r3.stderr)
	}
	if n := len(eventsOf[event.SettingsChanged](r3.events)); n != 0 {
		t.Fatalf("%d settings.changed with nothing changed", n)
	}
	if acc := eventsOf[event.ContextAccounted](r3.events); len(acc) == 0 || acc[0].WindowTokens != 64000 {
		t.Fatalf("the window went back: %+v", acc)
	}
}

func TestResumeWithoutTheScriptedModelSaysWhatToPass(t *testing.T) {
	u := newUser(t)
	a := u.script(`[{"content":"first"}]`)
	r1 := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", a, "hello")
	id := sessionOf(t, r1.events)
	before := u.run("", "events", id).stdout
	r := u.run("", "exec", "--workspace", "local", "--resume", id, "go on")
	if r.code != 1 || !strings.Contains(r.stderr, string(errcode.ModelInvalidConfig)) || !strings.Contains(r.stderr, "--fake-model") {
		t.Fatalf("resume without the script: exit %d\n%s", r.code, r.stderr)
	}
	if after := u.run("", "events", id).stdout; after != before {
		t.Fatal("a refused resume wrote to the session")
	}
}

func TestResumeFromAnotherDirectoryWorksOnTheProject(t *testing.T) {
	u := newUser(t)
	u.write("notes.txt", "remember the milk\n")
	a := u.script(`[{"content":"ok"}]`)
	r1 := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", a, "hello")
	id := sessionOf(t, r1.events)

	elsewhere := t.TempDir()
	b := u.script(`[{"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"notes.txt"}}]},{"content":"milk"}]`)
	r2 := u.runIn(elsewhere, "", "exec", "--json", "--workspace", "local", "--fake-model", b, "--resume", id, "what is in my notes?")
	if r2.code != 0 || !strings.Contains(r2.stderr, u.project) {
		t.Fatalf("resume elsewhere: exit %d\n%s", r2.code, r2.stderr)
	}
	results := eventsOf[event.ToolResult](r2.events)
	if len(results) != 1 || !results[0].OK || !strings.Contains(string(results[0].Output), "remember the milk") {
		t.Fatalf("fs.read from another directory: %+v", results)
	}

	if err := os.RemoveAll(u.project); err != nil {
		t.Fatal(err)
	}
	c := u.script(`[{"content":"x"}]`)
	r3 := u.runIn(elsewhere, "", "exec", "--workspace", "local", "--fake-model", c, "--resume", id, "again")
	if r3.code != 1 || !strings.Contains(r3.stderr, string(errcode.SessProjectMissing)) || !strings.Contains(r3.stderr, u.project) {
		t.Fatalf("resume of a session whose project is gone: exit %d\n%s", r3.code, r3.stderr)
	}
}

func TestFailedStartsLeaveNoSession(t *testing.T) {
	u := newUser(t)
	a := u.script(`[{"content":"x"}]`)
	for name, args := range map[string][]string{
		"fork without resume": {"exec", "--workspace", "local", "--fake-model", a, "--fork", "go"},
		"invalid UTF-8":       {"exec", "--workspace", "local", "--fake-model", a, "caf\xe9"},
		"empty prompt":        {"exec", "--workspace", "local", "--fake-model", a, ""},
	} {
		if r := u.run("", args...); r.code != exitUsage {
			t.Errorf("%s: exit %d, want %d\n%s", name, r.code, exitUsage, r.stderr)
		}
	}
	if r := u.run("", "exec", "--workspace", "local", "--fake-model", filepath.Join(u.home, "missing.json"), "go"); r.code != 1 {
		t.Errorf("missing script: exit %d\n%s", r.code, r.stderr)
	}
	if r := u.run("", "exec", "--workspace", "docker", "--image", "harness-no-such-image:0", "--fake-model", a, "go"); r.code != 1 {
		t.Errorf("failed launch: exit %d\n%s", r.code, r.stderr)
	}
	// The store itself, not the listing (which leaves out sessions
	// without events), holds no session.
	if rows := rawSessions(t, u.db); len(rows) != 0 {
		t.Fatalf("failed starts left %d session rows: %+v", len(rows), rows)
	}
}

// rawSessions is every session row of the SQLite store at db, those
// without events included.
func rawSessions(t *testing.T, db string) []store.Session {
	t.Helper()
	r, err := sqlite.OpenReader(db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	list, err := r.ListSessions(t.Context(), store.ListCursor{}, store.MaxPage)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// A fork (or a resume) whose recorded patch no longer applies to the
// project tree fails with SESS_PATCH_CONFLICT naming the file, and the
// fork stores no session.
func TestForkWhosePatchNoLongerAppliesLeavesNoSession(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("notes.txt", "milk\n")
	w := u.script(`[{"toolCalls":[{"id":"c1","name":"fs.write","arguments":{"path":"notes.txt","contents":"oat milk\n"}}]},{"content":"done"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", w, "edit the notes")
	if r.code != 0 {
		t.Fatalf("first turn: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	if !strings.Contains(r.stderr, "harness diff "+id) {
		t.Errorf("exec did not say the workspace has changes:\n%s", r.stderr)
	}
	u.write("notes.txt", "bread\n") // the host file changes under the patch
	before := len(rawSessions(t, u.db))
	cont := u.script(`[{"content":"x"}]`)
	for _, args := range [][]string{{"--resume", id, "--fork"}, {"--resume", id}} {
		f := u.run("", append([]string{"exec", "--image", "harness-busybox", "--fake-model", cont}, append(args, "go on")...)...)
		if f.code != 1 || !strings.Contains(f.stderr, string(errcode.SessPatchConflict)) || !strings.Contains(f.stderr, "notes.txt") {
			t.Fatalf("%v on a changed tree: exit %d\n%s", args, f.code, f.stderr)
		}
	}
	if after := len(rawSessions(t, u.db)); after != before {
		t.Fatalf("%d session rows after the refused fork, %d before", after, before)
	}
}

func TestReadOnlyCommandsBuildNoModel(t *testing.T) {
	for name, extra := range map[string][]string{
		"key without model": {"OPENAI_API_KEY=sk-test"},
		"model without key": {"HARNESS_MODEL=gpt-test"},
	} {
		t.Run(name, func(t *testing.T) {
			u := newUser(t)
			a := u.script(`[{"content":"ok"}]`)
			id := sessionOf(t, u.run("", "exec", "--json", "--workspace", "local", "--fake-model", a, "hello").events)
			u.extra = extra
			for _, args := range [][]string{{"sessions"}, {"events", id}, {"request", id}, {"diff", id}, {"sessions", "export", id}} {
				if r := u.run("", args...); r.code != 0 {
					t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
				}
			}
		})
	}
}

func TestSessionsHereAndDirectory(t *testing.T) {
	u := newUser(t)
	a := u.script(`[{"content":"ok"}]`)
	mine := sessionOf(t, u.run("", "exec", "--json", "--workspace", "local", "--fake-model", a, "here").events)
	other := t.TempDir()
	b := u.script(`[{"content":"ok"}]`)
	r := u.runIn(other, "", "exec", "--json", "--workspace", "local", "--fake-model", b, "there")
	theirs := sessionOf(t, r.events)

	all := u.run("", "sessions")
	if !strings.Contains(all.stdout, mine) || !strings.Contains(all.stdout, theirs) || !strings.Contains(all.stdout, other) {
		t.Fatalf("sessions:\n%s", all.stdout)
	}
	here := u.run("", "sessions", "--here")
	if !strings.Contains(here.stdout, mine) || strings.Contains(here.stdout, theirs) {
		t.Fatalf("sessions --here:\n%s", here.stdout)
	}
}

func TestBusySessionNamesTakeOverAndARefusedTakeOverKeepsTheTurn(t *testing.T) {
	u := newUser(t)
	s := u.script(`[{"content":"x","hang":true}]`)
	l := u.start("exec", "--json", "--workspace", "local", "--fake-model", s, "start")
	l.waitFor(`"type":"runtime.checkpoint"`)
	l.mu.Lock()
	sofar := strings.Join(l.lines, "\n")
	l.mu.Unlock()
	id := sessionOf(t, decodeLines(t, sofar))
	s2 := u.script(`[{"content":"x"}]`)

	busy := u.run("", "exec", "--workspace", "local", "--fake-model", s2, "--resume", id, "me too")
	if busy.code != 1 || !strings.Contains(busy.stderr, string(errcode.SessBusy)) || !strings.Contains(busy.stderr, "--take-over") {
		t.Fatalf("resume of a busy session: exit %d\n%s", busy.code, busy.stderr)
	}
	// Refused, naming the process that runs the turn (not "interrupted").
	take := u.run("", "exec", "--workspace", "local", "--fake-model", s2, "--resume", id, "--take-over", "mine now")
	if take.code != 1 || !strings.Contains(take.stderr, string(errcode.SessBusy)) || !strings.Contains(take.stderr, fmt.Sprintf("pid %d", l.cmd.Process.Pid)) {
		t.Fatalf("take-over of a running turn: exit %d\n%s", take.code, take.stderr)
	}
	// The live process still holds the session: its cancel is recorded.
	l.cmd.Process.Signal(os.Interrupt)
	r := l.wait()
	done := eventsOf[event.TurnCompleted](r.events)
	if r.code != exitCanceled || len(done) != 1 || done[0].Status != event.StatusCanceled {
		t.Fatalf("the live turn after a refused take-over: exit %d, %+v\n%s", r.code, done, r.stderr)
	}
}

// rebindProject records dir as the project of session id in the SQLite
// store at db.
func rebindProject(t *testing.T, db, id, dir string) {
	t.Helper()
	st, err := sqlite.Open(db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	who, err := st.Acquire(t.Context(), id, app.NewOwner(store.HostID()), store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetMetadata(t.Context(), id, who, map[string]string{"root": dir}); err != nil {
		t.Fatal(err)
	}
	if err := st.Release(t.Context(), id, who); err != nil {
		t.Fatal(err)
	}
}

// A session killed during its first turn has no finished turn to fork
// from: the fork starts from nothing, records so, and runs its turn.
func TestForkOfASessionInterruptedInItsFirstTurn(t *testing.T) {
	u := newUser(t)
	hang := u.script(`[{"content":"x","hang":true}]`)
	l := u.start("exec", "--json", "--workspace", "local", "--fake-model", hang, "start")
	l.waitFor(`"type":"runtime.checkpoint"`)
	l.kill9()
	id := sessionOf(t, l.wait().events)

	cont := u.script(`[{"content":"from scratch"}]`)
	fork := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", cont, "--resume", id, "--fork", "again")
	if fork.code != 0 {
		t.Fatalf("fork of a session interrupted in its first turn: exit %d\n%s", fork.code, fork.stderr)
	}
	forked := eventsOf[event.SessionForked](fork.events)
	if len(forked) != 1 || forked[0].FromSessionID != id || forked[0].FromTurnID != "" || forked[0].AbandonedTurnID == "" {
		t.Fatalf("session.forked: %+v", forked)
	}
	done := eventsOf[event.TurnCompleted](fork.events)
	if len(done) != 1 || done[0].Status != event.StatusCompleted {
		t.Fatalf("the fork's turn: %+v", done)
	}
	// The fork resumes like any session.
	again := u.script(`[{"content":"still here"}]`)
	if r := u.run("", "exec", "--workspace", "local", "--fake-model", again, "--resume", forked[0].SessionID, "and now"); r.code != 0 {
		t.Fatalf("resume of the fork: exit %d\n%s", r.code, r.stderr)
	}
}

// harness doctor removes the sessions without events that a process
// killed while creating them left (an older Harness created the row
// before the first event), and says how many.
func TestDoctorRemovesEmptySessions(t *testing.T) {
	u := newUser(t)
	a := u.script(`[{"content":"ok"}]`)
	id := sessionOf(t, u.run("", "exec", "--json", "--workspace", "local", "--fake-model", a, "hello").events)
	st, err := sqlite.Open(u.db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSession(t.Context(), store.SessionInit{ID: "sess-orphan", CreatedAt: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	r := u.run("", "doctor", "--workspace", "local", "--fake-model", a)
	if !strings.Contains(r.stdout, "sessions without events (1 removed)") {
		t.Fatalf("doctor:\n%s%s", r.stdout, r.stderr)
	}
	rows := rawSessions(t, u.db)
	if len(rows) != 1 || rows[0].ID != id {
		t.Fatalf("rows after doctor: %+v", rows)
	}
}
