package main

import (
	"strings"
	"testing"
)

// harness exec in text mode shows a command's output on stderr as it
// comes (each stream's lines in their order), and keeps stdout for the
// answer; a successful command's output shown live is not repeated, a
// failed one's tail is.
func TestExecShowsCommandOutput(t *testing.T) {
	u := newUser(t)
	u.write("README.md", "# hi\n")
	s := u.script(`[{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["sh","-c","echo first-line; echo second-line >&2; echo third-line"]}}]},
	  {"toolCalls":[{"id":"x2","name":"process.exec","arguments":{"argv":["sh","-c","echo failing-output; exit 3"]}}]},
	  {"content":"the answer"}]`)
	r := u.run("", "exec", "--image", "harness-busybox", "--fake-model", s, "run it")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if r.stdout != "the answer\n" {
		t.Errorf("stdout = %q, want only the answer", r.stdout)
	}
	for _, line := range []string{"│ first-line", "│ second-line", "│ third-line"} {
		if !strings.Contains(r.stderr, line) {
			t.Errorf("%q is not on stderr:\n%s", line, r.stderr)
		}
	}
	if strings.Index(r.stderr, "first-line") > strings.Index(r.stderr, "third-line") {
		t.Errorf("stdout lines out of order:\n%s", r.stderr)
	}
	if strings.Count(r.stderr, "│ first-line") != 1 {
		t.Errorf("a successful command's output is shown %d times:\n%s", strings.Count(r.stderr, "│ first-line"), r.stderr)
	}
	if strings.Count(r.stderr, "│ failing-output") != 2 {
		t.Errorf("a failed command's output is shown live and in its tail: %d times:\n%s", strings.Count(r.stderr, "│ failing-output"), r.stderr)
	}
}
