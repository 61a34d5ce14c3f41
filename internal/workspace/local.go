package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/harness-dev/harness/internal/errcode"
)

// MaxLocalReadBytes bounds what Local.ReadFile loads into memory. The tools
// refuse far smaller contents (128 KiB); this bound only keeps a huge file
// from being read whole before that check.
const MaxLocalReadBytes = 16 << 20

// Local is the read-only workspace on the developer's project directory.
//
// Every access goes through one os.Root opened on the directory, so a path
// is resolved component by component beneath the root: "..", an absolute
// symlink, a symlink whose target leaves the root, or a directory swapped for
// such a symlink between a check and a use all fail with WORKSPACE_SCOPE and
// nothing outside the root is opened. A symlink that stays inside the root is
// followed.
//
// Hard links: a regular file with more than one link may be another name
// for a file outside the root, and nothing in the file says which. Local
// refuses to read such a file (WORKSPACE_SCOPE), checking the link count both
// before opening it (lstat, so the common case opens nothing) and on the
// opened descriptor (fstat, so a file swapped in between is caught before a
// byte is read). List still names these files, so the model learns why a
// read is refused instead of seeing the file vanish. On platforms without a
// link count (not Unix) this check is absent.
//
// Credential-like paths (IsCredential: .env, .ssh, id_rsa, *.pem…, by any
// segment) are never read: ReadFile fails with WORKSPACE_CREDENTIAL_INPUT,
// also when a symlink inside the root leads to one (on Linux, where the
// opened file's real path is known), and List leaves them out. Paths the
// options leave out — excluded by a pattern (--exclude) or ignored by the
// project's git — are not in the workspace, as they are not in the Docker
// copy: ReadFile fails with WORKSPACE_NOT_FOUND saying so, List leaves them
// out. An excluded credential is left out like any excluded path: it is
// never read either way.
//
// Only regular files are read; a directory, FIFO, socket or device fails
// with WORKSPACE_NOT_FOUND and is opened non-blocking, so a FIFO never hangs
// a read. List walks without following symlinks, skips every ".git"
// directory, and leaves out names that CheckPath would refuse (the model
// could never name them back).
//
// WriteFile and Exec always fail with WORKSPACE_ISOLATION_REQUIRED, before
// any effect and even after Close. Diff returns the empty patch: nothing in
// a read-only workspace changes. After Close, ReadFile, List, Diff and Close
// fail with WORKSPACE_DISPOSED; Info keeps working.
//
// A Local is safe for concurrent use; Close waits for calls in flight.
type Local struct {
	root    string
	real    string // root with its symlinks resolved, as the kernel names opened files
	id      string
	escapes error // the error os.Root reports for a path leaving the root
	excl    Excludes
	// ignored is what the project's git ignores (GitIgnored), ready once
	// ignoredDone is closed.
	ignored     map[string]bool
	ignoredDone chan struct{}
	stopListing context.CancelFunc
	carried     string // the patch Diff reports: LocalOptions.Carried

	mu sync.RWMutex
	r  *os.Root // guarded by mu; nil once closed
}

var _ Workspace = (*Local)(nil)

// LocalOptions say what a local workspace leaves out, as the Docker copy
// does.
type LocalOptions struct {
	// Carried is the patch of the session's earlier (Docker) workspace,
	// which a read-only local workspace can neither show in its files nor
	// change: Diff reports it as it is, so that a turn run locally records
	// it again instead of an empty patch that would hide that work.
	Carried string
	// Exclude are gitignore-like patterns (CompileExcludes) of paths left
	// out.
	Exclude []string
	// Ignored are the paths the project's git ignores, as GitIgnored
	// lists them.
	Ignored map[string]bool
	// ListIgnored, when set, lists them instead (GitIgnored, which runs
	// git over the whole tree): it runs in the background from the open,
	// and the first read or list waits for it, so that opening does not
	// wait for git before the first model request.
	// Closing the workspace cancels its context and waits for it.
	ListIgnored func(ctx context.Context) map[string]bool
}

