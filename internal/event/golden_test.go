package event_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

var update = flag.Bool("update", false, "rewrite testdata/events.jsonl from goldenEvents")

var goldenPath = filepath.Join("testdata", "events.jsonl")

// goldenAt is the instant of every golden event.
var goldenAt = time.Date(2026, 11, 29, 20, 41, 23, 123_000_000, time.UTC)

type named struct {
	name string
	ev   event.Event
}

func intp(n int) *int { return &n }

// goldenEvents is one valid event per type, and per message.completed role,
// in catalogue order. Its canonical lines are testdata/events.jsonl.
func goldenEvents() []named {
	const (
		run, sess, turn = "run-a1", "sess-a1", "turn-a1"
	)
	n := 0
	ev := func(typ event.Type, actor string, d event.Data) event.Event {
		n++
		return event.Event{
			Type:  typ,
			ID:    "evt-0196f0d0-3b1a-7c00-8000-0000000000" + string(rune('a'+n/10)) + string(rune('0'+n%10)),
			At:    goldenAt,
			Actor: actor,
			Data:  d,
		}
	}
	toolCall := model.ToolCall{ID: "call_9f2", Name: "fs.read", Arguments: json.RawMessage(`{"path":"cmd/main.go"}`)}
	return []named{
		{"agent.started", ev(event.TypeAgentStarted, event.ActorKernel, event.AgentStarted{
			AgentID: "agent-1", SessionID: sess, Model: "gpt-x", RunID: run, TurnID: turn,
		})},
		{"turn.started", ev(event.TypeTurnStarted, event.ActorKernel, event.TurnStarted{
			RunID: run, SessionID: sess, TurnID: turn, InputMessageID: "msg-u1",
		})},
		{"message.completed/user", ev(event.TypeMessageCompleted, event.ActorUser, event.MessageCompleted{
			RunID: run, SessionID: sess, TurnID: turn, MessageID: "msg-u1", Role: model.RoleUser,
			Content: "fix <b>&</b> in \"cmd/main.go\"\n— naïve ✓ \u2028",
		})},
		{"message.completed/assistant", ev(event.TypeMessageCompleted, event.ActorModel, event.MessageCompleted{
			RunID: run, SessionID: sess, TurnID: turn, MessageID: "msg-a1", Role: model.RoleAssistant,
			Content: "Reading it.", RequestID: "req-1", FinishReason: model.FinishToolCalls,
			ToolCalls: []model.ToolCall{toolCall},
		})},
		{"message.completed/tool", ev(event.TypeMessageCompleted, event.ActorTool, event.MessageCompleted{
			RunID: run, SessionID: sess, TurnID: turn, MessageID: "msg-t1", Role: model.RoleTool,
			Content: `{"path":"cmd/main.go","content":"package main\n","size":13}`, Name: "fs.read", ToolCallID: "call_9f2",
		})},
		{"message.delta", ev(event.TypeMessageDelta, event.ActorModel, event.MessageDelta{
			RunID: run, SessionID: sess, TurnID: turn, RequestID: "req-1", MessageID: "msg-a1", Sequence: 0, Delta: "Read",
		})},
		{"steering.queued", ev(event.TypeSteeringQueued, event.ActorUser, event.SteeringQueued{
			RunID: run, SessionID: sess, TurnID: turn, MessageID: "msg-s1", Content: "also update the README",
		})},
		{"steering.applied", ev(event.TypeSteeringApplied, event.ActorKernel, event.SteeringApplied{
			RunID: run, SessionID: sess, TurnID: turn, MessageIDs: []string{"msg-s1", "msg-s2"}, MessageRevision: 4,
		})},
		{"context.accounted", ev(event.TypeContextAccounted, event.ActorKernel, event.ContextAccounted{
			RunID: run, SessionID: sess, TurnID: turn, RequestID: "req-2", OccupancyTokens: 61234,
			WindowTokens: 200000, ReserveTokens: 8192, Algorithm: event.AlgorithmUTF8UpperBound, SummaryRequest: true,
		})},
		{"context.checkpoint", ev(event.TypeContextCheckpoint, event.ActorKernel, event.ContextCheckpoint{
			RunID: run, SessionID: sess, TurnID: turn, Version: 1, Summary: "The user wants a --verbose flag.",
			TailStart: 2, ThroughRevision: 5, Tail: []model.Message{
				{ID: "msg-a1", Role: model.RoleAssistant, Content: "", ToolCalls: []model.ToolCall{toolCall}},
				{ID: "msg-t1", Role: model.RoleTool, Content: "package main", ToolCallID: "call_9f2", Name: "fs.read"},
				{Role: model.RoleSystem, Content: "Conversation summary (v1): …"},
			},
		})},
		{"context.compacted", ev(event.TypeContextCompacted, event.ActorKernel, event.ContextCompacted{
			RunID: run, SessionID: sess, TurnID: turn, SummaryMessageID: "summary-1", Summary: "The user wants a --verbose flag.",
			BeforeMessages: 40, AfterMessages: 6, BeforeTokens: 150000, AfterTokens: 12000,
		})},
		{"runtime.checkpoint", ev(event.TypeRuntimeCheckpoint, event.ActorKernel, event.RuntimeCheckpoint{
			RunID: run, SessionID: sess, TurnID: turn, Version: 1,
			Payload: json.RawMessage(`{"identity":{"phase":"model","sessionTurns":["turn-a1"]},"history":{"version":1,"revision":5}}`),
		})},
		{"model.request", ev(event.TypeModelRequest, event.ActorKernel, event.ModelRequest{
			RequestID: "req-1", Model: "gpt-x", MessageCount: 3, RunID: run, SessionID: sess, TurnID: turn,
			Step: 1, ContextVersion: 1, MessageRevision: 3,
		})},
		{"model.response", ev(event.TypeModelResponse, event.ActorModel, event.ModelResponse{
			RequestID: "req-1", Model: "gpt-x", FinishReason: model.FinishToolCalls,
			Usage: model.Usage{PromptTokens: 1200, CompletionTokens: 34, TotalTokens: 1234}, RunID: run, SessionID: sess, TurnID: turn,
		})},
		{"tool.call", ev(event.TypeToolCall, event.ActorModel, event.ToolCall{
			CallID: "call-1", Tool: "fs.read", Input: json.RawMessage(`{"path":"cmd/main.go"}`), ModelCallID: "call_9f2",
			RequestID: "req-1", RunID: run, SessionID: sess, TurnID: turn,
		})},
		{"policy.decision", ev(event.TypePolicyDecision, event.ActorKernel, event.PolicyDecision{
			CallID: "call-1", Action: "fs.read", Subject: "cmd/main.go", Effect: event.EffectAllow,
			Reason: "reads are allowed", RuleID: "read-any", RunID: run, SessionID: sess, TurnID: turn,
		})},
		{"permission.requested", ev(event.TypePermissionRequested, event.ActorKernel, event.PermissionRequested{
			PermissionID: "perm-1", CallID: "call-2", Action: "process.exec", Subject: "go test ./...", Scope: event.ScopeOnce,
		})},
		{"permission.resolved", ev(event.TypePermissionResolved, event.ActorUser, event.PermissionResolved{
			PermissionID: "perm-1", CallID: "call-2", Action: "process.exec", Subject: "go test ./...", Scope: event.ScopeRun,
			Decision: event.DecisionAllow, Note: "fine for this run",
		})},
		{"tool.result", ev(event.TypeToolResult, event.ActorTool, event.ToolResult{
			CallID: "call-1", Tool: "fs.read", OK: true,
			Output: json.RawMessage(`{"path":"cmd/main.go","content":"package main\n","size":13}`), DurationMs: 3,
		})},
		{"tool.result/error", ev(event.TypeToolResult, event.ActorTool, event.ToolResult{
			CallID: "call-3", Tool: "fs.write", OK: false,
			Error: &event.ToolError{Code: "WORKSPACE_ISOLATION_REQUIRED", Message: "fs.write needs a Docker workspace"},
		})},
		{"budget.warning", ev(event.TypeBudgetWarning, event.ActorKernel, event.BudgetWarning{
			Metric: event.MetricTokens, Used: 50012, Limit: 100000, Pct: 50,
		})},
		{"workspace.lifecycle", ev(event.TypeWorkspaceLifecycle, event.ActorSystem, event.WorkspaceLifecycle{
			WorkspaceID: "ws-1", Backend: event.BackendDocker, Phase: event.PhaseOpened,
			ImageID: "sha256:1a2b3c", Files: intp(0),
			Skipped: &event.SkippedFiles{Count: 3, Reasons: []event.SkipCount{{Reason: "binary", Count: 2}, {Reason: "hardlink", Count: 1}},
				Paths: []string{"assets/logo.png", "data/dump.bin", "notes.txt"}},
			Storage: event.StorageDisk,
		})},
		{"turn.completed", ev(event.TypeTurnCompleted, event.ActorKernel, event.TurnCompleted{
			RunID: run, SessionID: sess, TurnID: turn, Status: event.StatusCompleted, OutputMessageID: "msg-a2",
			ModelRequests: 2, ToolCalls: 1,
			Usage: model.Usage{PromptTokens: 2400, CompletionTokens: 90, TotalTokens: 2490, Estimated: true}, Note: "done",
		})},
		{"agent.stopped", ev(event.TypeAgentStopped, event.ActorKernel, event.AgentStopped{
			AgentID: "agent-1", Status: event.StatusCompleted, Steps: 2, ToolCalls: 1, RunID: run, SessionID: sess, TurnID: turn,
		})},
		{"input.queued", ev(event.TypeInputQueued, event.ActorUser, event.InputQueued{
			RunID: run, SessionID: sess, TurnID: turn, MessageID: "msg-q1", Content: "then run the tests",
		})},
		{"input.withdrawn", ev(event.TypeInputWithdrawn, event.ActorUser, event.InputWithdrawn{
			RunID: run, SessionID: sess, TurnID: turn, MessageID: "msg-q1",
		})},
		{"model.retry", ev(event.TypeModelRetry, event.ActorKernel, event.ModelRetry{
			RequestID: "req-2", Attempt: 1, Code: "MODEL_RATE_LIMITED", DelayMs: 500, RunID: run, SessionID: sess, TurnID: turn,
		})},
		{"session.forked", ev(event.TypeSessionForked, event.ActorUser, event.SessionForked{
			SessionID: "sess-b2", FromSessionID: sess, FromTurnID: "turn-a0", AbandonedTurnID: turn,
		})},
		{"settings.changed", ev(event.TypeSettingsChanged, event.ActorUser, event.SettingsChanged{
			SessionID: sess, Changed: []string{"model", "contextWindow"}, Model: "fake:b.json",
			WindowTokens: 64000, ThresholdTokens: 51200, TailMessages: 12, ReserveTokens: 8000, Approve: "ask",
		})},
		{"tool.output", ev(event.TypeToolOutput, event.ActorTool, event.ToolOutput{
			CallID: "call-2", Stream: event.StreamStdout, Offset: 0, Text: "ok  \tgithub.com/x/y\t0.2s\n",
		})},
		{"tool.result/write", ev(event.TypeToolResult, event.ActorTool, event.ToolResult{
			CallID: "call-3", Tool: "fs.write", OK: true, Output: json.RawMessage(`{"path":"README.md","bytes":8}`), DurationMs: 9,
			Patch: "--- a/README.md\n+++ b/README.md\n@@ -1,2 +1 @@\n-# Demo\n-A CLI.\n+# demo\n", Lines: &event.LineCounts{Added: 1, Deleted: 2},
		})},
		// A fork of a session whose first turn was interrupted: it
		// continues from nothing.
		{"session.forked/empty", ev(event.TypeSessionForked, event.ActorUser, event.SessionForked{
			SessionID: "sess-b3", FromSessionID: sess, AbandonedTurnID: turn,
		})},
		{"workspace.recovered", ev(event.TypeWorkspaceRecovered, event.ActorUser, event.WorkspaceRecovered{
			SessionID: sess, TurnID: turn, Container: "harness-kept-0196f0d03b1a",
			Patch: "diff --git a/keep.txt b/keep.txt\nnew file mode 100644\n--- /dev/null\n+++ b/keep.txt\n@@ -0,0 +1 @@\n+keep me\n",
		})},
		{"session.rewound", ev(event.TypeSessionRewound, event.ActorUser, event.SessionRewound{
			SessionID: sess, FromTurnID: "turn-a3", FromTurn: 3, ToTurnID: turn, ToTurn: 1,
			Patch: "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n",
		})},
		{"session.rewound/undo", ev(event.TypeSessionRewound, event.ActorUser, event.SessionRewound{
			SessionID: sess, FromTurnID: turn, FromTurn: 1, ToTurnID: "turn-a3", ToTurn: 3, Undo: true,
		})},
		{"patch.applied", ev(event.TypePatchApplied, event.ActorUser, event.PatchApplied{
			SessionID: sess, TurnID: turn, Root: "/home/u/proj",
			SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			Files:  []event.PatchFile{{Path: "a.txt", Added: 1, Deleted: 1}, {Path: "new.txt", Added: 2}},
			Patch:  "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n",
		})},
		// A question with its subject: the call's input and, for a write, the diff.
		{"permission.requested/write", ev(event.TypePermissionRequested, event.ActorKernel, event.PermissionRequested{
			PermissionID: "perm-2", CallID: "call-4", Action: "fs.write", Subject: "notes.txt", Scope: event.ScopeOnce,
			Input: json.RawMessage(`{"contents":"one\nTWO\n","path":"notes.txt"}`),
			Patch: "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n",
			Lines: &event.LineCounts{Added: 1, Deleted: 1},
		})},
		{"permission.resolved/session", ev(event.TypePermissionResolved, event.ActorUser, event.PermissionResolved{
			PermissionID: "perm-3", CallID: "call-5", Action: "process.exec", Subject: "go test ./...", Scope: event.ScopeSession,
			Decision: event.DecisionAllow, Note: "approved for this session",
		})},
		{"permission.revoked", ev(event.TypePermissionRevoked, event.ActorUser, event.PermissionRevoked{
			SessionID: sess, Action: "process.exec",
		})},
		{"job.started", ev(event.TypeJobStarted, event.ActorKernel, event.JobStarted{
			SessionID: sess, TurnID: turn, CallID: "call-6", JobID: "job-1a2b3c4d", Argv: []string{"python3", "-m", "http.server", "8000"},
		})},
		{"job.exited", ev(event.TypeJobExited, event.ActorKernel, event.JobExited{
			SessionID: sess, TurnID: turn, JobID: "job-1a2b3c4d", Argv: []string{"python3", "-m", "http.server", "8000"},
			Reason: event.JobReasonStopped, ExitCode: ptrInt(143), Bytes: 97, Tail: "127.0.0.1 - - \"GET / HTTP/1.1\" 200 -\n",
		})},
		{"job.exited closed", ev(event.TypeJobExited, event.ActorKernel, event.JobExited{
			SessionID: sess, JobID: "job-5e6f7a8b", Argv: []string{"sleep", "600"}, Reason: event.JobReasonClosed,
		})},
	}
}

