package dockerws

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// readScript prints, as the sandbox user, "MODE SIZE\n" of the regular
// file $1 and then its bytes, unless it is larger than $2 bytes. It opens
// the file first and then asks the kernel where the open file really is
// (/proc/self/fd): whatever a symlink, a parent directory swapped under it
// or a concurrent rename did, only a file found inside the workspace and
// outside .git is read, so a read never follows a path out of the
// workspace between its check and its use. A named pipe is refused before
// the open, which would block on it.
const readScript = `cd ` + WorkDir + ` || exit 97
[ -e "./$1" ] || exit 98
[ -d "./$1" ] && exit 96
[ -p "./$1" ] && exit 93
[ -f "./$1" ] || exit 93
[ -r "./$1" ] || { [ -f "./$1" ] && exit 92; exit 98; }
exec 3< "./$1" || exit 98
r=$(readlink "/proc/$$/fd/3") || exit 97
case "$r" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
case "$r/" in */[.][gG][iI][tT]/*) exit 99 ;; esac
[ -f "/proc/$$/fd/3" ] || exit 93
h=$(stat -L -c '%a %s' "/proc/$$/fd/3") || exit 97
echo "$h"
[ "${h#* }" -gt "$2" ] && exit 0
exec head -c "$2" <&3`

// ReadFile returns the bytes of the regular file at p. It reads as the
// sandbox user, never as root through the archive API, and only a file
// that is inside the workspace and outside .git once opened (see
// readScript): symlinks that stay in the workspace are followed, a path
// that leads out of it, through its last component or a parent directory,
// is refused, also while another process swaps them.
//
// Codes: WORKSPACE_PATH, WORKSPACE_SCOPE (also a project file left out of
// the copy for its other hard links), WORKSPACE_NOT_FOUND (missing, or
// not a regular file), WORKSPACE_PERMISSION (the sandbox user may not
// read it), WORKSPACE_LIMIT (over 16 MiB), WORKSPACE_DISPOSED,
// WORKSPACE_CONTAINER_FAILED, TOOL_CANCELED.
func (w *Workspace) ReadFile(ctx context.Context, p string) ([]byte, error) {
	const op = "read file"
	if err := checkFilePath(p); err != nil {
		return nil, err
	}
	if w.isClosed() {
		return nil, disposed(op)
	}
	if err := w.waitScanned(ctx, op); err != nil {
		return nil, err
	}
	if w.untouched() {
		return w.readInitial(op, p)
	}
	if err := w.waitReady(ctx, op); err != nil {
		return nil, err
	}
	f, err := w.readAs(ctx, op, p, MaxReadBytes)
	if errcode.Of(err) == errcode.WorkspaceNotFound && w.base.hardLinks[p] {
		// Not copied in: the project's file has other hard links.
		return nil, &errcode.Error{Code: errcode.WorkspaceScope, Op: op,
			Message: "file " + p + " has other hard links, which may lie outside the workspace; it was not copied in"}
	}
	if err != nil {
		return nil, err
	}
	if f.size > MaxReadBytes {
		return nil, &errcode.Error{Code: errcode.WorkspaceLimit, Op: op, Message: "file " + p + " is larger than 16 MiB"}
	}
	return f.data, nil
}

// readInitial answers ReadFile from the tree as copied in, which is what
// the container holds while nothing was written, run or patched in it: no
// symlink, no special file, only the text files the scan kept.
func (w *Workspace) readInitial(op, p string) ([]byte, error) {
	e := w.initial[p]
	switch {
	case e != nil && len(e.data) > MaxReadBytes:
		return nil, &errcode.Error{Code: errcode.WorkspaceLimit, Op: op, Message: "file " + p + " is larger than 16 MiB"}
	case e != nil:
		return bytes.Clone(e.data), nil
	case w.base.hardLinks[p]:
		return nil, &errcode.Error{Code: errcode.WorkspaceScope, Op: op,
			Message: "file " + p + " has other hard links, which may lie outside the workspace; it was not copied in"}
	case w.initialDirs[p]:
		return nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no regular file at " + p + " (it is a directory)"}
	}
	return nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no such file: " + p}
}

// listInitial answers List from the tree as copied in (see readInitial).
func (w *Workspace) listInitial(op, p string) ([]string, error) {
	var files []string
	switch {
	case p == ".":
		files = slices.Collect(maps.Keys(w.initial))
	case w.initial[p] != nil:
		return []string{p}, nil
	case w.initialDirs[p]:
		for f := range w.initial {
			if strings.HasPrefix(f, p+"/") {
				files = append(files, f)
			}
		}
	default:
		return nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no such file or directory: " + p}
	}
	slices.Sort(files)
	return files, nil
}

// readFile is what readScript found: the file's permission bits and size,
// and its bytes unless it is larger than the limit asked.
type readFile struct {
	mode fs.FileMode
	size int64
	data []byte
}

