package dockerws

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/workspace"
)

// ReadFile returns the bytes of the regular file at p, read with the
// archive API (no process starts). Symlinks resolve inside the container,
// which holds nothing of the host; a path that resolves outside the
// workspace or into .git, through its last component or a parent
// directory, is refused.
//
// Codes: WORKSPACE_PATH, WORKSPACE_SCOPE (also a project file left out of
// the copy for its other hard links), WORKSPACE_NOT_FOUND (missing, or
// not a regular file), WORKSPACE_LIMIT (over 16 MiB), WORKSPACE_DISPOSED,
// WORKSPACE_CONTAINER_FAILED, TOOL_CANCELED.
func (w *Workspace) ReadFile(ctx context.Context, p string) ([]byte, error) {
	const op = "read file"
	if err := checkFilePath(p); err != nil {
		return nil, err
	}
	if w.isClosed() {
		return nil, disposed(op)
	}
	if err := w.waitReady(ctx, op); err != nil {
		return nil, err
	}
	if err := w.checkParents(ctx, op, p); err != nil {
		return nil, err
	}
	data, target, err := w.readOnce(ctx, op, p)
	if errcode.Of(err) == errcode.WorkspaceNotFound && w.base.hardLinks[p] {
		// Not copied in: the project's file has other hard links.
		return nil, &errcode.Error{Code: errcode.WorkspaceScope, Op: op,
			Message: "file " + p + " has other hard links, which may lie outside the workspace; it was not copied in"}
	}
	if err != nil || target == "" {
		return data, err
	}
	// The last component is a symlink; Docker resolved it fully, in the
	// container's file system.
	rel, ok := insideWorkspace(target)
	if !ok {
		return nil, &errcode.Error{Code: errcode.WorkspaceScope, Op: op,
			Message: "path " + p + " is a symlink that resolves outside the workspace"}
	}
	data, target, err = w.readOnce(ctx, op, rel)
	if err == nil && target != "" {
		return nil, &errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: "path " + p + " goes through too many symlinks"}
	}
	return data, err
}

// readOnce reads p, or returns the resolved target when p is a symlink.
func (w *Workspace) readOnce(ctx context.Context, op, p string) ([]byte, string, error) {
	res, err := w.cli.CopyFromContainer(ctx, w.cid, client.CopyFromContainerOptions{SourcePath: WorkDir + "/" + p})
	if err != nil {
		if isNotFound(err) && !w.isClosed() && ctx.Err() == nil {
			return nil, "", &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no such file: " + p, Err: err}
		}
		return nil, "", w.opError(ctx, op, err)
	}
	defer res.Content.Close()
	st := res.Stat
	switch {
	case st.Mode&fs.ModeSymlink != 0:
		return nil, st.LinkTarget, nil
	case !st.Mode.IsRegular():
		return nil, "", &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op,
			Message: "no regular file at " + p + " (it is " + workspace.DescribeMode(st.Mode) + ")"}
	case st.Size > MaxReadBytes:
		return nil, "", &errcode.Error{Code: errcode.WorkspaceLimit, Op: op, Message: "file " + p + " is larger than 16 MiB"}
	}
	tr := tar.NewReader(res.Content)
	if _, err := tr.Next(); err != nil {
		return nil, "", w.opError(ctx, op, err)
	}
	data, err := io.ReadAll(io.LimitReader(tr, MaxReadBytes+1))
	if err != nil {
		return nil, "", w.opError(ctx, op, err)
	}
	if len(data) > MaxReadBytes {
		return nil, "", &errcode.Error{Code: errcode.WorkspaceLimit, Op: op, Message: "file " + p + " is larger than 16 MiB"}
	}
	return data, "", nil
}

