package event

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// The semantic rules of each data type. They run on the Go value, in key
// order, so the first error reported is the first offending key. Encode and
// Decode share them; a rule that fails on a value fails with the same code
// on the bytes Encode would have written for it.

var (
	actors        = []string{ActorKernel, ActorUser, ActorModel, ActorTool, ActorSystem}
	finishReasons = []string{model.FinishStop, model.FinishToolCalls, model.FinishLength, model.FinishError}
	statuses      = []string{StatusCompleted, StatusFailed, StatusCanceled, StatusBudgetExceeded}
	effects       = []string{EffectAllow, EffectAsk, EffectDeny}
	scopes        = []string{ScopeOnce, ScopeRun, ScopeSession}
	decisions     = []string{DecisionAllow, DecisionDeny}
	metrics       = []string{MetricSteps, MetricTokens, MetricToolCalls}
	backends      = []string{BackendLocal, BackendDocker}
	phases        = []string{PhaseOpened, PhaseDisposed, PhaseRestored}
	storages      = []string{StorageDisk, StorageTmpfs}
	approvals     = []string{"auto", "ask"}
	settingNames  = []string{"model", "baseUrl", "contextWindow", "compactAt", "compactTail", "budgetTokens", "approve", "maxTokens"}
	messageRoles  = []string{string(model.RoleUser), string(model.RoleAssistant), string(model.RoleTool)}
	tailRoles     = []string{string(model.RoleSystem), string(model.RoleUser), string(model.RoleAssistant), string(model.RoleTool)}
)

// validator is implemented by every data type of the catalogue.
type validator interface {
	Data
	validate(c *checker)
}

// checker keeps the first failed rule. Its methods do nothing once a rule
// has failed, and format a message only on failure.
type checker struct {
	err *errcode.Error
}

func (c *checker) failf(code errcode.Code, format string, args ...any) {
	if c.err == nil {
		c.err = &errcode.Error{Code: code, Message: fmt.Sprintf(format, args...)}
	}
}

func (c *checker) ok() bool { return c.err == nil }

// nonEmpty requires a present string to be non-empty (IDs, names).
func (c *checker) nonEmpty(path, v string) {
	if c.ok() && v == "" {
		c.failf(errcode.EventInvalidField, "validate %s: must not be empty", path)
	}
}

// content requires 1..MaxContentRunes runes.
func (c *checker) content(path, v string) {
	if !c.ok() {
		return
	}
	// Counting costs no more than the encoding's own pass over v.
	if v == "" || utf8.RuneCountInString(v) > MaxContentRunes {
		c.failf(errcode.EventInvalidField, "validate %s: must hold 1..%d characters", path, MaxContentRunes)
	}
}

// atLeast requires n >= lo (counts use lo 0).
func (c *checker) atLeast(path string, n, lo int) {
	if c.ok() && n < lo {
		c.failf(errcode.EventInvalidField, "validate %s: must be at least %d", path, lo)
	}
}

// version requires DataVersion.
func (c *checker) version(path string, n int) {
	if c.ok() && n != DataVersion {
		c.failf(errcode.EventInvalidField, "validate %s: must be %d", path, DataVersion)
	}
}

func (c *checker) oneOf(path, v string, set []string) {
	if c.ok() && !slices.Contains(set, v) {
		c.failf(errcode.EventInvalidField, "validate %s: must be one of %v", path, set)
	}
}

// code requires an error code: upper-case letters, digits and underscores,
// starting with a letter.
func (c *checker) code(path, v string) {
	if c.ok() && !isCode(v) {
		c.failf(errcode.EventInvalidField, "validate %s: must be an upper-case error code", path)
	}
}

func isCode(v string) bool {
	if v == "" || v[0] < 'A' || v[0] > 'Z' {
		return false
	}
	for i := 1; i < len(v); i++ {
		b := v[i]
		if (b < 'A' || b > 'Z') && (b < '0' || b > '9') && b != '_' {
			return false
		}
	}
	return true
}

// raw requires a JSON value that is present and not null.
func (c *checker) raw(path string, r []byte) {
	if c.ok() && rawMissing(r) {
		c.failf(errcode.EventMissingField, "require %s", path)
	}
}

// object requires a present JSON object.
func (c *checker) object(path string, r []byte) {
	c.raw(path, r)
	if c.ok() && bytes.TrimLeft(r, " \t\r\n")[0] != '{' {
		c.failf(errcode.EventInvalidField, "validate %s: must be an object", path)
	}
}

