package event

import (
	"encoding/json"

	"github.com/harness-dev/harness/internal/model"
)

// Struct field order is key order: Encode writes the keys as declared here,
// which is the order of the DESIGN §3 table. Optional keys carry omitempty
// (or are pointers) and are absent when empty.

// AgentStarted: agent.started.
type AgentStarted struct {
	AgentID   string `json:"agentId"`
	SessionID string `json:"sessionId"`
	Model     string `json:"model"`
	RunID     string `json:"runId"`
	TurnID    string `json:"turnId"`
}

// TurnStarted: turn.started. A turn's input is the user message
// InputMessageID, or, for an on-demand compaction (/compact while idle),
// Compact: such a turn has no user message, runs one summary round and
// ends with turn.completed saying what it did in its note.
type TurnStarted struct {
	RunID          string        `json:"runId"`
	SessionID      string        `json:"sessionId"`
	TurnID         string        `json:"turnId"`
	InputMessageID string        `json:"inputMessageId,omitempty"`
	Compact        *CompactInput `json:"compact,omitempty"`
}

// CompactInput is the input of a compaction turn: the user's focus, which
// the summary keeps in most detail (may be empty).
type CompactInput struct {
	Focus string `json:"focus,omitempty"`
}

// MessageCompleted: message.completed. Role is user, assistant or tool.
// RequestID, FinishReason and ToolCalls belong to assistant messages (the
// first two required); Name and ToolCallID to tool messages (both required).
type MessageCompleted struct {
	RunID        string           `json:"runId"`
	SessionID    string           `json:"sessionId"`
	TurnID       string           `json:"turnId"`
	MessageID    string           `json:"messageId"`
	Role         model.Role       `json:"role"`
	Content      string           `json:"content"`
	RequestID    string           `json:"requestId,omitempty"`
	FinishReason string           `json:"finishReason,omitempty"`
	ToolCalls    []model.ToolCall `json:"toolCalls,omitempty"`
	Name         string           `json:"name,omitempty"`
	ToolCallID   string           `json:"toolCallId,omitempty"`
	Reasoning    string           `json:"reasoning,omitempty"` // assistant only: what a reasoning model thought first
	// ReasoningField is where the provider sent Reasoning (assistant only,
	// with Reasoning): model.Message.ReasoningField.
	ReasoningField string `json:"reasoningField,omitempty"`
}

// MessageDelta: message.delta. Sequence is 0-based per message.
type MessageDelta struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	RequestID string `json:"requestId"`
	MessageID string `json:"messageId"`
	Sequence  int    `json:"sequence"`
	Delta     string `json:"delta"`
}

// SteeringQueued: steering.queued. Content is 1..MaxContentRunes runes.
type SteeringQueued struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	MessageID string `json:"messageId"`
	Content   string `json:"content"`
}

// SteeringApplied: steering.applied. MessageIDs holds at least one distinct
// ID, in FIFO order.
type SteeringApplied struct {
	RunID           string   `json:"runId"`
	SessionID       string   `json:"sessionId"`
	TurnID          string   `json:"turnId"`
	MessageIDs      []string `json:"messageIds"`
	MessageRevision int      `json:"messageRevision"`
}

// ContextAccounted: context.accounted. Algorithm is AlgorithmUTF8UpperBound,
// AlgorithmCharMix (AlgorithmBytesPerToken in older logs) or
// AlgorithmReportedUsage: the rule that produced OccupancyTokens.
type ContextAccounted struct {
	RunID           string `json:"runId"`
	SessionID       string `json:"sessionId"`
	TurnID          string `json:"turnId"`
	RequestID       string `json:"requestId"`
	OccupancyTokens int    `json:"occupancyTokens"`
	WindowTokens    int    `json:"windowTokens"`
	ReserveTokens   int    `json:"reserveTokens"`
	Algorithm       string `json:"algorithm"`
	SummaryRequest  bool   `json:"summaryRequest"`
}

