package event

import (
	"time"

	"github.com/google/uuid"
)

// Type names an event type, such as "turn.started".
type Type string

// The event types, in catalogue order (the order Types returns).
const (
	TypeAgentStarted        Type = "agent.started"
	TypeTurnStarted         Type = "turn.started"
	TypeMessageCompleted    Type = "message.completed"
	TypeMessageDelta        Type = "message.delta"
	TypeSteeringQueued      Type = "steering.queued"
	TypeSteeringApplied     Type = "steering.applied"
	TypeContextAccounted    Type = "context.accounted"
	TypeContextCheckpoint   Type = "context.checkpoint"
	TypeContextCompacted    Type = "context.compacted"
	TypeRuntimeCheckpoint   Type = "runtime.checkpoint"
	TypeModelRequest        Type = "model.request"
	TypeModelResponse       Type = "model.response"
	TypeToolCall            Type = "tool.call"
	TypePolicyDecision      Type = "policy.decision"
	TypePermissionRequested Type = "permission.requested"
	TypePermissionResolved  Type = "permission.resolved"
	TypeToolResult          Type = "tool.result"
	TypeBudgetWarning       Type = "budget.warning"
	TypeWorkspaceLifecycle  Type = "workspace.lifecycle"
	TypeTurnCompleted       Type = "turn.completed"
	TypeAgentStopped        Type = "agent.stopped"

	// Additions beyond DESIGN §3; see the package doc.
	TypeInputQueued        Type = "input.queued"
	TypeInputWithdrawn     Type = "input.withdrawn"
	TypeModelRetry         Type = "model.retry"
	TypeSessionForked      Type = "session.forked"
	TypeSettingsChanged    Type = "settings.changed"
	TypeToolOutput         Type = "tool.output"
	TypeWorkspaceRecovered Type = "workspace.recovered"
	TypeSessionRewound     Type = "session.rewound"
	TypePatchApplied       Type = "patch.applied"
	TypePermissionRevoked  Type = "permission.revoked"
	TypeJobStarted         Type = "job.started"
	TypeJobExited          Type = "job.exited"
)

var catalogue = [...]Type{
	TypeAgentStarted, TypeTurnStarted, TypeMessageCompleted, TypeMessageDelta,
	TypeSteeringQueued, TypeSteeringApplied, TypeContextAccounted, TypeContextCheckpoint,
	TypeContextCompacted, TypeRuntimeCheckpoint, TypeModelRequest, TypeModelResponse,
	TypeToolCall, TypePolicyDecision, TypePermissionRequested, TypePermissionResolved,
	TypeToolResult, TypeBudgetWarning, TypeWorkspaceLifecycle, TypeTurnCompleted,
	TypeAgentStopped, TypeInputQueued, TypeInputWithdrawn, TypeModelRetry, TypeSessionForked,
	TypeSettingsChanged, TypeToolOutput, TypeWorkspaceRecovered, TypeSessionRewound, TypePatchApplied,
	TypePermissionRevoked, TypeJobStarted, TypeJobExited,
}

// Types returns every event type in catalogue order. The slice is a fresh
// copy the caller may keep.
func Types() []Type {
	out := make([]Type, len(catalogue))
	copy(out, catalogue[:])
	return out
}

// Version is the envelope version, the "v" of every frame.
const Version = 1

// Actors: who caused an event.
const (
	ActorKernel = "kernel" // the runtime itself
	ActorUser   = "user"   // the developer (input, steering, approvals)
	ActorModel  = "model"  // the model's output (deltas, responses, tool calls)
	ActorTool   = "tool"   // a tool's execution (results)
	ActorSystem = "system" // the environment (workspace lifecycle, forks, restores)
)

// Turn and agent statuses (turn.completed and agent.stopped "status").
const (
	StatusCompleted      = "completed"
	StatusFailed         = "failed"
	StatusCanceled       = "canceled"
	StatusBudgetExceeded = "budget_exceeded"
)

// Policy effects (policy.decision "effect").
const (
	EffectAllow = "allow"
	EffectAsk   = "ask"
	EffectDeny  = "deny"
)

// Permission scopes (permission.* "scope").
const (
	ScopeOnce    = "once"
	ScopeRun     = "run"     // the rest of the turn (the run)
	ScopeSession = "session" // every later turn of the session, until permission.revoked
)

// Permission decisions (permission.resolved "decision").
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

// Budget metrics (budget.warning "metric").
const (
	MetricSteps     = "steps"
	MetricTokens    = "tokens"
	MetricToolCalls = "tool_calls"
)

// Workspace backends and phases (workspace.lifecycle).
const (
	BackendLocal  = "local"
	BackendDocker = "docker"

	PhaseOpened   = "opened"
	PhaseDisposed = "disposed"
	PhaseRestored = "restored"

	StorageDisk  = "disk"
	StorageTmpfs = "tmpfs"
)

// Occupancy algorithms of context.accounted: the UTF-8 byte count of the
// occupied part of the request (an upper bound: a model no ratio is known
// for, or after an implausible report), that count at a measured bytes
// per token (a provider's model before its first usage report), and the
// figure calibrated from the provider's last reported prompt tokens.
const (
	AlgorithmUTF8UpperBound = "utf8-upper-bound/v1"
	AlgorithmBytesPerToken  = "bytes-per-token/v1" // older logs: one ratio for every byte
	AlgorithmCharMix        = "char-mix/v1"
	AlgorithmReportedUsage  = "reported-usage/v1"
)

// DataVersion is the only accepted value of context.checkpoint "version",
// runtime.checkpoint "version" and model.request "contextVersion".
const DataVersion = 1

// MaxContentRunes bounds steering.queued and input.queued content.
const MaxContentRunes = 262144

// Event is one envelope. At is stored in UTC with millisecond precision;
// Encode converts and truncates it.
type Event struct {
	Type  Type
	ID    string // "evt-…"
	At    time.Time
	Actor string
	Data  Data
}

// Data is the typed payload of one event type. It is implemented by the
// value type of each data struct in this package (TurnStarted, not
// *TurnStarted); Encode rejects anything else.
type Data interface {
	EventType() Type
}

// NewID returns prefix + "-" + a new UUIDv7, so IDs made by one process sort
// by creation time.
func NewID(prefix string) string {
	return prefix + "-" + uuid.Must(uuid.NewV7()).String()
}