// checkParents stats every parent directory of p at once and refuses a
// symlink among them that leaves the workspace or enters .git.
func (w *Workspace) checkParents(ctx context.Context, op, p string) error {
	var parents []string
	for i := range len(p) {
		if p[i] == '/' {
			parents = append(parents, p[:i])
		}
	}
	if len(parents) == 0 {
		return nil
	}
	errs := make([]error, len(parents))
	var wg sync.WaitGroup
	for i, d := range parents {
		wg.Go(func() {
			res, err := w.cli.ContainerStatPath(ctx, w.cid, client.ContainerStatPathOptions{Path: WorkDir + "/" + d})
			switch {
			case err != nil && isNotFound(err) && !w.isClosed() && ctx.Err() == nil:
				errs[i] = &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no such file: " + p, Err: err}
			case err != nil:
				errs[i] = w.opError(ctx, op, err)
			case res.Stat.Mode&fs.ModeSymlink != 0:
				if _, ok := insideWorkspace(res.Stat.LinkTarget); !ok {
					errs[i] = &errcode.Error{Code: errcode.WorkspaceScope, Op: op,
						Message: "directory " + d + " is a symlink that resolves outside the workspace"}
				}
			case !res.Stat.Mode.IsDir():
				errs[i] = &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no such file: " + p + " (" + d + " is not a directory)"}
			}
		})
	}
	wg.Wait()
	// The error nearest the root explains the others.
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// insideWorkspace returns the workspace-relative form of an absolute
// container path, and whether it is a path a tool may name.
func insideWorkspace(abs string) (string, bool) {
	rel, ok := strings.CutPrefix(abs, WorkDir+"/")
	if !ok || workspace.CheckPath(rel) != nil || rel == "." {
		return "", false
	}
	return rel, true
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
// .git, creates the missing directories, replaces a symlink at the path
// with a regular file, and refuses a directory or another file that is not
// regular (writing into a named pipe would block).
const writeScript = `cd ` + WorkDir + ` || exit 97
f=$1
d=${f%/*}
[ "$d" = "$f" ] && d=.
e=$d
while [ "$e" != . ] && [ ! -e "./$e" ]; do
	case $e in */*) e=${e%/*} ;; *) e=. ;; esac
done
[ -d "./$e" ] || exit 95
r=$(cd -P "./$e" && pwd) || exit 95
case "$r/" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
case "$r/" in */[.][gG][iI][tT]/*) exit 99 ;; esac
mkdir -p "./$d" 2>/dev/null || exit 95
[ -L "./$f" ] && rm -f "./$f"
[ -d "./$f" ] && exit 96
[ -e "./$f" ] && [ ! -f "./$f" ] && exit 93
cat > "./$f" || exit 94
exit 0`

// WriteFile creates or replaces the file at p with data, creating missing
// parent directories (mode 0755; a new file gets 0644, a replaced one keeps
// its mode). It runs as the sandbox user, so what it creates belongs to
// the processes that will use it.
//
// Codes: WORKSPACE_PATH (the root, a directory, a named pipe or another
// non-regular file, or a parent that is a file), WORKSPACE_SCOPE, TOOL_EXECUTION_FAILED (the container refused the
// write: permissions, a full disk), WORKSPACE_DISPOSED,
// WORKSPACE_CONTAINER_FAILED, TOOL_CANCELED.
func (w *Workspace) WriteFile(ctx context.Context, p string, data []byte) error {
	const op = "write file"
	if err := checkFilePath(p); err != nil {
		return err
	}
	w.touch()
	if err := w.acquire(ctx, op); err != nil {
		return err
	}
	defer w.release()
	code, stderr, err := w.script(ctx, op, writeScript, []string{p}, bytes.NewReader(data), io.Discard)
	if err != nil {
		return err
	}
	switch code {
	case 0:
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
	r=$(cd -P "./$1" && pwd) || exit 98
	case "$r/" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
	cd "$r" || exit 98
	find . -name .git -prune -o -type f -print0
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
// Codes: WORKSPACE_PATH, WORKSPACE_SCOPE, WORKSPACE_NOT_FOUND,
// WORKSPACE_DISPOSED, WORKSPACE_CONTAINER_FAILED, TOOL_CANCELED.
func (w *Workspace) List(ctx context.Context, p string) ([]string, error) {
	const op = "list files"
	if err := workspace.CheckPath(p); err != nil {
		return nil, err
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
