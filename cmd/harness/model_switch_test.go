package main

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/tuiengine"
	"github.com/harness-dev/harness/tui"
)

// /model NAME (the TUI engine's SetModel) switches the model for the
// following requests: the next request names it, the log records
// settings.changed, and a resume keeps it. A scripted session cannot
// switch, and says how to get a provider.
func TestSetModelSwitchesFollowingRequests(t *testing.T) {
	answer := sse(chunkJSON(`{"role":"assistant","content":"ok"}`, "stop"))
	srv := &chatServer{streams: []string{answer, answer, answer, answer}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	home := t.TempDir()
	e := app.Env{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	db := filepath.Join(home, "h.db")
	o := app.Flags{Options: app.Options{DB: db, BaseURL: hs.URL + "/v1", Model: "first-model", Workspace: "local"}}
	held := &tuiengine.Held{}
	a, err := newCLI(t.Context(), o, e, io.Discard, held)
	if err != nil {
		t.Fatal(err)
	}
	eng := tuiengine.New(a.App, held)
	ctx := t.Context()
	s, err := eng.Open(ctx, tui.OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	turnEvents(t, eng)
	if _, err := eng.SetModel(ctx, "bad name"); errcode.Of(err) != errcode.RuntimeInvalidInput {
		t.Errorf("a name with a space: %v", err)
	}
	if _, err := eng.SetModel(ctx, "second-model"); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	evs := turnEvents(t, eng)
	eng.Close()
	a.Close()
	srv.mu.Lock()
	bodies := append([]string(nil), srv.bodies...)
	srv.mu.Unlock()
	if len(bodies) != 2 || !strings.Contains(bodies[0], `"model":"first-model"`) || !strings.Contains(bodies[1], `"model":"second-model"`) {
		t.Fatalf("requests:\n%s", strings.Join(bodies, "\n"))
	}
	if len(ofType[event.AgentStarted](evs)) != 1 || ofType[event.AgentStarted](evs)[0].Model != "second-model" {
		t.Errorf("the second turn's agent.started names %+v", ofType[event.AgentStarted](evs))
	}
	// The log records the switch; a resume (no flags) keeps the new model.
	u := &userEnv{t: t, home: home, project: t.TempDir(), db: db}
	log := u.run("", "events", s.ID)
	if !strings.Contains(log.stdout, `"type":"settings.changed"`) || !strings.Contains(log.stdout, `"changed":["model"],"model":"second-model"`) {
		t.Errorf("no settings.changed for the switch:\n%s", log.stdout)
	}
	r := u.run("", "exec", "--json", "--resume", s.ID, "three")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	srv.mu.Lock()
	last := srv.bodies[len(srv.bodies)-1]
	srv.mu.Unlock()
	if !strings.Contains(last, `"model":"second-model"`) {
		t.Errorf("the resumed session asked another model:\n%s", last)
	}
	// --model on resume switches the model on the same provider: the
	// session's own server, not the default one.
	if r := u.run("", "exec", "--json", "--resume", s.ID, "--model", "third-model", "four"); r.code != 0 {
		t.Fatalf("resume --model: exit %d\n%s", r.code, r.stderr)
	}
	srv.mu.Lock()
	last = srv.bodies[len(srv.bodies)-1]
	srv.mu.Unlock()
	if !strings.Contains(last, `"model":"third-model"`) {
		t.Errorf("resume --model did not reach the session's server:\n%s", last)
	}

	// A scripted session cannot switch.
	script := u.script(`[{"content":"hi"}]`)
	fo := app.Flags{Options: app.Options{DB: filepath.Join(home, "f.db"), FakeModel: script, Workspace: "local"}}
	fa, err := newCLI(t.Context(), fo, e, io.Discard, held)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	feng := tuiengine.New(fa.App, held)
	defer feng.Close()
	if _, err := feng.Open(ctx, tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := feng.SetModel(ctx, "gpt-5"); errcode.Of(err) != errcode.ModelInvalidConfig {
		t.Errorf("switching a scripted session: %v", err)
	}
}

// turnEvents reads Next until a turn.completed arrives and returns the
// events seen.
func turnEvents(t *testing.T, eng tui.Engine) []event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var evs []event.Event
	for {
		u, err := eng.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v (events so far: %d)", err, len(evs))
		}
		for _, r := range u.Events {
			evs = append(evs, r.Event)
			if _, done := r.Event.Data.(event.TurnCompleted); done {
				return evs
			}
		}
	}
}