// ContextCheckpoint: context.checkpoint. Version is DataVersion. A nil Tail
// is encoded as an empty array.
type ContextCheckpoint struct {
	RunID           string          `json:"runId"`
	SessionID       string          `json:"sessionId"`
	TurnID          string          `json:"turnId"`
	Version         int             `json:"version"`
	Summary         string          `json:"summary"`
	TailStart       int             `json:"tailStart"`
	ThroughRevision int             `json:"throughRevision"`
	Tail            []model.Message `json:"tail"`
}

// ContextCompacted: context.compacted.
type ContextCompacted struct {
	RunID            string `json:"runId"`
	SessionID        string `json:"sessionId"`
	TurnID           string `json:"turnId"`
	SummaryMessageID string `json:"summaryMessageId"`
	Summary          string `json:"summary"`
	BeforeMessages   int    `json:"beforeMessages"`
	AfterMessages    int    `json:"afterMessages"`
	BeforeTokens     int    `json:"beforeTokens"`
	AfterTokens      int    `json:"afterTokens"`
}

// RuntimeCheckpoint: runtime.checkpoint. Version is DataVersion; Payload is
// a JSON object (DESIGN §8), parsed by the runtime, not here.
type RuntimeCheckpoint struct {
	RunID     string          `json:"runId"`
	SessionID string          `json:"sessionId"`
	TurnID    string          `json:"turnId"`
	Version   int             `json:"version"`
	Payload   json.RawMessage `json:"payload"`
}

// ModelRequest: model.request. ContextVersion is DataVersion.
type ModelRequest struct {
	RequestID       string `json:"requestId"`
	Model           string `json:"model"`
	MessageCount    int    `json:"messageCount"`
	RunID           string `json:"runId"`
	SessionID       string `json:"sessionId"`
	TurnID          string `json:"turnId"`
	Step            int    `json:"step"`
	ContextVersion  int    `json:"contextVersion"`
	MessageRevision int    `json:"messageRevision"`
}

// ModelResponse: model.response.
type ModelResponse struct {
	RequestID    string      `json:"requestId"`
	Model        string      `json:"model"`
	FinishReason string      `json:"finishReason"`
	Usage        model.Usage `json:"usage"`
	RunID        string      `json:"runId"`
	SessionID    string      `json:"sessionId"`
	TurnID       string      `json:"turnId"`
}

// ToolCall: tool.call. Tool is the canonical (dotted) tool name; Input is the
// JSON value the model sent, whatever it is.
type ToolCall struct {
	CallID      string          `json:"callId"`
	Tool        string          `json:"tool"`
	Input       json.RawMessage `json:"input"`
	ModelCallID string          `json:"modelCallId"`
	RequestID   string          `json:"requestId"`
	RunID       string          `json:"runId"`
	SessionID   string          `json:"sessionId"`
	TurnID      string          `json:"turnId"`
}

// PolicyDecision: policy.decision. Action is the canonical tool name.
type PolicyDecision struct {
	CallID    string `json:"callId"`
	Action    string `json:"action"`
	Subject   string `json:"subject,omitempty"`
	Effect    string `json:"effect"`
	Reason    string `json:"reason,omitempty"`
	RuleID    string `json:"ruleId,omitempty"`
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
}

// PermissionRequested: permission.requested.
type PermissionRequested struct {
	PermissionID string `json:"permissionId"`
	CallID       string `json:"callId"`
	Action       string `json:"action"`
	Subject      string `json:"subject,omitempty"`
	Scope        string `json:"scope"`
	// Input is the input of the call asked about, as its tool.call
	// records it, so a front end asks from the question alone.
	Input json.RawMessage `json:"input,omitempty"`
	// Patch, for fs.write, is the change the write would make, as a
	// unified diff against the workspace file's current contents; it is
	// computed as the write's tool.result patch is ("" when there is no
	// change or it is too large to keep).
	Patch string `json:"patch,omitempty"`
	// Lines, for fs.write, counts the lines the write would add and
	// delete; absent when the file could not be read or the write creates
	// an empty file. Zero counts with no patch: the contents are the
	// file's own.
	Lines *LineCounts `json:"lines,omitempty"`
}

