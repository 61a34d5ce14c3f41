package main

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestVersion: --version (and its spellings) prints one line naming the
// version and the toolchain, exits 0, and touches no store or config: it
// runs with an unwritable HOME and no environment.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		cmd := exec.Command(harnessBin, arg)
		cmd.Env = []string{"HOME=/nonexistent", "HARNESS_DB=/nonexistent/h.db"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("harness %s: %v", arg, err)
		}
		line := string(out)
		if !strings.HasPrefix(line, "harness ") || strings.Count(line, "\n") != 1 || !strings.Contains(line, runtime.Version()) {
			t.Fatalf("harness %s printed %q, want one line naming the version and %s", arg, line, runtime.Version())
		}
	}
}

// TestVersionFromLinker: the version and commit set at build time (make
// build passes them from git) are the ones printed, and the answer comes
// from internal/version's init, before the packages with slow init (the
// Docker client's image-reference regexps, SQLite, the TUI) are
// initialized: GODEBUG=inittrace=1 lists none of them.
func TestVersionFromLinker(t *testing.T) {
	bin := t.TempDir() + "/harness"
	const vpkg = "github.com/harness-dev/harness/internal/version"
	build := goBuild("-ldflags", "-X "+vpkg+".version=v9.8.7-test -X "+vpkg+".commit=1a2b3c4d5e6f", "-o", bin, ".") // links only: the packages are built
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = []string{"GODEBUG=inittrace=1"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "harness v9.8.7-test (commit 1a2b3c4d5e6f, " + runtime.Version(); !strings.HasPrefix(string(out), want) {
		t.Fatalf("printed %q, want it to start %q", out, want)
	}
	for _, slow := range []string{"github.com/distribution/reference", "modernc.org/sqlite", "charm.land/bubbletea", "github.com/harness-dev/harness/tools"} {
		if strings.Contains(stderr.String(), "init "+slow) {
			t.Errorf("%s was initialized before the version was printed:\n%s", slow, stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "init os ") {
		t.Fatalf("GODEBUG=inittrace=1 printed no init trace:\n%s", stderr.String())
	}
}
