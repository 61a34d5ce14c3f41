package runtime

import (
	"context"
	"time"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// finish writes the terminal checkpoint, turn.completed and agent.stopped,
// exactly once per turn, and releases the session. When the turn completed
// and an input waits in the queue, the session starts the next turn at once
// and finish returns it, to be admitted and driven by the caller.
func (t *turn) finish() *turn {
	s, r := t.s, t.r
	s.mu.Lock()
	s.transition(cmdFinish)
	if s.changed != nil {
		// Recorded while the turn ran: the terminal checkpoint carries it.
		s.settings, s.changed = *s.changed, nil
	}
	s.mu.Unlock()
	if t.status == "" {
		t.status = StatusFailed
		if t.err == nil {
			t.err = errcode.New(errcode.Internal, "turn ended without a status")
		}
	}
	var diffErr error
	t.wsState, diffErr = s.workspaceState(t.ctx)
	if diffErr != nil && t.status == StatusCompleted {
		// The work is done but its patch is unknown: that is a failure,
		// never "nothing changed".
		t.status, t.err = StatusFailed, diffErr
	}
	var code errcode.Code
	msg := ""
	if t.err != nil && t.status != StatusCanceled {
		code = errcode.Of(t.err)
		msg = errcode.Message(t.err)
	}
	term := &checkpoint.TerminalStatus{Status: string(t.status), ErrorCode: string(code)}
	// The terminal checkpoint and the events after it are best effort when
	// the store itself failed; the outcome says so. A turn that failed
	// between a tool call and the record of its result (a full disk) left
	// the call open in the history, from which no request can be built: no
	// terminal checkpoint is written then, as none would be after a crash
	// there. Resume says the turn was interrupted, and --fork goes on from
	// the last finished turn (a checkpoint with the open call would have
	// made every later fold of the log fail, --fork's included).
	if err := checkpoint.CheckMessages(s.state.messages); err != nil {
		if t.err == nil {
			t.err, code, msg = err, errcode.Of(err), errcode.Message(err)
		}
	} else if err := t.checkpoint(checkpoint.PhaseTerminal, nil, term); err != nil && t.err == nil {
		t.err, code, msg = err, errcode.Of(err), errcode.Message(err)
	}
	tc := event.TurnCompleted{RunID: r.id, SessionID: s.id, TurnID: r.turnID, Status: string(t.status),
		ModelRequests: t.requests, ToolCalls: t.toolCalls, Usage: t.usage,
		Truncated: t.status == StatusCompleted && t.truncated}
	if code != "" {
		tc.ErrorCode = string(code)
		tc.Note = msg
	} else if t.status == StatusCompleted && t.note != "" {
		tc.Note, msg = t.note, t.note
	}
	tc.OutputMessageID = t.outputID
	if _, err := t.append(tc); err != nil && t.err == nil {
		t.err, code, msg = err, errcode.Of(err), errcode.Message(err)
	}
	_, _ = t.append(event.AgentStopped{AgentID: r.agentID, Status: string(t.status), Steps: t.steps, ToolCalls: t.toolCalls,
		RunID: r.id, SessionID: s.id, TurnID: r.turnID})

	r.outcome = Outcome{RunID: r.id, TurnID: r.turnID, Status: t.status, ErrorCode: code, Message: msg,
		OutputMessageID: t.outputID, Usage: t.usage, ModelRequests: t.requests, ToolCalls: t.toolCalls, Truncated: tc.Truncated}
	// Out of the registry before the session is released: once it is
	// idle, no run of it is live.
	s.rt.forget(r)
	s.mu.Lock()
	next := s.releaseLocked(t)
	s.mu.Unlock()
	r.cancel(nil)
	close(r.done)
	return next
}

// snapshotter is implemented by workspaces that know their initial
// snapshot's identity (the Docker workspace).
type snapshotter interface{ Snapshot() string }

// keeper is implemented by workspaces whose files can outlive Close (the
// Docker workspace keeps its container): Keep returns the name under which
// they stay.
type keeper interface {
	Keep(ctx context.Context) (string, error)
}

// diffTimeout bounds the end-of-turn diff; a diff that runs out of time
// fails like any other, it is never taken for an empty patch.
var diffTimeout = 2 * time.Minute

// workspaceState records the workspace's patch for resume. A diff that
// fails is recorded as failed, with its code and message, and returned: the
// patch is unknown, not empty. The workspace's files are then kept (the
// Docker workspace's container outlives the process, under a name the
// message gives) so that the work can still be reviewed or recovered.
func (s *Session) workspaceState(ctx context.Context) (*checkpoint.Workspace, error) {
	ws := s.cfg.Workspace
	st := &checkpoint.Workspace{Backend: ws.Info().Backend}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), diffTimeout)
	defer cancel()
	patch, err := ws.Diff(dctx)
	// After the diff, which waited for a workspace opening in the
	// background whenever the turn touched it.
	if sn, ok := ws.(snapshotter); ok {
		st.Snapshot = sn.Snapshot()
	}
	if err == nil {
		st.Patch = patch
		return st, nil
	}
	code, msg := errcode.Of(err), errcode.Message(err)
	if dctx.Err() != nil {
		code, msg = errcode.WorkspaceLimit, "the diff did not finish within "+diffTimeout.String()
	}
	msg = "git.diff failed: " + msg
	if k, ok := ws.(keeper); ok {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		name, kerr := k.Keep(kctx)
		cancel()
		if kerr == nil {
			msg += "; the workspace's files are kept in Docker container " + name +
				" (look with `docker exec " + name + " ls /workspace`, copy out with `docker cp " + name + ":/workspace DIR`)" +
				": `harness diff " + s.id + "` with a larger --max-total-bytes (or --max-file-bytes/--exclude leaving generated files out) recovers the work, `harness discard " + s.id + "` gives up this turn's changes (what earlier turns recorded stays)"
		} else if errcode.Of(kerr) == errcode.WorkspaceNotFound {
			// The files are gone (a container that stopped with its tree
			// in memory): what the diff's error advised no longer holds.
			msg = "git.diff failed: " + errcode.Message(kerr) + "; this turn's changes are lost: the TUI's next prompt goes on from what earlier turns recorded (it says so), as do `harness discard " + s.id +
				"` then `harness resume " + s.id + "`"
		} else {
			msg += "; the workspace's files could not be kept: " + errcode.Message(kerr)
		}
	}
	st.DiffError, st.DiffMessage = string(code), msg
	return st, &errcode.Error{Code: code, Op: "end-of-turn diff", Message: msg, Err: err}
}
