package app

import (
	"errors"
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
		cmd, rest := SplitCommand(slices.Clone(tc.args))
		if cmd != tc.cmd || !slices.Equal(rest, tc.rest) {
			t.Errorf("SplitCommand(%q) = %q %q, want %q %q", tc.args, cmd, rest, tc.cmd, tc.rest)
		}
	}
}

// What the arguments ask for: a first argument that is no command is the
// TUI's first prompt (harness "fix the bug"), as is one after --; exec's
// PROMPT is checked by the same rule; what cannot be meant is a usage
// error, before anything is opened.
func TestParseCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		cmd    string
		prompt string
		pos    []string
		usage  bool
	}{
		{args: nil},
		{args: []string{"fix the bug"}, prompt: "fix the bug"},
		{args: []string{"--workspace", "local", "fix the bug", "--model", "m"}, prompt: "fix the bug"},
		{args: []string{"--", "resume"}, prompt: "resume"},
		{args: []string{"--db", "h.db", "--", "exec"}, prompt: "exec"},
		{args: []string{"fix", "the", "bug"}, usage: true}, // unquoted: not guessed at
		{args: []string{"  "}, usage: true},
		{args: []string{"resume", "sess-1"}, cmd: "resume", pos: []string{"sess-1"}},
		{args: []string{"exec", "hi", "--json"}, cmd: "exec", prompt: "hi"},
		{args: []string{"exec"}, cmd: "exec", usage: true},
		{args: []string{"exec", "a", "b"}, cmd: "exec", usage: true},
		{args: []string{"exec", "--fork", "hi"}, cmd: "exec", usage: true},
		{args: []string{"exec", "\t\n"}, cmd: "exec", usage: true},
		{args: []string{"sessions", "export", "sess-1"}, cmd: "sessions", pos: []string{"export", "sess-1"}},
		{args: []string{"help"}, cmd: "help"},
	} {
		cl, err := ParseCommandLine(slices.Clone(tc.args), io.Discard)
		var u *UsageError
		if tc.usage != errors.As(err, &u) || (!tc.usage && err != nil) {
			t.Errorf("ParseCommandLine(%q): %v, want a usage error: %v", tc.args, err, tc.usage)
			continue
		}
		if cl.Cmd != tc.cmd || (!tc.usage && (cl.Prompt != tc.prompt || !slices.Equal(cl.Pos, tc.pos))) {
			t.Errorf("ParseCommandLine(%q) = %q prompt %q pos %q, want %q prompt %q pos %q", tc.args, cl.Cmd, cl.Prompt, cl.Pos, tc.cmd, tc.prompt, tc.pos)
		}
	}
	if _, err := ParseCommandLine([]string{"--help"}, io.Discard); !IsHelp(err) {
		t.Errorf("--help: %v", err)
	}
	if _, err := ParseCommandLine([]string{"--no-such-flag"}, io.Discard); err == nil || IsHelp(err) {
		t.Errorf("an unknown flag: %v", err)
	}
	if err := CheckPrompt(strings.Repeat("x", 300000)); !errors.As(err, new(*UsageError)) {
		t.Errorf("a prompt over the bound: %v", err)
	}
}

// harness --help spells every flag --flag, as the README and the
// messages do; each one it lists is accepted that way.
func TestHelpSpellsFlagsWithTwoDashes(t *testing.T) {
	var b strings.Builder
	PrintUsage(&b)
	fs := NewFlagSet("exec", &Flags{}, io.Discard)
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
