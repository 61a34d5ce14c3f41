package dockerws

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"slices"
	"syscall"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/harness-dev/harness/internal/errcode"
)

// A session's patch is made against a base: the project tree as its
// workspace copied it in. When the user applies a patch to the host tree
// (harness apply, /apply) the host moves ahead of that base, and when
// they take one back (apply --reverse) it moves the other way. These
// host changes are what a session's bookkeeping (internal/app) passes
// here, oldest first, so that
//
//   - a live workspace moves its base with the host (Rebase): its diff
//     then shows only what is not on the host yet;
//   - a workspace rebuilt for a recorded patch (Options.Patch) whose base
//     the host has since moved away from (Options.HostChanges) takes those
//     changes back from the scanned host tree first, replays the patch on
//     the base it was made on, and diffs against the host tree as it is;
//   - Pending computes, from the host's files alone, the patch that takes
//     the host tree to the session's work.

// HostChange is a patch the host tree received after a session's recorded
// patch was made: applied there or, with Reverse, taken back.
type HostChange struct {
	Patch   string
	Reverse bool
}

// parseChanges parses each change's patch, turned around for a Reverse
// one, into what it did to the host tree, oldest first.
func parseChanges(op string, changes []HostChange) ([][]*gitdiff.File, error) {
	out := make([][]*gitdiff.File, 0, len(changes))
	for _, c := range changes {
		pf, err := parsePatch(op, c.Patch)
		if err != nil {
			return nil, err
		}
		if c.Reverse {
			pf = reversed(pf)
		}
		out = append(out, pf)
	}
	return out, nil
}

// patched returns files with pf applied (files itself is not changed).
func patched(files map[string]*entry, pf []*gitdiff.File) (map[string]*entry, error) {
	if len(pf) == 0 {
		return files, nil
	}
	writes, deletes, err := applyFiles(files, pf)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(files)
	for _, p := range deletes {
		delete(out, p)
	}
	maps.Copy(out, writes)
	return out, nil
}

