package main

import (
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/tuiengine"
	"github.com/harness-dev/harness/tui"
)

// lastBody is the latest request the server received.
func (c *chatServer) lastBody() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bodies[len(c.bodies)-1]
}

// A fork continues with the session's current settings: after
// `exec --resume ID --model X`, `exec --resume ID --fork` asks X; only a
// flag typed on the fork's own command line overrides.
func TestExecForkKeepsSwitchedModel(t *testing.T) {
	answer := sse(chunkJSON(`{"role":"assistant","content":"ok"}`, "stop"))
	srv := &chatServer{streams: []string{answer, answer, answer, answer}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	u := newUser(t)
	r := u.run("", "exec", "--json", "--workspace", "local", "--base-url", hs.URL+"/v1", "--model", "first-model", "one")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	if r := u.run("", "exec", "--json", "--workspace", "local", "--resume", id, "--model", "second-model", "two"); r.code != 0 {
		t.Fatalf("resume --model: exit %d\n%s", r.code, r.stderr)
	}
	r = u.run("", "exec", "--json", "--workspace", "local", "--resume", id, "--fork", "three")
	if r.code != 0 {
		t.Fatalf("fork: exit %d\n%s", r.code, r.stderr)
	}
	fork := sessionOf(t, r.events)
	if fork == id {
		t.Fatal("the fork did not start a new session")
	}
	// The fork is listed under the title of the session it continues,
	// not as untitled (its own first prompt does not rename it).
	if l := u.run("", "sessions"); !strings.Contains(lineWith(l.stdout, fork), "fork: one") {
		t.Errorf("the fork's line in the listing:\n%s", l.stdout)
	}
	if last := srv.lastBody(); !strings.Contains(last, `"model":"second-model"`) {
		t.Errorf("the fork asked another model than the session's current one:\n%.300s", last)
	}
	if r := u.run("", "exec", "--json", "--workspace", "local", "--resume", id, "--fork", "--model", "third-model", "four"); r.code != 0 {
		t.Fatalf("fork --model: exit %d\n%s", r.code, r.stderr)
	}
	if last := srv.lastBody(); !strings.Contains(last, `"model":"third-model"`) {
		t.Errorf("--model on the fork did not override:\n%.300s", last)
	}
}

// In the TUI, /fork after /model X continues on X, not on the model the
// TUI was launched with: the launch flags were the first session's.
func TestTUIForkAfterModelSwitch(t *testing.T) {
	answer := sse(chunkJSON(`{"role":"assistant","content":"ok"}`, "stop"))
	srv := &chatServer{streams: []string{answer, answer, answer}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	home := t.TempDir()
	e := app.Env{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	o := app.Flags{Options: app.Options{DB: filepath.Join(home, "h.db"), BaseURL: hs.URL + "/v1", Model: "launch-model", Workspace: "local"}}
	held := &tuiengine.Held{}
	a, err := newCLI(t.Context(), o, e, io.Discard, held)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	eng := tuiengine.New(a.App, held)
	defer eng.Close()
	ctx := t.Context()
	s, err := eng.Open(ctx, tui.OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	turnEvents(t, eng)
	if _, err := eng.SetModel(ctx, "switched-model"); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Open(ctx, tui.OpenRequest{ID: s.ID, Fork: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	turnEvents(t, eng)
	if last := srv.lastBody(); !strings.Contains(last, `"model":"switched-model"`) {
		t.Errorf("the fork asked another model than the switched one:\n%.300s", last)
	}
}

// lineWith is the first line of out that contains s ("" for none).
func lineWith(out, s string) string {
	for l := range strings.Lines(out) {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
