package main

import (
	"strings"
	"testing"
)

func TestCommandAfterFlags(t *testing.T) {
	u := newUser(t)
	s := u.script(`[{"content":"hello"}]`)
	r := u.run("", "--workspace", "local", "--fake-model", s, "exec", "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "hello") {
		t.Fatalf("flags, then exec: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ls := u.run("", "--db", u.db, "sessions")
	if ls.code != 0 || !strings.Contains(ls.stdout, "sess-") {
		t.Fatalf("flags, then sessions: exit %d\n%s%s", ls.code, ls.stdout, ls.stderr)
	}
	// The TUI takes one argument, its first prompt: more is a usage
	// error (an unquoted prompt), not guessed at.
	bad := u.run("", "--workspace", "local", "fix", "the", "bug")
	if bad.code != exitUsage || !strings.Contains(bad.stderr, `unexpected argument "the"`) {
		t.Fatalf("a stray argument: exit %d\n%s", bad.code, bad.stderr)
	}
}
