package checkpoint

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// Version is the payload version this package reads and writes.
const Version = 1

// MaxBytes bounds a checkpoint payload.
const MaxBytes = 16 << 20

// MaxInputChars bounds a prompt or a steering message, in characters: the
// content the events that record them may hold.
const MaxInputChars = event.MaxContentRunes

// Phases: a checkpoint is written at each model and summary request
// (nextRequest set) and before turn.completed (terminalStatus set).
const (
	PhaseModel    = "model"
	PhaseSummary  = "summary"
	PhaseTerminal = "terminal"
)

// Terminal statuses a turn can end with.
const (
	StatusCompleted      = "completed"
	StatusFailed         = "failed"
	StatusCanceled       = "canceled"
	StatusBudgetExceeded = "budget_exceeded"
)

// Checkpoint is the runtime.checkpoint payload, version 1.
type Checkpoint struct {
	Version        int             `json:"version"`
	Identity       Identity        `json:"identity"`
	History        History         `json:"history"`
	Settings       Settings        `json:"settings"`
	Accounting     Accounting      `json:"accounting"`
	Control        Control         `json:"control"`
	Context        Context         `json:"context"`
	NextRequest    *NextRequest    `json:"nextRequest,omitempty"`
	TerminalStatus *TerminalStatus `json:"terminalStatus,omitempty"`
	// Workspace is recorded at terminal checkpoints: enough to rebuild the
	// workspace on resume (the initial snapshot and the patch since).
	Workspace *Workspace `json:"workspace,omitempty"`
}

// Workspace identifies a workspace's initial snapshot and its patch.
type Workspace struct {
	Backend  string `json:"backend"`
	Snapshot string `json:"snapshot,omitempty"`
	Patch    string `json:"patch,omitempty"`
	// DiffError is the code of an end-of-turn diff that failed: the patch
	// is then unknown, never empty. DiffMessage says what happened and
	// where the workspace's files were kept.
	DiffError   string `json:"diffError,omitempty"`
	DiffMessage string `json:"diffMessage,omitempty"`
}

// PatchOrError returns the recorded patch, or the failure of the diff that
// should have produced it (its code, and its message saying where the
// files are), so that no reader mistakes a failed diff for "nothing
// changed".
func (w *Workspace) PatchOrError() (string, error) {
	if w.DiffError != "" {
		return "", &errcode.Error{Code: errcode.Code(w.DiffError), Op: "workspace patch",
			Message: "the workspace's diff failed at the end of the turn, so its patch is unknown: " + w.DiffMessage}
	}
	return w.Patch, nil
}

// Identity names the turn a checkpoint belongs to.
type Identity struct {
	RunID        string   `json:"runId"`
	SessionID    string   `json:"sessionId"`
	TurnID       string   `json:"turnId"`
	Phase        string   `json:"phase"`
	SessionTurns []string `json:"sessionTurns"`
}

// History is the message state; originals are never removed. A whole
// checkpoint has Base 0. In a runtime.checkpoint event it holds only the
// messages added since the session's previous runtime.checkpoint event:
// Base is how many messages that one had, and the full history is its
// history[:Base] followed by Messages (see Chain). So the log grows with the
// history, not with its square.
type History struct {
	Version  int             `json:"version"`
	Revision int             `json:"revision"`
	Base     int             `json:"base,omitempty"`
	Messages []model.Message `json:"messages"`

	// raw holds each message's canonical bytes, kept by the writer as
	// messages are added, so a checkpoint does not re-encode the history.
	raw [][]byte
}

// NewHistory returns a whole history of revision rev. raw, when not nil,
// holds the canonical bytes of each message (model.MarshalCanonical), which
// Marshal then reuses instead of encoding the messages again.
func NewHistory(rev int, msgs []model.Message, raw [][]byte) History {
	h := History{Version: 1, Revision: rev, Messages: msgs}
	if len(raw) == len(msgs) {
		h.raw = raw
	}
	return h
}

// Since returns the delta of h after its first base messages: what a
// runtime.checkpoint event records when the previous one had base messages.
func (h History) Since(base int) History {
	d := h
	d.Base = base
	d.Messages = h.Messages[base:]
	if h.raw != nil {
		d.raw = h.raw[base:]
	}
	return d
}

