package runtime

import (
	"context"
	"slices"
	"strconv"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/subject"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/store"
)

// History reads a session's stored log and checkpoint. store.Reader
// satisfies it.
type History interface {
	ReadEvents(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]store.Record, error)
	LoadCheckpoint(ctx context.Context, sessionID string) (store.Checkpoint, error)
}

// LatestTerminal returns the session's committed terminal checkpoint,
// matched by its turn.completed, or RUNTIME_CHECKPOINT_INTERRUPTED saying
// what was interrupted. A session with no turn yet yields a nil Checkpoint.
func LatestTerminal(ctx context.Context, h History, sessionID string) (checkpoint.Restored, error) {
	cpRec, err := h.LoadCheckpoint(ctx, sessionID)
	if err != nil && errcode.Of(err) != errcode.SessNotFound {
		return checkpoint.Restored{}, err
	}
	after := int64(-1)
	var cp *checkpoint.Checkpoint
	if err == nil {
		cp, _, err = checkpoint.Load(cpRec.Payload)
		if err != nil {
			return checkpoint.Restored{}, err
		}
		after = cpRec.AfterSeq
		if cp.Identity.Phase != checkpoint.PhaseTerminal {
			return checkpoint.Restored{}, interrupted(ctx, h, sessionID, cp, after)
		}
	}
	from := after
	if cp != nil {
		from = max(after-2, -1) // include the event before the checkpoint
	}
	var tail []checkpoint.Record
	err = store.Each(ctx, h, sessionID, from, func(r store.Record) error {
		tail = append(tail, checkpoint.Record{Seq: r.Seq, Type: r.Type, Body: r.Body})
		return nil
	})
	if err != nil {
		return checkpoint.Restored{}, err
	}
	return checkpoint.Restore(cp, after, tail)
}

// interrupted is the RUNTIME_CHECKPOINT_INTERRUPTED of a session whose
// latest checkpoint, cp (saved after event after), is not terminal: it says
// what was running when the turn stopped (a tool call, named, or a model
// request) and what the turn had done, read from the turn's own events.
func interrupted(ctx context.Context, h History, sessionID string, cp *checkpoint.Checkpoint, after int64) error {
	var turn []event.Event
	err := store.Each(ctx, h, sessionID, -1, func(r store.Record) error {
		switch event.Type(r.Type) {
		case event.TypeTurnStarted:
			turn = turn[:0]
		case event.TypeModelRequest, event.TypeModelResponse, event.TypeToolCall, event.TypeToolResult:
		default:
			return nil
		}
		ev, err := event.Decode(r.Body)
		if err != nil {
			return err
		}
		turn = append(turn, ev)
		return nil
	})
	if err != nil {
		return err
	}
	return errcode.Errorf(errcode.RuntimeCheckpointInterrupted,
		"turn %s was interrupted %s (checkpoint at seq %d); nothing is replayed: resume with --fork to continue from the last finished turn",
		cp.Identity.TurnID, runningAt(string(cp.Identity.Phase), turn), after)
}

// runningAt says what a turn whose events (its model requests and
// responses, tool calls and results) are evs was doing when it stopped,
// and what it had done: "while its tool call process.exec ran (go vet),
// after 2 model requests and 3 tool calls". phase is its latest
// checkpoint's: the kind of its last model request.
func runningAt(phase string, evs []event.Event) string {
	requests, calls := 0, 0
	open := map[string]bool{}    // model requests without a response
	var running []event.ToolCall // tool calls without a result, in order
	for _, ev := range evs {
		switch d := ev.Data.(type) {
		case event.ModelRequest:
			requests++
			open[d.RequestID] = true
		case event.ModelResponse:
			delete(open, d.RequestID)
		case event.ToolCall:
			calls++
			running = append(running, d)
		case event.ToolResult:
			running = slices.DeleteFunc(running, func(c event.ToolCall) bool { return c.CallID == d.CallID })
		}
	}
	what := "between its steps"
	switch {
	case len(running) > 0:
		c := running[len(running)-1]
		what = "while its tool call " + c.Tool + " ran"
		if sub := subject.Of(c.Tool, c.Input); sub != "" {
			what += " (" + sub + ")"
		}
	case len(open) > 0:
		what = "during a " + phase + " request"
	}
	return what + ", after " + counted(requests, "model request") + " and " + counted(calls, "tool call")
}

