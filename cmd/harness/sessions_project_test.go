package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sessions --here means the project: the nearest directory holding .git
// upward, from any of its subdirectories; a session started in one
// subdirectory is listed from another, and not from outside.
func TestSessionsHereIsTheProjectRoot(t *testing.T) {
	u := newUser(t)
	if out, err := exec.Command("git", "init", "-q", u.project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	u.write("a/x.txt", "x\n")
	u.write("b/y.txt", "y\n")
	a, b := filepath.Join(u.project, "a"), filepath.Join(u.project, "b")
	r := u.runIn(a, "", "exec", "--json", "--workspace", "local", "--fake-model", u.script(`[{"content":"ok"}]`), "hi")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	for _, dir := range []string{b, u.project, a} {
		if got := u.runIn(dir, "", "sessions", "--here"); !strings.Contains(got.stdout, id) {
			t.Errorf("sessions --here in %s does not list the project's session:\n%s", dir, got.stdout)
		}
	}
	outside := t.TempDir()
	if got := u.runIn(outside, "", "sessions", "--here"); strings.Contains(got.stdout, id) {
		t.Errorf("sessions --here outside the project lists it:\n%s", got.stdout)
	}
}
