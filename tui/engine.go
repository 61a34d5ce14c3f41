package tui

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// Engine is everything the TUI asks of the rest of Harness. Package
// tuiengine implements it over the runtime's session commands and the store; tests
// use a scripted one. The engine, not the TUI, decides what typed text
// becomes (steering, the next turn, a new turn), so the TUI never tracks
// run IDs to route it. Every method may block (it does I/O), so the TUI
// calls them only from commands, never from Update or View. Errors carry
// errcode codes; the TUI shows the code and the safe message.
type Engine interface {
	// Open opens a session, replacing the open one if any: req.ID "" is
	// a new session, else it resumes req.ID (or forks it with req.Fork).
	// A session that cannot resume because its last turn was interrupted
	// (RUNTIME_CHECKPOINT_INTERRUPTED) comes with its ID and History
	// beside the error, for the screen to show what /fork continues.
	Open(ctx context.Context, req OpenRequest) (Session, error)
	// Next blocks until events are appended to the open session and
	// returns them. It returns an empty Update when the open session
	// changes, and ctx's error when ctx ends.
	Next(ctx context.Context) (Update, error)

	// Send delivers the user's text: steering while a turn runs, a new
	// turn while none does (after the ending one, if one is ending).
	Send(ctx context.Context, text string) (Sent, error)
	// Queue keeps text as the input of the turn after the running one
	// (which the session starts itself), or starts a turn when idle.
	Queue(ctx context.Context, text string) (Sent, error)
	// StartQueued starts a turn with the oldest queued input while idle
	// (the queue waits after a turn that did not complete).
	StartQueued(ctx context.Context) (Sent, error)
	// Withdraw removes a pending steering or queued message.
	Withdraw(ctx context.Context, messageID string) error
	// Cancel cancels the running turn, if any.
	Cancel(ctx context.Context) error
	// Answer answers the permission question of a permission.requested
	// event.
	Answer(ctx context.Context, permissionID string, a Answer) error
	// Revoke takes back the open session's grant of tool (an answer
	// "for this session"), recorded in its log (permission.revoked): its
	// calls are asked about again.
	Revoke(ctx context.Context, tool string) error
	// StopJob stops background job id of the open session's workspace;
	// its end is recorded in the log (job.exited).
	StopJob(ctx context.Context, id string) error
	// Compact compacts the context, keeping in most detail what concerns
	// focus (may be empty): at once when idle (a compaction turn, whose
	// events and turn.completed note say what it did), else before the
	// running turn's next model request.
	Compact(ctx context.Context, focus string) error
	// SetModel switches the open session's model for the following
	// requests (between turns), recorded in its log; a name the server's
	// list does not hold is refused (MODEL_INVALID_CONFIG), and the note
	// says when the server lists none (the name was not checked).
	SetModel(ctx context.Context, name string) (note string, err error)
	// Models lists the models the session's server serves.
	Models(ctx context.Context) ([]string, error)

	// Diff is the workspace patch against its initial snapshot.
	Diff(ctx context.Context) (string, error)
	// CheckApply checks the workspace patch against the host tree.
	CheckApply(ctx context.Context) (ApplyPlan, error)
	// Apply applies the patch that CheckApply checked to the host tree,
	// checking again first. It returns what was applied when the session's
	// log does not say it (its patch.applied event shows on the screen),
	// else "".
	Apply(ctx context.Context, plan ApplyPlan) (string, error)
	// Sessions lists recent sessions, most recent first.
	Sessions(ctx context.Context) ([]SessionSummary, error)
	// Turns lists the open session's turns, oldest first, and whether it
	// has a rewind to undo.
	Turns(ctx context.Context) ([]TurnSummary, bool, error)
	// Rewind brings the open session, idle, back to the end of a finished
	// turn (its ID; undo: to before its last rewind): files and
	// conversation. The session is reopened at that point, its workspace
	// rebuilt; out says what the user must know (the host's files are not
	// rewound). SESS_BUSY while a turn runs.
	Rewind(ctx context.Context, turnID string, undo bool) (s Session, out string, err error)
	// Files lists the open session's workspace files (sorted, slash
	// separated, relative to its root): what tab completes @path
	// mentions and typed paths from.
	Files(ctx context.Context) ([]string, error)
}

// PromptHistory is an Engine that also knows what the user sent in the
// project's other sessions: the TUI loads it in the background when a
// session opens, for ↑ and ctrl+r to recall (the open session's own
// prompts come from its History).
type PromptHistory interface {
	// Prompts lists the prompts of the other sessions of the open
	// session's project, oldest first, with the ID of the open session
	// they were listed for.
	Prompts(ctx context.Context) (sessionID string, prompts []string, err error)
}

// StartChecker is an Engine that can say, once a session is open, what in
// the project will stop its workspace and how to go on (credential-like
// files the sandbox's copy refuses, WORKSPACE_CREDENTIAL_INPUT): the TUI
// asks in the background and shows the answer as a banner, before the
// first tool call fails on it.
type StartChecker interface {
	// StartWarning is that warning for the open session ("" for none),
	// with the ID of the session it was made for.
	StartWarning(ctx context.Context) (sessionID, warning string, err error)
}