// undoChanges takes the host changes (as parseChanges gives them) back
// from files, newest first: the tree before them. A scanned tree has no
// binary files (the copy leaves them out): textOnly leaves the changes'
// binary file patches out too.
func undoChanges(files map[string]*entry, changes [][]*gitdiff.File, textOnly bool) (map[string]*entry, error) {
	for i := len(changes) - 1; i >= 0; i-- {
		pf := changes[i]
		if textOnly {
			pf = textFiles(pf)
		}
		var err error
		if files, err = patched(files, reversed(pf)); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// touchedPaths adds to set every path the parsed patches name.
func touchedPaths(set map[string]bool, pfs ...[]*gitdiff.File) {
	for _, pf := range pfs {
		for _, f := range pf {
			for _, p := range []string{f.OldName, f.NewName} {
				if p != "" {
					set[p] = true
				}
			}
		}
	}
}

// Pending is the patch that takes the host tree at root to a session's
// work: patch, made on the tree that changes (oldest first) then moved
// the host away from, replayed as a workspace open replays it (Options.
// HostChanges) and diffed against the host tree as it is. Only the files
// the patches name are read; one over maxFileBytes (0:
// DefaultMaxFileBytes) is carried as a binary patch. With no changes it
// is patch itself; with the one change that applied patch, "".
//
// Codes: SESS_PATCH_CONFLICT (errors.Is ErrReplayConflict) when the patch
// fits neither the tree before the changes nor the tree as it is;
// WORKSPACE_SCOPE for a named path that is not a regular file on the host
// (a symbolic link, a directory); TOOL_BAD_INPUT for a patch that does
// not parse.
func Pending(ctx context.Context, root, patch string, changes []HostChange, maxFileBytes int64) (string, error) {
	if len(changes) == 0 {
		return patch, nil
	}
	if len(changes) == 1 && !changes[0].Reverse && changes[0].Patch == patch {
		return "", nil
	}
	return replayOnHost(ctx, root, patch, changes, maxFileBytes)
}

// CheckReplay says whether a workspace opened on the host tree at root
// with Options.Patch patch and Options.HostChanges changes would open:
// what a rewind checks before it records anything. Codes: those of
// Pending.
func CheckReplay(ctx context.Context, root, patch string, changes []HostChange) error {
	_, err := replayOnHost(ctx, root, patch, changes, 0)
	return err
}

// replayOnHost is Pending without its shortcuts: the open's replay
// (Workspace.rebuild) on the host's files that the patches name.
func replayOnHost(ctx context.Context, root, patch string, changes []HostChange, maxFileBytes int64) (string, error) {
	const op = "replay the session's patch"
	if maxFileBytes <= 0 {
		maxFileBytes = DefaultMaxFileBytes
	}
	pf, err := parsePatch(op, patch)
	if err != nil {
		return "", err
	}
	cs, err := parseChanges(op, changes)
	if err != nil {
		return "", err
	}
	paths := map[string]bool{}
	touchedPaths(paths, pf)
	touchedPaths(paths, cs...)
	host, err := readHostFiles(ctx, root, slices.Sorted(maps.Keys(paths)))
	if err != nil {
		return "", err
	}
	start := host
	if undone, err := undoChanges(host, cs, false); err == nil {
		start = undone
	}
	work, _, _, err := replay(root, start, pf)
	if err != nil {
		return "", &errcode.Error{Code: errcode.SessPatchConflict, Op: op, Err: err, Message: errcode.Message(err)}
	}
	return formatPatch(host, work, maxFileBytes), nil
}

// readHostFiles reads the named files of the host tree at root, through
// an os.Root (nothing outside root is opened, no symbolic link is
// followed); a name with no file is absent from the map.
func readHostFiles(ctx context.Context, root string, names []string) (map[string]*entry, error) {
	const op = "read the host's files"
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "open the project directory " + root, Err: err}
	}
	defer r.Close()
	out := make(map[string]*entry, len(names))
	for _, p := range names {
		if err := ctx.Err(); err != nil {
			return nil, &errcode.Error{Code: errcode.ToolCanceled, Op: op, Err: err}
		}
		fi, err := r.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			continue
		case err != nil:
			return nil, &errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: "read " + p + " in " + root, Err: err}
		case !fi.Mode().IsRegular():
			return nil, &errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: p + " in " + root + " is not a regular file (a symbolic link or a directory): harness does not follow it"}
		}
		data, err := r.ReadFile(p)
		if err != nil {
			return nil, &errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: "read " + p + " in " + root, Err: err}
		}
		mode := fs.FileMode(0o644)
		if fi.Mode().Perm()&0o100 != 0 {
			mode = 0o755
		}
		out[p] = &entry{data: data, mode: mode}
	}
	return out, nil
}

// Rebase moves the workspace's base with the host tree: change is a patch
// the host tree just received (applied, or with Reverse taken back), so
// Diff from now on shows only what the host does not have, and Snapshot
// names the moved base, which the session's next checkpoint records.
// The workspace's own files are not touched.
//
// Codes: SESS_PATCH_CONFLICT when change does not apply to the base (it
// was not made on it); TOOL_BAD_INPUT (not a patch); WORKSPACE_DISPOSED;
// the open's failure.
func (w *Workspace) Rebase(ctx context.Context, change HostChange) error {
	const op = "move the workspace's base"
	cs, err := parseChanges(op, []HostChange{change})
	if err != nil {
		return err
	}
	if err := w.waitScanned(ctx, op); err != nil {
		if w.OpenError() != nil {
			// No tree was opened: Diff answers the recorded patch, and
			// the next open starts from the host as it is.
			return nil
		}
		return err
	}
	if err := w.acquire(ctx, op); err != nil {
		return err
	}
	defer w.release()
	files, err := patched(w.baseFiles, cs[0])
	if err != nil {
		// The base has no binary files (the copy leaves them out): the
		// text files alone must fit.
		files, err = patched(w.baseFiles, textFiles(cs[0]))
	}
	if err != nil {
		return &errcode.Error{Code: errcode.SessPatchConflict, Op: op, Err: err, Message: "the applied patch does not fit the workspace's base: " + errcode.Message(err)}
	}
	digest := (&snapshot{files: files}).computeDigest()
	w.baseFiles = files
	w.mu.Lock()
	w.baseDigest = digest
	w.mu.Unlock()
	// Diff now compares the workspace's files with the moved base: it
	// reads them from the container, not from the tree as copied in.
	w.touch()
	return nil
}
