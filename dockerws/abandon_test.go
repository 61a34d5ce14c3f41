package dockerws

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/attest"
	"github.com/harness-dev/harness/internal/errcode"
)

// containersOf lists the containers labelled with workspace id.
func containersOf(t *testing.T, id string) string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+LabelWorkspace+"="+id).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// waitGone waits until no container of workspace id is left, for at most
// two minutes (the daemon removes an abandoned container on its own time;
// one that is never removed is a leak, reported as such rather than left to
// the package's timeout).
func waitGone(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		left := containersOf(t, id)
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("containers of %s still there after 2 minutes: %s", id, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// An untouched workspace's diff is "" at once: it asks Docker nothing, so
// even a canceled context gets the answer. Once something was written, the
// diff looks in the container again.
func TestDiffOfUntouchedWorkspaceAsksNothing(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "one\n"})
	w := open(t, root, busyboxImage)
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if patch, err := w.Diff(canceled); err != nil || patch != "" {
		t.Fatalf("diff of an untouched workspace = %q, %v; want \"\" at once", patch, err)
	}
	if err := w.WriteFile(t.Context(), "a.txt", []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	_, err := w.Diff(canceled)
	wantCode(t, err, errcode.ToolCanceled)
	if patch, err := w.Diff(t.Context()); err != nil || !strings.Contains(patch, "+two") {
		t.Fatalf("diff after a write = %q, %v", patch, err)
	}
}

// Abandon ends a ready workspace without waiting for the removal, which
// the daemon completes; abandoned while still opening, it returns at once
// and nothing is left either.
func TestAbandon(t *testing.T) {
	needDocker(t, busyboxImage)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "one\n"})
	w, err := Start(t.Context(), Options{Root: root, Image: busyboxImage, SessionID: "sess-abandon"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	id := w.Info().ID
	if containersOf(t, id) == "" {
		t.Fatal("no container for a ready workspace")
	}
	if err := w.Abandon(t.Context()); err != nil {
		t.Fatal(err)
	}
	if attest.Is(w) {
		t.Error("an abandoned workspace is still attested")
	}
	_, err = w.ReadFile(t.Context(), "a.txt")
	wantCode(t, err, errcode.WorkspaceDisposed)
	wantCode(t, w.Abandon(t.Context()), errcode.WorkspaceDisposed)
	wantCode(t, w.Close(t.Context()), errcode.WorkspaceDisposed)
	waitGone(t, id)

	w2, err := Start(t.Context(), Options{Root: root, Image: busyboxImage, SessionID: "sess-abandon-2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Abandon(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitGone(t, w2.Info().ID)
}

// Abandoned at any moment of the background open — before, during or after
// the container's create and start — a workspace leaves no container: a
// create already on the wire when the open is canceled is carried out by
// the daemon, and its container is removed all the same.
func TestAbandonWhileOpeningLeavesNothing(t *testing.T) {
	needDocker(t, busyboxImage)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "one\n"})
	var ids []string
	for delay := time.Duration(0); delay <= 300*time.Millisecond; delay += 10 * time.Millisecond {
		w, err := Start(t.Context(), Options{Root: root, Image: busyboxImage, SessionID: "sess-abandon-race"})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		if err := w.Abandon(t.Context()); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.Info().ID)
	}
	for _, id := range ids {
		waitGone(t, id)
	}
}

// The removal of crash leftovers runs alongside the container's create,
// not before it: an open completes while the reaping is still going on.
func TestReapDoesNotDelayTheOpen(t *testing.T) {
	needDocker(t, busyboxImage)
	release := make(chan struct{})
	reaping := make(chan struct{}, 1)
	old := reapLeftovers
	reapLeftovers = func(ctx context.Context, _ *client.Client) {
		reaping <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
	}
	t.Cleanup(func() { close(release); reapLeftovers = old })
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "one\n"})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	w, err := Start(ctx, Options{Root: root, Image: busyboxImage, SessionID: "sess-reap-alongside"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.WithoutCancel(ctx))
	<-reaping
	if err := w.Ready(ctx); err != nil {
		t.Fatalf("the open waited for the reaping: %v", err)
	}
	if res := mustExec(t, w, "cat", "a.txt"); res.Stdout != "one\n" {
		t.Fatalf("cat = %+v", res)
	}
}
