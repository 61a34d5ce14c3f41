package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// sh is a scripted process.exec of a shell command line.
func sh(id, line string) string {
	return fmt.Sprintf(`{"toolCalls":[{"id":%q,"name":"process.exec","arguments":{"argv":["sh","-c",%q]}}]}`, id, line)
}

// storedEvents decodes `harness events ID`.
func (u *userEnv) storedEvents(id string) []event.Event {
	u.t.Helper()
	r := u.run("", "events", id)
	if r.code != 0 {
		u.t.Fatalf("events: exit %d\n%s", r.code, r.stderr)
	}
	return decodeLines(u.t, r.stdout)
}

// Three turns change files through fs.write and shell commands; a rewind
// to turn 1 leaves turn 1's files only (diff, and what the model sees on
// the next turn), --undo brings turn 3's back, and an apply after a
// rewind writes turn 1's files to the host, all on the record.
func TestRewindDockerFilesAndConversation(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("a.txt", "alpha\nbeta\n")
	u.write("b.txt", "bee\n")
	u.write("c.txt", "sea\n")
	img := []string{"--image", "harness-busybox"}
	turn := func(id, prompt string, steps ...string) []event.Event {
		t.Helper()
		script := "[" + strings.Join(append(steps, `{"content":"done"}`), ",") + "]"
		args := append([]string{"exec", "--json", "--fake-model", u.script(script)}, img...)
		if id != "" {
			args = append(args, "--resume", id)
		}
		r := u.run("", append(args, prompt)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", prompt, r.code, r.stderr)
		}
		return r.events
	}
	// Turn 1: fs.write, sed -i, echo > new.
	ev := turn("", "first change",
		`{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"b.txt","contents":"bee one\n"}}]}`,
		sh("s1", "sed -i s/alpha/ALPHA/ a.txt && echo fresh > new1.txt"))
	id := sessionOf(t, ev)
	// Turn 2: rm, mv, >>.
	turn(id, "second change", sh("s2", "rm c.txt && mv new1.txt moved.txt && echo more >> a.txt"))
	// Turn 3: another fs.write and a new file.
	turn(id, "third change",
		`{"toolCalls":[{"id":"w3","name":"fs.write","arguments":{"path":"b.txt","contents":"bee three\n"}}]}`,
		sh("s3", "echo three > three.txt"))
	diff3 := u.run("", "diff", id)
	if diff3.code != 0 || !strings.Contains(diff3.stdout, "three.txt") || !strings.Contains(diff3.stdout, "c.txt") {
		t.Fatalf("diff after turn 3: exit %d\n%s%s", diff3.code, diff3.stdout, diff3.stderr)
	}

	// Rewind to turn 1: the diff is turn 1's.
	r := u.run("", "rewind", id, "1")
	if r.code != 0 {
		t.Fatalf("rewind: exit %d\n%s", r.code, r.stderr)
	}
	d1 := u.run("", "diff", id).stdout
	for _, want := range []string{"+ALPHA", "+bee one", "new1.txt", "+fresh"} {
		if !strings.Contains(d1, want) {
			t.Fatalf("diff after the rewind lacks %q:\n%s", want, d1)
		}
	}
	for _, gone := range []string{"c.txt", "moved.txt", "+more", "three.txt", "bee three"} {
		if strings.Contains(d1, gone) {
			t.Fatalf("diff after the rewind to turn 1 still has %q:\n%s", gone, d1)
		}
	}
	// --undo: turn 3's state is back.
	if r := u.run("", "rewind", id, "--undo"); r.code != 0 {
		t.Fatalf("undo: exit %d\n%s", r.code, r.stderr)
	}
	if d := u.run("", "diff", id).stdout; d != diff3.stdout {
		t.Fatalf("diff after --undo differs from turn 3's:\n%s\nwant\n%s", d, diff3.stdout)
	}
	// Refusals change nothing.
	for _, c := range []struct {
		args []string
		code errcode.Code
	}{
		{[]string{"rewind", id, "9"}, errcode.SessTurnNotFound},
		{[]string{"rewind", id, "turn-nope"}, errcode.SessTurnNotFound},
		{[]string{"rewind", "sess-nope", "1"}, errcode.SessNotFound},
	} {
		if r := u.run("", c.args...); r.code != 1 || !strings.Contains(r.stderr, string(c.code)) {
			t.Fatalf("%v: exit %d, want 1 with %s\n%s", c.args, r.code, c.code, r.stderr)
		}
	}
	if d := u.run("", "diff", id).stdout; d != diff3.stdout {
		t.Fatal("a refused rewind changed the session")
	}

	// Rewind to turn 1 again and go on: the model sees turn 1's files.
	if r := u.run("", "rewind", id, "1"); r.code != 0 {
		t.Fatalf("rewind again: exit %d\n%s", r.code, r.stderr)
	}
	ev4 := turn(id, "look around", sh("l4", "ls; cat a.txt b.txt new1.txt"))
	var out string
	for _, e := range ev4 {
		if d, ok := e.Data.(event.ToolResult); ok {
			out = string(d.Output)
		}
	}
	for _, want := range []string{"ALPHA", "bee one", "fresh", "c.txt"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the model did not see turn 1's files (%q missing): %s", want, out)
		}
	}
	for _, gone := range []string{"moved.txt", "three.txt", "more", "bee three"} {
		if strings.Contains(out, gone) {
			t.Fatalf("the model saw %q, made after turn 1: %s", gone, out)
		}
	}
	req := u.run("", "request", id)
	if req.code != 0 || !strings.Contains(req.stdout, "first change") || !strings.Contains(req.stdout, "look around") ||
		strings.Contains(req.stdout, "second change") || strings.Contains(req.stdout, "third change") {
		t.Fatalf("request after the rewind: exit %d\n%s%s", req.code, req.stdout, req.stderr)
	}

	// Apply: turn 1's files (and the new turn's, which changed none) on the host.
	if r := u.run("", "apply", id, "--yes"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	for name, want := range map[string]string{"a.txt": "ALPHA\nbeta\n", "b.txt": "bee one\n", "new1.txt": "fresh\n", "c.txt": "sea\n"} {
		if b, err := os.ReadFile(filepath.Join(u.project, name)); err != nil || string(b) != want {
			t.Fatalf("host %s = %q (%v), want %q", name, b, err, want)
		}
	}
	var rewound, applied int
	for _, e := range u.storedEvents(id) {
		switch d := e.Data.(type) {
		case event.SessionRewound:
			rewound++
		case event.PatchApplied:
			applied++
			if d.Root != u.project || len(d.Files) != 3 || d.Reverse {
				t.Fatalf("patch.applied %+v", d)
			}
		}
	}
	if rewound != 3 || applied != 1 {
		t.Fatalf("%d session.rewound and %d patch.applied on record, want 3 and 1", rewound, applied)
	}
	// A rewind after the apply says the host is not rewound; the recorded
	// patch reverts.
	r = u.run("", "rewind", id, "--undo")
	if r.code != 0 || !strings.Contains(r.stderr, "--reverse") {
		t.Fatalf("rewind after apply: exit %d\n%s", r.code, r.stderr)
	}
	if r := u.run("", "apply", id, "--reverse", "--yes"); r.code != 0 {
		t.Fatalf("apply --reverse: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(u.project, "a.txt")); string(b) != "alpha\nbeta\n" {
		t.Fatalf("host a.txt after the revert = %q", b)
	}
	if _, err := os.Stat(filepath.Join(u.project, "new1.txt")); !os.IsNotExist(err) {
		t.Fatalf("new1.txt survived the revert: %v", err)
	}
	evs := u.storedEvents(id)
	if last := evs[len(evs)-1]; last.Type != event.TypePatchApplied || !last.Data.(event.PatchApplied).Reverse {
		t.Fatalf("last event %s, want patch.applied(reverse)", last.Type)
	}
}

// Every Docker session's log ends with the workspace's disposal.
func TestDockerSessionEndsDisposed(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("a.txt", "a\n")
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model",
		u.script(`[`+sh("s1", "echo b >> a.txt")+`,{"content":"done"}]`), "go")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	evs := u.storedEvents(sessionOf(t, r.events))
	last := evs[len(evs)-1]
	if d, ok := last.Data.(event.WorkspaceLifecycle); !ok || d.Phase != event.PhaseDisposed || d.Backend != "docker" {
		t.Fatalf("last stored event %s %+v, want workspace.lifecycle(disposed) of the docker workspace", last.Type, last.Data)
	}
	if strings.Contains(r.stderr, "could not") {
		t.Fatalf("the close reported a failure:\n%s", r.stderr)
	}
}

