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

// TestVersionFromLinker: the version set at build time (make build passes
// git describe) is the one printed.
func TestVersionFromLinker(t *testing.T) {
	bin := t.TempDir() + "/harness"
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test", "-o", bin, ".") // links only: the packages are built
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "harness v9.8.7-test (") {
		t.Fatalf("printed %q, want the linker's version", out)
	}
}
