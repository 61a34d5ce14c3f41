package dockerws

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/attest"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// Kept is a container Keep set aside: the files of a workspace whose
// end-of-turn diff failed.
type Kept struct {
	Name      string // KeptPrefix…
	SessionID string
	Created   time.Time
	Running   bool // a stopped one has lost its files (they lived in memory)
}

// ListKept lists the kept containers on the daemon at dockerHost, newest
// first; with sessionID set, only that session's. Code:
// WORKSPACE_CONTAINER_FAILED.
func ListKept(ctx context.Context, dockerHost, sessionID string) ([]Kept, error) {
	cli, err := newClient(dockerHost)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	return listKept(ctx, cli, sessionID)
}

func listKept(ctx context.Context, cli *client.Client, sessionID string) ([]Kept, error) {
	const op = "list kept containers"
	// Not filtered by the session label: a claimed spare has none (its
	// kept name says it, keptSession).
	filter := make(client.Filters).Add("name", KeptPrefix)
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: filter})
	if err != nil {
		return nil, dockerError(ctx, op, err)
	}
	var out []Kept
	for _, c := range list.Items {
		_, ws := c.Labels[LabelWorkspace]
		_, spare := c.Labels[LabelSpare]
		if !ws && !spare {
			continue // not Harness's
		}
		for _, n := range c.Names {
			if name := strings.TrimPrefix(n, "/"); strings.HasPrefix(name, KeptPrefix) && (sessionID == "" || keptSession(c.Labels, name) == sessionID) {
				out = append(out, Kept{Name: name, SessionID: keptSession(c.Labels, name), Created: time.Unix(c.Created, 0),
					Running: c.State == container.StateRunning})
			}
		}
	}
	slices.SortFunc(out, func(a, b Kept) int { return b.Created.Compare(a.Created) })
	return out, nil
}

// RemoveKept removes the kept container name and its volumes, for good:
// what it held is gone. A container that is already gone is no error.
// Codes: WORKSPACE_PATH (name is not a kept container's),
// WORKSPACE_CONTAINER_FAILED.
func RemoveKept(ctx context.Context, dockerHost, name string) error {
	if !strings.HasPrefix(name, KeptPrefix) {
		return &errcode.Error{Code: errcode.WorkspacePath, Op: "remove kept container", Message: fmt.Sprintf("%q is not the name of a kept container (%s…)", name, KeptPrefix)}
	}
	cli, err := newClient(dockerHost)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.ContainerRemove(ctx, name, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !isNotFound(err) {
		return dockerError(ctx, "remove kept container", err)
	}
	return nil
}

// firstMark is older than any change time: a tree refreshed from it reads
// every file again.
const firstMark = "0001-01-01 00:00:00.000000000 +0000"

// Adopt opens, as a workspace, the container name that Keep set aside for
// the session opts.SessionID, on the project at opts.Root. That project
// must still be the tree that was copied into the container: scanned with
// opts (the same exclusions and file-size limit as the session's own
// open), its snapshot must be want. The workspace is ready at once; its
// first Diff reads every file of the container again, within opts' limits
// (a larger MaxTotalBytes is how a diff over the cap is recovered). It is
// attested, and stays kept: Close leaves the container, RemoveKept removes
// it.
//
// Codes: WORKSPACE_NOT_FOUND (no such container, a stopped one, or one
// restarted or emptied since Keep marked it: its files are lost), WORKSPACE_SCOPE (the container is another session's,
// or the project tree changed since it was copied in), and those of
// Start and of the scan.
func Adopt(ctx context.Context, opts Options, name, want string) (*Workspace, error) {
	const op = "adopt kept container"
	opts.Patch, opts.Defer = "", false
	w, _, _, err := prepare(ctx, opts, false)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Workspace, error) {
		w.cli.Close()
		return nil, err
	}
	got, err := w.cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	switch {
	case isNotFound(err):
		return fail(&errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "the kept container " + name + " is gone: its files are lost", Err: err})
	case err != nil:
		return fail(dockerError(ctx, op, err))
	}
	c := got.Container
	if c.Config == nil || keptSession(c.Config.Labels, strings.TrimPrefix(c.Name, "/")) != opts.SessionID || !strings.HasPrefix(strings.TrimPrefix(c.Name, "/"), KeptPrefix) {
		return fail(&errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: "container " + name + " is not a kept container of session " + opts.SessionID})
	}
	disk := c.HostConfig != nil && c.HostConfig.StorageOpt["size"] != ""
	if c.State == nil || !c.State.Running {
		if !disk {
			return fail(&errcode.Error{Code: errcode.WorkspaceNotFound, Op: op,
				Message: "the kept container " + name + " is stopped: its files, which lived in memory, are lost"})
		}
		// Its files are on disk: they outlived the stop.
		if _, err := w.cli.ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
			return fail(dockerError(ctx, "start the kept container "+name, err))
		}
		again, err := w.cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
		if err != nil {
			return fail(dockerError(ctx, op, err))
		}
		c = again.Container
		if c.State == nil || !c.State.Running {
			return fail(&errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "the kept container " + name + " does not stay running"})
		}
	}
	img, err := w.cli.ImageInspect(ctx, c.Image)
	if err != nil {
		return fail(imageError(ctx, op, c.Image, err))
	}
	var imgUser string
	if img.Config != nil {
		imgUser = img.Config.User
	}
	snap, err := scanTree(ctx, w.opts, w.excl, nil)
	if err != nil {
		return fail(err)
	}
	if want == "" || snap.digest != want {
		return fail(&errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: fmt.Sprintf(
			"the project tree at %s is not the one copied into %s (it changed since, or other copy options were given): restore it to recover the work, or copy the files out with `docker cp %s:%s DIR`",
			w.opts.Root, name, name, WorkDir)})
	}
	if id := c.Config.Labels[LabelWorkspace]; id != "" { // a claimed spare has none: w.id stays new
		w.id = id
	}
	w.cid, w.imageID, w.user = c.ID, c.Image, sandboxUser(imgUser)
	w.storage = workspace.StorageTmpfs
	if disk {
		w.storage = workspace.StorageDisk
	}
	if err := w.sameLife(ctx, op, name, c.State.StartedAt, disk); err != nil {
		return fail(err)
	}
	w.opts.Image = c.Config.Image
	w.base, w.baseFiles, w.initial, w.initialDirs = snap, snap.files, snap.files, dirsOf(snap.dirs, snap.files)
	w.cur = &tree{mark: firstMark, files: map[string]*entry{}}
	w.touched, w.wide, w.kept = true, true, strings.TrimPrefix(c.Name, "/")
	_, _ = w.step(evAdopted, op)
	close(w.scanned)
	close(w.ready)
	w.Begin()
	attest.Register(w)
	return w, nil
}

