package checkpoint

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// Parse decodes a payload strictly: unknown keys, a non-canonical encoding,
// usage whose total is below prompt + completion, a turn missing from
// sessionTurns, a compaction cursor past the history, a turn request that
// names no user message of the history, duplicates, wrong phase fields or
// more than MaxBytes are
// RUNTIME_CHECKPOINT_INVALID; a version other than 1 is
// RUNTIME_CHECKPOINT_VERSION. A delta (history.base > 0) parses on its own;
// Chain folds it into a whole checkpoint.
func Parse(payload []byte) (*Checkpoint, error) {
	bad := func(format string, args ...any) error {
		return errcode.Errorf(errcode.RuntimeCheckpointInvalid, "parse checkpoint: "+format, args...)
	}
	if len(payload) > MaxBytes {
		return nil, bad("%d bytes is over the %d byte bound", len(payload), MaxBytes)
	}
	var head struct {
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(payload, &head); err != nil {
		return nil, bad("not a JSON object")
	}
	if string(head.Version) != "1" {
		if head.Version == nil {
			return nil, bad("no version")
		}
		return nil, errcode.Errorf(errcode.RuntimeCheckpointVersion, "parse checkpoint: version %s is not supported (this Harness reads version 1)", head.Version)
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	var cp Checkpoint
	if err := dec.Decode(&cp); err != nil {
		return nil, bad("%v", err)
	}
	if dec.More() {
		return nil, bad("trailing data")
	}
	again, err := model.MarshalCanonical(cp)
	if err != nil || !bytes.Equal(again, payload) {
		return nil, bad("not in canonical form (key case, order, spacing or an empty optional field)")
	}
	if err := cp.Validate(); err != nil {
		return nil, bad("%s", errcode.Message(err))
	}
	return &cp, nil
}

// Validate checks the rules of the format that the JSON shape cannot say.
// A delta's message state is checked once folded (Chain). Code:
// RUNTIME_CHECKPOINT_INVALID.
func (cp *Checkpoint) Validate() error {
	fail := func(format string, args ...any) error {
		return errcode.Errorf(errcode.RuntimeCheckpointInvalid, format, args...)
	}
	if cp.Version != Version {
		return fail("version %d is not %d", cp.Version, Version)
	}
	id := cp.Identity
	if id.RunID == "" || id.SessionID == "" || id.TurnID == "" {
		return fail("identity is incomplete")
	}
	if dup := firstDuplicate(id.SessionTurns); dup != "" {
		return fail("turn %s listed twice", dup)
	}
	if !slices.Contains(id.SessionTurns, id.TurnID) {
		return fail("turn %s is missing from sessionTurns", id.TurnID)
	}
	switch id.Phase {
	case PhaseModel, PhaseSummary:
		if cp.NextRequest == nil || cp.TerminalStatus != nil || cp.Workspace != nil {
			return fail("phase %s needs nextRequest and no terminalStatus or workspace", id.Phase)
		}
		if cp.NextRequest.RequestID == "" || cp.NextRequest.MaxTokens < 0 || cp.NextRequest.Step < 0 || cp.NextRequest.Boundary < 0 {
			return fail("nextRequest is malformed")
		}
	case PhaseTerminal:
		if cp.TerminalStatus == nil || cp.NextRequest != nil || cp.Workspace == nil {
			return fail("phase terminal needs terminalStatus and no nextRequest")
		}
		switch cp.TerminalStatus.Status {
		case StatusCompleted, StatusFailed, StatusCanceled, StatusBudgetExceeded:
		default:
			return fail("terminal status %q is unknown", cp.TerminalStatus.Status)
		}
	default:
		return fail("phase %q is unknown", id.Phase)
	}
	h := cp.History
	if h.Version != 1 {
		return fail("message state version %d is unknown", h.Version)
	}
	if h.Base < 0 {
		return fail("history base %d is negative", h.Base)
	}
	total := h.Len()
	if h.Revision < total {
		return fail("revision %d is below the %d messages", h.Revision, total)
	}
	ids := make([]string, 0, len(h.Messages))
	for _, m := range h.Messages {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	if dup := firstDuplicate(ids); dup != "" {
		return fail("message %s listed twice", dup)
	}
	if h.Base == 0 {
		if err := CheckMessages(h.Messages); err != nil {
			return fail("%s", errcode.Message(err))
		}
		if id := cp.Context.TurnRequest; id != "" {
			if m := cp.TurnMessage(); m == nil || m.Role != model.RoleUser {
				return fail("turn request %s is not a user message of the history", id)
			}
		}
	}
	u := cp.Accounting.Usage
	if !u.Valid() {
		// Reasoning tokens counted apart (xAI) make the total larger.
		return fail("usage total %d is below prompt %d + completion %d, or a count is negative", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	}
	if cp.Accounting.ModelRequests < 0 || cp.Accounting.ToolCalls < 0 || cp.Accounting.TranscriptBytes < 0 {
		return fail("negative counters")
	}
	c := cp.Context.Compaction
	if c.TailStart < 0 || c.TailStart > total || c.ThroughRevision < 0 || c.ThroughRevision > h.Revision || c.Compactions < 0 ||
		c.ElideBefore < 0 || c.ElideBefore > total {
		return fail("compaction cursor is past the history")
	}
	if (c.Compactions == 0) != (c.Summary == "") {
		return fail("compaction state is inconsistent")
	}
	if k := c.Calibration; k != nil {
		if _, ok := compaction.Calibrate(k.Provider, k.Model, k.Bytes, k.Tokens); !ok {
			return fail("calibration is not a plausible usage report")
		}
	}
	for _, l := range []struct {
		name string
		list []string
	}{{"seenModelCallIds", cp.Control.SeenModelCallIDs}, {"runGrants", cp.Control.RunGrants}, {"sessionGrants", cp.Control.SessionGrants}, {"warnedBudgets", cp.Control.WarnedBudgets}} {
		if dup := firstDuplicate(l.list); dup != "" {
			return fail("%s lists %s twice", l.name, dup)
		}
		if !slices.IsSorted(l.list) {
			return fail("%s is not sorted", l.name)
		}
	}
	var qids []string
	for _, in := range slices.Concat(cp.Control.PendingSteering, cp.Control.QueuedInputs) {
		if in.MessageID == "" || CheckText("input", in.Content) != nil {
			return fail("a queued input is malformed")
		}
		qids = append(qids, in.MessageID)
	}
	if dup := firstDuplicate(qids); dup != "" {
		return fail("queued input %s listed twice", dup)
	}
	if cp.Settings.Tools == nil {
		return fail("settings have no tools")
	}
	if p := cp.Settings.Context; p != (compaction.Policy{}) {
		if err := p.Validate(); err != nil {
			return fail("context policy: %s", errcode.Message(err))
		}
	}
	return nil
}

// CheckText accepts 1..MaxInputChars characters of valid UTF-8: a prompt,
// a steering message, a queued input. Code: RUNTIME_INVALID_INPUT.
func CheckText(what, text string) error {
	n := utf8.RuneCountInString(text)
	if n == 0 || n > MaxInputChars {
		return errcode.Errorf(errcode.RuntimeInvalidInput, "%s must have 1..%d characters, got %d", what, MaxInputChars, n)
	}
	if !utf8.ValidString(text) {
		return errcode.Errorf(errcode.RuntimeInvalidInput, "%s is not valid UTF-8", what)
	}
	return nil
}

// CheckMessages verifies that every assistant tool call is answered by
// exactly one tool result before the next assistant, user or system
// message, and that every role is known. Code: RUNTIME_INVALID_MESSAGE_STATE.
func CheckMessages(msgs []model.Message) error {
	open := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case model.RoleAssistant:
			if len(open) > 0 {
				return errcode.Errorf(errcode.RuntimeInvalidMessageState, "message %d: assistant message while %d tool calls have no result", i, len(open))
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case model.RoleTool:
			if !open[m.ToolCallID] {
				return errcode.Errorf(errcode.RuntimeInvalidMessageState, "message %d: tool result for unknown call %s", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		case model.RoleUser, model.RoleSystem:
			if len(open) > 0 {
				return errcode.Errorf(errcode.RuntimeInvalidMessageState, "message %d: %s message while %d tool calls have no result", i, m.Role, len(open))
			}
		default:
			return errcode.Errorf(errcode.RuntimeInvalidMessageState, "message %d: unknown role %q", i, m.Role)
		}
	}
	if len(open) > 0 {
		return errcode.Errorf(errcode.RuntimeInvalidMessageState, "%d tool calls have no result", len(open))
	}
	return nil
}

func firstDuplicate(list []string) string {
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		if seen[s] {
			return s
		}
		seen[s] = true
	}
	return ""
}