func rawMissing(r []byte) bool {
	t := bytes.TrimSpace(r)
	return len(t) == 0 || string(t) == "null"
}

// absent forbids a field that the rest of the value rules out.
func (c *checker) absent(path string, present bool, why string) {
	if c.ok() && present {
		c.failf(errcode.EventInvalidField, "validate %s: must be absent %s", path, why)
	}
}

// present requires a field that the rest of the value calls for.
func (c *checker) present(path string, present bool, why string) {
	if c.ok() && !present {
		c.failf(errcode.EventMissingField, "require %s %s", path, why)
	}
}

// run checks the runId, sessionId, turnId triple most types carry.
func (c *checker) run(runID, sessionID, turnID string) {
	c.nonEmpty("data.runId", runID)
	c.nonEmpty("data.sessionId", sessionID)
	c.nonEmpty("data.turnId", turnID)
}

// usage checks a model.Usage at data.usage. Totals are not cross-checked:
// the event records what the provider reported.
func (c *checker) usage(u model.Usage) {
	c.atLeast("data.usage.promptTokens", u.PromptTokens, 0)
	c.atLeast("data.usage.completionTokens", u.CompletionTokens, 0)
	c.atLeast("data.usage.totalTokens", u.TotalTokens, 0)
}

// toolCalls checks model tool calls: non-empty distinct IDs, a name, and a
// present arguments value.
func (c *checker) toolCalls(path string, calls []model.ToolCall) {
	for i, tc := range calls {
		if !c.ok() {
			return
		}
		switch {
		case tc.ID == "":
			c.failf(errcode.EventInvalidField, "validate %s[%d].id: must not be empty", path, i)
		case slices.ContainsFunc(calls[:i], func(p model.ToolCall) bool { return p.ID == tc.ID }):
			c.failf(errcode.EventInvalidField, "validate %s[%d].id: must not repeat an earlier id", path, i)
		case tc.Name == "":
			c.failf(errcode.EventInvalidField, "validate %s[%d].name: must not be empty", path, i)
		case rawMissing(tc.Arguments):
			c.failf(errcode.EventMissingField, "require %s[%d].arguments", path, i)
		}
	}
}

// messages checks model messages (context.checkpoint tail): a known role,
// tool calls only on assistant messages, tool fields on tool messages only
// and always there.
func (c *checker) messages(path string, msgs []model.Message) {
	for i, m := range msgs {
		if !c.ok() {
			return
		}
		isTool := m.Role == model.RoleTool
		switch {
		case !slices.Contains(tailRoles, string(m.Role)):
			c.failf(errcode.EventInvalidField, "validate %s[%d].role: must be one of %v", path, i, tailRoles)
		case len(m.ToolCalls) > 0 && m.Role != model.RoleAssistant:
			c.failf(errcode.EventInvalidField, "validate %s[%d].toolCalls: must be absent for role %s", path, i, m.Role)
		case isTool && m.ToolCallID == "":
			c.failf(errcode.EventMissingField, "require %s[%d].toolCallId for role tool", path, i)
		case isTool && m.Name == "":
			c.failf(errcode.EventMissingField, "require %s[%d].name for role tool", path, i)
		case !isTool && m.ToolCallID != "":
			c.failf(errcode.EventInvalidField, "validate %s[%d].toolCallId: must be absent for role %s", path, i, m.Role)
		case !isTool && m.Name != "":
			c.failf(errcode.EventInvalidField, "validate %s[%d].name: must be absent for role %s", path, i, m.Role)
		case len(m.ToolCalls) > 0:
			c.toolCalls(fmt.Sprintf("%s[%d].toolCalls", path, i), m.ToolCalls)
		}
	}
}

func (d AgentStarted) validate(c *checker) {
	c.nonEmpty("data.agentId", d.AgentID)
	c.nonEmpty("data.sessionId", d.SessionID)
	c.nonEmpty("data.model", d.Model)
	c.nonEmpty("data.runId", d.RunID)
	c.nonEmpty("data.turnId", d.TurnID)
}

func (d TurnStarted) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	if d.Compact == nil {
		c.present("data.inputMessageId", d.InputMessageID != "", "for a turn that is not a compaction")
		return
	}
	c.absent("data.inputMessageId", d.InputMessageID != "", "in a compaction turn")
	if d.Compact.Focus != "" {
		c.content("data.compact.focus", d.Compact.Focus)
	}
}

