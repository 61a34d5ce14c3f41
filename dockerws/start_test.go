package dockerws

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// hold replaces *step with a version that first waits until the returned
// release is called (or its ctx ends); the test's end releases it and
// restores the step.
func hold[F any](t *testing.T, step *F, held func(wait func(context.Context)) F) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	old := *step
	*step = held(func(ctx context.Context) {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	})
	var released bool
	release = func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(func() { release(); *step = old })
	return release
}

// startIn runs Start and fails the test if it does not return within a
// minute: it must not wait for the held step.
func startIn(t *testing.T, opts Options) *Workspace {
	t.Helper()
	type res struct {
		w   *Workspace
		err error
	}
	got := make(chan res, 1)
	go func() {
		w, err := Start(t.Context(), opts)
		got <- res{w, err}
	}()
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("Start: %v", r.err)
		}
		t.Cleanup(func() { _ = r.w.Close(context.Background()) })
		return r.w
	case <-timer.C:
		t.Fatal("Start waited for the background open")
		return nil
	}
}

// Start returns before the project tree is read; what needs nothing of
// it (Diff of an untouched workspace, Info's identity) answers at once,
// reads wait for the scan and no longer.
func TestStartDoesNotReadTheTree(t *testing.T) {
	needDocker(t, busyboxImage)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "one\n", "d/b.txt": "two\n"})
	release := hold(t, &readTree, func(wait func(context.Context)) func(context.Context, Options, workspace.Excludes, func(item)) (*snapshot, error) {
		return func(ctx context.Context, o Options, x workspace.Excludes, emit func(item)) (*snapshot, error) {
			wait(ctx)
			return scanTree(ctx, o, x, emit)
		}
	})
	w := startIn(t, Options{Root: root, Image: busyboxImage, SessionID: "sess-start-unread"})
	if info := w.Info(); info.ImageID == "" || info.Files != 0 || w.Snapshot() != "" || w.OpenError() != nil {
		t.Fatalf("before the scan: info %+v, snapshot %q, open error %v", info, w.Snapshot(), w.OpenError())
	}
	if patch, err := w.Diff(t.Context()); err != nil || patch != "" {
		t.Fatalf("diff before the scan = %q, %v", patch, err)
	}
	short, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := w.ReadFile(short, "a.txt")
	wantCode(t, err, errcode.ToolCanceled)
	release()
	got, err := w.ReadFile(t.Context(), "a.txt")
	if err != nil || string(got) != "one\n" {
		t.Fatalf("read after the scan = %q, %v", got, err)
	}
	if w.Info().Files != 2 || !strings.HasPrefix(w.Snapshot(), "sha256:") {
		t.Errorf("after the scan: info %+v, snapshot %q", w.Info(), w.Snapshot())
	}
	if err := w.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// While the container is still being created, fs.read and fs.list of an