// IsPrompt reports whether a user message's content is something the user
// typed, to recall: not empty, and not the attachments message a typed
// @path or !command adds after it (event.AttachmentsMarker).
func IsPrompt(content string) bool {
	return strings.TrimSpace(content) != "" && !strings.HasPrefix(content, event.AttachmentsMarker)
}

// Sent says what became of text given to Send or Queue.
type Sent struct {
	Kind      string // "started", "steered" or "queued"
	RunID     string
	MessageID string
	Note      string // what the engine did first, for the screen (a rebuilt workspace), or ""
}

// OpenRequest names the session to open.
type OpenRequest struct {
	ID   string // "" for a new session
	Fork bool   // continue ID's last finished turn in a new session
}

// Session describes an open session.
type Session struct {
	ID        string
	Model     string
	Workspace string // "docker harness-sandbox@sha256:1a2b…", "local · read-only"
	ReadOnly  bool
	Note      string // why the workspace is read-only, or another warning
	Demo      bool   // the built-in demo model: no provider configured
	Budget    int64  // model-token budget of the session, 0 for none
	Window    int    // context window in tokens, 0 when unknown
	Usage     model.Usage
	Occupancy int
	Approve   bool // mutations wait for the user's approval
	// Instructions are the project instruction files (AGENTS.md) in the
	// session's system prompt, relative to the project root.
	Instructions []string
	// History is the session's stored log, oldest first; events the
	// Next stream delivers later have larger sequence numbers.
	History []Record
	// Lost is set by the TUI once the engine reports the session taken
	// over (Update.Lost): it sends nothing more to it.
	Lost bool
	// Inherited is, for a fork, the transcript it continues: the forked
	// session's log up to the turn it continues from, shown before
	// History. Its sequence numbers are the other session's.
	Inherited []Record
}

// Record is one event with its sequence number in the session's log.
type Record struct {
	Seq   int64
	Event event.Event
}

// State is the session owner's state, as the engine reports it: whether
// a turn is active is the owner's to say, not the screen's to guess from
// the events it has folded.
type State string

// The owner's states (runtime.SessionState's names).
const (
	StateIdle      State = "idle"      // no turn is active
	StateAdmitting State = "admitting" // a turn is starting
	StateRunning   State = "running"   // a turn runs and takes steering
	StateEnding    State = "ending"    // a turn is ending; text waits for its end
	StateClosed    State = "closed"    // the session takes nothing more
)

// Busy reports whether a turn is active.
func (s State) Busy() bool { return s == StateAdmitting || s == StateRunning || s == StateEnding }

// Update is what Next returns: a batch of events of a session. When the
// batch holds a permission.requested event, Approval describes the
// question (with what the engine could read for it), for the TUI to ask.
type Update struct {
	SessionID string
	Events    []Record
	// State is the owner's state, read before the batch was drained: the
	// batch holds every event that led to it (an idle state comes with
	// the end of the turn). "" when the engine did not say.
	State    State
	Approval *Approval
	// Lost, set once, says that another process took the session over:
	// what to tell the user. Nothing more may be sent to the session.
	Lost string
	// Unrecorded is how a turn ended whose turn.completed the store could
	// not record (its disk full, its server gone): the screen ends the
	// turn with it, never leaving it shown as running. nil otherwise.
	Unrecorded *event.TurnCompleted
}

// Approval is a permission question, asked by a permission.requested
// event: a mutating call waits until Engine.Answer answers it (or its turn
// ends).
type Approval struct {
	PermissionID string
	CallID       string
	Tool         string
	Subject      string
	Input        json.RawMessage
	// Diff is the change a write would make, as the question recorded it
	// (the runtime reads the file's current contents once, as the write's
	// own record does); "" otherwise.
	Diff string
	// Unchanged: the write's contents are the file's own (no diff).
	Unchanged bool
}

// Answer to an Approval.
type Answer struct {
	Allow  bool
	ForRun bool // remember the grant for this tool for the rest of the turn (the run)
	// ForSession remembers the grant for this tool for the rest of the
	// session, later turns and resumes included, until revoked.
	ForSession bool
	// Reason is what the user said when denying: the model gets it with
	// the denial, so it can change course instead of guessing.
	Reason string
}

// ApplyPlan is a checked patch ready to be applied to the host tree.
type ApplyPlan struct {
	Root  string // host directory
	Patch string
	Stat  string // `git apply --stat` output
	// Conflict, when set, says why the patch no longer applies (the host
	// tree changed under it); nothing can be applied then.
	Conflict string
	// Applied: the host tree already holds the patch (Conflict says so);
	// nothing is left to apply.
	Applied bool
	// Warnings are shown above the files that change: what the patch
	// deletes when that is most of the project, what it leaves out.
	Warnings []string
}

// TurnSummary is one row of the /rewind picker.
type TurnSummary struct {
	N        int
	ID       string
	Prompt   string
	At       time.Time
	Status   string // "" when it did not finish
	Files    int    // what the turn itself changed, not its whole patch
	Added    int
	Deleted  int
	Current  bool // the session is at its end
	Rewound  bool // out of the model's view
	Finished bool // a rewind can go to its end
}

// SessionSummary is one row of the session picker.
type SessionSummary struct {
	ID      string
	Title   string
	Updated time.Time
	Turns   int
	Tokens  int64
	Status  string
	Dir     string // the project directory the session works on
}
