package dockerws

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/attest"
	"github.com/harness-dev/harness/internal/errcode"
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
	filter := make(client.Filters).Add("label", LabelWorkspace)
	if sessionID != "" {
		filter = filter.Add("label", LabelSession+"="+sessionID)
	}
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: filter})
	if err != nil {
		return nil, dockerError(ctx, op, err)
	}
	var out []Kept
	for _, c := range list.Items {
		for _, n := range c.Names {
			if name := strings.TrimPrefix(n, "/"); strings.HasPrefix(name, KeptPrefix) {
				out = append(out, Kept{Name: name, SessionID: c.Labels[LabelSession], Created: time.Unix(c.Created, 0),
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
// Codes: WORKSPACE_NOT_FOUND (no such container, or a stopped one: its
// files are lost), WORKSPACE_SCOPE (the container is another session's,
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
	if c.Config == nil || c.Config.Labels[LabelSession] != opts.SessionID || !strings.HasPrefix(strings.TrimPrefix(c.Name, "/"), KeptPrefix) {
		return fail(&errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: "container " + name + " is not a kept container of session " + opts.SessionID})
	}
	if c.State == nil || !c.State.Running {
		return fail(&errcode.Error{Code: errcode.WorkspaceNotFound, Op: op,
			Message: "the kept container " + name + " is stopped: its files, which lived in memory, are lost"})
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
	w.id, w.cid, w.imageID, w.user = c.Config.Labels[LabelWorkspace], c.ID, c.Image, sandboxUser(imgUser)
	w.opts.Image = c.Config.Image
	w.base, w.initial, w.initialDirs = snap, snap.files, dirsOf(snap.dirs, snap.files)
	w.cur = &tree{mark: firstMark, files: map[string]*entry{}}
	w.touched, w.kept = true, strings.TrimPrefix(c.Name, "/")
	close(w.scanned)
	close(w.ready)
	w.Begin()
	attest.Register(w)
	return w, nil
}