// OpenLocal opens the directory root as a read-only workspace. The directory
// is made absolute (symlinks in it are followed once, here) and held open,
// so renaming it later does not redirect the workspace. A missing root or a
// root that is not a directory fails with WORKSPACE_NOT_FOUND.
func OpenLocal(root string) (*Local, error) {
	return OpenLocalWith(root, LocalOptions{})
}

// OpenLocalWith is OpenLocal leaving out what opts says. A bad exclude
// pattern fails with WORKSPACE_PATH.
func OpenLocalWith(root string, opts LocalOptions) (*Local, error) {
	excl, err := CompileExcludes(opts.Exclude)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, errcode.Wrap(errcode.WorkspaceNotFound, "open local workspace", err)
	}
	// Stat first: os.OpenRoot opens whatever it is given, and opening a FIFO
	// would block.
	fi, err := os.Stat(abs)
	if err == nil && !fi.IsDir() {
		err = syscall.ENOTDIR
	}
	if err == nil {
		var r *os.Root
		if r, err = os.OpenRoot(abs); err == nil {
			l := newLocal(abs, r)
			l.excl, l.ignored, l.carried = excl, opts.Ignored, opts.Carried
			close(l.ignoredDone)
			if opts.ListIgnored != nil {
				ctx, cancel := context.WithCancel(context.Background())
				l.ignoredDone, l.stopListing = make(chan struct{}), cancel
				go func() {
					defer close(l.ignoredDone)
					l.ignored = opts.ListIgnored(ctx)
				}()
			}
			return l, nil
		}
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: "open local workspace",
			Message: "no directory at " + abs, Err: err}
	}
	return nil, &errcode.Error{Code: errcode.ToolExecutionFailed, Op: "open local workspace",
		Message: "cannot open directory " + abs, Err: err}
}

func newLocal(abs string, r *os.Root) *Local {
	// os.Root keeps the error it returns for an escaping path unexported;
	// ask for one on purpose to learn it, so later errors can be matched
	// with errors.Is rather than by their text.
	var escapes error
	if f, err := r.Open(".."); err == nil {
		_ = f.Close() // only read (or a pipe end): a failed close loses nothing
	} else {
		escapes = errors.Unwrap(err)
	}
	sum := sha256.Sum256([]byte(abs))
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	return &Local{
		root:        abs,
		real:        real,
		id:          BackendLocal + "-" + hex.EncodeToString(sum[:6]),
		escapes:     escapes,
		r:           r,
		ignoredDone: make(chan struct{}),
	}
}

// Info returns the backend "local", the absolute root and an ID derived from
// it, stable across runs.
func (l *Local) Info() Info {
	return Info{ID: l.id, Backend: BackendLocal, Root: l.root}
}

