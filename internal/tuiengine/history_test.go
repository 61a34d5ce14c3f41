package tuiengine

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/tui"
)

// mustProject makes a project directory (a git repository) under parent.
func mustProject(t *testing.T, parent, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// sendTurns opens a new session on eng and sends each text as a turn.
func sendTurns(t *testing.T, eng *Engine, texts ...string) string {
	t.Helper()
	s, err := eng.Open(t.Context(), tui.OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		if _, err := eng.Send(t.Context(), text); err != nil {
			t.Fatal(err)
		}
		collect(t, eng, nil)
	}
	return s.ID
}

// The input history is the project's: Prompts lists what was sent in the
// project's other sessions, oldest first (the attachments message of an
// @path is no prompt), and nothing of another project's sessions or of
// the open session (whose own log the screen has).
func TestEnginePromptsAreTheProjects(t *testing.T) {
	home, parent := t.TempDir(), t.TempDir()
	a := mustProject(t, parent, "a", map[string]string{"notes.txt": "n\n"})
	b := mustProject(t, parent, "b", nil)
	script := writeScript(t, `[{"content":"ok"},{"content":"ok"},{"content":"ok"},{"content":"ok"},{"content":"ok"},{"content":"ok"}]`)
	t.Chdir(a)
	engA, _ := newEngineAt(t, home, app.Options{FakeModel: script})
	t.Chdir(b)
	engB, _ := newEngineAt(t, home, app.Options{FakeModel: script})

	sendTurns(t, engA, "alpha one", "read @notes.txt")
	sendTurns(t, engB, "beta one")
	sendTurns(t, engA, "alpha two")
	open := sendTurns(t, engA, "alpha three")

	id, got, err := engA.Prompts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if id != open {
		t.Errorf("listed for %s, want the open session %s", id, open)
	}
	if diff := cmp.Diff([]string{"alpha one", "read @notes.txt", "alpha two"}, got); diff != "" {
		t.Errorf("prompts of project a (-want +got):\n%s", diff)
	}
	_, got, err = engB.Prompts(t.Context())
	if err != nil || len(got) != 0 {
		t.Errorf("project b has one session, the open one: prompts %q, %v", got, err)
	}
}
