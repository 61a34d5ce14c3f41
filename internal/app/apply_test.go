package app

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

const notesPatch = `diff --git a/notes.txt b/notes.txt
--- a/notes.txt
+++ b/notes.txt
@@ -1 +1 @@
-milk
+oat milk
`

func mustWrite(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestApplyTwiceSaysAlreadyApplied(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "notes.txt"), "milk\n")
	plan := CheckApply(t.Context(), root, notesPatch, nil)
	if plan.Refused != "" || plan.Stat == "" {
		t.Fatalf("first check: refused %q (%s), stat %q", plan.Refused, plan.Conflict, plan.Stat)
	}
	if err := Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	again := CheckApply(t.Context(), root, notesPatch, nil)
	if again.Refused != RefusedApplied {
		t.Fatalf("second check: refused %q, want %q (%s)", again.Refused, RefusedApplied, again.Conflict)
	}
	if err := Apply(t.Context(), plan); errcode.Of(err) != errcode.WorkspaceScope {
		t.Fatalf("second apply: %v, want %s", err, errcode.WorkspaceScope)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "notes.txt")); string(b) != "oat milk\n" {
		t.Fatalf("notes.txt = %q", b)
	}
}

func TestApplyThroughSymlinkIsRefusedAsSuch(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(elsewhere, "notes.txt"), "milk\n")
	if err := os.Symlink(elsewhere, filepath.Join(root, "docs")); err != nil {
		t.Fatal(err)
	}
	patch := `diff --git a/docs/notes.txt b/docs/notes.txt
--- a/docs/notes.txt
+++ b/docs/notes.txt
@@ -1 +1 @@
-milk
+oat milk
`
	plan := CheckApply(t.Context(), root, patch, nil)
	if plan.Refused != RefusedSymlink {
		t.Fatalf("refused %q, want %q (%s)", plan.Refused, RefusedSymlink, plan.Conflict)
	}
	if b, _ := os.ReadFile(filepath.Join(elsewhere, "notes.txt")); string(b) != "milk\n" {
		t.Fatalf("the file behind the link changed: %q", b)
	}
}

func TestApplyOnChangedTreeIsRefused(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "notes.txt"), "bread\n")
	if plan := CheckApply(t.Context(), root, notesPatch, nil); plan.Refused != RefusedChanged {
		t.Fatalf("refused %q, want %q (%s)", plan.Refused, RefusedChanged, plan.Conflict)
	}
}

// A patched file that is itself a symbolic link (git apply only refuses
// links on the way to a file) is refused as such, by CheckApply and by
// Apply, and the file behind it is untouched.
func TestApplyToASymlinkedFileIsRefusedAsSuch(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(elsewhere, "notes.txt"), "milk\n")
	if err := os.Symlink(filepath.Join(elsewhere, "notes.txt"), filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	plan := CheckApply(t.Context(), root, notesPatch, nil)
	if plan.Refused != RefusedSymlink || !strings.Contains(plan.Conflict, "notes.txt") {
		t.Fatalf("refused %q, want %q (%s)", plan.Refused, RefusedSymlink, plan.Conflict)
	}
	if err := Apply(t.Context(), ApplyPlan{Root: root, Patch: notesPatch}); errcode.Of(err) != errcode.WorkspaceScope {
		t.Fatalf("apply: %v, want %s", err, errcode.WorkspaceScope)
	}
	if b, _ := os.ReadFile(filepath.Join(elsewhere, "notes.txt")); string(b) != "milk\n" {
		t.Fatalf("the file behind the link changed: %q", b)
	}
}