// PermissionResolved: permission.resolved.
type PermissionResolved struct {
	PermissionID string `json:"permissionId"`
	CallID       string `json:"callId"`
	Action       string `json:"action"`
	Subject      string `json:"subject,omitempty"`
	Scope        string `json:"scope"`
	Decision     string `json:"decision"`
	Note         string `json:"note,omitempty"`
}

// PermissionRevoked: permission.revoked. The user took back the grant of
// Action (a tool's canonical name) for the session, given by a
// permission.resolved of scope session: its calls are asked about again
// from the next one on.
type PermissionRevoked struct {
	SessionID string `json:"sessionId"`
	Action    string `json:"action"`
}

// JobStarted: job.started. Tool call CallID of turn TurnID started a
// background job (process.exec with background true): JobID names it in
// the session's workspace, Argv and Cwd are its command. TurnID and CallID
// are empty when the job was not started by a tool call.
type JobStarted struct {
	SessionID string   `json:"sessionId"`
	TurnID    string   `json:"turnId,omitempty"`
	CallID    string   `json:"callId,omitempty"`
	JobID     string   `json:"jobId"`
	Argv      []string `json:"argv"`
	Cwd       string   `json:"cwd,omitempty"`
}

// JobExited: job.exited. Background job JobID, started in turn TurnID,
// ended: Reason says how (one of JobReasons), ExitCode is its program's
// status when known (128+N: killed by signal N), Bytes how much it
// printed in all and Tail the end of its log (at most MaxJobTailBytes).
type JobExited struct {
	SessionID string   `json:"sessionId"`
	TurnID    string   `json:"turnId,omitempty"`
	JobID     string   `json:"jobId"`
	Argv      []string `json:"argv"`
	Reason    string   `json:"reason"`
	ExitCode  *int     `json:"exitCode,omitempty"`
	Bytes     int      `json:"bytes"`
	Tail      string   `json:"tail,omitempty"`
}

// How a background job ended (JobExited.Reason): its program exited by
// itself, the user or model stopped it, its workspace closed with the
// session, its container went away, or the process that ran it ended
// without saying (found when the session resumed).
const (
	JobReasonExited  = "exited"
	JobReasonStopped = "stopped"
	JobReasonClosed  = "closed"
	JobReasonLost    = "lost"
	JobReasonEnded   = "ended"
)

// JobEndWords says how a job ended (a JobExited.Reason) in words a reader
// understands without the event's vocabulary: the front ends print it.
func JobEndWords(reason string) string {
	switch reason {
	case JobReasonClosed:
		return "ended with the session"
	case JobReasonLost:
		return "its container was lost"
	case JobReasonEnded:
		return "ended with the harness process that ran it"
	}
	return reason // exited, stopped
}

// JobReasons are the values of JobExited.Reason.
var JobReasons = []string{JobReasonExited, JobReasonStopped, JobReasonClosed, JobReasonLost, JobReasonEnded}

// MaxJobTailBytes bounds JobExited.Tail.
const MaxJobTailBytes = 2 << 10

// ToolError is the error of a failed tool.result: a code (TOOL_*,
// WORKSPACE_*) and a message safe to show the model.
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ToolResult: tool.result. Error is set exactly when OK is false.
type ToolResult struct {
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	OK         bool            `json:"ok"`
	Output     json.RawMessage `json:"output,omitempty"`
	Error      *ToolError      `json:"error,omitempty"`
	DurationMs int             `json:"durationMs"`
	// Patch, for a successful fs.write, is the change as a unified diff
	// against the workspace file's previous contents ("" when equal or
	// too large to keep). It is for the screen and the audit; the
	// model's tool message carries Output only.
	Patch string `json:"patch,omitempty"`
	// Lines, for a successful fs.write, counts the lines the write added
	// and deleted against the workspace file's previous contents; it is
	// recorded also when Patch is left out for its size.
	Lines *LineCounts `json:"lines,omitempty"`
}

// LineCounts is the size of a change in lines.
type LineCounts struct {
	Added   int `json:"added"`
	Deleted int `json:"deleted"`
}