// /rewind in a real terminal: the picker lists the turns, picking turn 1
// shows the rewind in the transcript, and the next answer comes from turn
// 1's files and conversation.
func TestTUIRewind(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("a.txt", "zero\n")
	img := []string{"--image", "harness-busybox"}
	run := func(id, prompt, contents string) string {
		t.Helper()
		s := u.script(`[{"toolCalls":[{"id":"w-` + contents + `","name":"fs.write","arguments":{"path":"a.txt","contents":"` + contents + `\n"}}]},{"content":"wrote ` + contents + `"}]`)
		args := append([]string{"exec", "--json", "--fake-model", s}, img...)
		if id != "" {
			args = append(args, "--resume", id)
		}
		r := u.run("", append(args, prompt)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", prompt, r.code, r.stderr)
		}
		return sessionOf(t, r.events)
	}
	id := run("", "write one please", "one")
	run(id, "write two please", "two")

	tm := newTerminal(t, u)
	look := mustAbs(t, u.script(`[`+sh("c1", "cat a.txt")+`,{"content":"the file is back at one"}]`))
	tm.line(harnessCmd(u, append([]string{"resume", id, "--fake-model", look}, img...)...))
	tm.waitFor("wrote two", id[len(id)-12:])
	tm.line("/rewind")
	tm.waitFor("Rewind the session", "write two please (current)", "write one please")
	tm.keys("Down")
	tm.keys("Enter")
	tm.waitFor("rewound to the end of turn 1")
	tm.line("what is in a.txt?")
	tm.waitFor("the file is back at one")
	tm.waitUntil("the new turn's ending", func(s string) bool { return strings.Count(s, "✓ completed") >= 3 })
	tm.quit(1)

	var out string
	var rewound bool
	for _, e := range u.storedEvents(id) {
		switch d := e.Data.(type) {
		case event.SessionRewound:
			rewound = d.ToTurn == 1 && d.FromTurn == 2
		case event.ToolResult:
			out = string(d.Output)
		}
	}
	if !rewound || !strings.Contains(out, "one") || strings.Contains(out, "two") {
		t.Fatalf("rewound %v; the model's cat after the rewind: %s", rewound, out)
	}
	req := u.run("", "request", id)
	if strings.Contains(req.stdout, "write two please") || !strings.Contains(req.stdout, "write one please") {
		t.Fatalf("the request after the rewind:\n%s", req.stdout)
	}
}