func mustEncode(t testing.TB, e event.Event) []byte {
	t.Helper()
	b, err := event.Encode(e)
	if err != nil {
		t.Fatalf("Encode(%s): %v", e.Type, err)
	}
	return b
}

// goldenLine returns the canonical line of the named golden event.
func goldenLine(t testing.TB, name string) string {
	t.Helper()
	for _, g := range goldenEvents() {
		if g.name == name {
			return string(mustEncode(t, g.ev))
		}
	}
	t.Fatalf("no golden event %q", name)
	return ""
}

func readGolden(t testing.TB) [][]byte {
	t.Helper()
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func TestGolden(t *testing.T) {
	golden := goldenEvents()
	var want bytes.Buffer
	for _, g := range golden {
		want.Write(mustEncode(t, g.ev))
		want.WriteByte('\n')
	}
	if *update {
		if err := os.WriteFile(goldenPath, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), string(got)); diff != "" {
		t.Fatalf("%s differs from Encode (-encode +file); rerun with -update if intended:\n%s", goldenPath, diff)
	}
	lines := readGolden(t)
	if len(lines) != len(golden) {
		t.Fatalf("%s has %d lines, want %d", goldenPath, len(lines), len(golden))
	}
	for i, line := range lines {
		g := golden[i]
		t.Run(g.name, func(t *testing.T) {
			if g.ev.Data.EventType() != g.ev.Type {
				t.Fatalf("Data.EventType() = %s, want %s", g.ev.Data.EventType(), g.ev.Type)
			}
			ev, err := event.Decode(line)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(g.ev, ev); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
			strict, err := event.DecodeStrict(line)
			if err != nil {
				t.Fatalf("DecodeStrict: %v", err)
			}
			if diff := cmp.Diff(ev, strict); diff != "" {
				t.Errorf("DecodeStrict differs from Decode (-fast +strict):\n%s", diff)
			}
			if re := mustEncode(t, ev); !bytes.Equal(re, line) {
				t.Errorf("Encode(Decode(line)):\n got %s\nwant %s", re, line)
			}
		})
	}
}

func TestGoldenCoversCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range goldenEvents() {
		seen[string(g.ev.Type)] = true
		if m, ok := g.ev.Data.(event.MessageCompleted); ok {
			seen[string(g.ev.Type)+"/"+string(m.Role)] = true
		}
	}
	want := []string{"message.completed/user", "message.completed/assistant", "message.completed/tool"}
	for _, typ := range event.Types() {
		want = append(want, string(typ))
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("no golden event for %s", w)
		}
	}
}

