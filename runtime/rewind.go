package runtime

import (
	"context"
	"time"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// Rewind records, on the log of a session no runtime has open, that the
// session goes back to cp: data (session.rewound), then cp as the
// session's terminal checkpoint, whole, so that it resumes (and forks)
// from there like any finished session. cp is the whole terminal
// checkpoint of one of the session's finished turns, as the caller wants
// it continued (the caller decides what it carries forward: settings,
// accounting that is never refunded). Nothing is removed from the log.
// A process that dies between the two appends leaves the session where it
// was (checkpoint.Restore ignores a session.rewound no checkpoint follows).
// Codes: RUNTIME_INVALID_INPUT for a checkpoint that is not a whole
// terminal one of this session; RUNTIME_CHECKPOINT_INVALID when it does
// not encode; RUNTIME_EVENT_APPEND_FAILED wrapping the store's code.
func Rewind(ctx context.Context, log EventLog, cp *checkpoint.Checkpoint, data event.SessionRewound, now func() time.Time) error {
	switch {
	case cp == nil || cp.Identity.Phase != checkpoint.PhaseTerminal || cp.TerminalStatus == nil:
		return errcode.New(errcode.RuntimeInvalidInput, "rewind: not a terminal checkpoint")
	case cp.History.Base != 0:
		return errcode.New(errcode.RuntimeInvalidInput, "rewind: a partial checkpoint; fold it with checkpoint.Chain first")
	case cp.Identity.SessionID != log.SessionID() || data.SessionID != log.SessionID():
		return errcode.Errorf(errcode.RuntimeInvalidInput, "rewind: checkpoint of session %s given for %s", cp.Identity.SessionID, log.SessionID())
	case data.ToTurnID != cp.Identity.TurnID:
		return errcode.Errorf(errcode.RuntimeInvalidInput, "rewind: to turn %s with the checkpoint of turn %s", data.ToTurnID, cp.Identity.TurnID)
	}
	if err := cp.Validate(); err != nil {
		return err
	}
	var row checkpoint.Row
	keep, tail, _, err := row.Save(cp)
	if err != nil {
		return err
	}
	payload, err := checkpoint.Marshal(cp)
	if err != nil {
		return errcode.Wrap(errcode.RuntimeCheckpointInvalid, "encode checkpoint", err)
	}
	mk := func(d event.Data, actor string) event.Event {
		return event.Event{Type: d.EventType(), ID: event.NewID("evt"), At: now(), Actor: actor, Data: d}
	}
	failed := func(what string, err error) error {
		return &errcode.Error{Code: errcode.RuntimeEventAppendFailed, Message: what + ": " + string(errcode.Of(err)), Err: err}
	}
	if _, err := log.Append(ctx, mk(data, event.ActorUser)); err != nil {
		return failed("append session.rewound", err)
	}
	rec, err := log.Append(ctx, mk(event.RuntimeCheckpoint{RunID: cp.Identity.RunID, SessionID: cp.Identity.SessionID,
		TurnID: cp.Identity.TurnID, Version: 1, Payload: payload}, event.ActorKernel))
	if err != nil {
		return failed("append runtime.checkpoint", err)
	}
	if _, err := log.AppendCheckpoint(ctx, rec.Seq, keep, tail); err != nil {
		return failed("save checkpoint", err)
	}
	return nil
}

// RecordApplied appends patch.applied: the user applied (or reverted) a
// workspace patch on the host tree. Codes: SESS_CLOSED (the session is
// closed: nothing is recorded), RUNTIME_EVENT_APPEND_FAILED.
func (s *Session) RecordApplied(ctx context.Context, d event.PatchApplied) error {
	if _, err := s.lockDecide(ctx, cmdRecordApplied, nil); err != nil {
		return err
	}
	defer s.mu.Unlock()
	_, err := s.append(ctx, d)
	return err
}