// readAs runs readScript on p with limit and translates its verdict.
func (w *Workspace) readAs(ctx context.Context, op, p string, limit int64) (readFile, error) {
	out := &capped{max: int(limit) + 64}
	code, stderr, err := w.script(ctx, op, readScript, []string{p, strconv.FormatInt(limit, 10)}, nil, out)
	if err != nil {
		return readFile{}, err
	}
	switch code {
	case 0:
	case 98:
		return readFile{}, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no such file: " + p}
	case 96:
		return readFile{}, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no regular file at " + p + " (it is a directory)"}
	case 93:
		return readFile{}, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op,
			Message: "no regular file at " + p + " (it is a named pipe, socket or device)"}
	case 99:
		return readFile{}, &errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: "path " + p + " resolves outside the workspace or into .git"}
	case 92:
		return readFile{}, permissionDenied(op, "read", p)
	default:
		return readFile{}, failed(op, fmt.Sprintf("the read script failed (exit %d): %s", code, stderr), nil)
	}
	head, body, ok := strings.Cut(out.String(), "\n")
	var mode uint64
	var size int64
	if ok {
		m, s, _ := strings.Cut(head, " ")
		mode, err = strconv.ParseUint(m, 8, 32)
		if err == nil {
			size, err = strconv.ParseInt(s, 10, 64)
		}
	}
	if !ok || err != nil || out.truncated() {
		return readFile{}, failed(op, fmt.Sprintf("unreadable answer of the read script for %s: %.80q", p, head), err)
	}
	f := readFile{mode: fs.FileMode(mode), size: size}
	if size <= limit {
		f.data = []byte(body)
	}
	return f, nil
}

// checkFilePath is CheckPath for a path that must name a file, not the root.
func checkFilePath(p string) error {
	if err := workspace.CheckPath(p); err != nil {
		return err
	}
	if p == "." {
		return errcode.New(errcode.WorkspacePath, `path "." names the workspace root, not a file`)
	}
	return nil
}

// writeScript writes stdin to $1 as the sandbox user. It finds the deepest
// existing parent, refuses one that resolves outside the workspace or into
// .git, creates the missing directories, then changes into the parent and
// checks where it really is, so a parent swapped for a symlink afterwards
// cannot redirect the write. It replaces a symlink at the path with a
// regular file, refuses a directory or another file that is not regular
// (writing into a named pipe would block), opens the file without
// truncating it, asks the kernel where the open file is (/proc/self/fd),
// and only then replaces its contents through that open file.
const writeScript = `cd ` + WorkDir + ` || exit 97
f=$1
d=${f%/*}
[ "$d" = "$f" ] && d=.
b=${f##*/}
e=$d
while [ "$e" != . ] && [ ! -e "./$e" ]; do
	case $e in */*) e=${e%/*} ;; *) e=. ;; esac
done
[ -d "./$e" ] || exit 95
r=$(cd -P "./$e" && pwd) || exit 95
case "$r/" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
case "$r/" in */[.][gG][iI][tT]/*) exit 99 ;; esac
if [ ! -d "./$d" ]; then [ -w "./$e" ] || exit 90; fi
mkdir -p "./$d" 2>/dev/null || exit 95
cd -P "./$d" 2>/dev/null || exit 95
r=$(pwd -P) || exit 95
case "$r/" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
case "$r/" in */[.][gG][iI][tT]/*) exit 99 ;; esac
[ -L "$b" ] && rm -f "$b"
[ -d "$b" ] && exit 96
[ -e "$b" ] && [ ! -f "$b" ] && exit 93
if [ -e "$b" ]; then [ -w "$b" ] || exit 92; else [ -w . ] || exit 91; fi
exec 3<> "$b" || exit 94
r=$(readlink "/proc/$$/fd/3") || exit 97
case "$r" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
case "$r/" in */[.][gG][iI][tT]/*) exit 99 ;; esac
[ -f "/proc/$$/fd/3" ] || exit 93
cat > "/proc/$$/fd/3" || exit 94
n=$(stat -L -c %h "/proc/$$/fd/3") || n=0
printf '%s %s' "$n" "$r"
exit 0`