func (d MessageCompleted) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.nonEmpty("data.messageId", d.MessageID)
	c.oneOf("data.role", string(d.Role), messageRoles)
	if !c.ok() {
		return
	}
	why := "for role " + string(d.Role)
	assistant, tool := d.Role == model.RoleAssistant, d.Role == model.RoleTool
	if assistant {
		c.present("data.requestId", d.RequestID != "", why)
		c.present("data.finishReason", d.FinishReason != "", why)
		c.oneOf("data.finishReason", d.FinishReason, finishReasons)
		c.toolCalls("data.toolCalls", d.ToolCalls)
	} else {
		c.absent("data.requestId", d.RequestID != "", why)
		c.absent("data.finishReason", d.FinishReason != "", why)
		c.absent("data.toolCalls", len(d.ToolCalls) > 0, why)
		c.absent("data.reasoning", d.Reasoning != "", why)
	}
	c.absent("data.reasoningField", d.ReasoningField != "" && d.Reasoning == "", "without data.reasoning")
	if tool {
		c.present("data.name", d.Name != "", why)
		c.present("data.toolCallId", d.ToolCallID != "", why)
	} else {
		c.absent("data.name", d.Name != "", why)
		c.absent("data.toolCallId", d.ToolCallID != "", why)
	}
}

func (d MessageDelta) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.nonEmpty("data.requestId", d.RequestID)
	c.nonEmpty("data.messageId", d.MessageID)
	c.atLeast("data.sequence", d.Sequence, 0)
}

func (d SteeringQueued) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.nonEmpty("data.messageId", d.MessageID)
	c.content("data.content", d.Content)
}

func (d SteeringApplied) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	if c.ok() && len(d.MessageIDs) == 0 {
		c.failf(errcode.EventInvalidField, "validate data.messageIds: must hold at least one id")
	}
	for i, id := range d.MessageIDs {
		switch {
		case !c.ok():
			return
		case id == "":
			c.failf(errcode.EventInvalidField, "validate data.messageIds[%d]: must not be empty", i)
		case slices.Contains(d.MessageIDs[:i], id):
			c.failf(errcode.EventInvalidField, "validate data.messageIds[%d]: must not repeat an earlier id", i)
		}
	}
	c.atLeast("data.messageRevision", d.MessageRevision, 0)
}

func (d ContextAccounted) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.nonEmpty("data.requestId", d.RequestID)
	c.atLeast("data.occupancyTokens", d.OccupancyTokens, 0)
	c.atLeast("data.windowTokens", d.WindowTokens, 0)
	c.atLeast("data.reserveTokens", d.ReserveTokens, 0)
	c.oneOf("data.algorithm", d.Algorithm, []string{AlgorithmUTF8UpperBound, AlgorithmBytesPerToken, AlgorithmCharMix, AlgorithmReportedUsage})
}

func (d ContextCheckpoint) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.version("data.version", d.Version)
	c.nonEmpty("data.summary", d.Summary)
	c.atLeast("data.tailStart", d.TailStart, 0)
	c.atLeast("data.throughRevision", d.ThroughRevision, 0)
	c.messages("data.tail", d.Tail)
}

func (d ContextCompacted) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.nonEmpty("data.summaryMessageId", d.SummaryMessageID)
	c.nonEmpty("data.summary", d.Summary)
	c.atLeast("data.beforeMessages", d.BeforeMessages, 0)
	c.atLeast("data.afterMessages", d.AfterMessages, 0)
	c.atLeast("data.beforeTokens", d.BeforeTokens, 0)
	c.atLeast("data.afterTokens", d.AfterTokens, 0)
}

func (d RuntimeCheckpoint) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.version("data.version", d.Version)
	c.object("data.payload", d.Payload)
}

func (d ModelRequest) validate(c *checker) {
	c.nonEmpty("data.requestId", d.RequestID)
	c.nonEmpty("data.model", d.Model)
	c.atLeast("data.messageCount", d.MessageCount, 0)
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.atLeast("data.step", d.Step, 0)
	c.version("data.contextVersion", d.ContextVersion)
	c.atLeast("data.messageRevision", d.MessageRevision, 0)
}

func (d ModelResponse) validate(c *checker) {
	c.nonEmpty("data.requestId", d.RequestID)
	c.nonEmpty("data.model", d.Model)
	c.oneOf("data.finishReason", d.FinishReason, finishReasons)
	c.usage(d.Usage)
	c.run(d.RunID, d.SessionID, d.TurnID)
}