// counted is "1 tool call", "3 tool calls".
func counted(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// LastFinished scans the whole log for the newest terminal checkpoint that
// its turn.completed follows: the point a fork continues from. It also
// returns the turn that was abandoned after it, if any.
func LastFinished(ctx context.Context, h History, sessionID string) (*checkpoint.Checkpoint, string, error) {
	scan, err := ScanLog(ctx, h, sessionID, nil)
	if err != nil {
		return nil, "", err
	}
	return scan.Finished, scan.Abandoned, nil
}

// ScanLog reads session sessionID's whole log into a checkpoint.Scan and
// ends the scan (Scan.Done). each, unless nil, is called with every
// record once the scan has taken it in. Codes: those of the store and of
// Scan.Add, and each's errors as they are.
func ScanLog(ctx context.Context, r store.EventReader, sessionID string, each func(store.Record, *checkpoint.Scan) error) (*checkpoint.Scan, error) {
	scan := &checkpoint.Scan{}
	err := store.Each(ctx, r, sessionID, -1, func(rec store.Record) error {
		if err := scan.Add(checkpoint.Record{Seq: rec.Seq, Type: rec.Type, Body: rec.Body}); err != nil {
			return err
		}
		if each == nil {
			return nil
		}
		return each(rec, scan)
	})
	if err != nil {
		return nil, err
	}
	scan.Done()
	return scan, nil
}

// RestoreSession opens a session in this runtime, run with cfg, with the
// state of a checkpoint (nil: a session with no finished turn yet, on
// settings). Nothing is replayed: no model, Docker or clock is consulted.
// Codes: those of OpenSession, and RUNTIME_INVALID_INPUT for a checkpoint
// of another session.
func (rt *Runtime) RestoreSession(ctx context.Context, log EventLog, cfg SessionConfig, cp *checkpoint.Checkpoint, settings checkpoint.Settings) (*Session, error) {
	if cp != nil {
		settings = cp.Settings
	}
	s, err := rt.OpenSession(ctx, log, cfg, settings)
	if err != nil {
		return nil, err
	}
	if cp == nil {
		return s, nil
	}
	if cp.Identity.SessionID != s.id {
		rt.closeSession(s)
		return nil, errcode.Errorf(errcode.RuntimeInvalidInput, "restore: checkpoint of session %s given for %s", cp.Identity.SessionID, s.id)
	}
	st := &s.state
	st.turns = append([]string(nil), cp.Identity.SessionTurns...)
	for _, m := range cp.History.Messages {
		st.push(m)
	}
	st.revision = cp.History.Revision
	st.checkpointMsgs = len(cp.History.Messages)
	st.usage = cp.Accounting.Usage
	st.modelRequests = cp.Accounting.ModelRequests
	st.toolCalls = cp.Accounting.ToolCalls
	st.transcript = cp.Accounting.TranscriptBytes
	st.seenCalls, st.seenExtra = cp.SeenCalls()
	for _, m := range cp.Control.WarnedBudgets {
		st.warned[m] = true
	}
	st.compact = cp.Context.Compaction
	st.firstUser = cp.Context.FirstUser
	if st.turnUser = cp.TurnMessage(); st.turnUser != nil {
		for i := len(st.messages) - 1; i >= 0; i-- {
			if st.messages[i].ID == st.turnUser.ID {
				st.turnAt = i
				break
			}
		}
	}
	// A checkpoint stored before the compacted prefix was emptied carries
	// it whole; the first save after this one writes the row whole anyway.
	st.stubPrefix()
	st.meter = st.measure(compaction.NewMeter(settings.System, settings.Tools), st.view())
	s.pending = append([]checkpoint.Input(nil), cp.Control.PendingSteering...)
	s.next = append([]checkpoint.Input(nil), cp.Control.QueuedInputs...)
	s.lastIDs = [2]string{cp.Identity.RunID, cp.Identity.TurnID}
	for _, tool := range cp.Control.SessionGrants {
		s.grant(tool)
	}
	return s, nil
}

// IsOpen reports whether session id is open in this Runtime, where a
// second open of it is refused until it closes.
func (rt *Runtime) IsOpen(id string) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	_, ok := rt.sessions[id]
	return ok
}