// Len is the number of messages of the whole history (Base included).
func (h History) Len() int { return h.Base + len(h.Messages) }

// MarshalJSON writes the canonical form, reusing the cached message bytes.
func (h History) MarshalJSON() ([]byte, error) {
	if len(h.raw) != len(h.Messages) {
		type plain History
		return model.MarshalCanonical(plain(h))
	}
	return h.appendJSON(make([]byte, 0, h.encodedLen())), nil
}

// encodedLen bounds the length of the canonical form of a history whose
// message bytes are cached.
func (h History) encodedLen() int {
	n := 64
	for _, r := range h.raw {
		n += len(r) + 1
	}
	return n
}

// appendJSON appends the canonical form of a history whose message bytes
// are cached.
func (h History) appendJSON(b []byte) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(h.Version), 10)
	b = append(b, `,"revision":`...)
	b = strconv.AppendInt(b, int64(h.Revision), 10)
	if h.Base != 0 {
		b = append(b, `,"base":`...)
		b = strconv.AppendInt(b, int64(h.Base), 10)
	}
	b = append(b, `,"messages":[`...)
	for i, r := range h.raw {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, "]}"...)
}

// Budget bounds a turn (steps, tool calls) and a session (model tokens,
// cumulative, summaries included, never refunded). Zero means unlimited.
type Budget struct {
	MaxSteps       int   `json:"maxSteps"`
	MaxModelTokens int64 `json:"maxModelTokens"`
	MaxToolCalls   int   `json:"maxToolCalls"`
}

// Settings are a session's defaults, inherited by every follow-up turn and
// recorded in each checkpoint.
type Settings struct {
	Model           string            `json:"model"`
	System          string            `json:"system"`
	MaxTokens       int               `json:"maxTokens"`
	ProviderOptions json.RawMessage   `json:"providerOptions,omitempty"`
	ModelTimeoutMs  int64             `json:"modelTimeoutMs"`
	Tools           []model.ToolSpec  `json:"tools"`
	Budget          Budget            `json:"budget"`
	Context         compaction.Policy `json:"context"` // zero: no compaction
	// Instructions are the project instruction files (AGENTS.md or
	// CLAUDE.md, relative to the project root) whose text System ends with.
	Instructions []string `json:"instructions,omitempty"`
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
	// SeenModelCallIDs lists only the seen tool-call IDs the history does
	// not hold, in practice none: the IDs a session has seen are those of
	// its history's assistant messages (originals are never removed), so
	// a checkpoint need not repeat them and a round costs what it added,
	// not the session's whole list (see SeenCalls). Checkpoints written
	// before held the whole sorted list; it is still read.
	SeenModelCallIDs []string `json:"seenModelCallIds"`
	RunGrants        []string `json:"runGrants"`
	WarnedBudgets    []string `json:"warnedBudgets"`
	PendingSteering  []Input  `json:"pendingSteering"`
	QueuedInputs     []Input  `json:"queuedInputs"`

	// SessionGrants are the tools the user allowed for the session
	// (permission.resolved of scope session, less permission.revoked),
	// sorted; absent when none.
	SessionGrants []string `json:"sessionGrants,omitempty"`
}

// SeenCalls returns the model tool-call IDs a whole checkpoint's session
// has seen: those of its history's assistant messages, and those an older
// checkpoint listed in SeenModelCallIDs. extra is the part of that list
// the history does not hold (sorted; empty for any log the runtime wrote),
// which later checkpoints carry on so that nothing seen is forgotten. Its
// cost is linear in the history.
func (cp *Checkpoint) SeenCalls() (seen map[string]bool, extra []string) {
	seen = map[string]bool{}
	for _, m := range cp.History.Messages {
		if m.Role == model.RoleAssistant {
			for _, c := range m.ToolCalls {
				seen[c.ID] = true
			}
		}
	}
	extra = []string{}
	for _, id := range cp.Control.SeenModelCallIDs {
		if !seen[id] {
			extra = append(extra, id)
		}
	}
	for _, id := range extra {
		seen[id] = true
	}
	return seen, extra
}

