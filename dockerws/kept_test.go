package dockerws

import (
	"context"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/attest"
	"github.com/harness-dev/harness/internal/errcode"
)

// A kept container can be listed, adopted again as a workspace (only by
// its session, only on the tree that was copied into it), diffed within
// new limits, and removed.
func TestAdoptKept(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"notes.txt": "one\n"})
	w := open(t, root, busyboxImage, func(o *Options) { o.SessionID = "sess-adopt" })
	ctx := t.Context()
	if err := w.WriteFile(ctx, "keep.txt", []byte("keep me\n")); err != nil {
		t.Fatal(err)
	}
	mustExec(t, w, "sh", "-c", "yes abcdefg | head -c 50000 > big.txt")
	name, err := w.Keep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap := w.Snapshot()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = RemoveKept(context.Background(), "", name) })
	kept, err := ListKept(ctx, "", "sess-adopt")
	if err != nil || len(kept) != 1 || kept[0].Name != name || !kept[0].Running {
		t.Fatalf("ListKept = %+v, %v", kept, err)
	}

	opts := Options{Root: root, SessionID: "sess-adopt"}
	_, err = Adopt(ctx, Options{Root: root, SessionID: "sess-other"}, name, snap)
	wantCode(t, err, errcode.WorkspaceScope)
	_, err = Adopt(ctx, opts, name, "sha256:other")
	wantCode(t, err, errcode.WorkspaceScope)
	small := opts
	small.MaxPatchBytes = 10000
	a, err := Adopt(ctx, small, name, snap)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Diff(ctx)
	wantCode(t, err, errcode.WorkspaceLimit)
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	a, err = Adopt(ctx, opts, name, snap)
	if err != nil {
		t.Fatal(err)
	}
	if !attest.Is(a) {
		t.Error("an adopted workspace is not attested")
	}
	patch, err := a.Diff(ctx)
	if err != nil || !strings.Contains(patch, "+keep me") || !strings.Contains(patch, "b/big.txt") {
		t.Fatalf("diff of the adopted workspace = %.200q, %v", patch, err)
	}
	if again, err := a.Keep(ctx); err != nil || again != name {
		t.Errorf("Keep of an adopted workspace = %q, %v", again, err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if kept, _ := ListKept(ctx, "", "sess-adopt"); len(kept) != 1 {
		t.Fatalf("closing an adopted workspace removed its container: %+v", kept)
	}

	writeTree(t, root, map[string]string{"notes.txt": "changed\n"})
	_, err = Adopt(ctx, opts, name, snap)
	wantCode(t, err, errcode.WorkspaceScope)

	if err := RemoveKept(ctx, "", name); err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, map[string]string{"notes.txt": "one\n"})
	_, err = Adopt(ctx, opts, name, snap)
	wantCode(t, err, errcode.WorkspaceNotFound)
	wantCode(t, RemoveKept(ctx, "", "harness-0123"), errcode.WorkspacePath)
	if err := RemoveKept(ctx, "", name); err != nil {
		t.Errorf("removing a removed container: %v", err)
	}
}
