package dockerws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/toolchain"
	"github.com/harness-dev/harness/internal/workspace"
)

// startDeferred starts a workspace of the tree files whose open waits for
// its first call, so that a first Exec rides the copy-in.
func startDeferred(t *testing.T, image string, files map[string]string, edit ...func(*Options)) *Workspace {
	t.Helper()
	needDocker(t, image)
	root := t.TempDir()
	writeTree(t, root, files)
	opts := Options{Root: root, Image: image, SessionID: "sess-test-ride", Defer: true}
	for _, f := range edit {
		f(&opts)
	}
	return startIn(t, opts)
}

// A command asked for before the tree is copied in runs in the copy-in's
// process, after the tree is in: one exec for both. Its output, exit code
// (the copy-in's own codes included) and changes are the command's, and
// the workspace goes on as after any open.
func TestFirstCommandRidesTheCopyIn(t *testing.T) {
	for _, code := range []string{"0", "93", "98"} {
		t.Run("exit"+code, func(t *testing.T) {
			// The plan's links are the copy-in's last arguments.
			w := startDeferred(t, busyboxImage, map[string]string{"a.txt": "one\n", "b/c.txt": "two\n"}, func(o *Options) {
				o.Toolchain.Links = []toolchain.Link{{Name: HomeDir + "/bin/one", Target: "/bin/busybox"}, {Name: HomeDir + "/bin/two", Target: "/bin/sh"}}
			})
			var streamed strings.Builder
			res, err := w.Exec(t.Context(), workspace.ExecRequest{
				Argv:     []string{"sh", "-c", "cat a.txt b/c.txt; pwd; readlink ~/bin/one; readlink ~/bin/two; echo warn >&2; echo new > n.txt; exit " + code},
				OnOutput: func(_ string, p []byte) { streamed.Write(p) },
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Stdout != "one\ntwo\n/workspace\n/bin/busybox\n/bin/sh\n" || res.Stderr != "warn\n" || res.ExitCode != atoi(t, code) {
				t.Errorf("result = %+v", res)
			}
			if got := streamed.String(); len(got) != len(res.Stdout)+len(res.Stderr) {
				t.Errorf("streamed %q", got)
			}
			if n := w.execs.Load(); n != 1 {
				t.Errorf("%d execs for the open and the command, want 1", n)
			}
			if err := w.OpenError(); err != nil {
				t.Fatal(err)
			}
			// The mark is the copy-in's: the command's file is a change,
			// the copied files are not.
			patch, err := w.Diff(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(patch, "b/n.txt") || strings.Contains(patch, "a.txt") {
				t.Errorf("patch:\n%s", patch)
			}
			if res := mustExec(t, w, "cat", "n.txt"); res.Stdout != "new\n" {
				t.Errorf("second exec = %+v", res)
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// Only the first command rides; a second one asked for meanwhile waits
// for the open and runs after it, in its own exec.
func TestOnlyOneCommandRides(t *testing.T) {
	w := startDeferred(t, busyboxImage, map[string]string{"a.txt": "one\n"})
	type out struct {
		res workspace.ExecResult
		err error
	}
	results := make(chan out, 2)
	for _, s := range []string{"first", "second"} {
		go func() {
			res, err := w.Exec(t.Context(), workspace.ExecRequest{Argv: []string{"sh", "-c", "cat a.txt; echo " + s + " >> log"}})
			results <- out{res, err}
		}()
	}
	for range 2 {
		r := <-results
		if r.err != nil || r.res.Stdout != "one\n" || r.res.ExitCode != 0 {
			t.Errorf("exec = %+v, %v", r.res, r.err)
		}
	}
	if n := w.execs.Load(); n != 2 {
		t.Errorf("%d execs, want 2 (the open's with the first command, then the second's)", n)
	}
	if res := mustExec(t, w, "sort", "log"); res.Stdout != "first\nsecond\n" {
		t.Errorf("log = %q", res.Stdout)
	}
}

// A rider canceled while the open has not taken it yet stops waiting at
// once: TOOL_CANCELED, and the open goes on without it.
func TestRiderCanceledBeforeTheCopyIn(t *testing.T) {
	needDocker(t, busyboxImage)
	release := hold(t, &createContainer, func(wait func(context.Context)) func(context.Context, *Workspace, []string) error {
		return func(ctx context.Context, w *Workspace, env []string) error {
			wait(ctx)
			return w.create(ctx, env)
		}
	})
	w := startDeferred(t, busyboxImage, map[string]string{"a.txt": "one\n"})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := w.Exec(ctx, workspace.ExecRequest{Argv: []string{"touch", "ran"}})
		done <- err
	}()
	waitFor(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.rider != nil })
	cancel()
	if err := <-done; errcode.Of(err) != errcode.ToolCanceled {
		t.Fatalf("Exec = %v, want TOOL_CANCELED", err)
	}
	release()
	if err := w.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := mustExec(t, w, "sh", "-c", "ls; cat a.txt"); res.Stdout != "a.txt\none\n" {
		t.Errorf("workspace = %q: the canceled command ran", res.Stdout)
	}
}

// A rider canceled while its copy-in runs gets TOOL_CANCELED at once; the
// copy-in finishes, and the command, if it started, is killed.
func TestRiderCanceledDuringTheCopyIn(t *testing.T) {
	files := map[string]string{"a.txt": "one\n"}
	chunk := strings.Repeat(strings.Repeat("x", 1023)+"\n", 64) // 64 KiB
	for i := range 320 {
		files[fmt.Sprintf("d/%03d.txt", i)] = chunk
	}
	w := startDeferred(t, busyboxImage, files)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := w.Exec(ctx, workspace.ExecRequest{Argv: []string{"sh", "-c", "touch started; sleep 60"}})
		done <- err
	}()
	waitFor(t, func() bool { return w.Phase() != PhaseOpening })
	cancel()
	select {
	case err := <-done:
		if errcode.Of(err) != errcode.ToolCanceled {
			t.Fatalf("Exec = %v, want TOOL_CANCELED", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a canceled rider waited for its command")
	}
	if err := w.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	res := mustExec(t, w, "sh", "-c", "cat d/* | wc -c; ps -o args | grep -c '[s]leep 60'")
	if res.Stdout != "20971520\n0\n" {
		t.Errorf("size of the copied file, sleeps left = %q", res.Stdout)
	}
}

// Closing the workspace while a command rides its copy-in ends both: the
// rider gets WORKSPACE_DISPOSED, and the container is gone.
func TestCloseWhileACommandRides(t *testing.T) {
	files := map[string]string{}
	chunk := strings.Repeat(strings.Repeat("x", 1023)+"\n", 64)
	for i := range 320 {
		files[fmt.Sprintf("d/%03d.txt", i)] = chunk
	}
	w := startDeferred(t, busyboxImage, files)
	done := make(chan error, 1)
	go func() {
		_, err := w.Exec(t.Context(), workspace.ExecRequest{Argv: []string{"sleep", "60"}})
		done <- err
	}()
	waitFor(t, func() bool { return w.Phase() != PhaseOpening })
	cid := w.ContainerID()
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if errcode.Of(err) != errcode.WorkspaceDisposed {
			t.Fatalf("Exec = %v, want WORKSPACE_DISPOSED", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the rider outlived Close")
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.ContainerInspect(t.Context(), cid, client.ContainerInspectOptions{}); !isNotFound(err) {
		t.Errorf("container %s after Close: %v", cid, err)
	}
}

// When the copy-in fails, the rider gets the open's failure, as any call
// would, and its command never runs.
func TestRiderOfAFailedOpen(t *testing.T) {
	w := startDeferred(t, busyboxImage, map[string]string{"a.txt": "one\n"}, func(o *Options) {
		o.Toolchain.Links = []toolchain.Link{{Name: WorkDir + "/a.txt/sub/link", Target: "/bin"}}
	})
	_, err := w.Exec(t.Context(), workspace.ExecRequest{Argv: []string{"touch", "/tmp/ran"}})
	if errcode.Of(err) != errcode.WorkspaceContainerFailed || !strings.Contains(err.Error(), "linking the project's dependency folders failed") ||
		!errors.Is(err, workspace.ErrOpenFailed) {
		t.Fatalf("Exec = %v, want the open's failure", err)
	}
	if n := w.execs.Load(); n != 1 {
		t.Errorf("%d execs, want 1 (the copy-in's)", n)
	}
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within a minute")
		}
	}
}
