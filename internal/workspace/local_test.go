package workspace_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// mustWrite creates dir/name with contents, making parents.
func mustWrite(t *testing.T, dir, name, contents string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(contents), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustOpen(t *testing.T, root string) *workspace.Local {
	t.Helper()
	l, err := workspace.OpenLocal(root)
	if err != nil {
		t.Fatalf("OpenLocal: %v", err)
	}
	t.Cleanup(func() { _ = l.Close(context.WithoutCancel(t.Context())) })
	return l
}

// treeHash hashes every entry under each dir without following symlinks:
// name, type and permission bits, size, modification time, symlink target
// and contents. Equal hashes before and after an operation mean it created,
// removed, changed or re-timed nothing.
func treeHash(t *testing.T, dirs ...string) string {
	t.Helper()
	h := sha256.New()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00%v\x00%d\x00%d\x00", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					return err
				}
				fmt.Fprintf(h, "%s\x00", target)
			case fi.Mode().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				h.Write(b)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("hash %s: %v", dir, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestOpenLocal(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, "file", "x")
	tests := []struct {
		name string
		root string
		want errcode.Code
	}{
		{"directory", dir, ""},
		{"missing", filepath.Join(dir, "missing"), errcode.WorkspaceNotFound},
		{"a file", filepath.Join(dir, "file"), errcode.WorkspaceNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := workspace.OpenLocal(tt.root)
			if got := errcode.Of(err); got != tt.want {
				t.Fatalf("OpenLocal code = %q, want %q (%v)", got, tt.want, err)
			}
			if l != nil {
				if err := l.Close(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestLocalInfo(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	la, lb := mustOpen(t, a), mustOpen(t, b)
	again := mustOpen(t, a)
	ia := la.Info()
	want := workspace.Info{ID: ia.ID, Backend: workspace.BackendLocal, Root: a}
	if diff := cmp.Diff(want, ia); diff != "" {
		t.Errorf("Info (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(ia.ID, "local-") || len(ia.ID) <= len("local-") {
		t.Errorf("ID %q lacks the local- prefix and a hash", ia.ID)
	}
	if again.Info().ID != ia.ID {
		t.Errorf("ID not stable: %q then %q", ia.ID, again.Info().ID)
	}
	if lb.Info().ID == ia.ID {
		t.Errorf("two roots share the ID %q", ia.ID)
	}
}

func TestLocalReadFile(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "a.txt", "alpha")
	mustWrite(t, root, "sub/b.txt", "beta")
	mustWrite(t, root, ".git/config", "[core]")
	mustWrite(t, root, "empty", "")
	mustSymlink(t, "sub/b.txt", filepath.Join(root, "inside-link"))
	mustSymlink(t, "sub", filepath.Join(root, "inside-dir"))
	mustSymlink(t, "loop", filepath.Join(root, "loop"))
	big, err := os.Create(filepath.Join(root, "big"))
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: 16 MiB + 1 of zeros costs no disk.
	if err := big.Truncate(workspace.MaxLocalReadBytes + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	l := mustOpen(t, root)

	tests := []struct {
		name string
		path string
		want string
		code errcode.Code
	}{
		{"regular", "a.txt", "alpha", ""},
		{"nested", "sub/b.txt", "beta", ""},
		{"empty file", "empty", "", ""},
		{"symlink inside root", "inside-link", "beta", ""},
		{"through symlinked dir inside root", "inside-dir/b.txt", "beta", ""},
		{"missing", "nope", "", errcode.WorkspaceNotFound},
		{"under a file", "a.txt/x", "", errcode.WorkspaceNotFound},
		{"directory", "sub", "", errcode.WorkspaceNotFound},
		{"root", ".", "", errcode.WorkspaceNotFound},
		{"symlink loop", "loop", "", errcode.WorkspaceScope},
		{"too big", "big", "", errcode.WorkspaceLimit},
		{"git dir", ".git/config", "", errcode.WorkspacePath},
		{"dotdot", "../a.txt", "", errcode.WorkspacePath},
		{"absolute", filepath.Join(root, "a.txt"), "", errcode.WorkspacePath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.ReadFile(t.Context(), tt.path)
			if code := errcode.Of(err); code != tt.code {
				t.Fatalf("ReadFile(%q) code = %q, want %q (%v)", tt.path, code, tt.code, err)
			}
			if string(got) != tt.want {
				t.Errorf("ReadFile(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestLocalList(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{
		"b.txt", "a-c", "a/b", "a/z/deep.go", ".gitignore", ".github/ci.yml",
		".git/HEAD", ".git/objects/x", "sub/.git/HEAD", "sub/.GIT/x", "sub/keep",
		"odd\nname", `back\slash`,
	} {
		mustWrite(t, root, name, name)
	}
	if err := os.Mkdir(filepath.Join(root, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "a", filepath.Join(root, "link-dir"))
	mustSymlink(t, "b.txt", filepath.Join(root, "link-file"))
	l := mustOpen(t, root)

	tests := []struct {
		name string
		path string
		want []string
		code errcode.Code
	}{
		{"whole tree", ".", []string{".github/ci.yml", ".gitignore", "a-c", "a/b", "a/z/deep.go", "b.txt", "sub/keep"}, ""},
		{"subdirectory", "a", []string{"a/b", "a/z/deep.go"}, ""},
		{"a file", "b.txt", []string{"b.txt"}, ""},
		{"empty directory", "emptydir", nil, ""},
		{"symlinked dir inside root", "link-dir", []string{"link-dir/b", "link-dir/z/deep.go"}, ""},
		{"missing", "nope", nil, errcode.WorkspaceNotFound},
		{"git", ".git", nil, errcode.WorkspacePath},
		{"dotdot", "..", nil, errcode.WorkspacePath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.List(t.Context(), tt.path)
			if code := errcode.Of(err); code != tt.code {
				t.Fatalf("List(%q) code = %q, want %q (%v)", tt.path, code, tt.code, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("List(%q) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

func TestLocalListCanceled(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "a", "a")
	l := mustOpen(t, root)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := l.List(ctx, "."); !errors.Is(err, context.Canceled) {
		t.Errorf("List on a canceled context = %v, want context.Canceled", err)
	}
	if _, err := l.ReadFile(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadFile on a canceled context = %v, want context.Canceled", err)
	}
}

// TestLocalRefusesMutations proves WriteFile and Exec have no effect: the
// tree hashes the same, and a process that would leave a marker left none.
func TestLocalRefusesMutations(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	mustWrite(t, root, "a.txt", "alpha")
	marker := filepath.Join(outside, "marker")
	l := mustOpen(t, root)
	before := treeHash(t, root, outside)

	tests := []struct {
		name string
		do   func(ctx context.Context) error
	}{
		{"write new file", func(ctx context.Context) error { return l.WriteFile(ctx, "new.txt", []byte("x")) }},
		{"overwrite file", func(ctx context.Context) error { return l.WriteFile(ctx, "a.txt", []byte("x")) }},
		{"write new dir", func(ctx context.Context) error { return l.WriteFile(ctx, "d/new.txt", []byte("x")) }},
		{"exec", func(ctx context.Context) error {
			_, err := l.Exec(ctx, workspace.ExecRequest{Argv: []string{"touch", marker}})
			return err
		}},
		{"exec shell", func(ctx context.Context) error {
			_, err := l.Exec(ctx, workspace.ExecRequest{Argv: []string{"sh", "-c", "echo x > a.txt; touch " + marker}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := errcode.Of(tt.do(t.Context())); code != errcode.WorkspaceIsolationRequired {
				t.Errorf("code = %q, want %q", code, errcode.WorkspaceIsolationRequired)
			}
		})
	}
	if _, err := os.Lstat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a process ran: marker %s exists (%v)", marker, err)
	}
	if after := treeHash(t, root, outside); after != before {
		t.Error("the tree changed")
	}
}

func TestLocalDiff(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "a.txt", "alpha")
	l := mustOpen(t, root)
	patch, err := l.Diff(t.Context())
	if err != nil || patch != "" {
		t.Errorf("Diff = %q, %v; want empty patch", patch, err)
	}
}

func TestLocalClose(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "a.txt", "alpha")
	l, err := workspace.OpenLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	info := l.Info()
	if err := l.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := t.Context()
	tests := []struct {
		name string
		do   func() error
		want errcode.Code
	}{
		{"read", func() error { _, err := l.ReadFile(ctx, "a.txt"); return err }, errcode.WorkspaceDisposed},
		{"list", func() error { _, err := l.List(ctx, "."); return err }, errcode.WorkspaceDisposed},
		{"diff", func() error { _, err := l.Diff(ctx); return err }, errcode.WorkspaceDisposed},
		{"close again", func() error { return l.Close(ctx) }, errcode.WorkspaceDisposed},
		{"write", func() error { return l.WriteFile(ctx, "a.txt", nil) }, errcode.WorkspaceIsolationRequired},
		{"exec", func() error {
			_, err := l.Exec(ctx, workspace.ExecRequest{Argv: []string{"true"}})
			return err
		}, errcode.WorkspaceIsolationRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errcode.Of(tt.do()); got != tt.want {
				t.Errorf("code = %q, want %q", got, tt.want)
			}
		})
	}
	if diff := cmp.Diff(info, l.Info()); diff != "" {
		t.Errorf("Info after Close (-before +after):\n%s", diff)
	}
}

// TestLocalConcurrentClose runs reads against a Close: each read either
// succeeds or reports WORKSPACE_DISPOSED, and the race detector sees no race.
func TestLocalConcurrentClose(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "a.txt", "alpha")
	l, err := workspace.OpenLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*8*2)
	for range 8 {
		wg.Go(func() {
			for range 8 {
				if _, err := l.ReadFile(t.Context(), "a.txt"); err != nil {
					errs <- err
				}
				if _, err := l.List(t.Context(), "."); err != nil {
					errs <- err
				}
			}
		})
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if code := errcode.Of(err); code != errcode.WorkspaceDisposed {
			t.Errorf("concurrent call code = %q (%v), want success or %q", code, err, errcode.WorkspaceDisposed)
		}
	}
}

// Credential-like paths are never read or listed by the local workspace,
// named directly, under a credential directory, or reached through a
// symlink inside the root.
func TestLocalRefusesCredentials(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		"a.txt": "a\n", ".env": "KEY=sk-secret\n", ".ssh/id_rsa": "-----BEGIN-----\n", ".ssh/id_rsa.pub": "ssh-rsa AAA\n",
		"config/credentials.json": "{}", "keys/tls.key": "k", "deploy/.npmrc.bak": "//registry/:_authToken=x",
	} {
		mustWrite(t, root, name, body)
	}
	mustSymlink(t, ".env", filepath.Join(root, "settings.txt"))
	ws, err := workspace.OpenLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close(t.Context())
	for _, p := range []string{".env", ".ssh/id_rsa", ".ssh/id_rsa.pub", "config/credentials.json", "keys/tls.key", "deploy/.npmrc.bak", "settings.txt"} {
		if _, err := ws.ReadFile(t.Context(), p); errcode.Of(err) != errcode.WorkspaceCredentialInput {
			t.Errorf("read %s: %v, want %s", p, err, errcode.WorkspaceCredentialInput)
		}
	}
	if _, err := ws.List(t.Context(), ".ssh"); errcode.Of(err) != errcode.WorkspaceCredentialInput {
		t.Errorf("list .ssh: %v, want %s", err, errcode.WorkspaceCredentialInput)
	}
	got, err := ws.List(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt"}, got); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if b, err := ws.ReadFile(t.Context(), "a.txt"); err != nil || string(b) != "a\n" {
		t.Errorf("read a.txt: %q, %v", b, err)
	}
}

// What --exclude names and what the project's git ignores are not in the
// local workspace, as they are not in the Docker copy: not listed, not
// read (a credential among them included), not through a symlink either.
func TestLocalLeavesOutExcludedAndIgnored(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"src/main.go", "app.log", "build/out.txt", "dist/bundle.js", "notes/private.txt", ".env"} {
		mustWrite(t, root, name, "x\n")
	}
	mustSymlink(t, "build/out.txt", filepath.Join(root, "src/latest.txt"))
	ws, err := workspace.OpenLocalWith(root, workspace.LocalOptions{
		Exclude: []string{"*.log", "build/", ".env"},
		Ignored: map[string]bool{"dist/": true, "notes/private.txt": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close(t.Context())
	for _, p := range []string{"app.log", "build/out.txt", "dist/bundle.js", "notes/private.txt", ".env", "src/latest.txt"} {
		if _, err := ws.ReadFile(t.Context(), p); errcode.Of(err) != errcode.WorkspaceNotFound {
			t.Errorf("read %s: %v, want %s", p, err, errcode.WorkspaceNotFound)
		}
	}
	for _, p := range []string{"build", "dist"} {
		if _, err := ws.List(t.Context(), p); errcode.Of(err) != errcode.WorkspaceNotFound {
			t.Errorf("list %s: %v, want %s", p, err, errcode.WorkspaceNotFound)
		}
	}
	got, err := ws.List(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"src/main.go"}, got); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if _, err := workspace.OpenLocalWith(root, workspace.LocalOptions{Exclude: []string{"[bad"}}); errcode.Of(err) != errcode.WorkspacePath {
		t.Errorf("a bad pattern: %v, want %s", err, errcode.WorkspacePath)
	}
}

// ListIgnored runs in the background: the open does not wait for it, the
// first read does, and Close cancels one still running.
func TestLocalListsIgnoredInTheBackground(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "dist/bundle.js", "x\n")
	mustWrite(t, root, "main.go", "package main\n")
	release := make(chan struct{})
	ws, err := workspace.OpenLocalWith(root, workspace.LocalOptions{
		ListIgnored: func(ctx context.Context) map[string]bool {
			select {
			case <-release:
				return map[string]bool{"dist/": true}
			case <-ctx.Done():
				return nil
			}
		},
	})
	if err != nil {
		t.Fatal(err) // the open returned while the listing is held
	}
	read := make(chan error, 1)
	go func() {
		_, err := ws.ReadFile(t.Context(), "dist/bundle.js")
		read <- err
	}()
	close(release)
	if err := <-read; errcode.Of(err) != errcode.WorkspaceNotFound {
		t.Errorf("read of an ignored file: %v, want %s", err, errcode.WorkspaceNotFound)
	}
	if _, err := ws.ReadFile(t.Context(), "main.go"); err != nil {
		t.Errorf("read main.go: %v", err)
	}
	if err := ws.Close(t.Context()); err != nil {
		t.Fatal(err)
	}

	held, err := workspace.OpenLocalWith(root, workspace.LocalOptions{
		ListIgnored: func(ctx context.Context) map[string]bool { <-ctx.Done(); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := held.Close(t.Context()); err != nil { // returns: the listing was canceled
		t.Fatal(err)
	}
}
