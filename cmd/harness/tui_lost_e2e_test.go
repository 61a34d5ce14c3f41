package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/dockerws"
)

// A workspace container killed during a turn (a Docker daemon restart
// stops every container; here `docker kill`) leaves the TUI usable: the
// turn ends on the lost container, whose message names the session, and
// the next prompt rebuilds the workspace from what the turn before
// recorded, saying that the lost turn's changes are discarded; no quit,
// discard and resume.
func TestTUIRecoversAContainerLostDuringATurn(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# lost\n")
	// Every open of the session reads the script from its start: the
	// rebuilt session's turn answers with the first step again.
	// (A short name: the header has room for the workspace's label.)
	script := filepath.Join(u.home, "l.json")
	body := `[` +
		`{"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["sh","-c","echo \"a=$(cat a.txt 2>/dev/null || echo none) b=$(cat b.txt 2>/dev/null || echo none)\"; echo one > a.txt"]}}]},` +
		`{"content":"Step done."},` +
		`{"toolCalls":[{"id":"c2","name":"process.exec","arguments":{"argv":["sh","-c","echo two > b.txt; echo started; exec sleep 600"]}}]},` +
		`{"content":"Second done."}]`
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--image", "harness-busybox", "--fake-model", script))
	tm.waitFor("Ready.", "docker harness-busybox@sha256:")
	tm.line("first")
	tm.waitFor("a=none b=none", "Step done.", "✓ completed")
	tm.line("second")
	tm.waitFor("│ started") // its output: the card's command line says "started" too
	r := u.run("", "sessions", "--json")
	var row struct{ ID string }
	if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &row); err != nil || row.ID == "" {
		t.Fatalf("sessions: %v\n%s", err, r.stdout)
	}
	out, err := exec.Command("docker", "ps", "-q", "--filter", "label="+dockerws.LabelSession+"="+row.ID).Output()
	mine := strings.Fields(string(out))
	if err != nil || len(mine) != 1 {
		t.Fatalf("the session's running containers: %q, %v", mine, err)
	}
	if out, err := exec.Command("docker", "kill", mine[0]).CombinedOutput(); err != nil {
		t.Fatalf("docker kill: %v\n%s", err, out)
	}
	s := tm.waitFor("WORKSPACE_CONTAINER_FAILED", "ctrl+c quit")
	if strings.Contains(s, "resume ID") || !strings.Contains(tm.scrollback(), row.ID) {
		t.Errorf("a message names a literal ID:\n%s", s)
	}
	tm.line("third")
	s = tm.waitFor("discarded", "a=one b=none")
	if strings.Count(s, "Step done.") < 2 {
		tm.waitUntil("the third turn's answer", func(s string) bool { return strings.Count(s, "Step done.") >= 2 })
	}
	tm.quit(1)
}

// An un-ignored .env is named at the start, in a banner with the flag that
// leaves it out, before any tool call fails on it.
func TestTUIBannerNamesAnUnignoredEnv(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# env\n")
	u.write(".env", "TOKEN=x\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--image", "harness-busybox", "--fake-model", u.script(`[{"content":"ok"}]`)))
	tm.waitFor("credential-like files", ".env", "--exclude .env")
	tm.quit(0)
}
