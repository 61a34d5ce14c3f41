package dockerws

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// applyScript removes the paths named as arguments, then extracts the tar
// on stdin into the workspace, as the sandbox user.
const applyScript = `cd ` + WorkDir + ` || exit 97
for f in "$@"; do rm -f "./$f" || exit 94; done
tar -x -f - || exit 95
exit 0`

// ApplyPatch applies a git-style unified patch, such as Diff returns, to
// the workspace: all of it or, when any file does not apply, none of it.
// It rebuilds a resumed workspace from the initial snapshot and the patch
// recorded at the last checkpoint. The patch is applied in Go (the image
// needs no git or patch) to the current tree, which is refreshed first, and
// the result is written in one exec. Renames, copies and binary patches
// (git's literal and delta forms) are understood.
//
// Codes: TOOL_BAD_INPUT (not a patch, a binary file without its content), WORKSPACE_PATH (a
// path no tool could name), TOOL_EXECUTION_FAILED (a file does not apply),
// WORKSPACE_CONTAINER_FAILED, WORKSPACE_DISPOSED, TOOL_CANCELED.
func (w *Workspace) ApplyPatch(ctx context.Context, patch string) error {
	const op = "apply patch"
	files, err := parsePatch(op, patch)
	if err != nil || len(files) == 0 {
		return err
	}
	w.touch()
	if err := w.acquire(ctx, op); err != nil {
		return err
	}
	defer w.release()
	if err := w.refresh(ctx); err != nil {
		return err
	}
	writes, deletes, err := applyFiles(w.cur.files, files)
	if err != nil {
		return err
	}
	pr := pipeTar(func(w io.Writer) error { return writeTar(w, writes) })
	// The refresh above took what changed before; the next one lists the
	// tree whole again.
	defer w.touch()
	code, stderr, err := w.script(ctx, op, applyScript, deletes, pr, io.Discard)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return err
	}
	if code != 0 {
		return &errcode.Error{Code: errcode.ToolExecutionFailed, Op: op,
			Message: fmt.Sprintf("writing the patched files failed (exit %d): %s", code, stderr)}
	}
	return nil
}

// parsePatch parses a git-style patch; "" (or blank) is no file patch.
// Codes: TOOL_BAD_INPUT (not a patch, a binary file without its
// content), WORKSPACE_PATH (a path no tool could name).
func parsePatch(op, patch string) ([]*gitdiff.File, error) {
	// A patch that carries no file but names what it left out (Diff's
	// note) changes nothing.
	if strings.TrimSpace(workspace.Carried(patch)) == "" {
		return nil, nil
	}
	files, _, err := gitdiff.Parse(strings.NewReader(patch))
	if err != nil {
		return nil, &errcode.Error{Code: errcode.ToolBadInput, Op: op, Message: "the patch cannot be parsed", Err: err}
	}
	if len(files) == 0 {
		return nil, &errcode.Error{Code: errcode.ToolBadInput, Op: op, Message: "the text holds no file patch"}
	}
	for _, f := range files {
		if f.IsBinary && f.BinaryFragment == nil {
			return nil, &errcode.Error{Code: errcode.ToolBadInput, Op: op, Message: "the patch says a binary file differs without its content (" + f.NewName + ")"}
		}
		for _, name := range []string{f.OldName, f.NewName} {
			if name == "" {
				continue
			}
			if err := checkFilePath(name); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// applyFiles applies parsed file patches to a tree in memory and returns
// the files to write and the paths to remove.
func applyFiles(cur map[string]*entry, files []*gitdiff.File) (map[string]*entry, []string, error) {
	const op = "apply patch"
	writes := map[string]*entry{}
	gone := map[string]bool{}
	view := func(p string) *entry {
		if e, ok := writes[p]; ok {
			return e
		}
		if gone[p] {
			return nil
		}
		return cur[p]
	}
	for _, f := range files {
		if f.IsBinary && f.BinaryFragment == nil {
			return nil, nil, &errcode.Error{Code: errcode.ToolBadInput, Op: op, Message: "the patch says a binary file differs without its content (" + f.NewName + ")"}
		}
		for _, name := range []string{f.OldName, f.NewName} {
			if name == "" {
				continue
			}
			if err := checkFilePath(name); err != nil {
				return nil, nil, err
			}
		}
		var src *entry
		if !f.IsNew {
			src = view(f.OldName)
			if src == nil || src.skip != "" {
				return nil, nil, &errcode.Error{Code: errcode.ToolExecutionFailed, Op: op,
					Message: "the patch changes " + f.OldName + ", which is not a file of the workspace it can read"}
			}
		} else if e := view(f.NewName); e != nil {
			return nil, nil, &errcode.Error{Code: errcode.ToolExecutionFailed, Op: op,
				Message: "the patch creates " + f.NewName + ", which already exists"}
		}
		var old []byte
		mode := workspaceMode(f.NewMode, 0o644)
		if src != nil {
			old = src.data
			mode = workspaceMode(f.NewMode, src.mode)
		}
		var dst bytes.Buffer
		if err := gitdiff.Apply(&dst, bytes.NewReader(old), f); err != nil {
			return nil, nil, &errcode.Error{Code: errcode.ToolExecutionFailed, Op: op,
				Message: "the patch does not apply to " + f.OldName, Err: err}
		}
		if f.IsDelete {
			delete(writes, f.OldName)
			gone[f.OldName] = true
			continue
		}
		if f.IsRename {
			delete(writes, f.OldName)
			gone[f.OldName] = true
		}
		delete(gone, f.NewName)
		writes[f.NewName] = &entry{data: dst.Bytes(), mode: mode}
	}
	return writes, slices.Sorted(maps.Keys(gone)), nil
}

// workspaceMode is the mode a patch asks for (only the owner's execute
// bit counts), or fallback when it names none.
func workspaceMode(m, fallback fs.FileMode) fs.FileMode {
	switch {
	case m == 0:
		return fallback
	case m.Perm()&0o100 != 0:
		return 0o755
	default:
		return 0o644
	}
}

// writeTar writes files as a tar stream in path order.
func writeTar(w io.Writer, files map[string]*entry) error {
	tw := tar.NewWriter(w)
	now := time.Now().Truncate(time.Second)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		e := files[p]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: int64(e.mode), Size: int64(len(e.data)), ModTime: now}); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}