func (d ToolCall) validate(c *checker) {
	c.nonEmpty("data.callId", d.CallID)
	c.nonEmpty("data.tool", d.Tool)
	c.raw("data.input", d.Input)
	c.nonEmpty("data.modelCallId", d.ModelCallID)
	c.nonEmpty("data.requestId", d.RequestID)
	c.run(d.RunID, d.SessionID, d.TurnID)
}

func (d PolicyDecision) validate(c *checker) {
	c.nonEmpty("data.callId", d.CallID)
	c.nonEmpty("data.action", d.Action)
	c.oneOf("data.effect", d.Effect, effects)
	c.run(d.RunID, d.SessionID, d.TurnID)
}

func (d PermissionRequested) validate(c *checker) {
	c.nonEmpty("data.permissionId", d.PermissionID)
	c.nonEmpty("data.callId", d.CallID)
	c.nonEmpty("data.action", d.Action)
	c.oneOf("data.scope", d.Scope, scopes)
	if d.Input != nil {
		c.raw("data.input", d.Input)
	}
	c.absent("data.patch", d.Patch != "" && d.Action != "fs.write", "unless action is fs.write")
	c.absent("data.lines", d.Lines != nil && d.Action != "fs.write", "unless action is fs.write")
	if d.Lines != nil {
		c.atLeast("data.lines.added", d.Lines.Added, 0)
		c.atLeast("data.lines.deleted", d.Lines.Deleted, 0)
	}
}

func (d PermissionResolved) validate(c *checker) {
	c.nonEmpty("data.permissionId", d.PermissionID)
	c.nonEmpty("data.callId", d.CallID)
	c.nonEmpty("data.action", d.Action)
	c.oneOf("data.scope", d.Scope, scopes)
	c.oneOf("data.decision", d.Decision, decisions)
}

func (d PermissionRevoked) validate(c *checker) {
	c.nonEmpty("data.sessionId", d.SessionID)
	c.nonEmpty("data.action", d.Action)
}

func (d JobStarted) validate(c *checker) {
	c.nonEmpty("data.sessionId", d.SessionID)
	c.nonEmpty("data.jobId", d.JobID)
	jobArgv(c, d.Argv)
	c.absent("data.callId", d.CallID != "" && d.TurnID == "", "without turnId")
}

func (d JobExited) validate(c *checker) {
	c.nonEmpty("data.sessionId", d.SessionID)
	c.nonEmpty("data.jobId", d.JobID)
	jobArgv(c, d.Argv)
	c.oneOf("data.reason", d.Reason, JobReasons)
	if c.ok() && d.Bytes < 0 {
		c.failf(errcode.EventInvalidField, "validate data.bytes: must be at least 0")
	}
	if c.ok() && len(d.Tail) > MaxJobTailBytes {
		c.failf(errcode.EventInvalidField, "validate data.tail: %d bytes, over %d", len(d.Tail), MaxJobTailBytes)
	}
	if c.ok() && !utf8.ValidString(d.Tail) {
		c.failf(errcode.EventInvalidField, "validate data.tail: not UTF-8")
	}
}

// jobArgv checks a job's command: one argument at least, none empty of
// meaning (the first names a program).
func jobArgv(c *checker, argv []string) {
	if c.ok() && len(argv) == 0 {
		c.failf(errcode.EventInvalidField, "validate data.argv: must not be empty")
	}
	if len(argv) > 0 {
		c.nonEmpty("data.argv[0]", argv[0])
	}
}

func (d ToolResult) validate(c *checker) {
	c.nonEmpty("data.callId", d.CallID)
	c.nonEmpty("data.tool", d.Tool)
	if d.OK {
		c.absent("data.error", d.Error != nil, "when ok is true")
	} else {
		c.present("data.error", d.Error != nil, "when ok is false")
	}
	if d.Error != nil {
		c.code("data.error.code", d.Error.Code)
		c.nonEmpty("data.error.message", d.Error.Message)
	}
	c.atLeast("data.durationMs", d.DurationMs, 0)
	c.absent("data.patch", d.Patch != "" && !d.OK, "when ok is false")
	c.absent("data.lines", d.Lines != nil && !d.OK, "when ok is false")
	if d.Lines != nil {
		c.atLeast("data.lines.added", d.Lines.Added, 0)
		c.atLeast("data.lines.deleted", d.Lines.Deleted, 0)
	}
}

