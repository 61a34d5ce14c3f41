package dockerws

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

// patchOf is the patch from tree a to tree b, as Diff formats it.
func patchOf(a, b map[string]string) string {
	return formatPatch(text(a), text(b), DefaultMaxFileBytes)
}

// The pending patch is the session's work less what the host has, for
// each way the host moved after the patch was made: applied (all of it,
// or an earlier turn's part), applied then taken back, and a rewind to an
// earlier turn after a later one was applied. CheckReplay refuses a patch
// that fits neither the tree before the changes nor the tree as it is.
func TestPendingFollowsTheHost(t *testing.T) {
	base := map[string]string{"keep.txt": "keep\n"}
	withA := map[string]string{"keep.txt": "keep\n", "a.txt": "one\n"}
	withAB := map[string]string{"keep.txt": "keep\n", "a.txt": "one\n", "b.txt": "bee\n"}
	withA2 := map[string]string{"keep.txt": "keep\n", "a.txt": "two\n"}
	p1 := patchOf(base, withA)   // turn 1: a.txt = one
	p2 := patchOf(base, withAB)  // turn 2 (no apply between): a.txt and b.txt
	pA2 := patchOf(base, withA2) // another turn 2: a.txt = two

	cases := []struct {
		name    string
		host    map[string]string
		patch   string
		changes []HostChange
		want    string // the pending patch
	}{
		{"nothing applied", base, p2, nil, p2},
		{"all applied", withA, p1, []HostChange{{Patch: p1}}, ""},
		{"turn 1 applied, turn 2 pending", withA, p2, []HostChange{{Patch: p1}}, patchOf(withA, withAB)},
		{"applied then taken back", base, p1, []HostChange{{Patch: p1}, {Patch: p1, Reverse: true}}, p1},
		{"rewound to turn 1 after turn 2 was applied", withA2, p1, []HostChange{{Patch: pA2}}, patchOf(withA2, withA)},
		{"rewound to turn 1 after turns 1 and 2 were applied", withAB, p1, []HostChange{{Patch: p2}}, patchOf(withAB, withA)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := materialize(t, text(c.host))
			got, err := Pending(t.Context(), root, c.patch, c.changes, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("pending patch:\n%s\nwant:\n%s", got, c.want)
			}
			if err := CheckReplay(t.Context(), root, c.patch, c.changes); err != nil {
				t.Fatalf("CheckReplay: %v", err)
			}
		})
	}

	// The host's a.txt was edited after the apply: turn 1's patch fits
	// neither the tree before the apply nor the tree as it is.
	root := materialize(t, text(map[string]string{"keep.txt": "keep\n", "a.txt": "edited\n"}))
	err := CheckReplay(t.Context(), root, p1, []HostChange{{Patch: pA2}})
	if errcode.Of(err) != errcode.SessPatchConflict || !errors.Is(err, ErrReplayConflict) {
		t.Fatalf("CheckReplay on an edited host: %v, want SESS_PATCH_CONFLICT", err)
	}
	if _, err := Pending(t.Context(), root, p1, []HostChange{{Patch: pA2}}, 0); errcode.Of(err) != errcode.SessPatchConflict {
		t.Fatalf("Pending on an edited host: %v, want SESS_PATCH_CONFLICT", err)
	}
}

// A path the patches name that is a symbolic link on the host is never
// followed: WORKSPACE_SCOPE.
func TestPendingRefusesALink(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "real.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.txt", filepath.Join(root, "a.txt")); err != nil {
		t.Fatal(err)
	}
	p := patchOf(map[string]string{}, map[string]string{"a.txt": "one\n"})
	_, err := Pending(t.Context(), root, p, []HostChange{{Patch: p, Reverse: true}}, 0)
	if errcode.Of(err) != errcode.WorkspaceScope {
		t.Fatalf("got %v, want WORKSPACE_SCOPE", err)
	}
}

// A live workspace follows the host: after Rebase with what the host
// received, Diff shows only later work, and Snapshot names the moved base;
// a workspace rebuilt for the earlier patch with that host change taken
// back (Options.HostChanges) holds the same files, and diffs as the live
// one does.
func TestRebaseAndRebuildFollowTheHost(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"keep.txt": "keep\n"})
	w := open(t, root, busyboxImage)
	start := w.Snapshot()
	mustExec(t, w, "sh", "-c", "echo one > a.txt")
	p1, err := w.Diff(t.Context())
	if err != nil || !strings.Contains(p1, "a.txt") {
		t.Fatalf("first diff: %v\n%s", err, p1)
	}
	// The user applies it to the host.
	writeTree(t, root, map[string]string{"a.txt": "one\n"})
	if err := w.Rebase(t.Context(), HostChange{Patch: p1}); err != nil {
		t.Fatal(err)
	}
	if d, err := w.Diff(t.Context()); err != nil || d != "" {
		t.Fatalf("diff after the rebase: %v\n%s", err, d)
	}
	if w.Snapshot() == start {
		t.Fatal("the snapshot did not move with the base")
	}
	mustExec(t, w, "sh", "-c", "echo bee > b.txt && echo two > a.txt")
	p2, err := w.Diff(t.Context())
	if err != nil || strings.Contains(p2, "+one") || !strings.Contains(p2, "b.txt") || !strings.Contains(p2, "-one") {
		t.Fatalf("diff of later work: %v\n%s", err, p2)
	}
	if err := w.Rebase(t.Context(), HostChange{Patch: "not a patch"}); errcode.Of(err) != errcode.ToolBadInput {
		t.Fatalf("Rebase with a bad patch: %v", err)
	}

	// Rebuilt for the first patch, the host change taken back: turn 1's
	// files, nothing pending.
	r := open(t, root, busyboxImage, func(o *Options) { o.Patch, o.HostChanges = p1, []HostChange{{Patch: p1}} })
	if r.Origin() != start {
		t.Errorf("origin %s, want the tree the patch was made on %s", r.Origin(), start)
	}
	if d, err := r.Diff(t.Context()); err != nil || d != "" {
		t.Fatalf("untouched rebuilt diff: %v\n%s", err, d)
	}
	if res := mustExec(t, r, "cat", "a.txt"); res.Stdout != "one\n" {
		t.Fatalf("a.txt in the rebuilt workspace: %q", res.Stdout)
	}
	if d, err := r.Diff(t.Context()); err != nil || d != "" {
		t.Fatalf("rebuilt diff: %v\n%s", err, d)
	}
}
