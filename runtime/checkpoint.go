package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
)

// Checkpoint phases.
const (
	phaseModel    = "model"
	phaseSummary  = "summary"
	phaseTerminal = "terminal"
)

// MaxCheckpointBytes bounds a checkpoint payload.
const MaxCheckpointBytes = 16 << 20

// Checkpoint is the runtime.checkpoint payload, version 1: everything needed
// to rebuild the session and the exact next model request without calling
// the model, Docker or the clock.
type Checkpoint struct {
	Version        int             `json:"version"`
	Identity       Identity        `json:"identity"`
	History        MessageState    `json:"history"`
	Settings       Settings        `json:"settings"`
	Accounting     Accounting      `json:"accounting"`
	Control        Control         `json:"control"`
	Context        ContextState    `json:"context"`
	NextRequest    *nextRequest    `json:"nextRequest,omitempty"`
	TerminalStatus *terminalStatus `json:"terminalStatus,omitempty"`
	// Workspace is recorded at terminal checkpoints: enough to rebuild the
	// workspace on resume (the initial snapshot and the patch since).
	Workspace *WorkspaceState `json:"workspace,omitempty"`
}

// WorkspaceState identifies a workspace's initial snapshot and its patch.
type WorkspaceState struct {
	Backend  string `json:"backend"`
	Snapshot string `json:"snapshot,omitempty"`
	Patch    string `json:"patch,omitempty"`
}

// Identity names the turn a checkpoint belongs to.
type Identity struct {
	RunID        string   `json:"runId"`
	SessionID    string   `json:"sessionId"`
	TurnID       string   `json:"turnId"`
	Phase        string   `json:"phase"`
	SessionTurns []string `json:"sessionTurns"`
}

// MessageState is the history; originals are never removed. In the store's
// checkpoint it is whole (Base 0). In a runtime.checkpoint event it holds
// only the messages added since the session's previous runtime.checkpoint
// event: Base is how many messages that one had, and the full history is its
// history[:Base] followed by Messages (see Chain). So the log grows with the
// history, not with its square.
type MessageState struct {
	Version  int             `json:"version"`
	Revision int             `json:"revision"`
	Base     int             `json:"base,omitempty"`
	Messages []model.Message `json:"messages"`

	// raw holds each message's canonical bytes, kept by the session as
	// messages are added, so a checkpoint does not re-encode the history.
	raw [][]byte
}

// MarshalJSON writes the canonical form, reusing the cached message bytes.
func (m MessageState) MarshalJSON() ([]byte, error) {
	if len(m.raw) != len(m.Messages) {
		type plain MessageState
		return model.MarshalCanonical(plain(m))
	}
	n := 64
	for _, r := range m.raw {
		n += len(r) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(m.Version), 10)
	b = append(b, `,"revision":`...)
	b = strconv.AppendInt(b, int64(m.Revision), 10)
	if m.Base != 0 {
		b = append(b, `,"base":`...)
		b = strconv.AppendInt(b, int64(m.Base), 10)
	}
	b = append(b, `,"messages":[`...)
	for i, r := range m.raw {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, "]}"...), nil
}

// Accounting is the session's cumulative counters.
type Accounting struct {
	Usage           model.Usage `json:"usage"`
	ModelRequests   int         `json:"modelRequests"`
	ToolCalls       int         `json:"toolCalls"`
	TranscriptBytes int64       `json:"transcriptBytes"`
}

// Control is the state that decides what happens next.
type Control struct {
	SeenModelCallIDs []string `json:"seenModelCallIds"`
	RunGrants        []string `json:"runGrants"`
	WarnedBudgets    []string `json:"warnedBudgets"`
	PendingSteering  []input  `json:"pendingSteering"`
	QueuedInputs     []input  `json:"queuedInputs"`
}

// ContextState is the compaction state and the pinned first request.
type ContextState struct {
	Compaction compactState   `json:"compaction"`
	FirstUser  *model.Message `json:"firstUser,omitempty"`
}

type nextRequest struct {
	RequestID string `json:"requestId"`
	MaxTokens int    `json:"maxTokens"`
	Step      int    `json:"step"`
	// Boundary is, for a summary request, the index in the current view
	// where the kept tail starts; the prefix before it is summarized.
	Boundary int `json:"boundary,omitempty"`
}

type terminalStatus struct {
	Status    string `json:"status"`
	ErrorCode string `json:"errorCode,omitempty"`
}

func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}