// untouched workspace answer from the scanned tree, as the container will
// hold it; a write waits for the container, and from then on reads ask the
// container.
func TestReadsAnswerFromTheScanBeforeTheContainer(t *testing.T) {
	needDocker(t, busyboxImage)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "one\n", "d/b.txt": "two\n", "d/e/c.txt": "three\n", "link": "->a.txt", "bin.dat": "\x00\x01"})
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	release := hold(t, &createContainer, func(wait func(context.Context)) func(context.Context, *Workspace, []string) error {
		return func(ctx context.Context, w *Workspace, env []string) error {
			wait(ctx)
			return w.create(ctx, env)
		}
	})
	w := startIn(t, Options{Root: root, Image: busyboxImage, SessionID: "sess-start-reads"})
	ctx := t.Context()
	for _, tc := range []struct {
		path string
		want string
		code errcode.Code
	}{
		{"a.txt", "one\n", ""},
		{"d/e/c.txt", "three\n", ""},
		{"d", "", errcode.WorkspaceNotFound},
		{"empty", "", errcode.WorkspaceNotFound},
		{"link", "", errcode.WorkspaceNotFound},
		{"bin.dat", "", errcode.WorkspaceNotFound},
		{"nope.txt", "", errcode.WorkspaceNotFound},
	} {
		got, err := w.ReadFile(ctx, tc.path)
		if errcode.Of(err) != tc.code || (tc.code == "" && string(got) != tc.want) {
			t.Errorf("ReadFile(%s) = %q, %v; want %q, %q", tc.path, got, err, tc.want, tc.code)
		}
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{".", []string{"a.txt", "d/b.txt", "d/e/c.txt"}},
		{"d", []string{"d/b.txt", "d/e/c.txt"}},
		{"empty", nil},
		{"a.txt", []string{"a.txt"}},
	} {
		got, err := w.List(ctx, tc.path)
		if err != nil || strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("List(%s) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
	_, err := w.List(ctx, "nope")
	wantCode(t, err, errcode.WorkspaceNotFound)
	select {
	case <-w.Opened():
		t.Fatal("the open finished while the create was held")
	default:
	}
	// The answers match the container's, once it is there.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	wantCode(t, w.WriteFile(short, "a.txt", []byte("changed\n")), errcode.ToolCanceled)
	release()
	if err := w.WriteFile(ctx, "a.txt", []byte("changed\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := w.ReadFile(ctx, "a.txt"); err != nil || string(got) != "changed\n" {
		t.Fatalf("read after the write = %q, %v", got, err)
	}
	got, err := w.List(ctx, ".")
	if err != nil || strings.Join(got, " ") != "a.txt d/b.txt d/e/c.txt" {
		t.Errorf("the container lists %v, %v", got, err)
	}
}

// The container is created only once the scan has accepted the tree, and
// never for a tree it refused.
func TestContainerOnlyForAnAcceptedTree(t *testing.T) {
	needDocker(t, busyboxImage)
	old := createContainer
	created := make(chan bool, 4) // whether the scan was over at the create
	createContainer = func(ctx context.Context, w *Workspace, env []string) error {
		select {
		case <-w.Scanned():
			created <- w.OpenError() == nil
		default:
			created <- false
		}
		return w.create(ctx, env)
	}
	t.Cleanup(func() { createContainer = old })
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "first\n", "b.txt": "second\n"})
	w := startIn(t, Options{Root: root, Image: busyboxImage, SessionID: "sess-start-order"})
	if err := w.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ok := <-created; !ok {
		t.Fatal("the container was created before the scan accepted the tree")
	}
	if res := mustExec(t, w, "cat", "a.txt", "b.txt"); res.Stdout != "first\nsecond\n" {
		t.Fatalf("cat = %+v", res)
	}
	writeTree(t, root, map[string]string{".env": "TOKEN=x\n"})
	refused := startIn(t, Options{Root: root, Image: busyboxImage, SessionID: "sess-start-order-2"})
	wantCode(t, refused.Ready(t.Context()), errcode.WorkspaceCredentialInput)
	select {
	case <-created:
		t.Fatal("a container was created for a refused tree")
	default:
	}
}