func (d BudgetWarning) validate(c *checker) {
	c.oneOf("data.metric", d.Metric, metrics)
	c.atLeast("data.used", d.Used, 0)
	c.atLeast("data.limit", d.Limit, 0)
	c.atLeast("data.pct", d.Pct, 0)
}

func (d WorkspaceLifecycle) validate(c *checker) {
	c.nonEmpty("data.workspaceId", d.WorkspaceID)
	c.oneOf("data.backend", d.Backend, backends)
	c.oneOf("data.phase", d.Phase, phases)
	if d.Storage != "" {
		c.oneOf("data.storage", d.Storage, storages)
	}
	if d.Files != nil {
		c.atLeast("data.files", *d.Files, 0)
	}
	if sk := d.Skipped; sk != nil {
		c.atLeast("data.skipped.count", sk.Count, 1)
		if c.ok() && len(sk.Reasons) == 0 {
			c.failf(errcode.EventInvalidField, "validate data.skipped.reasons: must name at least one reason")
		}
		sum, at := 0, -1
		for i, r := range sk.Reasons {
			path := fmt.Sprintf("data.skipped.reasons[%d]", i)
			c.oneOf(path+".reason", r.Reason, SkipReasons)
			c.atLeast(path+".count", r.Count, 1)
			if k := slices.Index(SkipReasons, r.Reason); c.ok() && k <= at {
				c.failf(errcode.EventInvalidField, "validate %s.reason: reasons must be listed once each, in the order of SkipReasons", path)
			} else {
				at = k
			}
			sum += r.Count
		}
		if c.ok() && sum != sk.Count {
			c.failf(errcode.EventInvalidField, "validate data.skipped.count: %d is not the sum of the reasons' counts (%d)", sk.Count, sum)
		}
		if c.ok() && (len(sk.Paths) == 0 || len(sk.Paths) > min(sk.Count, MaxSkippedPaths)) {
			c.failf(errcode.EventInvalidField, "validate data.skipped.paths: must hold 1..%d paths", min(sk.Count, MaxSkippedPaths))
		}
		for i, p := range sk.Paths {
			c.nonEmpty(fmt.Sprintf("data.skipped.paths[%d]", i), p)
		}
	}
	for i, m := range d.Mounts {
		at := fmt.Sprintf("data.mounts[%d]", i)
		c.nonEmpty(at+".what", m.What)
		c.nonEmpty(at+".source", m.Source)
		c.nonEmpty(at+".target", m.Target)
		if c.ok() && !strings.HasPrefix(m.Target, "/") {
			c.failf(errcode.EventInvalidField, "validate %s.target: must be an absolute path", at)
		}
	}
}

func (d TurnCompleted) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.oneOf("data.status", d.Status, statuses)
	why := "for status " + d.Status
	switch d.Status {
	case StatusCompleted:
		c.absent("data.errorCode", d.ErrorCode != "", why)
	case StatusFailed, StatusBudgetExceeded:
		c.present("data.errorCode", d.ErrorCode != "", why)
	}
	if d.Status != StatusCompleted {
		c.absent("data.truncated", d.Truncated, why)
	}
	if d.ErrorCode != "" {
		c.code("data.errorCode", d.ErrorCode)
	}
	c.atLeast("data.modelRequests", d.ModelRequests, 0)
	c.atLeast("data.toolCalls", d.ToolCalls, 0)
	c.usage(d.Usage)
}

func (d AgentStopped) validate(c *checker) {
	c.nonEmpty("data.agentId", d.AgentID)
	c.oneOf("data.status", d.Status, statuses)
	c.atLeast("data.steps", d.Steps, 0)
	c.atLeast("data.toolCalls", d.ToolCalls, 0)
	c.run(d.RunID, d.SessionID, d.TurnID)
}

func (d InputQueued) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.nonEmpty("data.messageId", d.MessageID)
	c.content("data.content", d.Content)
}

func (d InputWithdrawn) validate(c *checker) {
	c.run(d.RunID, d.SessionID, d.TurnID)
	c.nonEmpty("data.messageId", d.MessageID)
}

func (d ModelRetry) validate(c *checker) {
	c.nonEmpty("data.requestId", d.RequestID)
	c.atLeast("data.attempt", d.Attempt, 1)
	c.code("data.code", d.Code)
	c.atLeast("data.delayMs", d.DelayMs, 0)
	c.run(d.RunID, d.SessionID, d.TurnID)
}

