package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

func typesOf(evs []event.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Type)
	}
	return out
}

func sessionOf(t *testing.T, evs []event.Event) string {
	t.Helper()
	for _, e := range evs {
		if d, ok := e.Data.(event.AgentStarted); ok {
			return d.SessionID
		}
	}
	t.Fatal("no agent.started in the output")
	return ""
}

func TestExecJSONLocal(t *testing.T) {
	u := newUser(t)
	u.write("README.md", "# hello\n")
	s := u.script(`[{"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}}],"usage":{"promptTokens":10,"completionTokens":3}},
	  {"content":"The readme says hello.","usage":{"promptTokens":20,"completionTokens":5}}]`)
	r := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", s, "what does the readme say?")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	ty := typesOf(r.events)
	if ty[0] != "workspace.lifecycle" || ty[1] != "agent.started" || ty[len(ty)-2] != "agent.stopped" || ty[len(ty)-1] != "workspace.lifecycle" {
		t.Errorf("event types = %v", ty)
	}
	tc := 0
	for _, e := range r.events {
		if d, ok := e.Data.(event.TurnCompleted); ok {
			tc++
			if d.Status != "completed" || d.Usage.TotalTokens != 38 {
				t.Errorf("turn.completed = %+v", d)
			}
		}
	}
	if tc != 1 {
		t.Errorf("%d turn.completed", tc)
	}
	// The stored log is byte-identical to what was printed.
	id := sessionOf(t, r.events)
	stored := u.run("", "events", id)
	if stored.code != 0 {
		t.Fatalf("events: exit %d: %s", stored.code, stored.stderr)
	}
	printed := strings.Split(strings.TrimSpace(r.stdout), "\n")
	lines := strings.Split(strings.TrimSpace(stored.stdout), "\n")
	// Everything stored is printed, the workspace.lifecycle(disposed)
	// written at exit included.
	if len(lines) != len(printed) {
		t.Fatalf("stored %d events, printed %d", len(lines), len(printed))
	}
	for i := range printed {
		if printed[i] != lines[i] {
			t.Fatalf("event %d differs:\nprinted %s\nstored  %s", i, printed[i], lines[i])
		}
	}
	// The stock sqlite3 tool reads the same file.
	out, err := exec.Command("sqlite3", "-readonly", u.db, "select count(*) from events where session_id = '"+id+"'").Output()
	if err != nil {
		t.Fatalf("sqlite3: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != strconv.Itoa(len(lines)) {
		t.Errorf("sqlite3 counts %s events, want %d", got, len(lines))
	}
	// The session is listed.
	ls := u.run("", "sessions", "--json")
	if !strings.Contains(ls.stdout, id) || !strings.Contains(ls.stdout, `"status":"completed"`) {
		t.Errorf("sessions = %s", ls.stdout)
	}
}

func TestExecExitCodes(t *testing.T) {
	cases := []struct {
		name   string
		script string
		args   []string
		want   int
	}{
		{"completed", `[{"content":"ok"}]`, nil, 0},
		{"failed", `[{"content":"x","omitCompletion":true}]`, nil, 1},
		{"budget", `[{"content":"big","usage":{"promptTokens":90,"completionTokens":20}}]`, []string{"--budget-tokens", "100"}, 3},
		{"usage", `[]`, []string{"--workspace", "moon"}, 2},
		{"negative budget", `[]`, []string{"--budget-tokens", "-5"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := newUser(t)
			args := append([]string{"exec", "--workspace", "local", "--fake-model", u.script(c.script)}, c.args...)
			r := u.run("", append(args, "go")...)
			if r.code != c.want {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, c.want, r.stderr)
			}
		})
	}
	t.Run("no prompt", func(t *testing.T) {
		u := newUser(t)
		if r := u.run("", "exec"); r.code != 2 {
			t.Fatalf("exit %d", r.code)
		}
	})
}

// A stdin line over 1 MiB is an error, said on stderr with its code, not
// the silent end of steering; the turn still completes.
func TestExecStdinLineTooLong(t *testing.T) {
	u := newUser(t)
	l := u.start("exec", "--json", "--workspace", "local", "--fake-model", fixture(t, "steer.json"), "start")
	l.waitFor(`"type":"model.request"`)
	l.stdin.Write([]byte(strings.Repeat("x", 1<<20+10) + "\n"))
	r := l.wait()
	if r.code != 0 || !strings.Contains(r.stderr, string(errcode.RuntimeInvalidInput)) {
		t.Fatalf("exit %d, want 0 with %s on stderr:\n%s", r.code, errcode.RuntimeInvalidInput, r.stderr)
	}
}

