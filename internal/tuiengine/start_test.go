package tuiengine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/tui"
)

// A project with an un-ignored .env is named as a session opens, with the
// flag that leaves it out: the workspace refuses to copy it, so without
// the warning the first tool call would be the first to say so. An
// ignored one, or one --exclude leaves out, is no warning.
func TestEngineStartWarningNamesCredentialFiles(t *testing.T) {
	needDocker(t)
	home, parent := t.TempDir(), t.TempDir()
	project := mustProject(t, parent, "p", map[string]string{"README.md": "# env\n", ".env": "TOKEN=x\n"})
	script := writeScript(t, `[{"content":"ok"}]`)
	t.Chdir(project)
	for _, c := range []struct {
		name    string
		exclude []string
		ignore  bool
		want    []string
	}{
		{name: "un-ignored", want: []string{".env", "--exclude .env", string(errcode.WorkspaceCredentialInput), "harness --exclude .env"}},
		{name: "excluded", exclude: []string{".env"}},
		{name: "ignored", ignore: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.ignore {
				if err := os.WriteFile(filepath.Join(project, ".gitignore"), []byte(".env\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			eng, _ := newEngineAt(t, home, app.Options{FakeModel: script, Workspace: "docker", Image: "harness-busybox", NoSpare: true, Exclude: c.exclude})
			s, err := eng.Open(t.Context(), tui.OpenRequest{})
			if err != nil {
				t.Fatal(err)
			}
			id, warning, err := eng.StartWarning(t.Context())
			if err != nil || id != s.ID {
				t.Fatalf("StartWarning = %q, %v for %s", id, err, s.ID)
			}
			if len(c.want) == 0 && warning != "" {
				t.Errorf("a warning with nothing to warn of: %q", warning)
			}
			for _, w := range c.want {
				if !strings.Contains(warning, w) {
					t.Errorf("the warning lacks %q: %q", w, warning)
				}
			}
		})
	}
}