// ReadFile returns the bytes of the regular file at p.
//
// Codes: WORKSPACE_PATH, WORKSPACE_SCOPE (escaping symlink, symlink loop,
// hard link), WORKSPACE_NOT_FOUND (missing, not a regular file, or left
// out), WORKSPACE_CREDENTIAL_INPUT (a credential-like path),
// WORKSPACE_LIMIT (over MaxLocalReadBytes), WORKSPACE_DISPOSED,
// TOOL_EXECUTION_FAILED (any other I/O failure, such as permission denied);
// a canceled ctx returns its error.
func (l *Local) ReadFile(ctx context.Context, p string) ([]byte, error) {
	const op = "read file"
	if err := CheckPath(p); err != nil {
		return nil, err
	}
	if err := l.refuse(op, p, p, false); err != nil {
		return nil, err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.r == nil {
		return nil, disposed(op)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Refuse before opening when the entry itself shows a problem; this
	// lstat never follows the final component.
	if fi, err := l.r.Lstat(p); err != nil {
		return nil, l.translate(op, p, err)
	} else if fi.Mode().IsRegular() {
		if err := checkLinks(op, p, fi); err != nil {
			return nil, err
		}
	}
	f, err := l.r.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, l.translate(op, p, err)
	}
	defer func() { _ = f.Close() }() // only read: a failed close loses nothing
	if real, ok := l.opened(f); ok && real != p {
		// A symlink inside the root led elsewhere in it: what it led to
		// must not be left out or credential-like either.
		if err := l.refuse(op, p, real, false); err != nil {
			return nil, err
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, l.translate(op, p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op,
			Message: "no regular file at " + p + " (it is " + DescribeMode(fi.Mode()) + ")"}
	}
	if err := checkLinks(op, p, fi); err != nil {
		return nil, err
	}
	// Sized from the stat, the file is read in one call (plus the one
	// that sees its end) instead of a buffer grown from 512 bytes.
	buf := bytes.NewBuffer(make([]byte, 0, min(fi.Size(), MaxLocalReadBytes)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxLocalReadBytes+1)); err != nil {
		return nil, l.translate(op, p, err)
	}
	data := buf.Bytes()
	if len(data) > MaxLocalReadBytes {
		return nil, &errcode.Error{Code: errcode.WorkspaceLimit, Op: op,
			Message: "file " + p + " is larger than 16 MiB"}
	}
	return data, nil
}

// List returns the sorted slash paths, relative to the root, of the regular
// files under p ("." for the whole tree). A p naming a regular file lists
// that file. Symlinks met during the walk are not followed and not listed;
// a symlink named by p itself is followed when it stays inside the root.
// Credential-like and left-out paths are not listed; p naming one fails as
// ReadFile would.
//
// Codes: WORKSPACE_PATH, WORKSPACE_SCOPE, WORKSPACE_NOT_FOUND,
// WORKSPACE_CREDENTIAL_INPUT, WORKSPACE_DISPOSED, TOOL_EXECUTION_FAILED; a
// canceled ctx returns its error.
func (l *Local) List(ctx context.Context, p string) ([]string, error) {
	const op = "list files"
	if err := CheckPath(p); err != nil {
		return nil, err
	}
	if p != "." {
		if err := l.refuse(op, p, p, true); err != nil {
			return nil, err
		}
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.r == nil {
		return nil, disposed(op)
	}
	var out []string
	err := fs.WalkDir(l.r.FS(), p, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if name == p {
			// The root of the walk was checked by CheckPath and resolved by
			// os.Root; keep it even when it is a followed symlink.
			if d.Type().IsRegular() {
				out = append(out, name)
			}
			return nil
		}
		if CheckPath(name) != nil || IsCredentialAt(name) || l.leftOut(name, d.IsDir()) != "" {
			// A .git directory, a name the model could not send back, a
			// credential, or a path left out.
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			out = append(out, name)
		}
		return nil
	})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return nil, err
		}
		return nil, l.translate(op, p, err)
	}
	slices.Sort(out)
	return out, nil
}

// WriteFile refuses: the local workspace is the developer's own tree.
// It returns WORKSPACE_ISOLATION_REQUIRED and touches nothing.
func (l *Local) WriteFile(context.Context, string, []byte) error {
	return isolation("write file")
}

// Exec refuses: no process runs on the developer's machine. It returns
// WORKSPACE_ISOLATION_REQUIRED and starts nothing.
func (l *Local) Exec(context.Context, ExecRequest) (ExecResult, error) {
	return ExecResult{}, isolation("exec")
}

// Diff returns the carried patch ("" for none): a read-only workspace
// never differs from its start, and what an earlier workspace of the
// session changed stays the session's patch. After Close it fails with
// WORKSPACE_DISPOSED.
func (l *Local) Diff(context.Context) (string, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.r == nil {
		return "", disposed("diff")
	}
	return l.carried, nil
}

