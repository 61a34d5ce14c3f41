package dockerws

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// A PNG, a file holding a NUL and a 3 MB text file (over the 2 MiB file
// limit) reach the host through the patch byte for byte; a name with a
// newline, which no patch can carry, and a file the sandbox user cannot
// read are named as left out, never dropped without a word, and the diff
// does not fail for them.
func TestPatchCarriesEveryChange(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a\n", "keep.txt": "k\n"})
	w := open(t, root, busyboxImage)
	mustExec(t, w, "sh", "-c", `printf '\211PNG\r\n\032\n\000\000\000\rIHDR' > logo.png && printf 'a\000b\n' > nul.txt && `+
		`yes 'a line of text' | head -c 3145728 > big.txt && printf x > "$(printf 'new\nline')" && chmod 000 keep.txt`)
	patch, err := w.Diff(t.Context())
	if err != nil {
		t.Fatalf("Diff: %v", err)
	}
	left := workspace.LeftOut(patch)
	if len(left) != 2 || !strings.HasPrefix(left[0], "keep.txt (permission denied") || !strings.HasPrefix(left[1], `"new\nline" (`) {
		t.Fatalf("left out = %q", left)
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a\n", "keep.txt": "k\n"})
	gitApply(t, dir, patch)
	want := map[string]string{
		"logo.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"nul.txt":  "a\x00b\n",
		"big.txt":  strings.Repeat("a line of text\n", 3145728/15+1)[:3145728],
		"keep.txt": "k\n",
	}
	for p, body := range want {
		if got, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(got) != body {
			t.Errorf("%s after git apply: %d bytes, %v", p, len(got), err)
		}
	}

	// The same patch rebuilds a workspace in Go (as a resume does).
	w2 := open(t, root, busyboxImage)
	if err := w2.ApplyPatch(t.Context(), patch); err != nil {
		t.Fatal(err)
	}
	for p, body := range want {
		if p == "keep.txt" {
			continue
		}
		got, err := w2.ReadFile(t.Context(), p)
		if err != nil || string(got) != body {
			t.Errorf("%s in the rebuilt workspace: %d bytes, %v", p, len(got), err)
		}
	}
	// The unreadable file is a tool error the model can act on.
	_, err = w.ReadFile(t.Context(), "keep.txt")
	wantCode(t, err, errcode.WorkspacePermission)
}

// Writing a read-only file, or into a read-only directory, and listing an
// unreadable one are WORKSPACE_PERMISSION errors, not a failed container.
func TestPermissionErrorsAreToolErrors(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"ro.txt": "r\n", "dir/a.txt": "a\n", "shut/b.txt": "b\n"})
	w := open(t, root, busyboxImage)
	mustExec(t, w, "sh", "-c", "chmod 444 ro.txt && chmod 555 dir && chmod 000 shut")
	ctx := t.Context()
	wantCode(t, w.WriteFile(ctx, "ro.txt", []byte("x\n")), errcode.WorkspacePermission)
	wantCode(t, w.WriteFile(ctx, "dir/new.txt", []byte("x\n")), errcode.WorkspacePermission)
	wantCode(t, w.WriteFile(ctx, "dir/sub/new.txt", []byte("x\n")), errcode.WorkspacePermission)
	_, err := w.List(ctx, "shut")
	wantCode(t, err, errcode.WorkspacePermission)
	if _, err := w.List(ctx, "."); err != nil {
		t.Errorf("listing the tree around an unreadable directory: %v", err)
	}
	patch, err := w.Diff(ctx)
	if err != nil {
		t.Fatalf("Diff with an unreadable directory: %v", err)
	}
	if strings.Contains(patch, "deleted file") {
		t.Errorf("an unreadable file was taken for a deletion:\n%s", patch)
	}
	if left := workspace.LeftOut(patch); len(left) != 1 || !strings.HasPrefix(left[0], "shut/b.txt (permission denied") {
		t.Errorf("left out = %q", left)
	}
}

// After writes alone the diff reads only the files written, and still
// matches the container: through a symlinked parent, between processes,
// and for a file with another hard link (both names change).
func TestDiffAfterWritesOnly(t *testing.T) {
	root := t.TempDir()
	original := text(map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	writeTree(t, root, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	w := open(t, root, busyboxImage)
	ctx := t.Context()
	if err := w.WriteFile(ctx, "a.txt", []byte("first\n")); err != nil {
		t.Fatal(err)
	}
	checkDiff(t, w, original)
	mustExec(t, w, "ln", "-s", "sub", "link")
	checkDiff(t, w, original)
	for _, p := range []string{"link/new.txt", "a.txt", "sub/new.txt"} {
		if err := w.WriteFile(ctx, p, []byte("wrote "+p+"\n")); err != nil {
			t.Fatal(err)
		}
		patch := checkDiff(t, w, original)
		if strings.Contains(patch, "b/link/") {
			t.Errorf("a write through a symlinked parent was taken for a file under the link:\n%s", patch)
		}
	}
	mustExec(t, w, "sh", "-c", "rm sub/new.txt && ln sub/b.txt hard.txt")
	if _, err := w.Diff(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(ctx, "hard.txt", []byte("both\n")); err != nil {
		t.Fatal(err)
	}
	patch, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(patch, "+++ b/sub/b.txt\n@@ -1 +1 @@\n-b\n+both") {
		t.Errorf("the other name of a hard-linked file written is not in the patch:\n%s", patch)
	}
}