// closeSession takes s out of the registry: its ID may be opened again.
func (rt *Runtime) closeSession(s *Session) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.sessions[s.id] == s {
		delete(rt.sessions, s.id)
	}
}

// Fork starts session log (new, empty), run with cfg, from cp, the last
// finished state of session from (nil: that session finished no turn, so
// the fork starts empty on settings), and records which turn was
// abandoned. Nothing of the abandoned turn is repeated. Codes: those of
// OpenSession, and RUNTIME_EVENT_APPEND_FAILED when its first events
// cannot be written.
func (rt *Runtime) Fork(ctx context.Context, log EventLog, cfg SessionConfig, from string, cp *checkpoint.Checkpoint, abandoned string, settings checkpoint.Settings) (*Session, error) {
	var clone *checkpoint.Checkpoint
	if cp != nil {
		c := *cp
		c.Identity.SessionID = log.SessionID()
		c.Control.SessionGrants = nil // a fork is another session: it asks again
		clone = &c
	}
	s, err := rt.RestoreSession(ctx, log, cfg, clone, settings)
	if err != nil {
		return nil, err
	}
	data := event.SessionForked{SessionID: s.id, FromSessionID: from, AbandonedTurnID: abandoned}
	if cp != nil {
		data.FromTurnID = cp.Identity.TurnID
	}
	if _, err := s.append(ctx, data); err != nil {
		rt.closeSession(s)
		return nil, err
	}
	if cp == nil {
		return s, nil
	}
	// The fork's own terminal checkpoint, whole (the new log has no earlier
	// one), so that it resumes like any finished session.
	s.state.checkpointMsgs = 0
	t := &turn{s: s, r: &run{sess: s, id: cp.Identity.RunID, turnID: cp.Identity.TurnID, grants: map[string]bool{}}, ctx: ctx, wsState: cp.Workspace}
	if err := t.checkpoint(checkpoint.PhaseTerminal, nil, &checkpoint.TerminalStatus{Status: cp.TerminalStatus.Status, ErrorCode: cp.TerminalStatus.ErrorCode}); err != nil {
		rt.closeSession(s)
		return nil, err
	}
	return s, nil
}

// RecordWorkspace appends workspace.lifecycle for the session's workspace.
// It is the one write a closed session still takes: the workspace outlives
// the session's commands, and its opening (in the background) and its
// disposal are recorded as they happen, the disposal after Close.
// Codes: RUNTIME_EVENT_APPEND_FAILED.
func (s *Session) RecordWorkspace(ctx context.Context, phase string) error {
	if _, err := s.lockDecide(ctx, cmdRecordWorkspace, nil); err != nil {
		return err
	}
	defer s.mu.Unlock()
	info := s.cfg.Workspace.Info()
	data := event.WorkspaceLifecycle{WorkspaceID: info.ID, Backend: info.Backend, Phase: phase}
	data.ImageID = info.ImageID
	if info.Files > 0 {
		n := info.Files
		data.Files = &n
	}
	if phase != event.PhaseDisposed {
		data.Skipped = skippedOf(info.Skipped)
		for _, m := range info.Mounts {
			data.Mounts = append(data.Mounts, event.Mount(m))
		}
		data.Storage = info.Storage
	}
	_, err := s.append(ctx, data)
	return err
}

// skippedOf sums up, for workspace.lifecycle, what a copy left out for one
// of event.SkipReasons (not what the user excluded or git ignores): nil
// when nothing was.
func skippedOf(list []workspace.Skipped) *event.SkippedFiles {
	counts := map[string]int{}
	var paths []string
	for _, sk := range list {
		if slices.Contains(event.SkipReasons, sk.Reason) {
			counts[sk.Reason]++
			paths = append(paths, sk.Path)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	out := &event.SkippedFiles{Count: len(paths)}
	for _, r := range event.SkipReasons {
		if counts[r] > 0 {
			out.Reasons = append(out.Reasons, event.SkipCount{Reason: r, Count: counts[r]})
		}
	}
	slices.Sort(paths)
	out.Paths = paths[:min(len(paths), event.MaxSkippedPaths)]
	return out
}