func (d SettingsChanged) validate(c *checker) {
	c.nonEmpty("data.sessionId", d.SessionID)
	if c.ok() && len(d.Changed) == 0 {
		c.failf(errcode.EventInvalidField, "validate data.changed: must name at least one setting")
	}
	for i, name := range d.Changed {
		c.oneOf(fmt.Sprintf("data.changed[%d]", i), name, settingNames)
		if c.ok() && slices.Contains(d.Changed[:i], name) {
			c.failf(errcode.EventInvalidField, "validate data.changed: %s is named twice", name)
		}
	}
	c.nonEmpty("data.model", d.Model)
	if d.WindowTokens != 0 || d.ThresholdTokens != 0 || d.TailMessages != 0 || d.ReserveTokens != 0 {
		// All zero: a session without compaction.
		c.atLeast("data.windowTokens", d.WindowTokens, 1)
		c.atLeast("data.thresholdTokens", d.ThresholdTokens, 1)
		c.atLeast("data.tailMessages", d.TailMessages, 1)
	}
	c.atLeast("data.reserveTokens", d.ReserveTokens, 0)
	c.atLeast("data.budgetTokens", d.BudgetTokens, 0)
	c.atLeast("data.maxTokens", d.MaxTokens, 0)
	if d.Approve != "" {
		c.oneOf("data.approve", d.Approve, approvals)
	}
}

func (d ToolOutput) validate(c *checker) {
	c.nonEmpty("data.callId", d.CallID)
	c.oneOf("data.stream", d.Stream, []string{StreamStdout, StreamStderr})
	c.atLeast("data.offset", d.Offset, 0)
	if c.ok() && d.Text == "" && !d.Truncated {
		c.failf(errcode.EventInvalidField, "validate data.text: must not be empty (unless truncated)")
	}
	if c.ok() && len(d.Text) > MaxToolOutputBytes {
		c.failf(errcode.EventInvalidField, "validate data.text: %d bytes, over %d", len(d.Text), MaxToolOutputBytes)
	}
	if c.ok() && !utf8.ValidString(d.Text) {
		c.failf(errcode.EventInvalidField, "validate data.text: not UTF-8")
	}
}

func (d WorkspaceRecovered) validate(c *checker) {
	c.nonEmpty("data.sessionId", d.SessionID)
	c.nonEmpty("data.turnId", d.TurnID)
	if !d.Discarded {
		c.nonEmpty("data.container", d.Container)
	}
}

func (d SessionForked) validate(c *checker) {
	c.nonEmpty("data.sessionId", d.SessionID)
	c.nonEmpty("data.fromSessionId", d.FromSessionID)
	// An empty fromTurnId is a fork from nothing: the forked session
	// finished no turn.
}

func (d SessionRewound) validate(c *checker) {
	c.nonEmpty("data.sessionId", d.SessionID)
	c.nonEmpty("data.toTurnId", d.ToTurnID)
	c.atLeast("data.toTurn", d.ToTurn, 1)
	if d.FromTurnID == "" {
		c.atLeast("data.fromTurn", d.FromTurn, 0)
	} else {
		c.atLeast("data.fromTurn", d.FromTurn, 1)
	}
	c.absent("data.fromTurn", d.FromTurnID == "" && d.FromTurn != 0, "without fromTurnId")
}

func (d PatchApplied) validate(c *checker) {
	c.nonEmpty("data.sessionId", d.SessionID)
	c.nonEmpty("data.turnId", d.TurnID)
	c.nonEmpty("data.root", d.Root)
	if c.ok() && !isSHA256(d.SHA256) {
		c.failf(errcode.EventInvalidField, "validate data.sha256: want 64 lowercase hex digits")
	}
	if c.ok() && len(d.Files) == 0 {
		c.failf(errcode.EventInvalidField, "validate data.files: must not be empty")
	}
	for i, f := range d.Files {
		c.nonEmpty(fmt.Sprintf("data.files[%d].path", i), f.Path)
		c.atLeast(fmt.Sprintf("data.files[%d].added", i), f.Added, 0)
		c.atLeast(fmt.Sprintf("data.files[%d].deleted", i), f.Deleted, 0)
	}
	c.nonEmpty("data.patch", d.Patch)
	if c.ok() && !utf8.ValidString(d.Patch) {
		c.failf(errcode.EventInvalidField, "validate data.patch: not UTF-8")
	}
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