// BudgetWarning: budget.warning.
type BudgetWarning struct {
	Metric string `json:"metric"`
	Used   int    `json:"used"`
	Limit  int    `json:"limit"`
	Pct    int    `json:"pct"`
}

// WorkspaceLifecycle: workspace.lifecycle. ImageID is the immutable image ID
// of a Docker workspace; Files the number of files copied in, when known;
// Skipped what the copy left out, when anything was.
type WorkspaceLifecycle struct {
	WorkspaceID string        `json:"workspaceId"`
	Backend     string        `json:"backend"`
	Phase       string        `json:"phase"`
	ImageID     string        `json:"imageId,omitempty"`
	Files       *int          `json:"files,omitempty"`
	Skipped     *SkippedFiles `json:"skipped,omitempty"`
	// Mounts is what of the host the sandbox sees besides the copy (the
	// project's toolchains, dependency caches and folders, read-only, and
	// its build cache volume), at opened and restored.
	Mounts []Mount `json:"mounts,omitempty"`
	// Storage is where a Docker workspace keeps /workspace and $HOME, at
	// opened and restored: StorageDisk (the container's own layer, with a
	// size quota) or StorageTmpfs (memory volumes of the host).
	Storage string `json:"storage,omitempty"`
}

// Mount is one thing of the host a workspace's sandbox sees: what it is,
// where it comes from (a host path, or "volume NAME"), where the sandbox
// sees it, and whether it is read-only there.
type Mount struct {
	What     string `json:"what"`
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly"`
}

// SkippedFiles is what a workspace's copy left out of the project, apart
// from what the user excluded and git ignores: how many files, how many
// for each reason (SkipReasons, in that order, each once), and the first
// few of their paths (at most MaxSkippedPaths, in path order).
type SkippedFiles struct {
	Count   int         `json:"count"`
	Reasons []SkipCount `json:"reasons"`
	Paths   []string    `json:"paths"`
}

// SkipCount is how many files were left out for one reason.
type SkipCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// SkipReasons are the reasons of SkippedFiles, in the order they are
// listed: binary (a NUL byte), non-UTF-8 text, other hard links (which may
// lie outside the project), over the size limit, symlinks, special files
// (FIFO, socket, device), names no tool could send back.
var SkipReasons = []string{"binary", "non-utf8", "hardlink", "limit", "symlink", "special", "name"}

// MaxSkippedPaths bounds SkippedFiles.Paths.
const MaxSkippedPaths = 10

// TurnCompleted: turn.completed. ErrorCode is required for failed and
// budget_exceeded, forbidden for completed. Truncated marks a completed
// turn whose last answer was cut by the output limit (finish reason length).
type TurnCompleted struct {
	RunID           string      `json:"runId"`
	SessionID       string      `json:"sessionId"`
	TurnID          string      `json:"turnId"`
	Status          string      `json:"status"`
	ErrorCode       string      `json:"errorCode,omitempty"`
	OutputMessageID string      `json:"outputMessageId,omitempty"`
	ModelRequests   int         `json:"modelRequests"`
	ToolCalls       int         `json:"toolCalls"`
	Usage           model.Usage `json:"usage"`
	Note            string      `json:"note,omitempty"`
	Truncated       bool        `json:"truncated,omitempty"`
}

// AgentStopped: agent.stopped. Status takes the turn.completed values.
type AgentStopped struct {
	AgentID   string `json:"agentId"`
	Status    string `json:"status"`
	Steps     int    `json:"steps"`
	ToolCalls int    `json:"toolCalls"`
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
}

// InputQueued: input.queued, a message queued for the next turn. Content is
// 1..MaxContentRunes runes.
type InputQueued struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	MessageID string `json:"messageId"`
	Content   string `json:"content"`
}

// InputWithdrawn: input.withdrawn, a queued next-turn input or pending
// steering removed before it applied.
type InputWithdrawn struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	MessageID string `json:"messageId"`
}