// snapshot builds the payload of the session as it is now. Caller holds s.mu.
func (t *turn) snapshot(phase string, next *nextRequest, term *terminalStatus) Checkpoint {
	s, r := t.s, t.r
	st := &s.state
	return Checkpoint{
		Version:  1,
		Identity: Identity{RunID: r.id, SessionID: s.id, TurnID: r.turnID, Phase: phase, SessionTurns: slices.Clone(st.turns)},
		History:  MessageState{Version: 1, Revision: st.revision, Messages: st.messages, raw: st.rawMsgs},
		Settings: s.settings,
		Accounting: Accounting{Usage: st.usage, ModelRequests: st.modelRequests, ToolCalls: st.toolCalls,
			TranscriptBytes: st.transcript},
		Control: Control{
			SeenModelCallIDs: sortedKeys(st.seenCalls),
			RunGrants:        sortedKeys(r.grants),
			WarnedBudgets:    sortedKeys(st.warned),
			PendingSteering:  nonNil(s.pending),
			QueuedInputs:     nonNil(s.next),
		},
		Context:        ContextState{Compaction: st.compact, FirstUser: st.firstUser},
		NextRequest:    next,
		TerminalStatus: term,
		Workspace:      t.wsState,
	}
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
func (t *turn) checkpoint(phase string, next *nextRequest, term *terminalStatus) error {
	s, r := t.s, t.r
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := t.snapshot(phase, next, term)
	payload, err := cp.marshal()
	if err != nil {
		return errcode.Wrap(errcode.RuntimeCheckpointInvalid, "encode checkpoint", err)
	}
	if len(payload) > MaxCheckpointBytes {
		return errcode.Errorf(errcode.RuntimeCheckpointInvalid, "checkpoint of %d bytes is over the %d byte bound", len(payload), MaxCheckpointBytes)
	}
	delta := payload
	if base := s.state.checkpointMsgs; base > 0 {
		d := cp
		d.History.Base = base
		d.History.Messages = cp.History.Messages[base:]
		if cp.History.raw != nil {
			d.History.raw = cp.History.raw[base:]
		}
		if delta, err = d.marshal(); err != nil {
			return errcode.Wrap(errcode.RuntimeCheckpointInvalid, "encode checkpoint", err)
		}
	}
	rec, err := t.append(event.RuntimeCheckpoint{RunID: r.id, SessionID: s.id, TurnID: r.turnID, Version: 1, Payload: delta})
	if err != nil {
		return err
	}
	s.state.checkpointMsgs = len(cp.History.Messages)
	if _, err := s.log.SaveCheckpoint(context.WithoutCancel(t.ctx), rec.Seq, payload); err != nil {
		return &errcode.Error{Code: errcode.RuntimeEventAppendFailed, Message: "save checkpoint: " + string(errcode.Of(err)), Err: err}
	}
	return nil
}

// marshal is MarshalCanonical(cp) without a reflective encode or a compact
// pass over the history: the history's cached message bytes are spliced
// into the encoding of everything else. The bytes are identical to
// MarshalCanonical's (a test pins it).
func (cp Checkpoint) marshal() ([]byte, error) {
	h := cp.History
	if len(h.raw) != len(h.Messages) {
		return model.MarshalCanonical(cp)
	}
	cp.History = MessageState{Version: h.Version, Revision: h.Revision, Base: h.Base}
	rest, err := model.MarshalCanonical(cp)
	if err != nil {
		return nil, err
	}
	placeholder, _ := model.MarshalCanonical(cp.History)
	key := append([]byte(`"history":`), placeholder...)
	// A key's quote can only open a key: inside a JSON string it is escaped.
	i := bytes.Index(rest, key)
	if i < 0 {
		return model.MarshalCanonical(cp)
	}
	full, _ := h.MarshalJSON()
	out := make([]byte, 0, len(rest)+len(full))
	out = append(out, rest[:i+len(`"history":`)]...)
	out = append(out, full...)
	return append(out, rest[i+len(key):]...), nil
}

// ParseCheckpoint decodes a payload strictly: unknown keys, a non-canonical
// encoding, inconsistent usage, a turn missing from sessionTurns, a
// compaction cursor past the history, duplicates, wrong phase fields or more
// than 16 MiB are RUNTIME_CHECKPOINT_INVALID; a version other than 1 is
// RUNTIME_CHECKPOINT_VERSION.
func ParseCheckpoint(payload []byte) (*Checkpoint, error) {
	bad := func(format string, args ...any) error {
		return errcode.Errorf(errcode.RuntimeCheckpointInvalid, "parse checkpoint: "+format, args...)
	}
	if len(payload) > MaxCheckpointBytes {
		return nil, bad("%d bytes is over the %d byte bound", len(payload), MaxCheckpointBytes)
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
	if err := cp.validate(); err != nil {
		return nil, bad("%s", errcode.Message(err))
	}
	return &cp, nil
}

func (cp *Checkpoint) validate() error {
	fail := func(format string, args ...any) error {
		return errcode.Errorf(errcode.RuntimeCheckpointInvalid, format, args...)
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
	case phaseModel, phaseSummary:
		if cp.NextRequest == nil || cp.TerminalStatus != nil || cp.Workspace != nil {
			return fail("phase %s needs nextRequest and no terminalStatus or workspace", id.Phase)
		}
		if cp.NextRequest.RequestID == "" || cp.NextRequest.MaxTokens < 0 || cp.NextRequest.Step < 0 || cp.NextRequest.Boundary < 0 {
			return fail("nextRequest is malformed")
		}
	case phaseTerminal:
		if cp.TerminalStatus == nil || cp.NextRequest != nil || cp.Workspace == nil {
			return fail("phase terminal needs terminalStatus and no nextRequest")
		}
		switch Status(cp.TerminalStatus.Status) {
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
	total := h.Base + len(h.Messages)
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
		if err := checkMessageState(h.Messages); err != nil {
			return fail("%s", errcode.Message(err))
		}
	}
	u := cp.Accounting.Usage
	if u.TotalTokens != u.PromptTokens+u.CompletionTokens || u.PromptTokens < 0 || u.CompletionTokens < 0 {
		return fail("usage total %d is not prompt %d + completion %d", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	}
	if cp.Accounting.ModelRequests < 0 || cp.Accounting.ToolCalls < 0 || cp.Accounting.TranscriptBytes < 0 {
		return fail("negative counters")
	}
	c := cp.Context.Compaction
	if c.TailStart < 0 || c.TailStart > total || c.ThroughRevision < 0 || c.ThroughRevision > h.Revision || c.Compactions < 0 {
		return fail("compaction cursor is past the history")
	}
	if (c.Compactions == 0) != (c.Summary == "") {
		return fail("compaction state is inconsistent")
	}
	for name, list := range map[string][]string{"seenModelCallIds": cp.Control.SeenModelCallIDs, "runGrants": cp.Control.RunGrants, "warnedBudgets": cp.Control.WarnedBudgets} {
		if dup := firstDuplicate(list); dup != "" {
			return fail("%s lists %s twice", name, dup)
		}
		if !slices.IsSorted(list) {
			return fail("%s is not sorted", name)
		}
	}
	var qids []string
	for _, in := range slices.Concat(cp.Control.PendingSteering, cp.Control.QueuedInputs) {
		if in.MessageID == "" || validText("input", in.Content) != nil {
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

// Chain folds the runtime.checkpoint events of one session log, oldest
// first, into whole checkpoints: each event's history holds only what was
// added since the previous one.
type Chain struct {
	prev *Checkpoint
}

// Next parses the payload of the next runtime.checkpoint event of the log
// and returns the whole checkpoint it stands for.
func (c *Chain) Next(payload []byte) (*Checkpoint, error) {
	cp, err := ParseCheckpoint(payload)
	if err != nil {
		return nil, err
	}
	if b := cp.History.Base; b > 0 {
		if c.prev == nil || b > len(c.prev.History.Messages) {
			return nil, errcode.Errorf(errcode.RuntimeCheckpointInvalid, "fold checkpoint: its base of %d messages is past the previous checkpoint", b)
		}
		full := make([]model.Message, 0, b+len(cp.History.Messages))
		full = append(append(full, c.prev.History.Messages[:b]...), cp.History.Messages...)
		cp.History.Messages, cp.History.Base = full, 0
		if err := cp.validate(); err != nil {
			return nil, errcode.Errorf(errcode.RuntimeCheckpointInvalid, "fold checkpoint: %s", errcode.Message(err))
		}
	}
	c.prev = cp
	return cp, nil
}

// ReconstructModelRequest returns exactly the request the model received
// for a checkpoint of phase model or summary. It is pure.
func ReconstructModelRequest(cp *Checkpoint) (model.Request, error) {
	if cp.History.Base != 0 {
		return model.Request{}, errcode.New(errcode.RuntimeInvalidInput, "reconstruct request: a partial checkpoint; fold it with Chain first")
	}
	if cp.NextRequest == nil {
		return model.Request{}, errcode.Errorf(errcode.RuntimeInvalidInput, "reconstruct request: checkpoint of phase %s has no next request", cp.Identity.Phase)
	}
	st := state{messages: cp.History.Messages, compact: cp.Context.Compaction, firstUser: cp.Context.FirstUser}
	view := st.view()
	nr := cp.NextRequest
	if cp.Identity.Phase == phaseSummary {
		if nr.Boundary > len(view) {
			return model.Request{}, errcode.New(errcode.RuntimeCheckpointInvalid, "reconstruct request: summary boundary past the view")
		}
		return summaryRequest(cp.Settings, nr.RequestID, nr.MaxTokens, view[:nr.Boundary]), nil
	}
	return model.Request{
		RequestID:       nr.RequestID,
		Model:           cp.Settings.Model,
		System:          cp.Settings.System,
		Messages:        view,
		Tools:           cp.Settings.Tools,
		MaxTokens:       nr.MaxTokens,
		ProviderOptions: cp.Settings.ProviderOptions,
	}, nil
}
