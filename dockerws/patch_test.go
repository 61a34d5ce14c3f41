package dockerws

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/workspace"
)

// text builds a tree: a key ending in "*" is executable.
func text(files map[string]string) map[string]*entry {
	out := map[string]*entry{}
	for p, c := range files {
		mode := fs.FileMode(0o644)
		if n, ok := strings.CutSuffix(p, "*"); ok {
			p, mode = n, 0o755
		}
		out[p] = &entry{data: []byte(c), mode: mode}
	}
	return out
}

// materialize writes a tree into a new directory.
func materialize(t *testing.T, tree map[string]*entry) string {
	t.Helper()
	dir := t.TempDir()
	for p, e := range tree {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, e.data, e.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, e.mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readBack reads a directory into a tree (regular files only).
func readBack(t *testing.T, dir string) map[string]*entry {
	t.Helper()
	out := map[string]*entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if fi.Mode().Perm()&0o100 != 0 {
			mode = 0o755
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = &entry{data: b, mode: mode}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gitApply applies patch with the host's git in dir, as a user would.
func gitApply(t *testing.T, dir, patch string) {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed to check patches: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), git, "apply", "--whitespace=nowarn", "-")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(patch)
	// Outside a repository git apply behaves like patch -p1; keep the
	// user's git configuration out of the test.
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\npatch:\n%s", err, out, patch)
	}
}

func entriesEqual() cmp.Option {
	return cmp.Comparer(func(a, b *entry) bool {
		return a.mode == b.mode && string(a.data) == string(b.data) && a.skip == b.skip
	})
}

var patchCases = []struct {
	name      string
	base, cur map[string]string
}{
	{"unchanged", map[string]string{"a.txt": "a\n"}, map[string]string{"a.txt": "a\n"}},
	{"modify", map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n"}, map[string]string{"a.txt": "1\n2\nthree\n4\n5\n6\n7\n8\nnine\n"}},
	{"add and delete", map[string]string{"old.txt": "gone\n", "keep.txt": "k\n"}, map[string]string{"new/deep/file.txt": "hello\n", "keep.txt": "k\n"}},
	{"empty files", map[string]string{"was-empty.txt": "", "del-empty.txt": ""}, map[string]string{"was-empty.txt": "now text\n", "new-empty.txt": ""}},
	{"to empty", map[string]string{"a.txt": "text\n"}, map[string]string{"a.txt": ""}},
	{"no newline at end", map[string]string{"a.txt": "one\ntwo"}, map[string]string{"a.txt": "one\ntwo\nthree", "b.txt": "no eol"}},
	{"add final newline", map[string]string{"a.txt": "one"}, map[string]string{"a.txt": "one\n"}},
	{"mode only", map[string]string{"run.sh": "#!/bin/sh\n"}, map[string]string{"run.sh*": "#!/bin/sh\n"}},
	{"mode and content", map[string]string{"run.sh*": "#!/bin/sh\necho a\n"}, map[string]string{"run.sh": "#!/bin/sh\necho b\n"}},
	{"executable added and deleted", map[string]string{"tool*": "x\n"}, map[string]string{"other*": "y\n"}},
	{"names to quote", map[string]string{"with space.txt": "a\n", `quo"te.txt`: "q\n", "ends with space ": "s\n"},
		map[string]string{"with space.txt": "A\n", `quo"te.txt`: "Q\n", "ends with space ": "S\n"}},
	{"unicode", map[string]string{"ünïcödé.txt": "é\n"}, map[string]string{"ünïcödé.txt": "è\n", "日本.txt": "語\n"}},
	{"file becomes directory", map[string]string{"x": "file\n"}, map[string]string{"x/y": "nested\n"}},
	{"crlf", map[string]string{"w.txt": "a\r\nb\r\n"}, map[string]string{"w.txt": "a\r\nB\r\n"}},
	// Carried whole in git's binary patch format: a NUL, bytes that are
	// not UTF-8, text over the file-size limit (1 KiB here).
	{"binary added", map[string]string{"a.txt": "a\n"}, map[string]string{"a.txt": "a\n", "img.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "nul.txt": "a\x00b\n"}},
	{"binary changed, executable", map[string]string{"blob*": "\x00\x01"}, map[string]string{"blob*": "\x00\x02\x03"}},
	{"binary deleted", map[string]string{"blob": "\x00\x01", "a.txt": "a\n"}, map[string]string{"a.txt": "a\n"}},
	{"text becomes binary", map[string]string{"a.txt": "a\n"}, map[string]string{"a.txt": "\xff\xfe latin\n"}},
	{"large text", map[string]string{"a.txt": "a\n"}, map[string]string{"a.txt": "a\n", "lock.json": strings.Repeat("{\"k\": \"v\"}\n", 300)}},
	{"text grows large", map[string]string{"lock.json": "{}\n"}, map[string]string{"lock.json": strings.Repeat("{\"k\": \"v\"}\n", 300)}},
}

// TestPatchAppliesWithGit checks the patch against the reference: git
// apply on a copy of the original tree gives the current tree.
func TestPatchAppliesWithGit(t *testing.T) {
	for _, tc := range patchCases {
		t.Run(tc.name, func(t *testing.T) {
			base, cur := text(tc.base), text(tc.cur)
			patch := formatPatch(base, cur, 1<<10)
			if tc.name == "unchanged" {
				if patch != "" {
					t.Fatalf("patch of an unchanged tree = %q", patch)
				}
				return
			}
			dir := materialize(t, base)
			gitApply(t, dir, patch)
			if diff := cmp.Diff(cur, readBack(t, dir), entriesEqual()); diff != "" {
				t.Errorf("tree after git apply (-want +got):\n%s\npatch:\n%s", diff, patch)
			}
		})
	}
}

// TestPatchRoundTripsInGo checks ApplyPatch's engine on the same cases.
func TestPatchRoundTripsInGo(t *testing.T) {
	for _, tc := range patchCases {
		t.Run(tc.name, func(t *testing.T) {
			base, cur := text(tc.base), text(tc.cur)
			files, _, err := gitdiff.Parse(strings.NewReader(formatPatch(base, cur, 1<<10)))
			if err != nil {
				t.Fatal(err)
			}
			writes, deletes, err := applyFiles(base, files)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*entry{}
			for p, e := range base {
				got[p] = e
			}
			for _, p := range deletes {
				delete(got, p)
			}
			for p, e := range writes {
				got[p] = e
			}
			if diff := cmp.Diff(cur, got, entriesEqual()); diff != "" {
				t.Errorf("tree after applyFiles (-want +got):\n%s", diff)
			}
		})
	}
}

// What no patch can carry is named in the note before the first file,
// which git and ApplyPatch pass over; it is never taken for a deletion.
func TestPatchLeavesOutUnrepresentable(t *testing.T) {
	base := text(map[string]string{"a.txt": "a\n", "locked.txt": "l\n"})
	cur := text(map[string]string{"a.txt": "a\n"})
	cur["new\nline.txt"] = &entry{mode: 0o644, skip: skipName}
	cur["locked.txt"] = &entry{mode: 0o644, skip: skipUnreadable}
	patch := formatPatch(base, cur, 1<<10)
	left := workspace.LeftOut(patch)
	if len(left) != 2 || !strings.HasPrefix(left[0], "locked.txt (") || !strings.HasPrefix(left[1], `"new\nline.txt" (`) {
		t.Fatalf("left out = %q, patch:\n%s", left, patch)
	}
	if workspace.Carried(patch) != "" {
		t.Errorf("the patch carries files: %q", patch)
	}
	files, err := parsePatch("apply patch", patch)
	if err != nil || len(files) != 0 {
		t.Errorf("parsePatch of a note alone = %v, %v", files, err)
	}
	cur["b.txt"] = &entry{mode: 0o644, data: []byte("b\n")}
	patch = formatPatch(base, cur, 1<<10)
	if len(workspace.LeftOut(patch)) != 2 || !strings.HasPrefix(workspace.Carried(patch), "diff --git a/b.txt") {
		t.Fatalf("patch = %q", patch)
	}
	dir := materialize(t, base)
	gitApply(t, dir, patch)
	want := text(map[string]string{"a.txt": "a\n", "locked.txt": "l\n", "b.txt": "b\n"})
	if diff := cmp.Diff(want, readBack(t, dir), entriesEqual()); diff != "" {
		t.Errorf("tree after git apply (-want +got):\n%s", diff)
	}
}

func TestApplyFilesConflicts(t *testing.T) {
	base := text(map[string]string{"a.txt": "one\ntwo\n"})
	for _, tc := range []struct {
		name, patch string
	}{
		{"context mismatch", "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-TWO\n+2\n"},
		{"missing file", "diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-x\n+y\n"},
		{"creates existing", "diff --git a/a.txt b/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, _, err := gitdiff.Parse(strings.NewReader(tc.patch))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = applyFiles(base, files)
			wantCode(t, err, "TOOL_EXECUTION_FAILED")
		})
	}
	files, _, err := gitdiff.Parse(strings.NewReader("diff --git a/.git/config b/.git/config\nnew file mode 100644\n--- /dev/null\n+++ b/.git/config\n@@ -0,0 +1 @@\n+x\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = applyFiles(base, files)
	wantCode(t, err, "WORKSPACE_PATH")
}

// A patch with text and binary files that was applied to the host is
// found in the scanned tree although the scan leaves the binary file out.
func TestReplayFindsAnAppliedBinaryPatch(t *testing.T) {
	base := text(map[string]string{"a.txt": "one\n"})
	cur := text(map[string]string{"a.txt": "two\n", "logo.png": "\x89PNG\x00"})
	files, _, err := gitdiff.Parse(strings.NewReader(formatPatch(base, cur, 1<<10)))
	if err != nil {
		t.Fatal(err)
	}
	applied := text(map[string]string{"a.txt": "two\n"}) // the host's scan: no logo.png
	if _, _, inTree, err := replay("/p", applied, files); err != nil || !inTree {
		t.Errorf("replay on the applied tree: inTree %v, %v", inTree, err)
	}
	got, _, inTree, err := replay("/p", base, files)
	if err != nil || inTree || string(got["logo.png"].data) != "\x89PNG\x00" {
		t.Errorf("replay on the original tree: inTree %v, %v", inTree, err)
	}
}
