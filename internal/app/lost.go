package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
)

// Rebuild is what a front end that holds a session between turns does
// before a prompt starts one when the session is idle and its Docker
// workspace's container went away (a Docker daemon restart stops every
// container, and the in-memory tree goes with it; a `docker kill`): the
// session is reopened, which rebuilds the workspace from the project tree
// and what the session's last finished turn recorded, as `harness resume`
// does, and the turn runs in it.
//
// When the container went away during the last turn, that turn's
// end-of-turn diff failed and its changes were not recorded: they are
// recovered from the container the turn's end kept, when there is one
// (RecoverPatch, as `harness diff` does), else given up explicitly
// (Discard, as `harness discard` does: workspace.recovered with discarded
// set), and the note says which.
//
// Session.LostWorkspace decides whether to rebuild; the front end then
// closes its session (its lease goes with it: recovering or discarding
// takes it) and calls Run with how it opens the session again.
type Rebuild struct {
	a    *App
	id   string
	lost error  // the error the lost workspace's operations get
	turn string // the turn whose changes were not recorded ("" when none)
}

// LostWorkspace reports whether s must be rebuilt before a prompt starts a
// turn (Rebuild), or nil when there is nothing to rebuild. A prompt typed
// as the turn ends waits for its end: whether the workspace is lost is
// known once it has ended. While a turn runs the session is left as it is
// (its tool calls fail with the container's error). While the Docker
// daemon does not answer, no turn should start: the error
// (WORKSPACE_CONTAINER_FAILED) says so.
func (s *Session) LostWorkspace(ctx context.Context) (*Rebuild, error) {
	if st, _ := s.State(); st == runtime.StateEnding {
		select {
		case <-s.Idle():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case <-s.Idle():
	default:
		return nil, nil
	}
	ws, ok := s.Workspace.(*dockerws.Workspace)
	if !ok {
		return nil, nil
	}
	lost, unreachable := ws.Check(ctx)
	if unreachable != nil {
		// Nothing is known while the daemon does not answer, but a turn
		// started now would run nothing, and spend a model request on it.
		return nil, daemonDown(unreachable, "nothing was sent to the model; start the daemon, then send again (the workspace is rebuilt if its container went with it)")
	}
	if lost == nil {
		return nil, nil
	}
	last, _, err := runtime.LastFinished(ctx, s.a.Store, s.ID())
	if err != nil {
		// The log unread: the reopen would fail as the turn will.
		return nil, nil
	}
	r := &Rebuild{a: s.a, id: s.ID(), lost: lost}
	if last != nil && last.Workspace != nil && last.Workspace.DiffError != "" {
		r.turn = last.Identity.TurnID
	}
	return r, nil
}

// Run recovers or gives up the lost turn's changes, then opens the
// session again with reopen (the front end's open of r's session, which
// it closed), and returns the note the front end shows. When the changes
// can be neither recovered nor given up, the session is opened again as it
// is (so the front end keeps it) and the error says what to do.
func (r *Rebuild) Run(ctx context.Context, reopen func(context.Context) error) (string, error) {
	note := "the workspace's container had stopped or gone since the last turn (a Docker daemon restart stops every container): the workspace is rebuilt from the project and what the session's last finished turn recorded"
	if r.turn != "" {
		_, _, rerr := r.a.RecoverPatch(ctx, r.id)
		switch {
		case rerr == nil:
			note = fmt.Sprintf("the workspace's container went away during turn %s, whose changes could not be recorded then: they are recovered from the container its end kept, and the workspace is rebuilt with them", r.turn)
		case errcode.Of(rerr) == errcode.WorkspaceNotFound:
			// No container kept the files: the turn's changes are gone.
			if _, derr := r.a.Discard(ctx, r.id); derr != nil {
				return "", r.reopenAfter(ctx, reopen, derr)
			}
			note = fmt.Sprintf("the workspace's container went away during turn %s (a Docker daemon restart, a `docker kill`) before that turn's changes, if it made any, could be read: no container kept them, so they are discarded (recorded as such), and the workspace is rebuilt from the project and what the turns before it recorded", r.turn)
		default:
			return "", r.reopenAfter(ctx, reopen, rerr)
		}
	}
	if err := reopen(ctx); err != nil {
		return "", &errcode.Error{Code: errcode.Of(err), Message: fmt.Sprintf(
			"rebuild the workspace of session %s (%s): %s; `harness resume %s` tries again",
			r.id, errcode.Message(r.lost), errcode.Message(err), r.id), Err: err}
	}
	return note, nil
}

// reopenAfter is Run's error when the lost turn's changes could be
// neither recovered nor discarded (cause): the session is opened again as
// it is, so the front end keeps it, and the error says what to do.
func (r *Rebuild) reopenAfter(ctx context.Context, reopen func(context.Context) error, cause error) error {
	_ = reopen(ctx) // its own failure adds nothing to cause's
	return &errcode.Error{Code: errcode.Of(cause), Err: cause, Message: fmt.Sprintf(
		"rebuild the workspace of session %s (%s): %s; quit, then `harness discard %s` and `harness resume %s`",
		r.id, errcode.Message(r.lost), errcode.Message(cause), r.id, r.id)}
}

// UnrecordedNote ends the note of a turn's end that the store could not
// record (Unrecorded).
const UnrecordedNote = "(not in the session's log: the store could not record the turn's end)"

// Unrecorded is the end of run of session id, which the store could not
// record (its disk full, its server gone), as a front end shows it so
// that it never shows the turn running: built from out, the owner's
// outcome of its last turn (failed, with out's counts, when out is not
// run's), its note saying that the log does not hold it.
func Unrecorded(id, run string, out runtime.Outcome) event.TurnCompleted {
	tc := event.TurnCompleted{RunID: run, SessionID: id, TurnID: out.TurnID, Status: string(runtime.StatusFailed),
		ModelRequests: out.ModelRequests, ToolCalls: out.ToolCalls, Usage: out.Usage}
	if out.RunID == run {
		tc.Status, tc.ErrorCode, tc.Note = string(out.Status), string(out.ErrorCode), out.Message
	}
	tc.Note = strings.TrimSpace(tc.Note + " " + UnrecordedNote)
	return tc
}

// DockerAnswers reports, with WORKSPACE_CONTAINER_FAILED, that the Docker
// daemon of the session's workspace does not answer, for a command that
// would reopen the session on it (a rewind: without the daemon it would
// reopen read-only); next says what was not done and what to do. Nil when
// the daemon answers, and for any other workspace.
func (s *Session) DockerAnswers(ctx context.Context, next string) error {
	ws, ok := s.Workspace.(*dockerws.Workspace)
	if !ok {
		return nil
	}
	if _, unreachable := ws.Check(ctx); unreachable != nil {
		return daemonDown(unreachable, next)
	}
	return nil
}

// daemonDown is the error of something not done because the Docker daemon
// does not answer (unreachable, Check's); next says what was not done and
// what to do.
func daemonDown(unreachable error, next string) error {
	return &errcode.Error{Code: errcode.Of(unreachable), Err: unreachable, Message: fmt.Sprintf(
		"the Docker daemon does not answer (%s): %s", errcode.Message(unreachable), next)}
}
