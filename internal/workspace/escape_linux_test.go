package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// accessWatch reports, through the kernel's inotify, every open, read,
// write or metadata change of the watched files and directories. Events are
// queued while the watched operation runs, so reading them afterwards is
// exact: no sleeping, no polling for a condition that may come late.
type accessWatch struct {
	fd    int
	names map[int32]string
}

const watchMask = syscall.IN_OPEN | syscall.IN_ACCESS | syscall.IN_MODIFY |
	syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE | syscall.IN_DELETE

func watchAccess(t *testing.T, paths ...string) *accessWatch {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify_init1: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	w := &accessWatch{fd: fd, names: map[int32]string{}}
	for _, p := range paths {
		wd, err := syscall.InotifyAddWatch(fd, p, watchMask|syscall.IN_DONT_FOLLOW)
		if err != nil {
			t.Fatalf("inotify_add_watch %s: %v", p, err)
		}
		w.names[int32(wd)] = p
	}
	return w
}

// events drains the queue and describes every event seen.
func (w *accessWatch) events(t *testing.T) []string {
	t.Helper()
	var out []string
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(w.fd, buf)
		if errors.Is(err, syscall.EAGAIN) {
			return out
		}
		if err != nil {
			t.Fatalf("read inotify: %v", err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			out = append(out, w.names[ev.Wd]+"/"+name+" "+maskName(ev.Mask))
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

func maskName(m uint32) string {
	var s []string
	for _, b := range []struct {
		bit  uint32
		name string
	}{
		{syscall.IN_OPEN, "open"}, {syscall.IN_ACCESS, "read"}, {syscall.IN_MODIFY, "write"},
		{syscall.IN_ATTRIB, "attrib"}, {syscall.IN_CLOSE_WRITE, "close-write"},
		{syscall.IN_CREATE, "create"}, {syscall.IN_DELETE, "delete"},
	} {
		if m&b.bit != 0 {
			s = append(s, b.name)
		}
	}
	return strings.Join(s, "|")
}

// escapeFixture is a project root and, beside it, a directory holding a
// victim file that no operation on the root may open, read or change.
type escapeFixture struct {
	root, outside, victim string
}

const secret = "victim secret"

func newEscapeFixture(t *testing.T) escapeFixture {
	t.Helper()
	base := t.TempDir()
	f := escapeFixture{
		root:    filepath.Join(base, "root"),
		outside: filepath.Join(base, "outside"),
	}
	f.victim = filepath.Join(f.outside, "victim")
	mustWrite(t, f.root, "sub/file", "inside")
	mustWrite(t, f.outside, "victim", secret)
	return f
}

// TestLocalEscapes tries every way out of the root. Each attempt fails with
// its code, nothing outside the root is opened (inotify sees no event on the
// victim or its directory) and no file changes anywhere.
func TestLocalEscapes(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, f escapeFixture)
		op    string // "read" or "list"
		path  func(f escapeFixture) string
		want  errcode.Code
	}{
		{
			name: "dotdot", op: "read", want: errcode.WorkspacePath,
			path: func(escapeFixture) string { return "../outside/victim" },
		},
		{
			name: "dotdot list", op: "list", want: errcode.WorkspacePath,
			path: func(escapeFixture) string { return "../outside" },
		},
		{
			name: "dotdot after a real dir", op: "read", want: errcode.WorkspacePath,
			path: func(escapeFixture) string { return "sub/../../outside/victim" },
		},
		{
			name: "absolute path", op: "read", want: errcode.WorkspacePath,
			path: func(f escapeFixture) string { return f.victim },
		},
		{
			name: "absolute symlink to victim", op: "read", want: errcode.WorkspaceScope,
			setup: func(t *testing.T, f escapeFixture) { mustSymlink(t, f.victim, filepath.Join(f.root, "link")) },
			path:  func(escapeFixture) string { return "link" },
		},
		{
			name: "relative symlink to victim", op: "read", want: errcode.WorkspaceScope,
			setup: func(t *testing.T, f escapeFixture) {
				mustSymlink(t, "../../outside/victim", filepath.Join(f.root, "sub", "link"))
			},
			path: func(escapeFixture) string { return "sub/link" },
		},
		{
			name: "symlink chain leaving the root", op: "read", want: errcode.WorkspaceScope,
			setup: func(t *testing.T, f escapeFixture) {
				mustSymlink(t, "hop2", filepath.Join(f.root, "hop1"))
				mustSymlink(t, "sub/../../outside/victim", filepath.Join(f.root, "hop2"))
			},
			path: func(escapeFixture) string { return "hop1" },
		},
		{
			name: "symlinked dir to outside, read", op: "read", want: errcode.WorkspaceScope,
			setup: func(t *testing.T, f escapeFixture) { mustSymlink(t, f.outside, filepath.Join(f.root, "dirlink")) },
			path:  func(escapeFixture) string { return "dirlink/victim" },
		},
		{
			name: "symlinked dir to outside, list", op: "list", want: errcode.WorkspaceScope,
			setup: func(t *testing.T, f escapeFixture) { mustSymlink(t, "../outside", filepath.Join(f.root, "dirlink")) },
			path:  func(escapeFixture) string { return "dirlink" },
		},
		{
			name: "whole-tree list skips escaping links", op: "list", want: "",
			setup: func(t *testing.T, f escapeFixture) {
				mustSymlink(t, f.outside, filepath.Join(f.root, "dirlink"))
				mustSymlink(t, f.victim, filepath.Join(f.root, "filelink"))
			},
			path: func(escapeFixture) string { return "." },
		},
		{
			name: "hard link to victim", op: "read", want: errcode.WorkspaceScope,
			setup: func(t *testing.T, f escapeFixture) {
				if err := os.Link(f.victim, filepath.Join(f.root, "hard")); err != nil {
					t.Fatal(err)
				}
			},
			path: func(escapeFixture) string { return "hard" },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newEscapeFixture(t)
			if tt.setup != nil {
				tt.setup(t, f)
			}
			l := mustOpen(t, f.root)
			before := treeHash(t, f.root, f.outside)
			w := watchAccess(t, f.victim, f.outside)

			var got string
			var err error
			switch tt.op {
			case "read":
				var b []byte
				b, err = l.ReadFile(t.Context(), tt.path(f))
				got = string(b)
			case "list":
				var names []string
				names, err = l.List(t.Context(), tt.path(f))
				got = strings.Join(names, "\n")
			}
			if code := errcode.Of(err); code != tt.want {
				t.Errorf("code = %q, want %q (%v)", code, tt.want, err)
			}
			if ev := w.events(t); len(ev) > 0 {
				t.Errorf("the victim was touched: %q", ev)
			}
			if strings.Contains(got, secret) || strings.Contains(got, "victim") || strings.Contains(got, "link") {
				t.Errorf("the result shows what lies outside: %q", got)
			}
			if after := treeHash(t, f.root, f.outside); after != before {
				t.Error("a file changed")
			}
		})
	}
}

