package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// The command word is found after the flags too, their values skipped:
// `harness --db F resume ID` is `harness resume ID --db F`, not a new TUI
// session with resume and ID ignored.
func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		cmd  string
		rest []string
	}{
		{[]string{"resume", "sess-1"}, "resume", []string{"sess-1"}},
		{[]string{"--db", "h.db", "resume", "sess-1", "--model", "m"}, "resume", []string{"--db", "h.db", "sess-1", "--model", "m"}},
		{[]string{"--db=h.db", "--no-project-instructions", "sessions"}, "sessions", []string{"--db=h.db", "--no-project-instructions"}},
		{[]string{"-workspace", "local", "--take-over", "exec", "hi"}, "exec", []string{"-workspace", "local", "--take-over", "hi"}},
		{[]string{"--db", "h.db"}, "", []string{"--db", "h.db"}},
		{[]string{"--", "exec"}, "", []string{"--", "exec"}},
		{nil, "", nil},
	} {
		cmd, rest := splitCommand(slices.Clone(tc.args))
		if cmd != tc.cmd || !slices.Equal(rest, tc.rest) {
			t.Errorf("splitCommand(%q) = %q %q, want %q %q", tc.args, cmd, rest, tc.cmd, tc.rest)
		}
	}
}

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
	// The TUI takes no argument: a stray one is a usage error, not ignored.
	bad := u.run("", "--workspace", "local", "--", "resume")
	if bad.code != exitUsage || !strings.Contains(bad.stderr, `unexpected argument "resume"`) {
		t.Fatalf("a stray argument: exit %d\n%s", bad.code, bad.stderr)
	}
}

// harness --help spells every flag --flag, as the README and the
// messages do; each one it lists is accepted that way.
func TestHelpSpellsFlagsWithTwoDashes(t *testing.T) {
	var b strings.Builder
	printUsage(&b)
	var o options
	fs := newFlagSet("exec", &o, io.Discard)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		if !strings.Contains(b.String(), "\n  --"+f.Name) {
			t.Errorf("--%s is not listed as such", f.Name)
		}
	})
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
			t.Errorf("a flag with one dash: %q", line)
		}
	}
	if n == 0 {
		t.Fatal("no flags")
	}
}