// Input is a steering message or an input queued for the next turn.
type Input struct {
	MessageID string `json:"messageId"`
	Content   string `json:"content"`
}

// Context is the compaction state and the pinned requests: the session's
// first, and the current turn's.
type Context struct {
	Compaction Compaction     `json:"compaction"`
	FirstUser  *model.Message `json:"firstUser,omitempty"`
	// TurnRequest is the ID of the current turn's user message (in
	// History), which a compacted view keeps word for word too
	// (compaction.ViewTurn); "" for a turn without one (an on-demand
	// compaction) and in checkpoints written before it was recorded.
	TurnRequest string `json:"turnRequest,omitempty"`
}

// TurnMessage returns the current turn's user message from a whole
// checkpoint's history, or nil.
func (cp *Checkpoint) TurnMessage() *model.Message {
	if cp.Context.TurnRequest == "" {
		return nil
	}
	msgs := cp.History.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].ID == cp.Context.TurnRequest {
			m := msgs[i]
			return &m
		}
	}
	return nil
}

// Compaction says which view of the history the next request sends: the
// prefix's system messages, the summary, the pinned first request, then
// messages[TailStart:].
type Compaction struct {
	Summary          string `json:"summary,omitempty"`
	SummaryMessageID string `json:"summaryMessageId,omitempty"`
	TailStart        int    `json:"tailStart"`
	ThroughRevision  int    `json:"throughRevision"`
	Compactions      int    `json:"compactions"`
	// ElideBefore, when positive, elides the large tool results of
	// History.Messages[TailStart:ElideBefore] in the view
	// (compaction.Elide); the originals stay in the history.
	ElideBefore int `json:"elideBefore,omitempty"`
	// Calibration is the last plausible usage report (provider, model,
	// request bytes, prompt tokens); nil before any. It turns the
	// occupancy's bytes into the tokens the model sees
	// (compaction.Calibration). A calibration written before the provider
	// was recorded has none, and holds for no provider that names one.
	Calibration *compaction.Calibration `json:"calibration,omitempty"`
}

// NextRequest identifies the request a model or summary checkpoint precedes.
type NextRequest struct {
	RequestID string `json:"requestId"`
	MaxTokens int    `json:"maxTokens"`
	Step      int    `json:"step"`
	// Boundary is, for a summary request, the index in the current view
	// where the kept tail starts; the prefix before it is summarized.
	Boundary int `json:"boundary,omitempty"`
	// Focus is, for an on-demand summary request (/compact focus), the
	// user's focus text.
	Focus string `json:"focus,omitempty"`
}

// TerminalStatus is how a turn ended.
type TerminalStatus struct {
	Status    string `json:"status"`
	ErrorCode string `json:"errorCode,omitempty"`
}

// Marshal is model.MarshalCanonical(cp) without a reflective encode or a
// compact pass over the history: the history's cached message bytes (see
// NewHistory) are spliced into the encoding of everything else. The bytes
// are identical to MarshalCanonical's (a test pins it).
func Marshal(cp *Checkpoint) ([]byte, error) {
	h := cp.History
	if len(h.raw) != len(h.Messages) {
		return model.MarshalCanonical(cp)
	}
	rest, placeholder, err := marshalHead(cp)
	if err != nil {
		return nil, err
	}
	key := append([]byte(`"history":`), placeholder...)
	// A key's quote can only open a key: inside a JSON string it is escaped.
	i := bytes.Index(rest, key)
	if i < 0 {
		return model.MarshalCanonical(cp)
	}
	out := make([]byte, 0, len(rest)+h.encodedLen())
	out = append(out, rest[:i+len(`"history":`)]...)
	out = h.appendJSON(out)
	return append(out, rest[i+len(key):]...), nil
}

// marshalHead encodes cp with an empty message list, and that list's
// history object on its own.
func marshalHead(cp *Checkpoint) (rest, history []byte, err error) {
	c := *cp
	c.History = History{Version: cp.History.Version, Revision: cp.History.Revision, Base: cp.History.Base, Messages: []model.Message{}}
	rest, err = model.MarshalCanonical(c)
	if err != nil {
		return nil, nil, err
	}
	history, err = model.MarshalCanonical(c.History)
	return rest, history, err
}