// WriteFile creates or replaces the file at p with data, creating missing
// parent directories (mode 0755; a new file gets 0644, a replaced one keeps
// its mode). It runs as the sandbox user, so what it creates belongs to
// the processes that will use it.
//
// Codes: WORKSPACE_PATH (the root, a directory, a named pipe or another
// non-regular file, or a parent that is a file), WORKSPACE_SCOPE,
// WORKSPACE_PERMISSION (a read-only file or directory), TOOL_EXECUTION_FAILED (the container refused the
// write: permissions, a full disk), WORKSPACE_DISPOSED,
// WORKSPACE_CONTAINER_FAILED, TOOL_CANCELED.
func (w *Workspace) WriteFile(ctx context.Context, p string, data []byte) error {
	const op = "write file"
	if err := checkFilePath(p); err != nil {
		return err
	}
	if err := w.acquire(ctx, op); err != nil {
		w.touch()
		return err
	}
	defer w.release()
	var out bytes.Buffer
	code, stderr, err := w.script(ctx, op, writeScript, []string{p}, bytes.NewReader(data), &out)
	if err != nil || code != 0 {
		w.touch() // whatever happened, the next diff looks at everything
	}
	if err != nil {
		return err
	}
	switch code {
	case 0:
		// The file's real path (a parent may be a symlink); one with other
		// hard links changed them too.
		links, real, _ := strings.Cut(out.String(), " ")
		rel, ok := strings.CutPrefix(real, WorkDir+"/")
		if links != "1" || !ok || workspace.CheckPath(rel) != nil {
			rel = ""
		}
		w.touchWrite(rel)
		return nil
	case 95:
		return &errcode.Error{Code: errcode.WorkspacePath, Op: op, Message: "a parent of " + p + " is not a directory"}
	case 96:
		return &errcode.Error{Code: errcode.WorkspacePath, Op: op, Message: "path " + p + " is a directory"}
	case 93:
		// A FIFO would block the write until a reader came; a device or a
		// socket is no file either.
		return &errcode.Error{Code: errcode.WorkspacePath, Op: op, Message: "path " + p + " is not a regular file (a named pipe, socket or device); it was not written"}
	case 99:
		return &errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: "path " + p + " resolves outside the workspace or into .git"}
	case 92:
		return permissionDenied(op, "write", p)
	case 91, 90:
		d := path.Dir(p)
		if code == 90 {
			d = "a parent directory of " + p
		}
		return &errcode.Error{Code: errcode.WorkspacePermission, Op: op,
			Message: fmt.Sprintf("permission denied: the sandbox user cannot create %s in %s (it is read-only; chmod u+w it)", p, d)}
	case 94:
		return &errcode.Error{Code: errcode.ToolExecutionFailed, Op: op, Message: "write " + p + ": " + stderr}
	default:
		return failed(op, fmt.Sprintf("the write script failed (exit %d): %s", code, stderr), nil)
	}
}

// listScript prints, NUL-separated, the regular files under $1 relative
// to it ("." when $1 is itself a file), following $1 when it is a symlink
// that stays in the workspace.
const listScript = `cd ` + WorkDir + ` || exit 97
if [ -d "./$1" ]; then
	{ [ -r "./$1" ] && [ -x "./$1" ]; } || exit 92
	r=$(cd -P "./$1" && pwd) || exit 98
	case "$r/" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
	cd "$r" || exit 98
	find . -name .git -prune -o -type f -print0 2>/dev/null
	exit 0
elif [ -f "./$1" ]; then
	d=${1%/*}
	[ "$d" = "$1" ] && d=.
	r=$(cd -P "./$d" && pwd) || exit 98
	case "$r/" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
	printf '.\0'
else
	exit 98
fi`

// List returns the sorted paths of the regular files under p ("." for the
// whole tree). .git directories, symlinks met on the way and names no tool
// could send back are left out.
//
// Subdirectories the sandbox user may not read are listed as empty.
//
// Codes: WORKSPACE_PATH, WORKSPACE_SCOPE, WORKSPACE_NOT_FOUND,
// WORKSPACE_PERMISSION (p is a directory the sandbox user may not read),
// WORKSPACE_DISPOSED, WORKSPACE_CONTAINER_FAILED, TOOL_CANCELED.
func (w *Workspace) List(ctx context.Context, p string) ([]string, error) {
	const op = "list files"
	if err := workspace.CheckPath(p); err != nil {
		return nil, err
	}
	if w.isClosed() {
		return nil, disposed(op)
	}
	if err := w.waitScanned(ctx, op); err != nil {
		return nil, err
	}
	if w.untouched() {
		return w.listInitial(op, p)
	}
	// Under the lock: a command's clean-up kills every process of the
	// sandbox user, a listing too.
	if err := w.acquire(ctx, op); err != nil {
		return nil, err
	}
	defer w.release()
	var out bytes.Buffer
	code, stderr, err := w.script(ctx, op, listScript, []string{p}, nil, &out)
	if err != nil {
		return nil, err
	}
	switch code {
	case 0:
	case 98:
		return nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no such file or directory: " + p}
	case 99:
		return nil, &errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: "path " + p + " resolves outside the workspace"}
	case 92:
		return nil, &errcode.Error{Code: errcode.WorkspacePermission, Op: op,
			Message: "permission denied: the sandbox user cannot list the directory " + p + " (its mode forbids it; chmod u+rx it)"}
	default:
		return nil, failed(op, fmt.Sprintf("the list script failed (exit %d): %s", code, stderr), nil)
	}
	var files []string
	for name := range strings.SplitSeq(strings.TrimSuffix(out.String(), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		rel := strings.TrimPrefix(name, "./")
		switch {
		case name == ".":
			rel = p
		case p != ".":
			rel = p + "/" + rel
		}
		if workspace.CheckPath(rel) == nil {
			files = append(files, rel)
		}
	}
	slices.Sort(files)
	return files, nil
}

// permissionDenied is the WORKSPACE_PERMISSION error of a file the sandbox
// user may not read or write.
func permissionDenied(op, verb, p string) error {
	bit := map[string]string{"read": "u+r", "write": "u+w"}[verb]
	return &errcode.Error{Code: errcode.WorkspacePermission, Op: op,
		Message: fmt.Sprintf("permission denied: the sandbox user cannot %s %s (its mode forbids it; chmod %s it)", verb, p, bit)}
}