// Host git (apply's check and apply) never sees the API key, kept in the
// variable the config file names (apiKeyEnv), however that one is named.
func TestApplyHostGitGetsNoConfiguredKey(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	mustWrite(t, cfg, `{"apiKeyEnv": "GROQ_KEY", "model": "m"}`)
	a, err := New(t.Context(), Options{DB: filepath.Join(dir, "h.db"), Config: cfg}, Env{"HOME": dir, "GROQ_KEY": "gsk-must-not-leak"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	bin := t.TempDir()
	dump := filepath.Join(bin, "env.txt")
	mustWrite(t, filepath.Join(bin, "git"), "#!/bin/sh\nenv >> "+dump+"\n")
	if err := os.Chmod(filepath.Join(bin, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("GROQ_KEY", "gsk-must-not-leak")
	t.Setenv("HARNESS_TEST_PLAIN", "kept")
	root := t.TempDir()
	plan := CheckApply(t.Context(), root, notesPatch, a.SecretEnv())
	if err := Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the git stand-in did not run: %v", err)
	}
	if strings.Contains(string(env), "must-not-leak") || !strings.Contains(string(env), "HARNESS_TEST_PLAIN=kept") {
		t.Errorf("host git's environment:\n%s", env)
	}
}

// A patch deleting more than half of the project's files, and at least
// three, is a mass deletion; fewer, or a smaller share, is not.
func TestMassDeletion(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a", "b", "c", "d", ".git/config", ".git/HEAD", ".git/index"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	del := func(names ...string) string {
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "diff --git a/%s b/%s\ndeleted file mode 100644\n--- a/%s\n+++ /dev/null\n@@ -1 +0,0 @@\n-%s\n", n, n, n, n)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name  string
		patch string
		want  int
	}{
		{"three of four", del("a", "b", "c"), 3},
		{"all four", del("a", "b", "c", "d"), 4},
		{"two of four", del("a", "b"), 0},
		{"none", "", 0},
	} {
		got, total := MassDeletion(root, tc.patch)
		if len(got) != tc.want || (tc.want > 0 && total != 4) {
			t.Errorf("%s: MassDeletion = %v, %d files; want %d deleted of 4 (.git not counted)", tc.name, got, total, tc.want)
		}
	}
}

// A patch the changed host tree refuses says what to do next; the merge it
// names applies the change where the tree changed elsewhere in the file.
func TestApplyConflictSaysHowToGoOn(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "notes.txt"), "a\nmilk\nc\nd\nE changed\n")
	patch := "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1,5 +1,5 @@\n a\n-milk\n+oat milk\n c\n d\n e\n"
	plan := checkPlan(t.Context(), ApplyPlan{Root: root, Session: "sess-7", Patch: patch})
	if plan.Refused != RefusedChanged {
		t.Fatalf("refused %q, want %q (%s)", plan.Refused, RefusedChanged, plan.Conflict)
	}
	lines := strings.Split(plan.Conflict, "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "to go on:") || !strings.Contains(last, "patch -p1 --merge") ||
		!strings.Contains(last, "`harness diff sess-7 > session.patch`") {
		t.Fatalf("no next step naming the session on a line of its own:\n%s", plan.Conflict)
	}
	// Following it merges the change.
	mustWrite(t, filepath.Join(root, "session.patch"), patch)
	cmd := exec.Command("sh", "-c", "patch -p1 --merge < session.patch")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch --merge: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "notes.txt")); string(b) != "a\noat milk\nc\nd\nE changed\n" {
		t.Fatalf("notes.txt after the merge = %q", b)
	}
}

// apply says its true reason, not "the host tree changed": the project
// directory is gone, the patch names a path outside the project, or it
// creates a file the host has that the copy left out.
func TestApplyRefusalsSayTheirReason(t *testing.T) {
	newFile := func(p string) string {
		return "diff --git a/" + p + " b/" + p + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + p + "\n@@ -0,0 +1 @@\n+x\n"
	}
	t.Run("deleted project", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "gone")
		if plan := CheckApply(t.Context(), root, notesPatch, nil); plan.Refused != RefusedMissing {
			t.Fatalf("refused %q, want %q (%s)", plan.Refused, RefusedMissing, plan.Conflict)
		}
	})
	t.Run("dot-dot path", func(t *testing.T) {
		parent := t.TempDir()
		root := filepath.Join(parent, "project")
		mustWrite(t, filepath.Join(root, "a.txt"), "a\n")
		plan := CheckApply(t.Context(), root, newFile("../outside.txt"), nil)
		if plan.Refused != RefusedOutside {
			t.Fatalf("refused %q, want %q (%s)", plan.Refused, RefusedOutside, plan.Conflict)
		}
		if _, err := os.Stat(filepath.Join(parent, "outside.txt")); err == nil {
			t.Fatal("a file was written outside the project")
		}
	})
	t.Run("collision with a file the copy left out", func(t *testing.T) {
		root := t.TempDir()
		mustWrite(t, filepath.Join(root, ".env.local"), "KEY=secret\n")
		plan := CheckApply(t.Context(), root, newFile(".env.local"), nil)
		if plan.Refused != RefusedExists {
			t.Fatalf("refused %q, want %q (%s)", plan.Refused, RefusedExists, plan.Conflict)
		}
		if b, _ := os.ReadFile(filepath.Join(root, ".env.local")); string(b) != "KEY=secret\n" {
			t.Fatalf("the host file changed: %q", b)
		}
	})
}