// Errors name what failed and where: a missing --fake-model file is named.
func TestErrorsNameThePath(t *testing.T) {
	u := newUser(t)
	missing := filepath.Join(t.TempDir(), "no-such-script.json")
	r := u.run("", "exec", "--workspace", "local", "--fake-model", missing, "go")
	if r.code == 0 || !strings.Contains(r.stderr, "no-such-script.json") {
		t.Fatalf("exit %d; stderr does not name the file:\n%s", r.code, r.stderr)
	}
}

func TestExecSteeringAndQueueFromStdin(t *testing.T) {
	u := newUser(t)
	s := fixture(t, "steer.json")
	l := u.start("exec", "--json", "--workspace", "local", "--fake-model", s, "start")
	l.waitFor(`"type":"model.request"`)
	l.stdin.Write([]byte("please also do this\n>>and then this\n"))
	l.waitFor(`"type":"input.queued"`)
	r := l.wait()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var applied, turns int
	var queuedInput string
	for _, e := range r.events {
		switch d := e.Data.(type) {
		case event.SteeringApplied:
			applied++
		case event.TurnCompleted:
			turns++
		case event.InputQueued:
			queuedInput = d.Content
		}
	}
	if applied != 1 || turns != 2 || queuedInput != "and then this" {
		t.Fatalf("applied %d, turns %d, queued %q; types %v", applied, turns, queuedInput, typesOf(r.events))
	}
}

// SIGINT (Ctrl+C), SIGTERM and SIGHUP (the terminal closing) cancel the
// running turn at once: it ends canceled, recorded, exit 130.
func TestExecCancelOnSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			u := newUser(t)
			s := u.script(`[{"content":"thinking","hang":true}]`)
			l := u.start("exec", "--json", "--workspace", "local", "--fake-model", s, "start")
			l.waitFor(`"type":"message.delta"`)
			l.cmd.Process.Signal(sig)
			r := l.wait()
			if r.code != 130 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			// The turn's last event, then the workspace's disposal at exit.
			last, disposed := r.events[len(r.events)-2], r.events[len(r.events)-1]
			if last.Type != event.TypeAgentStopped || last.Data.(event.AgentStopped).Status != "canceled" {
				t.Errorf("last event of the turn %+v", last)
			}
			if d, ok := disposed.Data.(event.WorkspaceLifecycle); !ok || d.Phase != "disposed" {
				t.Errorf("last event %+v, want the workspace disposed", disposed)
			}
		})
	}
}

func TestExecResumeFollowUp(t *testing.T) {
	u := newUser(t)
	u.write("notes.txt", "remember the milk\n")
	s1 := u.script(`[{"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"notes.txt"}}]},{"content":"noted"}]`)
	r1 := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", s1, "read my notes")
	if r1.code != 0 {
		t.Fatalf("first: exit %d: %s", r1.code, r1.stderr)
	}
	id := sessionOf(t, r1.events)
	before := u.run("", "events", id).stdout
	s2 := u.script(`[{"content":"you wanted milk"}]`)
	r2 := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", s2, "--resume", id, "what was in them?")
	if r2.code != 0 {
		t.Fatalf("follow-up: exit %d: %s", r2.code, r2.stderr)
	}
	after := u.run("", "events", id).stdout
	if !strings.HasPrefix(after, before) {
		t.Fatal("the follow-up rewrote the stored history")
	}
	req := u.run("", "request", id)
	if req.code != 0 || !strings.Contains(req.stdout, "remember the milk") || !strings.Contains(req.stdout, `"toolCallId": "c1"`) {
		t.Fatalf("request: exit %d\n%s\n%s", req.code, req.stdout, req.stderr)
	}
}

func TestResumeRefusesInterrupted(t *testing.T) {
	u := newUser(t)
	s := u.script(`[{"content":"x","hang":true}]`)
	l := u.start("exec", "--json", "--workspace", "local", "--fake-model", s, "start")
	l.waitFor(`"type":"runtime.checkpoint"`)
	l.kill9() // kill -9 mid-turn
	r := l.wait()
	id := sessionOf(t, r.events)
	s2 := u.script(`[{"content":"continued"}]`)
	res := u.run("", "exec", "--workspace", "local", "--fake-model", s2, "--resume", id, "go on")
	if res.code != 1 || !strings.Contains(res.stderr, string(errcode.RuntimeCheckpointInterrupted)) {
		t.Fatalf("resume of an interrupted session: exit %d\n%s", res.code, res.stderr)
	}
}