func TestTypes(t *testing.T) {
	want := []event.Type{
		"agent.started", "turn.started", "message.completed", "message.delta", "steering.queued",
		"steering.applied", "context.accounted", "context.checkpoint", "context.compacted",
		"runtime.checkpoint", "model.request", "model.response", "tool.call", "policy.decision",
		"permission.requested", "permission.resolved", "tool.result", "budget.warning",
		"workspace.lifecycle", "turn.completed", "agent.stopped",
		"input.queued", "input.withdrawn", "model.retry", "session.forked",
		"settings.changed",
		"tool.output", "workspace.recovered", "session.rewound", "patch.applied",
		"permission.revoked", "job.started", "job.exited",
	}
	got := event.Types()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Types() (-want +got):\n%s", diff)
	}
	for _, typ := range got {
		if et, n := event.Registered(typ); et != typ || n != len(want) {
			t.Errorf("registry: %s maps to data of %q among %d types, want its own among %d", typ, et, n, len(want))
		}
	}
	got[0] = "changed"
	if event.Types()[0] != event.TypeAgentStarted {
		t.Fatal("Types() shares its backing array with the caller")
	}
}

func TestNewID(t *testing.T) {
	for _, prefix := range []string{"evt", "msg", "req", "call", "perm", "summary"} {
		t.Run(prefix, func(t *testing.T) {
			var ids []string
			for range 64 {
				id := event.NewID(prefix)
				rest, ok := strings.CutPrefix(id, prefix+"-")
				if !ok {
					t.Fatalf("NewID(%q) = %q, want prefix %q", prefix, id, prefix+"-")
				}
				u, err := uuid.Parse(rest)
				if err != nil {
					t.Fatalf("NewID(%q) = %q: %v", prefix, id, err)
				}
				if u.Version() != 7 {
					t.Fatalf("NewID(%q) = %q: UUID version %d, want 7", prefix, id, u.Version())
				}
				ids = append(ids, id)
			}
			if !slices.IsSorted(ids) {
				t.Errorf("IDs made in sequence do not sort in order: %v", ids)
			}
			if len(slices.Compact(slices.Clone(ids))) != len(ids) {
				t.Errorf("NewID repeated an ID: %v", ids)
			}
		})
	}
}

func ptrInt(n int) *int { return &n }
