package runtime

import (
	"context"
	"time"

	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
)

// finish writes the terminal checkpoint, turn.completed and agent.stopped,
// exactly once per turn, and releases the session for the next turn.
func (t *turn) finish() {
	s, r := t.s, t.r
	s.mu.Lock()
	r.completing = true
	s.mu.Unlock()
	if t.status == "" {
		t.status = StatusFailed
		if t.err == nil {
			t.err = errcode.New(errcode.Internal, "turn ended without a status")
		}
	}
	var code errcode.Code
	msg := ""
	if t.err != nil && t.status != StatusCanceled {
		code = errcode.Of(t.err)
		msg = errcode.Message(t.err)
	}
	term := &terminalStatus{Status: string(t.status), ErrorCode: string(code)}
	t.wsState = s.workspaceState(t.ctx)
	// The terminal checkpoint and the events after it are best effort when
	// the store itself failed; the outcome says so.
	if err := t.checkpoint(phaseTerminal, nil, term); err != nil && t.err == nil {
		t.err, code, msg = err, errcode.Of(err), errcode.Message(err)
	}
	tc := event.TurnCompleted{RunID: r.id, SessionID: s.id, TurnID: r.turnID, Status: string(t.status),
		ModelRequests: t.requests, ToolCalls: t.toolCalls, Usage: t.usage}
	if code != "" {
		tc.ErrorCode = string(code)
		tc.Note = msg
	}
	tc.OutputMessageID = t.outputID
	if _, err := t.append(tc); err != nil && t.err == nil {
		t.err, code, msg = err, errcode.Of(err), errcode.Message(err)
	}
	_, _ = t.append(event.AgentStopped{AgentID: r.agentID, Status: string(t.status), Steps: t.steps, ToolCalls: t.toolCalls,
		RunID: r.id, SessionID: s.id, TurnID: r.turnID})

	r.outcome = Outcome{RunID: r.id, TurnID: r.turnID, Status: t.status, ErrorCode: code, Message: msg,
		OutputMessageID: t.outputID, Usage: t.usage, ModelRequests: t.requests, ToolCalls: t.toolCalls}
	s.mu.Lock()
	s.active = nil
	s.mu.Unlock()
	r.cancel(nil)
	close(r.done)
}

// snapshotter is implemented by workspaces that know their initial
// snapshot's identity (the Docker workspace).
type snapshotter interface{ Snapshot() string }

// workspaceState records the workspace's patch for resume. A diff that
// fails is recorded as missing rather than ending the turn a second time.
func (s *Session) workspaceState(ctx context.Context) *WorkspaceState {
	ws := s.rt.cfg.Workspace
	st := &WorkspaceState{Backend: ws.Info().Backend}
	if sn, ok := ws.(snapshotter); ok {
		st.Snapshot = sn.Snapshot()
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if patch, err := ws.Diff(dctx); err == nil {
		st.Patch = patch
	}
	return st
}