// A rewind is refused, changing nothing, while another live process runs
// a turn (SESS_BUSY), to a turn that did not finish (SESS_TURN_UNFINISHED)
// and with --undo before any rewind (SESS_TURN_NOT_FOUND); a rewind to the
// last finished turn is how an interrupted session goes on.
func TestRewindRefusals(t *testing.T) {
	u := newUser(t)
	u.write("a.txt", "a\n")
	local := []string{"--workspace", "local"}
	r := u.run("", append([]string{"exec", "--json", "--fake-model", u.script(`[{"content":"first answer"}]`), "first"}, local...)...)
	if r.code != 0 {
		t.Fatalf("first: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	if r := u.run("", "rewind", id, "--undo"); r.code != 1 || !strings.Contains(r.stderr, string(errcode.SessTurnNotFound)) {
		t.Fatalf("undo with no rewind: exit %d\n%s", r.code, r.stderr)
	}

	l := u.start(append([]string{"exec", "--json", "--fake-model", u.script(`[{"content":"x","hang":true}]`), "--resume", id, "second"}, local...)...)
	l.waitFor(`"type":"message.delta"`)
	before := u.run("", "events", id).stdout
	if r := u.run("", "rewind", id, "1"); r.code != 1 || !strings.Contains(r.stderr, string(errcode.SessBusy)) {
		t.Fatalf("rewind while another process runs a turn: exit %d\n%s", r.code, r.stderr)
	}
	if after := u.run("", "events", id).stdout; after != before {
		t.Fatal("a refused rewind wrote to the session")
	}
	l.kill9() // the turn is left interrupted
	l.wait()

	if r := u.run("", "rewind", id, "2"); r.code != 1 || !strings.Contains(r.stderr, string(errcode.SessTurnUnfinished)) {
		t.Fatalf("rewind to the interrupted turn: exit %d\n%s", r.code, r.stderr)
	}
	if r := u.run("", "rewind", id, "1"); r.code != 0 {
		t.Fatalf("rewind to the last finished turn: exit %d\n%s", r.code, r.stderr)
	}
	r = u.run("", append([]string{"exec", "--json", "--fake-model", u.script(`[{"content":"going on"}]`), "--resume", id, "third"}, local...)...)
	if r.code != 0 {
		t.Fatalf("resume after the rewind: exit %d\n%s", r.code, r.stderr)
	}
	if l := u.run("", "rewind", id); l.code != 0 || !strings.Contains(l.stdout, "unfinished") || !strings.Contains(l.stdout, "(current)") {
		t.Fatalf("the turn list: exit %d\n%s%s", l.code, l.stdout, l.stderr)
	}
}

// A turn whose diff failed keeps its work in a container: a rewind past it
// is refused (SESS_KEPT_WORK) and the container stays.
func TestRewindKeepsKeptWork(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("a.txt", "a\n")
	id, name := failTheDiff(t, u, `i=0; while [ $i -lt 5 ]; do yes abcdefg | head -c 2097152 > big$i.txt || exit 1; i=$((i+1)); done`)
	if r := u.run("", "rewind", id, "1"); r.code != 1 || !strings.Contains(r.stderr, string(errcode.SessKeptWork)) {
		t.Fatalf("rewind past kept work: exit %d\n%s", r.code, r.stderr)
	}
	if !running(name) {
		t.Fatalf("the kept container %s is gone after a refused rewind", name)
	}
}