// TestLocalHardLinkBehindSymlink reaches a hard-linked victim through an
// in-root symlink, so the lstat check before opening sees only the symlink
// and the check on the opened descriptor must refuse it. The victim is
// opened, but not one byte of it is read.
func TestLocalHardLinkBehindSymlink(t *testing.T) {
	f := newEscapeFixture(t)
	if err := os.Link(f.victim, filepath.Join(f.root, "hard")); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "hard", filepath.Join(f.root, "soft"))
	l := mustOpen(t, f.root)
	before := treeHash(t, f.root, f.outside)
	w := watchAccess(t, f.victim)

	b, err := l.ReadFile(t.Context(), "soft")
	if code := errcode.Of(err); code != errcode.WorkspaceScope {
		t.Errorf("code = %q, want %q (%v)", code, errcode.WorkspaceScope, err)
	}
	if len(b) != 0 {
		t.Errorf("returned %q", b)
	}
	for _, ev := range w.events(t) {
		if !strings.HasSuffix(ev, " open") {
			t.Errorf("the victim was more than opened: %s", ev)
		}
	}
	if after := treeHash(t, f.root, f.outside); after != before {
		t.Error("a file changed")
	}
}

// TestLocalSwapRace checks a path, proves it reads inside the root, then
// swaps its parent directory for a symlink to the outside, as an attacker
// racing the agent would, and uses the same path again.
func TestLocalSwapRace(t *testing.T) {
	tests := []struct {
		name string
		link func(f escapeFixture) string
	}{
		{"absolute link", func(f escapeFixture) string { return f.outside }},
		{"relative link", func(escapeFixture) string { return "../outside" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newEscapeFixture(t)
			mustWrite(t, f.outside, "file", secret) // what sub/file would name after the swap
			l := mustOpen(t, f.root)
			const p = "sub/file"
			if err := workspace.CheckPath(p); err != nil {
				t.Fatal(err)
			}
			if b, err := l.ReadFile(t.Context(), p); err != nil || string(b) != "inside" {
				t.Fatalf("before the swap: %q, %v", b, err)
			}
			if err := os.Rename(filepath.Join(f.root, "sub"), filepath.Join(f.root, "moved")); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, tt.link(f), filepath.Join(f.root, "sub"))
			before := treeHash(t, f.root, f.outside)
			w := watchAccess(t, f.victim, f.outside, filepath.Join(f.outside, "file"))

			b, err := l.ReadFile(t.Context(), p)
			if code := errcode.Of(err); code != errcode.WorkspaceScope {
				t.Errorf("read after swap: code %q, want %q (%v)", code, errcode.WorkspaceScope, err)
			}
			if len(b) != 0 {
				t.Errorf("read after swap returned %q", b)
			}
			names, err := l.List(t.Context(), "sub")
			if code := errcode.Of(err); code != errcode.WorkspaceScope {
				t.Errorf("list after swap: code %q, want %q (%v)", code, errcode.WorkspaceScope, err)
			}
			if len(names) != 0 {
				t.Errorf("list after swap returned %q", names)
			}
			if ev := w.events(t); len(ev) > 0 {
				t.Errorf("the outside was touched: %q", ev)
			}
			if after := treeHash(t, f.root, f.outside); after != before {
				t.Error("a file changed")
			}
		})
	}
}

// TestLocalSpecialFiles proves a FIFO is refused without blocking the read
// (a blocking open would hang this test until its deadline).
func TestLocalSpecialFiles(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "fifo", filepath.Join(root, "fifo-link"))
	l := mustOpen(t, root)
	for _, p := range []string{"fifo", "fifo-link"} {
		t.Run(p, func(t *testing.T) {
			if _, err := l.ReadFile(t.Context(), p); errcode.Of(err) != errcode.WorkspaceNotFound {
				t.Errorf("ReadFile(%q) = %v, want %q", p, err, errcode.WorkspaceNotFound)
			}
		})
	}
	names, err := l.List(t.Context(), ".")
	if err != nil || len(names) != 0 {
		t.Errorf("List = %q, %v; want no entries", names, err)
	}
}
