package runtime

import (
	"context"
	"time"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/tools"
)

// EventLog is the event store the runtime consumes: one session's log bound
// to one owner. store.SessionLog satisfies it.
type EventLog interface {
	SessionID() string
	Append(ctx context.Context, e event.Event) (store.Record, error)
	// AppendCheckpoint saves the checkpoint whose payload is the first keep
	// bytes of the saved one followed by tail (store.Store.AppendCheckpoint).
	AppendCheckpoint(ctx context.Context, afterSeq, keep int64, tail []byte) (store.Checkpoint, error)
}

// Effect of a policy decision.
type Effect string

// Effects.
const (
	Allow Effect = "allow"
	Ask   Effect = "ask"
	Deny  Effect = "deny"
)

// Decision is what a Policy says about one tool call.
type Decision struct {
	Effect Effect
	Reason string
	RuleID string
}

// Policy decides per call. Call.Tool is the canonical tool name; Subject is
// the path or command when the input parsed, else "".
type Policy interface {
	Decide(call tools.Call) Decision
}

// PolicyFunc adapts a function to Policy.
type PolicyFunc func(tools.Call) Decision

// Decide calls f.
func (f PolicyFunc) Decide(c tools.Call) Decision { return f(c) }

// AllowAll is the default policy: every call runs (mutations still only run
// inside an attested Docker workspace).
var AllowAll = PolicyFunc(func(tools.Call) Decision {
	return Decision{Effect: Allow, RuleID: "default-allow", Reason: "auto-approve inside the sandbox"}
})

// AskForMutations allows reads and asks for fs.write and process.exec.
var AskForMutations = PolicyFunc(func(c tools.Call) Decision {
	for _, s := range tools.All() {
		if s.Name == c.Tool && s.Mutates {
			return Decision{Effect: Ask, RuleID: "ask-mutations", Reason: "mutations need approval"}
		}
	}
	return Decision{Effect: Allow, RuleID: "allow-reads", Reason: "reads are allowed"}
})

// Scope of a permission grant.
type Scope string

// Scopes.
const (
	ScopeOnce Scope = "once"
	ScopeRun  Scope = "run"
	// ScopeSession remembers the grant for the session: every later turn,
	// after a resume too, until Session.Revoke. A fork asks again.
	ScopeSession Scope = "session"
)

// PermissionAnswer answers a permission question (Session.Answer). Scope
// run remembers the grant for that tool for the rest of the run. Note is
// recorded in permission.resolved. Reason, when given, is the user's word
// to the model: a denied call's result carries it; with an approval it is
// steering for the next request.
type PermissionAnswer struct {
	Allow  bool
	Scope  Scope
	Note   string
	Reason string
}

// Config is the process's: what every session of a Runtime shares.
type Config struct {
	Now   func() time.Time           // nil: time.Now
	NewID func(prefix string) string // nil: event.NewID
}

func (c *Config) defaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewID == nil {
		c.NewID = event.NewID
	}
}

// SessionConfig is what one session runs with besides its recorded
// Settings: the model it sends to, the workspace its tools act on, the
// policy that decides its tool calls and its guards. It is given to
// Runtime.OpenSession, RestoreSession and Fork, and stays the session's
// until it closes.
type SessionConfig struct {
	Model     model.Model
	Workspace workspace.Workspace
	Policy    Policy // nil: AllowAll; Ask effects wait for Session.Answer
	// MaxRounds ends a turn with RUNTIME_ROUND_LIMIT once it has made this
	// many model rounds and the model still calls tools; 0:
	// DefaultMaxRounds, negative: no limit.
	MaxRounds int
	// LoopRepeats ends a turn with RUNTIME_LOOP_DETECTED once the same
	// tool call (name and arguments) got the same result this many times
	// in a row, or once the turn's calls go round in a cycle (cycle.go);
	// 0: DefaultLoopRepeats, negative: no guard.
	LoopRepeats int
	// Estimator is the occupancy rule before a trusted usage report:
	// compaction.AlgorithmRatio for a model whose tokens it was measured
	// on, else ("" or compaction.Algorithm) the byte count, an upper
	// bound. After an implausible report the byte count applies until a
	// plausible one.
	Estimator string
	// WireName is how the model's requests advertise a tool (the
	// provider's alias of its canonical name); nil: the canonical name. A
	// TOOL_NOT_FOUND result lists the tools by these names, the ones the
	// model saw.
	WireName func(canonical string) string
}

// Defaults of SessionConfig's guards against runaway turns.
const (
	DefaultMaxRounds   = 200
	DefaultLoopRepeats = 5
)

// validate checks c and fills in its defaults: RUNTIME_INVALID_INPUT
// without a model or a workspace, or with an unknown estimator.
func (c *SessionConfig) validate() error {
	if c.Model == nil {
		return errcode.New(errcode.RuntimeInvalidInput, "open session: no model")
	}
	if c.Workspace == nil {
		return errcode.New(errcode.RuntimeInvalidInput, "open session: no workspace")
	}
	if c.Policy == nil {
		c.Policy = AllowAll
	}
	switch c.Estimator {
	case "":
		c.Estimator = compaction.Algorithm
	case compaction.Algorithm, compaction.AlgorithmRatio:
	default:
		return errcode.Errorf(errcode.RuntimeInvalidInput, "open session: unknown occupancy estimator %q", c.Estimator)
	}
	if c.MaxRounds == 0 {
		c.MaxRounds = DefaultMaxRounds
	}
	if c.LoopRepeats == 0 {
		c.LoopRepeats = DefaultLoopRepeats
	}
	return nil
}