// A tree refused in the background (a credential-like file, a limit)
// fails Ready and every operation with its code, Diff excepted (its patch
// is "": nothing could change the tree); the credential file was never
// read, and no container is left.
func TestBackgroundOpenFailures(t *testing.T) {
	needDocker(t, busyboxImage)
	for _, tc := range []struct {
		name  string
		files map[string]string
		edit  func(*Options)
		want  errcode.Code
	}{
		{"credential", map[string]string{"a.txt": "a\n", "deep/.env": "TOKEN=x\n"}, func(*Options) {}, errcode.WorkspaceCredentialInput},
		{"file limit", map[string]string{"a.txt": "a\n", "b.txt": "b\n"}, func(o *Options) { o.MaxFiles = 1 }, errcode.WorkspaceLimit},
		{"byte limit", map[string]string{"a.txt": "aaaa\n"}, func(o *Options) { o.MaxTotalBytes = 2 }, errcode.WorkspaceLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			before := treeDigest(t, root)
			opts := Options{Root: root, Image: busyboxImage, SessionID: "sess-bg-fail"}
			tc.edit(&opts)
			w := startIn(t, opts)
			ctx := t.Context()
			wantCode(t, w.Ready(ctx), tc.want)
			wantCode(t, w.OpenError(), tc.want)
			_, err := w.ReadFile(ctx, "a.txt")
			wantCode(t, err, tc.want)
			_, err = w.List(ctx, ".")
			wantCode(t, err, tc.want)
			wantCode(t, w.WriteFile(ctx, "x.txt", []byte("x")), tc.want)
			_, err = w.Exec(ctx, workspace.ExecRequest{Argv: []string{"true"}})
			wantCode(t, err, tc.want)
			if patch, err := w.Diff(ctx); err != nil || patch != "" {
				// Nothing could change a tree that never opened.
				t.Errorf("diff of a failed workspace = %q, %v", patch, err)
			}
			if left := containersOf(t, w.Info().ID); left != "" {
				t.Errorf("a refused open left containers: %s", left)
			}
			if w.Snapshot() != "" {
				t.Errorf("a refused tree has a snapshot: %s", w.Snapshot())
			}
			if treeDigest(t, root) != before {
				t.Error("the host tree changed")
			}
		})
	}
	// The scan never emits a credential-like file, wherever it lies.
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a\n", "deep/.env": "TOKEN=x\n", "z/id_rsa": "k"})
	opts := Options{Root: root}
	opts.defaults()
	var emitted []string
	_, err := scanTree(t.Context(), opts, nil, func(it item) { emitted = append(emitted, it.path) })
	wantCode(t, err, errcode.WorkspaceCredentialInput)
	for _, p := range emitted {
		if strings.Contains(p, ".env") || strings.Contains(p, "id_rsa") {
			t.Errorf("emitted %s", p)
		}
	}
}