// ModelRetry: model.retry, an adapter retrying a failed attempt. Attempt
// counts from 1; Code is the retryable error code and Message, when the
// adapter gave one, what failed ("reach http://…: connection refused").
type ModelRetry struct {
	RequestID string `json:"requestId"`
	Attempt   int    `json:"attempt"`
	Code      string `json:"code"`
	DelayMs   int    `json:"delayMs"`
	Message   string `json:"message,omitempty"`
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
}

// SessionForked: session.forked. SessionID continues from FromSessionID
// after FromTurnID, or from nothing when FromTurnID is empty (the forked
// session had finished no turn: its first one was interrupted);
// AbandonedTurnID names the turn left behind, if any.
type SessionForked struct {
	SessionID       string `json:"sessionId"`
	FromSessionID   string `json:"fromSessionId"`
	FromTurnID      string `json:"fromTurnId,omitempty"`
	AbandonedTurnID string `json:"abandonedTurnId,omitempty"`
}

// WorkspaceRecovered: workspace.recovered. Turn TurnID's end-of-turn diff
// failed and its workspace was kept in Container; this is its patch,
// recovered from that container later (with larger limits), or, with
// Discarded, the user's word that the turn's own changes are given up:
// Patch is then what the turns before it recorded ("" for none), which the
// session goes on from (Container names the container removed, if it was
// still there). From here on it stands for the turn's patch.
type WorkspaceRecovered struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Container string `json:"container,omitempty"`
	Patch     string `json:"patch,omitempty"`
	Discarded bool   `json:"discarded,omitempty"`
}

// SessionRewound: session.rewound. The session went back from the end of
// turn FromTurnID (number FromTurn, counting turn.started events from 1;
// absent when no turn had finished) to the end of turn ToTurnID (number
// ToTurn): the terminal checkpoint that follows it is that turn's, and
// the workspace holds Patch, that turn's workspace patch against the
// initial snapshot ("" when it changed nothing). Undo: this rewind returns
// to where the session was before the previous one. The later turns stay
// in the log, out of the model's view.
type SessionRewound struct {
	SessionID  string `json:"sessionId"`
	FromTurnID string `json:"fromTurnId,omitempty"`
	FromTurn   int    `json:"fromTurn"`
	ToTurnID   string `json:"toTurnId"`
	ToTurn     int    `json:"toTurn"`
	Patch      string `json:"patch,omitempty"`
	Undo       bool   `json:"undo,omitempty"`
}

// PatchApplied: patch.applied. The workspace patch of turn TurnID was
// applied to the host tree at Root (Reverse: reverted there, the patch
// applied in reverse); Patch is the patch as applied (forward), SHA256 the
// lowercase hex hash of its bytes, Files what it changed, in its order.
type PatchApplied struct {
	SessionID string      `json:"sessionId"`
	TurnID    string      `json:"turnId"`
	Root      string      `json:"root"`
	SHA256    string      `json:"sha256"`
	Files     []PatchFile `json:"files"`
	Patch     string      `json:"patch"`
	Reverse   bool        `json:"reverse,omitempty"`
}

// PatchFile is one file of an applied patch with its line counts.
type PatchFile struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
}

// SettingsChanged: settings.changed. The session's settings from its next
// model request on, changed by the user (flags given on resume or fork, a
// command in the TUI). Changed names the settings that changed, among
// model, baseUrl, contextWindow, compactAt, compactTail, budgetTokens,
// approve and maxTokens; the other fields are the values in force after
// the change (budgetTokens 0: no budget; maxTokens 0: no answer limit of
// its own; baseUrl empty: the provider's
// default or none; approve empty: auto).
type SettingsChanged struct {
	SessionID       string   `json:"sessionId"`
	Changed         []string `json:"changed"`
	Model           string   `json:"model"`
	BaseURL         string   `json:"baseUrl,omitempty"`
	WindowTokens    int      `json:"windowTokens"`
	ThresholdTokens int      `json:"thresholdTokens"`
	TailMessages    int      `json:"tailMessages"`
	ReserveTokens   int      `json:"reserveTokens"`
	BudgetTokens    int      `json:"budgetTokens"`
	MaxTokens       int      `json:"maxTokens"`
	Approve         string   `json:"approve,omitempty"`
}

