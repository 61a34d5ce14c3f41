package runtime

import (
	"context"
	"maps"
	"slices"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}

// snapshot builds the payload of the session as it is now. Caller holds s.mu.
func (t *turn) snapshot(phase string, next *checkpoint.NextRequest, term *checkpoint.TerminalStatus) checkpoint.Checkpoint {
	s, r := t.s, t.r
	st := &s.state
	return checkpoint.Checkpoint{
		Version:  1,
		Identity: checkpoint.Identity{RunID: r.id, SessionID: s.id, TurnID: r.turnID, Phase: phase, SessionTurns: slices.Clone(st.turns)},
		History:  checkpoint.NewHistory(st.revision, st.messages, st.rawMsgs),
		Settings: s.settings,
		Accounting: checkpoint.Accounting{Usage: st.usage, ModelRequests: st.modelRequests, ToolCalls: st.toolCalls,
			TranscriptBytes: st.transcript},
		Control: checkpoint.Control{
			SeenModelCallIDs: nonNil(st.seenExtra), // the rest are the history's (Checkpoint.SeenCalls)
			RunGrants:        sortedKeys(r.grants),
			SessionGrants:    sessionGrants(s.granted),
			WarnedBudgets:    sortedKeys(st.warned),
			PendingSteering:  nonNil(s.pending),
			QueuedInputs:     nonNil(s.next),
		},
		Context:        checkpoint.Context{Compaction: st.compact, FirstUser: st.firstUser, TurnRequest: st.turnRequest()},
		NextRequest:    next,
		TerminalStatus: term,
		Workspace:      t.wsState,
	}
}

// turnRequest is the ID of the current turn's request, "" for none.
func (st *state) turnRequest() string {
	if st.turnUser == nil {
		return ""
	}
	return st.turnUser.ID
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return slices.Clone(s)
}

// checkpoint appends runtime.checkpoint and saves it through the store's
// checkpoint CAS. s.mu is held so that pending steering in the payload and
// the log order agree.
func (t *turn) checkpoint(phase string, next *checkpoint.NextRequest, term *checkpoint.TerminalStatus) error {
	s, r := t.s, t.r
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := t.snapshot(phase, next, term)
	// The store's row gets what this checkpoint adds (checkpoint.Row), the
	// event what was added since the previous event: neither costs more
	// than the round added, however long the history.
	keep, tail, row, err := s.state.row.Save(&cp)
	if err != nil {
		return err
	}
	d := cp
	d.History = cp.History.Since(s.state.checkpointMsgs)
	delta, err := checkpoint.Marshal(&d)
	if err != nil {
		return errcode.Wrap(errcode.RuntimeCheckpointInvalid, "encode checkpoint", err)
	}
	rec, err := t.append(event.RuntimeCheckpoint{RunID: r.id, SessionID: s.id, TurnID: r.turnID, Version: 1, Payload: delta})
	if err != nil {
		return err
	}
	s.state.checkpointMsgs = len(cp.History.Messages)
	if _, err := s.log.AppendCheckpoint(context.WithoutCancel(t.ctx), rec.Seq, keep, tail); err != nil {
		s.state.row = checkpoint.Row{} // unknown now: the next save writes it whole
		return &errcode.Error{Code: errcode.RuntimeEventAppendFailed, Message: "save checkpoint: " + storeCause(err), Err: err}
	}
	s.state.row = row
	return nil
}

// ReconstructModelRequest returns exactly the request the model received
// for a checkpoint of phase model or summary. It is pure.
func ReconstructModelRequest(cp *checkpoint.Checkpoint) (model.Request, error) {
	if cp.History.Base != 0 {
		return model.Request{}, errcode.New(errcode.RuntimeInvalidInput, "reconstruct request: a partial checkpoint; fold it with checkpoint.Chain first")
	}
	if cp.NextRequest == nil {
		return model.Request{}, errcode.Errorf(errcode.RuntimeInvalidInput, "reconstruct request: checkpoint of phase %s has no next request", cp.Identity.Phase)
	}
	st := state{messages: cp.History.Messages, compact: cp.Context.Compaction, firstUser: cp.Context.FirstUser, turnUser: cp.TurnMessage()}
	view := st.view()
	nr := cp.NextRequest
	if cp.Identity.Phase == checkpoint.PhaseSummary {
		if nr.Boundary > len(view) {
			return model.Request{}, errcode.New(errcode.RuntimeCheckpointInvalid, "reconstruct request: summary boundary past the view")
		}
		return summaryRequest(cp.Settings, nr.RequestID, nr.MaxTokens, view[:nr.Boundary], nr.Focus), nil
	}
	return roundRequest(cp.Settings, nr.RequestID, view, nr.MaxTokens), nil
}

// roundRequest is the request of a model round: the one place it is
// assembled, for the turn that sends it and for ReconstructModelRequest
// (harness request), so the rebuilt request is the request sent.
func roundRequest(set checkpoint.Settings, requestID string, view []model.Message, maxTokens int) model.Request {
	return model.Request{
		RequestID:       requestID,
		Model:           set.Model,
		System:          set.System,
		Messages:        view,
		Tools:           set.Tools,
		MaxTokens:       maxTokens,
		ProviderOptions: set.ProviderOptions,
	}
}
