package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// CredentialFiles finds the credential-like files the Docker copy would
// refuse — not those the project's git ignores or an --exclude leaves out
// — and CredentialHint names them with the flags that leave them out.
func TestCredentialFiles(t *testing.T) {
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for name, body := range map[string]string{
		".env": "TOKEN=x\n", "config/id_rsa": "k\n", "ignored/.env": "x\n", ".gitignore": "ignored/\n",
		"main.go": "package main\n", "left/secret.pem": "p\n", "my notes/.env.local": "x\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := &App{Opts: Options{Exclude: []string{"left/"}}}
	got := a.CredentialFiles(t.Context(), root)
	slices.Sort(got)
	want := []string{".env", "config/id_rsa", "my notes/.env.local"}
	if !slices.Equal(got, want) {
		t.Fatalf("CredentialFiles = %v, want %v", got, want)
	}
	if CredentialHint(nil) != "" {
		t.Error("a hint with nothing to name")
	}
	// Each path becomes a flag the shell takes as one word.
	if w := shellWord("my notes/.env.local"); w != "'my notes/.env.local'" {
		t.Errorf("shellWord = %s", w)
	}
	if w := shellWord(".env"); w != ".env" {
		t.Errorf("shellWord = %s", w)
	}
}
