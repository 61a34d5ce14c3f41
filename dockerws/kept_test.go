package dockerws

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/attest"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
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

// A kept container that was restarted (its tmpfs volumes come back empty)
// or whose keep mark is gone is never adopted: its empty tree is not the
// turn's work, and a patch from it would delete the project.
func TestAdoptRestartedKept(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	ctx := t.Context()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	keep := func(sess string) (name, snap string) {
		w := open(t, root, busyboxImage, func(o *Options) { o.SessionID = sess })
		if err := w.WriteFile(ctx, "new.txt", []byte("work\n")); err != nil {
			t.Fatal(err)
		}
		name, err := w.Keep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snap = w.Snapshot()
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = RemoveKept(context.Background(), "", name) })
		return name, snap
	}
	opts := Options{Root: root, SessionID: "sess-restart"}
	name, snap := keep(opts.SessionID)
	if _, err := cli.ContainerRestart(ctx, name, client.ContainerRestartOptions{}); err != nil {
		t.Fatal(err)
	}
	kept, err := ListKept(ctx, "", opts.SessionID)
	if err != nil || len(kept) != 1 || !kept[0].Running {
		t.Fatalf("the restarted kept container is not running: %+v, %v", kept, err)
	}
	_, err = Adopt(ctx, opts, name, snap)
	wantCode(t, err, errcode.WorkspaceNotFound)

	// Emptied without a restart: the mark went with the files.
	opts.SessionID = "sess-emptied"
	name, snap = keep(opts.SessionID)
	ex, err := cli.ExecCreate(ctx, name, client.ExecCreateOptions{User: "0:0", Cmd: []string{"rm", "-f", keptMark}})
	if err != nil {
		t.Fatal(err)
	}
	hr, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, hr.Reader) // to its end: the rm has run
	hr.Close()
	if got, err := cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{}); err != nil || got.ExitCode != 0 {
		t.Fatalf("rm the mark: %+v, %v", got, err)
	}
	_, err = Adopt(ctx, opts, name, snap)
	wantCode(t, err, errcode.WorkspaceNotFound)
}

// A container that stopped under the workspace (a Docker daemon restart
// stops every container) is reported by Lost; with its tree in memory it
// is not kept, as nothing of the turn's work is left in it.
func TestLostContainerIsNotKept(t *testing.T) {
	ctx := t.Context()
	w, cli := openWithWork(t, "sess-lost")
	if err := w.Lost(ctx); err != nil {
		t.Fatalf("Lost on a running container: %v", err)
	}
	timeout := 0
	if _, err := cli.ContainerStop(ctx, w.ContainerID(), client.ContainerStopOptions{Timeout: &timeout}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, w.Lost(ctx), errcode.WorkspaceContainerFailed)
	name, err := w.Keep(ctx)
	if w.Info().Storage == workspace.StorageDisk {
		// On disk the files outlive the stop: kept as ever.
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = RemoveKept(context.Background(), "", name) })
		return
	}
	wantCode(t, err, errcode.WorkspaceNotFound)
	if kept, err := ListKept(ctx, "", "sess-lost"); err != nil || len(kept) != 0 {
		t.Fatalf("kept containers of the session: %+v, %v", kept, err)
	}
	if _, err := cli.ContainerRemove(ctx, w.ContainerID(), client.ContainerRemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, w.Lost(ctx), errcode.WorkspaceContainerFailed)
}

// The workspace's life on a real daemon: ready once open, kept once Keep
// set it aside, lost once its container stopped, and then every
// operation that needs the container fails at once with the error Lost
// reported, never with whatever Docker would say about a stopped
// container; Close leaves the kept container.
func TestPhasesOnDocker(t *testing.T) {
	ctx := t.Context()
	w, cli := openWithWork(t, "sess-phases")
	if p := w.Phase(); p != PhaseReady {
		t.Fatalf("phase after Open and a write = %s, want ready", p)
	}
	name, err := w.Keep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = RemoveKept(context.Background(), "", name) })
	if p := w.Phase(); p != PhaseKept {
		t.Fatalf("phase after Keep = %s, want kept", p)
	}
	timeout := 0
	if _, err := cli.ContainerStop(ctx, w.ContainerID(), client.ContainerStopOptions{Timeout: &timeout}); err != nil {
		t.Fatal(err)
	}
	lost := w.Lost(ctx)
	wantCode(t, lost, errcode.WorkspaceContainerFailed)
	if p := w.Phase(); p != PhaseLost {
		t.Fatalf("phase after the stop = %s, want lost", p)
	}
	for what, err := range map[string]error{
		"WriteFile": w.WriteFile(ctx, "more.txt", []byte("x\n")),
		"Exec":      func() error { _, err := w.Exec(ctx, workspace.ExecRequest{Argv: []string{"true"}}); return err }(),
		"Diff":      func() error { _, err := w.Diff(ctx); return err }(),
	} {
		if errcode.Message(err) != errcode.Message(lost) {
			t.Errorf("%s on a lost workspace = %v, want Lost's error %v", what, err, lost)
		}
	}
	if again, err := w.Keep(ctx); err != nil || again != name {
		t.Fatalf("Keep of the kept, lost workspace = %q, %v; want %q", again, err, name)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if p := w.Phase(); p != PhaseClosed {
		t.Fatalf("phase after Close = %s, want closed", p)
	}
	wantCode(t, w.WriteFile(ctx, "late.txt", nil), errcode.WorkspaceDisposed)
	if _, err := cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{}); err != nil {
		t.Fatalf("the kept container after Close: %v", err)
	}
}

// openWithWork opens a workspace of session id on a one-file project and
// writes a file in it; cli is a Docker client to act on its container.
func openWithWork(t *testing.T, id string) (*Workspace, *client.Client) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a\n"})
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	w := open(t, root, busyboxImage, func(o *Options) { o.SessionID = id })
	if err := w.WriteFile(t.Context(), "new.txt", []byte("work\n")); err != nil {
		t.Fatal(err)
	}
	return w, cli
}
