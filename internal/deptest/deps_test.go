// Package deptest pins the dependency direction of DESIGN §1 by reading
// `go list -deps` for each package.
package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/harness-dev/harness/"

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

func TestDependencyDirection(t *testing.T) {
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		{"runtime", []string{mod + "tui", "charm.land/bubbletea", "github.com/charmbracelet", mod + "dockerws", mod + "store/sqlite", mod + "store/postgres", mod + "model/openai", "github.com/moby", "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/openai"}},
		{"store", []string{mod + "runtime", mod + "tui"}},
		{"store/sqlite", []string{mod + "runtime", mod + "tui"}},
		{"tools", []string{mod + "runtime", mod + "tui", mod + "dockerws"}},
		{"dockerws", []string{mod + "runtime", mod + "tui"}},
		{"compaction", []string{mod + "runtime", mod + "tui"}},
		{"event", []string{mod + "runtime", mod + "tui", mod + "store"}},
		{"workspace", []string{mod + "runtime", mod + "tui", mod + "dockerws"}},
		{"model", []string{mod + "runtime", mod + "tui"}},
		{"app", []string{mod + "tui", "charm.land/bubbletea", "github.com/charmbracelet"}},
		{"tui", []string{mod + "app", mod + "runtime", mod + "store", mod + "dockerws", mod + "model/openai", mod + "workspace"}},
		// The packages cmd/harness wires together stay apart: the screen's
		// engine, the headless run and the checks know nothing of each other.
		{"tuiengine", []string{mod + "headless", mod + "doctor", mod + "cmd"}},
		// The headless runner links no terminal UI: it shows a command
		// (internal/argv) and a diff (internal/patchtext) without Charm.
		{"headless", []string{mod + "tuiengine", mod + "doctor", mod + "cmd", mod + "tui", "charm.land/", "github.com/charmbracelet/"}},
		{"doctor", []string{mod + "tui", mod + "tuiengine", mod + "headless", mod + "cmd", "charm.land/bubbletea", "github.com/charmbracelet"}},
	}
	for _, r := range rules {
		t.Run(r.pkg, func(t *testing.T) {
			for _, d := range deps(t, r.pkg) {
				for _, f := range r.forbidden {
					if d == f || strings.HasPrefix(d, f+"/") || (strings.HasSuffix(f, "bubbletea") && strings.HasPrefix(d, f)) || (!strings.HasPrefix(f, mod) && strings.HasPrefix(d, f)) {
						t.Errorf("%s imports %s (forbidden: %s)", r.pkg, d, f)
					}
				}
			}
		})
	}
}

// app and tui meet only in the adapters: tuiengine (app behind
// tui.Engine) and cmd/harness, which wires them.
func TestAppTUIBridges(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"...").Output()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{mod + "tuiengine": true, mod + "cmd/harness": true}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var app, tui bool
		for _, imp := range f[1:] {
			app = app || imp == mod+"app"
			tui = tui || imp == mod+"tui"
		}
		if app && tui && !allowed[f[0]] {
			t.Errorf("%s imports both app and tui", f[0])
		}
	}
}

// internal/errcode imports only the standard library.
func TestErrcodeIsALeaf(t *testing.T) {
	for _, d := range deps(t, "internal/errcode") {
		if strings.Contains(d, ".") && d != mod+"internal/errcode" {
			t.Errorf("internal/errcode imports %s", d)
		}
	}
}

// Only dockerws registers attested workspaces; only workspace reads the
// registry. Any other importer of internal/attest could forge attestation.
func TestAttestImporters(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"...").Output()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{mod + "dockerws": true, mod + "workspace": true}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if imp == mod+"internal/attest" && !allowed[f[0]] {
				t.Errorf("%s imports internal/attest", f[0])
			}
		}
	}
}

// checkpoint is the pure format: besides the standard library it imports
// only event, model, compaction (the context policy it records, itself
// pure) and errcode, and whatever those import.
func TestCheckpointIsPure(t *testing.T) {
	allowed := map[string]bool{}
	for _, p := range []string{"checkpoint", "event", "model", "compaction", "internal/errcode"} {
		for _, d := range deps(t, p) {
			if p == "checkpoint" {
				continue
			}
			allowed[d] = true
		}
		allowed[mod+p] = true
	}
	for _, d := range deps(t, "checkpoint") {
		if strings.Contains(strings.SplitN(d, "/", 2)[0], ".") && !allowed[d] {
			t.Errorf("checkpoint imports %s", d)
		}
	}
}
