// Package deptest pins the dependency direction of DESIGN §1 by reading
// `go list -deps` for each package.
package deptest

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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
		{"runtime", []string{mod + "tui", "charm.land/bubbletea", "github.com/charmbracelet", mod + "dockerws", mod + "store/sqlite", mod + "store/postgres", mod + "internal/model/openai", "github.com/moby", "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/openai"}},
		{"store", []string{mod + "runtime", mod + "tui"}},
		{"store/sqlite", []string{mod + "runtime", mod + "tui"}},
		{"tools", []string{mod + "runtime", mod + "tui", mod + "dockerws"}},
		{"dockerws", []string{mod + "runtime", mod + "tui"}},
		{"compaction", []string{mod + "runtime", mod + "tui"}},
		{"internal/event", []string{mod + "runtime", mod + "tui", mod + "store"}},
		{"internal/workspace", []string{mod + "runtime", mod + "tui", mod + "dockerws"}},
		{"internal/model", []string{mod + "runtime", mod + "tui"}},
		{"internal/app", []string{mod + "tui", "charm.land/bubbletea", "github.com/charmbracelet"}},
		{"tui", []string{mod + "internal/app", mod + "runtime", mod + "store", mod + "dockerws", mod + "internal/model/openai", mod + "internal/workspace"}},
		// The packages cmd/harness wires together stay apart: the screen's
		// engine, the headless run and the checks know nothing of each other.
		{"internal/tuiengine", []string{mod + "internal/headless", mod + "internal/doctor", mod + "cmd"}},
		// The headless runner links no terminal UI: it shows a command
		// (internal/argv), a call (internal/subject) and a diff (internal/patchtext)
		// without Charm.
		{"internal/headless", []string{mod + "internal/tuiengine", mod + "internal/doctor", mod + "cmd", mod + "tui", "charm.land/", "github.com/charmbracelet/"}},
		// The front-end contract knows the app only: each front end's test
		// plays it through its own driver.
		{"internal/apptest", []string{mod + "internal/tuiengine", mod + "internal/headless", mod + "cmd", mod + "tui", "charm.land/", "github.com/charmbracelet/"}},
		{"internal/doctor", []string{mod + "tui", mod + "internal/tuiengine", mod + "internal/headless", mod + "cmd", "charm.land/bubbletea", "github.com/charmbracelet"}},
		// The commands on stored sessions print for a terminal without a
		// screen of their own.
		{"internal/inspect", []string{mod + "tui", mod + "internal/tuiengine", mod + "internal/doctor", mod + "cmd", "charm.land/", "github.com/charmbracelet/"}},
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
	allowed := map[string]bool{mod + "internal/tuiengine": true, mod + "cmd/harness": true}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var app, tui bool
		for _, imp := range f[1:] {
			app = app || imp == mod+"internal/app"
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
	allowed := map[string]bool{mod + "dockerws": true, mod + "internal/workspace": true}
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
	for _, p := range []string{"internal/checkpoint", "internal/event", "internal/model", "compaction", "internal/errcode"} {
		for _, d := range deps(t, p) {
			if p == "internal/checkpoint" {
				continue
			}
			allowed[d] = true
		}
		allowed[mod+p] = true
	}
	for _, d := range deps(t, "internal/checkpoint") {
		if strings.Contains(strings.SplitN(d, "/", 2)[0], ".") && !allowed[d] {
			t.Errorf("checkpoint imports %s", d)
		}
	}
}

// The top level is the design card's (DESIGN §15): its folders, internal/
// and scripts/, and docs/ (the README's pages, issue 35), which holds no
// code; dot-folders and the ignored bin/ aside.
func TestTopLevelIsTheDesignCard(t *testing.T) {
	card := map[string]bool{"cmd": true, "tui": true, "runtime": true, "tools": true, "dockerws": true, "store": true, "compaction": true, "testdata": true, "internal": true, "scripts": true, "docs": true, "bin": true}
	entries, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !card[e.Name()] {
			t.Errorf("top-level folder %s/ is not on the design card (it belongs under internal/ or in a card folder)", e.Name())
		}
	}
	err = filepath.WalkDir("../../docs", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(path) == ".go" {
			t.Errorf("%s: docs/ holds documentation, not code", path)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}