// Options.Patch is replayed as the workspace opens: reads before any
// change see the patched tree, Diff answers the patch itself until the
// tree changes, and the container holds the patched files. A patch that
// no longer applies fails the open with its code; one that does not parse
// fails Start itself.
func TestStartReplaysAPatch(t *testing.T) {
	needDocker(t, busyboxImage)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"notes.txt": "one\n", "old.txt": "bye\n", "keep.txt": "same\n"})
	patch := "diff --git a/new/added.txt b/new/added.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new/added.txt\n@@ -0,0 +1 @@\n+added\n" +
		"diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1,2 @@\n one\n+two\n" +
		"diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
	before := treeDigest(t, root)
	w := startIn(t, Options{Root: root, Image: busyboxImage, SessionID: "sess-replay", Patch: patch})
	ctx := t.Context()
	if got, err := w.Diff(ctx); err != nil || got != patch {
		t.Fatalf("untouched diff = %q, %v; want the replayed patch", got, err)
	}
	if got, err := w.ReadFile(ctx, "notes.txt"); err != nil || string(got) != "one\ntwo\n" {
		t.Fatalf("read notes.txt = %q, %v", got, err)
	}
	_, err := w.ReadFile(ctx, "old.txt")
	wantCode(t, err, errcode.WorkspaceNotFound)
	if got, err := w.List(ctx, "."); err != nil || strings.Join(got, " ") != "keep.txt new/added.txt notes.txt" {
		t.Fatalf("list = %v, %v", got, err)
	}
	if err := w.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if res := mustExec(t, w, "sh", "-c", "cat notes.txt new/added.txt; test -e old.txt || echo gone"); res.Stdout != "one\ntwo\nadded\ngone\n" {
		t.Fatalf("container = %+v", res)
	}
	checkDiff(t, w, text(map[string]string{"notes.txt": "one\n", "old.txt": "bye\n", "keep.txt": "same\n"}))
	if treeDigest(t, root) != before {
		t.Error("the host tree changed")
	}

	writeTree(t, root, map[string]string{"notes.txt": "rewritten\n"})
	bad := startIn(t, Options{Root: root, Image: busyboxImage, SessionID: "sess-replay-bad", Patch: patch})
	wantCode(t, bad.Ready(ctx), errcode.ToolExecutionFailed)
	if !strings.Contains(errcode.Message(bad.OpenError()), "no longer applies") {
		t.Errorf("message = %q", errcode.Message(bad.OpenError()))
	}
	if got, err := bad.Diff(ctx); err != nil || got != patch {
		t.Errorf("the recorded work is lost: diff = %q, %v", got, err)
	}

	// A tree that already holds the patch (it was applied to the host)
	// opens as it is: nothing is replayed, and the diff starts from it.
	applied := t.TempDir()
	writeTree(t, applied, map[string]string{"notes.txt": "one\ntwo\n", "new/added.txt": "added\n", "keep.txt": "same\n"})
	in := startIn(t, Options{Root: applied, Image: busyboxImage, SessionID: "sess-replay-applied", Patch: patch})
	if err := in.Ready(ctx); err != nil {
		t.Fatalf("a patch already in the tree: %v", err)
	}
	if !in.PatchInTree() {
		t.Error("PatchInTree is false for a tree that holds the patch")
	}
	if got, err := in.Diff(ctx); err != nil || got != "" {
		t.Errorf("diff = %q, %v; want none", got, err)
	}
	if res := mustExec(t, in, "sh", "-c", "cat notes.txt new/added.txt keep.txt"); res.Stdout != "one\ntwo\nadded\nsame\n" {
		t.Errorf("container = %+v", res)
	}
	if w.PatchInTree() || bad.PatchInTree() {
		t.Error("PatchInTree is true for a replayed patch or a conflict")
	}

	_, err = Start(ctx, Options{Root: root, Image: busyboxImage, Patch: "not a patch\n"})
	wantCode(t, err, errcode.ToolBadInput)
}

// With Options.Defer nothing of the open happens until Begin or a call
// that needs the workspace; a deferred workspace closed before that never
// read the tree nor made a container.
func TestDeferredOpen(t *testing.T) {
	needDocker(t, busyboxImage)
	var mu sync.Mutex
	scans := 0
	old := readTree
	readTree = func(ctx context.Context, o Options, x workspace.Excludes, emit func(item)) (*snapshot, error) {
		mu.Lock()
		scans++
		mu.Unlock()
		return scanTree(ctx, o, x, emit)
	}
	t.Cleanup(func() { readTree = old })
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return scans
	}
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "one\n"})
	opts := Options{Root: root, Image: busyboxImage, SessionID: "sess-defer", Defer: true}
	ctx := t.Context()

	never := startIn(t, opts)
	if patch, err := never.Diff(ctx); err != nil || patch != "" {
		t.Fatalf("diff = %q, %v", patch, err)
	}
	if err := never.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("a deferred workspace closed before it began scanned %d times", n)
	}
	if left := containersOf(t, never.Info().ID); left != "" {
		t.Fatalf("containers left: %s", left)
	}

	onDemand := startIn(t, opts)
	if got, err := onDemand.ReadFile(ctx, "a.txt"); err != nil || string(got) != "one\n" {
		t.Fatalf("read = %q, %v", got, err)
	}
	if n := count(); n != 1 {
		t.Fatalf("scans = %d after a read, want 1", n)
	}

	begun := startIn(t, opts)
	begun.Begin()
	begun.Begin() // a second Begin does nothing
	if err := begun.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if res := mustExec(t, begun, "cat", "a.txt"); res.Stdout != "one\n" {
		t.Fatalf("cat = %+v", res)
	}
}
