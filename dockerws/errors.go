package dockerws

import (
	"context"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/errcode"
)

// This file is the one place where Docker errors become codes. Messages are
// written here; the Docker text stays in Err, for logs only.

// dockerError translates an error of a Docker call. A canceled ctx wins:
// the call failed because the caller gave up, not because Docker did.
func dockerError(ctx context.Context, op string, err error) error {
	return containerError(ctx, op, "", err)
}

// containerError is dockerError for an operation on session's workspace
// ("" when unknown): a lost container's message names the session.
func containerError(ctx context.Context, op, session string, err error) error {
	if ctx.Err() != nil {
		return canceled(ctx, op)
	}
	switch {
	case client.IsErrConnectionFailed(err):
		return &errcode.Error{Code: errcode.WorkspaceContainerFailed, Op: op,
			Message: "cannot reach the Docker daemon; " + StartDaemon, Err: err}
	case cerrdefs.IsNotFound(err):
		return &errcode.Error{Code: errcode.WorkspaceContainerFailed, Op: op,
			Message: "the workspace container is gone; " + lostContainer(session), Err: err}
	case cerrdefs.IsConflict(err):
		// An exec into a stopped container (a daemon restart stops every
		// container) is refused as a conflict.
		return &errcode.Error{Code: errcode.WorkspaceContainerFailed, Op: op,
			Message: "the workspace container is not running (a Docker daemon restart stops it); " + lostContainer(session), Err: err}
	default:
		return &errcode.Error{Code: errcode.WorkspaceContainerFailed, Op: op,
			Message: "the Docker daemon refused " + op, Err: err}
	}
}

// lostContainer says what becomes of session ("" when unknown) when its
// container went away.
func lostContainer(session string) string {
	id := "ID (the session's)"
	if session != "" {
		id = session
	}
	return "the TUI rebuilds the workspace by itself at the next prompt, from what the session's finished turns recorded (the changes of a turn the container went away in are given up, and it says so); " +
		"elsewhere, quit and `harness resume " + id + "` does the same (after `harness discard " + id + "` when a turn's changes went with the container)"
}

// StartDaemon says what a user whose Docker daemon is not reachable does,
// on their own machine.
const StartDaemon = "start the Docker daemon (e.g. `sudo systemctl start docker`, or `dockerd` as root), make sure your user can reach its socket, or set DOCKER_HOST"

// imageError translates a failed image inspect: a missing image is
// WORKSPACE_NOT_FOUND with the way to get it, since nothing is pulled.
func imageError(ctx context.Context, op, image string, err error) error {
	if ctx.Err() != nil || !cerrdefs.IsNotFound(err) {
		return dockerError(ctx, op, err)
	}
	msg := fmt.Sprintf("image %q is not present and Harness never pulls; pull or build it yourself", image)
	switch image {
	case DefaultImage, DefaultImage + ":latest":
		msg = fmt.Sprintf("image %q is not present; run `make sandbox-image` (or scripts/images.sh) to build harness-sandbox", image)
	case "harness-busybox", "harness-busybox:latest":
		msg = fmt.Sprintf("image %q is not present; run scripts/images.sh busybox to build it", image)
	}
	return &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: msg, Err: err}
}

// opError translates a Docker failure during an operation on a live
// workspace: once Close has begun it is WORKSPACE_DISPOSED, whatever Docker
// said about the container being removed under the call.
func (w *Workspace) opError(ctx context.Context, op string, err error) error {
	if w.isClosed() {
		return &errcode.Error{Code: errcode.WorkspaceDisposed, Op: op, Message: "the workspace is closed", Err: err}
	}
	return containerError(ctx, op, w.opts.SessionID, err)
}

func isNotFound(err error) bool { return cerrdefs.IsNotFound(err) }

func disposed(op string) error {
	return &errcode.Error{Code: errcode.WorkspaceDisposed, Op: op, Message: "the workspace is closed"}
}

// canceled is the error of an operation whose ctx ended; it wraps the
// cause so errors.Is(err, context.Canceled) holds.
func canceled(ctx context.Context, op string) error {
	return &errcode.Error{Code: errcode.ToolCanceled, Op: op, Message: op + " was canceled", Err: context.Cause(ctx)}
}

// failed is a WORKSPACE_CONTAINER_FAILED error for a container that did not
// behave (a helper script that failed, an unreadable stream).
func failed(op, msg string, err error) error {
	return &errcode.Error{Code: errcode.WorkspaceContainerFailed, Op: op, Message: msg, Err: err}
}