// keptMark is the file, on the $HOME volume (a tmpfs, emptied with the
// workspace's when the container stops; in disk storage, a directory of
// the container's layer, which a stop keeps), in which Keep records the
// start time of the container's life that holds the files. Root writes it in the
// sticky, world-writable volume root: the sandbox user cannot remove it.
const keptMark = HomeDir + "/.harness-kept"

// markScript writes $1 to the kept mark, read-only.
const markScript = `rm -f ` + keptMark + ` 2>/dev/null
printf '%s\n' "$1" > ` + keptMark + ` || exit 96
chmod 0444 ` + keptMark + `
exit 0`

// readMarkScript prints the kept mark, or nothing when there is none.
const readMarkScript = `cat ` + keptMark + ` 2>/dev/null
exit 0`

// markKept records, in the container, the start time of its current life.
// Code: WORKSPACE_CONTAINER_FAILED.
func (w *Workspace) markKept(ctx context.Context) error {
	const op = "mark kept container"
	got, err := w.cli.ContainerInspect(ctx, w.cid, client.ContainerInspectOptions{})
	if err != nil {
		return dockerError(ctx, op, err)
	}
	if got.Container.State == nil || got.Container.State.StartedAt == "" {
		return failed(op, "the container has no start time", nil)
	}
	code, stderr, err := w.scriptAs(ctx, "0:0", op, markScript, []string{got.Container.State.StartedAt}, nil, io.Discard)
	if err != nil {
		return err
	}
	if code != 0 {
		return failed(op, fmt.Sprintf("writing %s failed (exit %d): %s", keptMark, code, stderr), nil)
	}
	return nil
}

// sameLife checks that the kept container w adopts still runs the life
// Keep marked: a restart (docker restart, a daemon restart, a reboot)
// empties its tmpfs volumes, and the empty tree must never be taken for
// the turn's work. In disk storage (disk set) a restart keeps the files:
// the mark being there is enough. Code: WORKSPACE_NOT_FOUND (restarted or
// emptied since), WORKSPACE_CONTAINER_FAILED.
func (w *Workspace) sameLife(ctx context.Context, op, name, startedAt string, disk bool) error {
	var out bytes.Buffer
	code, stderr, err := w.scriptAs(ctx, "0:0", op, readMarkScript, nil, nil, &out)
	if err != nil {
		return err
	}
	if code != 0 {
		return failed(op, fmt.Sprintf("reading %s failed (exit %d): %s", keptMark, code, stderr), nil)
	}
	mark := strings.TrimSpace(out.String())
	switch {
	case mark == "":
		return &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "the kept container " + name +
			" was restarted or emptied since it was kept (its keep mark is gone): its files, which lived in memory, are lost; " +
			"look with `docker exec " + name + " ls " + WorkDir + "`"}
	case mark != startedAt && !disk:
		return &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: fmt.Sprintf(
			"the kept container %s was restarted since it was kept (kept in the life started at %s, running one started at %s): its files, which lived in memory, are lost; look with `docker exec %s ls %s`",
			name, mark, startedAt, name, WorkDir)}
	}
	return nil
}