// Close releases the root directory. It waits for calls in flight; a
// second Close fails with WORKSPACE_DISPOSED.
func (l *Local) Close(context.Context) error {
	if l.stopListing != nil {
		l.stopListing() // a read waiting for the listing then goes on to fail
		<-l.ignoredDone
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r == nil {
		return disposed("close")
	}
	err := l.r.Close()
	l.r = nil
	if err != nil {
		return &errcode.Error{Code: errcode.ToolExecutionFailed, Op: "close local workspace",
			Message: "close directory " + l.root, Err: err}
	}
	return nil
}

// ignoredSet waits for the listing of what git ignores and returns it.
func (l *Local) ignoredSet() map[string]bool {
	<-l.ignoredDone
	return l.ignored
}

// leftOut says why the slash path p (a directory when isDir) is left out
// of the workspace, or "" when it is not.
func (l *Local) leftOut(p string, isDir bool) string {
	switch {
	case isDir && l.excl.Match(p, true), l.excl.Excluded(p):
		return "excluded (--exclude)"
	case IgnoredPath(l.ignoredSet(), p, isDir):
		return "ignored by the project's git"
	}
	return ""
}

// refuse fails when the path p, which names target (itself, or where a
// symlink led), is left out or credential-like. A left-out file reads as
// absent, as it is from the Docker copy; a directory named p may be left
// out as a whole.
func (l *Local) refuse(op, p, target string, isDir bool) error {
	if why := l.leftOut(target, isDir); why != "" {
		return &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op,
			Message: "path " + p + " is not in the workspace: " + target + " is " + why}
	}
	if c := CredentialPath(target); c != "" {
		return &errcode.Error{Code: errcode.WorkspaceCredentialInput, Op: op,
			Message: "path " + p + " is credential-like (" + c + "): harness never reads credential files into a session"}
	}
	return nil
}

// opened returns the open file f's path relative to the root, slash
// separated, when the platform says where f is and it lies under the root.
func (l *Local) opened(f *os.File) (string, bool) {
	abs, ok := openedPath(f)
	if !ok {
		return "", false
	}
	rel, err := filepath.Rel(l.real, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false // the root moved since it was opened
	}
	return filepath.ToSlash(rel), true
}

// translate maps an os.Root error for path p to a workspace code.
func (l *Local) translate(op, p string, err error) error {
	var code errcode.Code
	var msg string
	switch {
	case l.escapes != nil && errors.Is(err, l.escapes):
		code, msg = errcode.WorkspaceScope, "path "+p+" resolves outside the workspace (through a symlink)"
	case errors.Is(err, syscall.ELOOP):
		code, msg = errcode.WorkspaceScope, "path "+p+" goes through too many symlinks"
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		code, msg = errcode.WorkspaceNotFound, "no such file or directory: "+p
	case errors.Is(err, fs.ErrPermission):
		code, msg = errcode.ToolExecutionFailed, "permission denied: "+p
	default:
		code, msg = errcode.ToolExecutionFailed, "cannot access "+p
	}
	return &errcode.Error{Code: code, Op: op, Message: msg, Err: err}
}

// checkLinks refuses a regular file with more than one hard link.
func checkLinks(op, p string, fi fs.FileInfo) error {
	if n, ok := linkCount(fi); ok && n > 1 {
		return &errcode.Error{Code: errcode.WorkspaceScope, Op: op,
			Message: "file " + p + " has other hard links, which may lie outside the workspace; it is not read"}
	}
	return nil
}

// DescribeMode names a non-regular file mode for messages to the model;
// every backend uses it so the model reads the same words.
func DescribeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory; use fs.list"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "not a regular file"
	}
}

func disposed(op string) error {
	return &errcode.Error{Code: errcode.WorkspaceDisposed, Op: op, Message: "the workspace is closed"}
}

func isolation(op string) error {
	return &errcode.Error{Code: errcode.WorkspaceIsolationRequired, Op: op,
		Message: "the local workspace is read-only; writes and processes need the isolated Docker workspace"}
}