// EventType implements Data.
func (AgentStarted) EventType() Type { return TypeAgentStarted }

// EventType implements Data.
func (PermissionRevoked) EventType() Type { return TypePermissionRevoked }
func (JobStarted) EventType() Type        { return TypeJobStarted }
func (JobExited) EventType() Type         { return TypeJobExited }

// EventType implements Data.
func (TurnStarted) EventType() Type { return TypeTurnStarted }

// EventType implements Data.
func (MessageCompleted) EventType() Type { return TypeMessageCompleted }

// EventType implements Data.
func (MessageDelta) EventType() Type { return TypeMessageDelta }

// EventType implements Data.
func (SteeringQueued) EventType() Type { return TypeSteeringQueued }

// EventType implements Data.
func (SteeringApplied) EventType() Type { return TypeSteeringApplied }

// EventType implements Data.
func (ContextAccounted) EventType() Type { return TypeContextAccounted }

// EventType implements Data.
func (ContextCheckpoint) EventType() Type { return TypeContextCheckpoint }

// EventType implements Data.
func (ContextCompacted) EventType() Type { return TypeContextCompacted }

// EventType implements Data.
func (RuntimeCheckpoint) EventType() Type { return TypeRuntimeCheckpoint }

// EventType implements Data.
func (ModelRequest) EventType() Type { return TypeModelRequest }

// EventType implements Data.
func (ModelResponse) EventType() Type { return TypeModelResponse }

// EventType implements Data.
func (ToolCall) EventType() Type { return TypeToolCall }

// EventType implements Data.
func (PolicyDecision) EventType() Type { return TypePolicyDecision }

// EventType implements Data.
func (PermissionRequested) EventType() Type { return TypePermissionRequested }

// EventType implements Data.
func (PermissionResolved) EventType() Type { return TypePermissionResolved }

// EventType implements Data.
func (ToolResult) EventType() Type { return TypeToolResult }

// EventType implements Data.
func (BudgetWarning) EventType() Type { return TypeBudgetWarning }

// EventType implements Data.
func (WorkspaceLifecycle) EventType() Type { return TypeWorkspaceLifecycle }

// EventType implements Data.
func (TurnCompleted) EventType() Type { return TypeTurnCompleted }

// EventType implements Data.
func (AgentStopped) EventType() Type { return TypeAgentStopped }

// EventType implements Data.
func (InputQueued) EventType() Type { return TypeInputQueued }

// EventType implements Data.
func (InputWithdrawn) EventType() Type { return TypeInputWithdrawn }

// EventType implements Data.
func (ModelRetry) EventType() Type { return TypeModelRetry }

// EventType implements Data.
func (SessionForked) EventType() Type { return TypeSessionForked }

// EventType implements Data.
func (WorkspaceRecovered) EventType() Type { return TypeWorkspaceRecovered }

// EventType implements Data.
func (SessionRewound) EventType() Type { return TypeSessionRewound }

// EventType implements Data.
func (PatchApplied) EventType() Type { return TypePatchApplied }

// EventType implements Data.
func (SettingsChanged) EventType() Type { return TypeSettingsChanged }
func (ToolOutput) EventType() Type      { return TypeToolOutput }

// ToolOutput: tool.output. Output of a running process.exec as it came,
// coalesced (a chunk per stream every ~100 ms or 8 KiB) and bounded per
// call (MaxToolOutputBytes; the chunk that reaches the bound says so with
// truncated). For the screen and the audit: the model gets the tool.result.
// Offset is where text starts in the stream's recorded output.
type ToolOutput struct {
	CallID    string `json:"callId"`
	Stream    string `json:"stream"`
	Offset    int    `json:"offset"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
}

// AttachmentsMarker is the first line of a user message that carries what
// the user's own message asked of the workspace (the files of its @path
// mentions, a !command's output) rather than typed text.
const AttachmentsMarker = "<attachments>"

// MaxToolOutputBytes bounds the text tool.output events record per call.
const MaxToolOutputBytes = 64 << 10

// Streams of tool.output.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)
