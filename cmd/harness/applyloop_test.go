package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

// write is a scripted fs.write.
func write(id, path, contents string) string {
	return `{"toolCalls":[{"id":"` + id + `","name":"fs.write","arguments":{"path":"` + path + `","contents":"` + contents + `\n"}}]}`
}

// hostFile reads a file of the user's project ("" when it is missing).
func (u *userEnv) hostFile(name string) string {
	b, err := os.ReadFile(filepath.Join(u.project, name))
	if err != nil {
		return ""
	}
	return string(b)
}

// appliedFiles lists, per patch.applied of session id, the files it
// changed.
func (u *userEnv) appliedFiles(id string) []string {
	var out []string
	for _, e := range u.storedEvents(id) {
		if d, ok := e.Data.(event.PatchApplied); ok {
			var names []string
			for _, f := range d.Files {
				names = append(names, f.Path)
			}
			out = append(out, strings.Join(names, ","))
		}
	}
	return out
}

// The everyday loop in a real terminal: write a, /apply, write b, /apply,
// quit, resume, a third turn, /apply. Every step succeeds, each apply
// carries only what the host did not have yet, and the host ends with all
// three files.
func TestTUIApplyKeepWorkingApplyAgain(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("keep.txt", "keep\n")
	img := []string{"--image", "harness-busybox"}
	first := mustAbs(t, u.script("["+strings.Join([]string{
		write("w1", "a.txt", "alpha"), `{"content":"wrote a"}`,
		write("w2", "b.txt", "bee"), `{"content":"wrote b"}`,
	}, ",")+"]"))
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, append([]string{"--fake-model", first}, img...)...))
	tm.waitFor("Ready.")

	tm.line("write a")
	tm.waitFor("wrote a", "✓ completed")
	tm.line("/apply")
	tm.waitFor("Apply to "+u.project+"?", "a.txt")
	tm.keys("y")
	tm.waitFor("applied the workspace patch to " + u.project)
	if got := u.hostFile("a.txt"); got != "alpha\n" {
		t.Fatalf("host a.txt after the first /apply: %q", got)
	}

	tm.line("write b")
	tm.waitUntil("the second turn's end", func(s string) bool { return strings.Count(s, "✓ completed") >= 2 })
	tm.line("/apply")
	tm.waitFor("Apply to "+u.project+"?", "b.txt")
	tm.keys("y")
	tm.waitUntil("the second apply", func(s string) bool {
		return strings.Count(s, "applied the workspace patch to "+u.project) >= 2
	})
	if got := u.hostFile("b.txt"); got != "bee\n" {
		t.Fatalf("host b.txt after the second /apply: %q\n%s", got, tm.screen())
	}
	id := tm.quit(1)

	third := mustAbs(t, u.script("["+write("w3", "c.txt", "sea")+`,{"content":"wrote c"}]`))
	tm.line(harnessCmd(u, append([]string{"resume", id, "--fake-model", third}, img...)...))
	tm.waitFor(id[len(id)-12:], "wrote b", "enter send")
	tm.line("write c")
	tm.waitFor("wrote c")
	tm.waitUntil("the third turn's end", func(s string) bool { return strings.Count(s, "✓ completed") >= 3 })
	tm.line("/apply")
	tm.waitFor("Apply to "+u.project+"?", "c.txt")
	tm.keys("y")
	tm.waitUntil("the third apply", func(s string) bool {
		return strings.Count(s, "applied the workspace patch to "+u.project) >= 3
	})
	tm.quit(2)

	for name, want := range map[string]string{"keep.txt": "keep\n", "a.txt": "alpha\n", "b.txt": "bee\n", "c.txt": "sea\n"} {
		if got := u.hostFile(name); got != want {
			t.Errorf("host %s: %q, want %q", name, got, want)
		}
	}
	if got := strings.Join(u.appliedFiles(id), " | "); got != "a.txt | b.txt | c.txt" {
		t.Errorf("the applies carried %s, want a.txt | b.txt | c.txt", got)
	}
	// Nothing is left to apply, and the headless commands agree.
	if d := u.run("", "diff", id); d.code != 0 || strings.TrimSpace(d.stdout) != "" {
		t.Errorf("harness diff after the last apply: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
}

// Two writes of a.txt, /apply (the host has turn 2's a.txt), /rewind to
// turn 1: the rewind works coherently — the workspace holds turn 1's file,
// rebuilt from the session's own base and not from the applied host tree,
// the screen says what the host has, and the session stays usable: the
// model reads turn 1's file, and /apply brings the host to turn 1.
func TestTUIRewindAfterApply(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("keep.txt", "keep\n")
	img := []string{"--image", "harness-busybox"}
	script := mustAbs(t, u.script("["+strings.Join([]string{
		write("w1", "a.txt", "one"), `{"content":"wrote one"}`,
		write("w2", "a.txt", "two"), `{"content":"wrote two"}`,
	}, ",")+"]"))
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, append([]string{"--fake-model", script}, img...)...))
	tm.waitFor("Ready.")
	tm.line("write one please")
	tm.waitFor("wrote one", "✓ completed")
	tm.line("write two please")
	tm.waitUntil("the second turn's end", func(s string) bool { return strings.Count(s, "✓ completed") >= 2 })
	tm.line("/apply")
	tm.waitFor("Apply to "+u.project+"?", "a.txt")
	tm.keys("y")
	tm.waitFor("applied the workspace patch to " + u.project)
	if got := u.hostFile("a.txt"); got != "two\n" {
		t.Fatalf("host a.txt after /apply: %q", got)
	}

	// The host's a.txt edited after the apply: turn 1's file cannot be
	// rebuilt; the rewind is refused, says why, records nothing, and the
	// session stays open.
	before := len(u.storedEvents(lastSession(t, u)))
	u.write("a.txt", "mine\n")
	tm.line("/rewind")
	tm.waitFor("Rewind the session", "write two please (current)")
	tm.keys("Down")
	tm.keys("Enter")
	tm.waitFor("SESS_PATCH_CONFLICT", "nothing changed")
	if after := len(u.storedEvents(lastSession(t, u))); after != before {
		t.Fatalf("a refused rewind wrote %d event(s)", after-before)
	}
	u.write("a.txt", "two\n")

	// The rewind reopens the session, and its scripted model from the
	// script's start: what it answers next.
	if err := os.WriteFile(script, []byte("["+sh("c3", "cat a.txt")+`,{"content":"the file is back"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.line("/rewind")
	tm.waitFor("Rewind the session", "write two please (current)", "write one please")
	tm.keys("Down")
	tm.keys("Enter")
	tm.waitFor("rewound to the end of turn 1", "keeps the 1 applied patch")
	tm.line("what is in a.txt?")
	tm.waitFor("the file is back")
	tm.waitUntil("the new turn's end", func(s string) bool { return strings.Count(s, "✓ completed") >= 3 })
	tm.line("/apply")
	tm.waitFor("Apply to "+u.project+"?", "a.txt")
	tm.keys("y")
	tm.waitUntil("the second apply", func(s string) bool {
		return strings.Count(s, "applied the workspace patch to "+u.project) >= 2
	})
	id := tm.quit(1)

	if got := u.hostFile("a.txt"); got != "one\n" {
		t.Errorf("host a.txt after the rewind and /apply: %q, want turn 1's", got)
	}
	var rewound int
	var catOut string
	for _, e := range u.storedEvents(id) {
		switch d := e.Data.(type) {
		case event.SessionRewound:
			rewound++
		case event.ToolResult:
			catOut = string(d.Output)
		}
	}
	if rewound != 1 || !strings.Contains(catOut, "one") || strings.Contains(catOut, "two") {
		t.Fatalf("%d session.rewound; the model's cat after the rewind: %s", rewound, catOut)
	}
	// The session resumes, and apply --reverse takes back exactly the
	// last apply.
	if r := u.run("", "apply", id, "--reverse", "--yes"); r.code != 0 {
		t.Fatalf("apply --reverse: exit %d\n%s", r.code, r.stderr)
	}
	if got := u.hostFile("a.txt"); got != "two\n" {
		t.Errorf("host a.txt after apply --reverse: %q, want two", got)
	}
	r := u.run("", "exec", "--resume", id, "--fake-model", u.script(`[{"content":"still here"}]`), "--image", "harness-busybox", "hello")
	if r.code != 0 {
		t.Fatalf("exec --resume after the rewind: exit %d\n%s", r.code, r.stderr)
	}
}

// The same loop headless, as a script would drive it: exec, apply, exec
// --resume, diff (only the new work), apply, rewind to turn 1 after both
// applies (the workspace rebuilt from the session's base: turn 1's file,
// b.txt gone from it), diff (what apply would change on the host to match
// turn 1), resume.
func TestHeadlessApplyKeepWorkingRewind(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("keep.txt", "keep\n")
	turn := func(id, prompt string, steps ...string) string {
		t.Helper()
		args := []string{"exec", "--json", "--image", "harness-busybox", "--fake-model",
			u.script("[" + strings.Join(append(steps, `{"content":"done"}`), ",") + "]")}
		if id != "" {
			args = append(args, "--resume", id)
		}
		r := u.run("", append(args, prompt)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", prompt, r.code, r.stderr)
		}
		return sessionOf(t, r.events)
	}
	apply := func(id string) {
		t.Helper()
		if r := u.run("", "apply", id, "--yes"); r.code != 0 {
			t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
		}
	}
	id := turn("", "write a", write("w1", "a.txt", "one"))
	apply(id)
	turn(id, "write b", write("w2", "b.txt", "bee"))
	if d := u.run("", "diff", id).stdout; !strings.Contains(d, "b.txt") || strings.Contains(d, "a.txt") {
		t.Fatalf("diff after more work carries more than it:\n%s", d)
	}
	apply(id)
	if got := strings.Join(u.appliedFiles(id), " | "); got != "a.txt | b.txt" {
		t.Fatalf("the applies carried %s", got)
	}
	if d := u.run("", "diff", id); d.code != 0 || strings.TrimSpace(d.stdout) != "" {
		t.Fatalf("diff after the second apply: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}

	r := u.run("", "rewind", id, "1")
	if r.code != 0 || !strings.Contains(r.stderr, "keeps the 2 applied patch(es)") {
		t.Fatalf("rewind after the applies: exit %d\n%s", r.code, r.stderr)
	}
	if d := u.run("", "diff", id).stdout; !strings.Contains(d, "b.txt") || !strings.Contains(d, "-bee") || strings.Contains(d, "a.txt") {
		t.Fatalf("diff after the rewind to turn 1 (the host has b.txt, turn 1 does not):\n%s", d)
	}
	id2 := turn(id, "look", sh("l1", "ls; cat a.txt"))
	var out string
	for _, e := range u.storedEvents(id2) {
		if d, ok := e.Data.(event.ToolResult); ok {
			out = string(d.Output)
		}
	}
	if !strings.Contains(out, "one") || strings.Contains(out, "b.txt") {
		t.Fatalf("the workspace after the rewind to turn 1:\n%s", out)
	}
}
