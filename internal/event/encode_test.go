package event_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

func goldenEvent(t *testing.T, name string) event.Event {
	t.Helper()
	for _, g := range goldenEvents() {
		if g.name == name {
			return g.ev
		}
	}
	t.Fatalf("no golden event %q", name)
	return event.Event{}
}

// edit returns the named golden event with its data changed by f.
func edit[T event.Data](t *testing.T, name string, f func(*T)) event.Event {
	t.Helper()
	e := goldenEvent(t, name)
	d := e.Data.(T)
	f(&d)
	e.Data = d
	return e
}

// envEdit returns the named golden event with its envelope changed by f.
func envEdit(t *testing.T, name string, f func(*event.Event)) event.Event {
	t.Helper()
	e := goldenEvent(t, name)
	f(&e)
	return e
}

// rawFrame writes e the way Encode would, without Encode's rules.
func rawFrame(t *testing.T, e event.Event) []byte {
	t.Helper()
	b, err := model.MarshalCanonical(struct {
		V       int        `json:"v"`
		Type    event.Type `json:"type"`
		EventID string     `json:"eventId"`
		At      string     `json:"at"`
		Actor   string     `json:"actor"`
		Data    event.Data `json:"data"`
	}{1, e.Type, e.ID, e.At.UTC().Format("2006-01-02T15:04:05.000Z"), e.Actor, e.Data})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// foreign implements event.Data but is not one of the package's types.
type foreign struct{ RunID string }

func (foreign) EventType() event.Type { return event.TypeTurnStarted }

func TestEncodeRejects(t *testing.T) {
	tests := []struct {
		name string
		ev   event.Event
		want errcode.Code
		// mirror: the bytes of ev exist and Decode must reject them with
		// the same code.
		mirror bool
	}{
		{"unknown type", envEdit(t, "turn.started", func(e *event.Event) { e.Type = "turn.begun" }), errcode.EventUnknownType, true},
		{"empty type", envEdit(t, "turn.started", func(e *event.Event) { e.Type = "" }), errcode.EventUnknownType, true},
		{"data of another type", envEdit(t, "turn.started", func(e *event.Event) { e.Type = event.TypeAgentStarted }), errcode.EventInvalidField, false},
		{"pointer data", envEdit(t, "turn.started", func(e *event.Event) { d := e.Data.(event.TurnStarted); e.Data = &d }), errcode.EventInvalidField, false},
		{"foreign data", envEdit(t, "turn.started", func(e *event.Event) { e.Data = foreign{RunID: "run-a1"} }), errcode.EventInvalidField, false},
		{"nil data", envEdit(t, "turn.started", func(e *event.Event) { e.Data = nil }), errcode.EventMissingField, true},
		{"empty eventId", envEdit(t, "turn.started", func(e *event.Event) { e.ID = "" }), errcode.EventInvalidField, true},
		{"bare eventId prefix", envEdit(t, "turn.started", func(e *event.Event) { e.ID = "evt-" }), errcode.EventInvalidField, true},
		{"eventId of another kind", envEdit(t, "turn.started", func(e *event.Event) { e.ID = event.NewID("msg") }), errcode.EventInvalidField, true},
		{"eventId not UTF-8", envEdit(t, "turn.started", func(e *event.Event) { e.ID = "evt-\xff" }), errcode.EventInvalidField, false},
		{"zero at", envEdit(t, "turn.started", func(e *event.Event) { e.At = time.Time{} }), errcode.EventInvalidField, true},
		{"at after 9999", envEdit(t, "turn.started", func(e *event.Event) { e.At = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }), errcode.EventInvalidField, false},
		{"empty actor", envEdit(t, "turn.started", func(e *event.Event) { e.Actor = "" }), errcode.EventInvalidField, true},
		{"unknown actor", envEdit(t, "turn.started", func(e *event.Event) { e.Actor = "robot" }), errcode.EventInvalidField, true},
		{"empty id", edit(t, "turn.started", func(d *event.TurnStarted) { d.TurnID = "" }), errcode.EventInvalidField, true},
		{"negative sequence", edit(t, "message.delta", func(d *event.MessageDelta) { d.Sequence = -1 }), errcode.EventInvalidField, true},
		{"empty steering", edit(t, "steering.queued", func(d *event.SteeringQueued) { d.Content = "" }), errcode.EventInvalidField, true},
		{"steering too long", edit(t, "steering.queued", func(d *event.SteeringQueued) {
			d.Content = strings.Repeat("ж", event.MaxContentRunes+1)
		}), errcode.EventInvalidField, true},
		{"steering not UTF-8", edit(t, "steering.queued", func(d *event.SteeringQueued) { d.Content = "also \xff" }), errcode.EventInvalidField, false},
		{"nil messageIds", edit(t, "steering.applied", func(d *event.SteeringApplied) { d.MessageIDs = nil }), errcode.EventInvalidField, false},
		{"empty messageIds", edit(t, "steering.applied", func(d *event.SteeringApplied) { d.MessageIDs = []string{} }), errcode.EventInvalidField, true},
		{"assistant without requestId", edit(t, "message.completed/assistant", func(d *event.MessageCompleted) { d.RequestID = "" }), errcode.EventMissingField, true},
		{"user with finishReason", edit(t, "message.completed/user", func(d *event.MessageCompleted) { d.FinishReason = model.FinishStop }), errcode.EventInvalidField, true},
		{"system role", edit(t, "message.completed/user", func(d *event.MessageCompleted) { d.Role = model.RoleSystem }), errcode.EventInvalidField, true},
		{"tool call arguments nil", edit(t, "message.completed/assistant", func(d *event.MessageCompleted) {
			d.ToolCalls = []model.ToolCall{{ID: "c1", Name: "fs.read"}}
		}), errcode.EventMissingField, true},
		{"tool call arguments not JSON", edit(t, "message.completed/assistant", func(d *event.MessageCompleted) {
			d.ToolCalls = []model.ToolCall{{ID: "c1", Name: "fs.read", Arguments: json.RawMessage(`{"path":`)}}
		}), errcode.EventInvalidField, false},
		{"tool call arguments not UTF-8", edit(t, "message.completed/assistant", func(d *event.MessageCompleted) {
			d.ToolCalls = []model.ToolCall{{ID: "c1", Name: "fs.read", Arguments: json.RawMessage("{\"path\":\"\xff\"}")}}
		}), errcode.EventInvalidField, false},
		{"input nil", edit(t, "tool.call", func(d *event.ToolCall) { d.Input = nil }), errcode.EventMissingField, true},
		{"input null", edit(t, "tool.call", func(d *event.ToolCall) { d.Input = json.RawMessage("null") }), errcode.EventMissingField, true},
		{"input not JSON", edit(t, "tool.call", func(d *event.ToolCall) { d.Input = json.RawMessage(`{"path"`) }), errcode.EventInvalidField, false},
		{"output blank", edit(t, "tool.result", func(d *event.ToolResult) { d.Output = json.RawMessage(" ") }), errcode.EventInvalidField, false},
		{"not ok without error", edit(t, "tool.result/error", func(d *event.ToolResult) { d.Error = nil }), errcode.EventMissingField, true},
		{"ok with error", edit(t, "tool.result", func(d *event.ToolResult) {
			d.Error = &event.ToolError{Code: "TOOL_CANCELED", Message: "canceled"}
		}), errcode.EventInvalidField, true},
		{"patch on a failed result", edit(t, "tool.result/error", func(d *event.ToolResult) { d.Patch = "@@ -1 +1 @@\n-a\n+b\n" }), errcode.EventInvalidField, true},
		{"line counts on a failed result", edit(t, "tool.result/error", func(d *event.ToolResult) { d.Lines = &event.LineCounts{Added: 1} }), errcode.EventInvalidField, true},
		{"negative line counts", edit(t, "tool.result/write", func(d *event.ToolResult) { d.Lines = &event.LineCounts{Added: 1, Deleted: -1} }), errcode.EventInvalidField, true},
		{"payload null", edit(t, "runtime.checkpoint", func(d *event.RuntimeCheckpoint) { d.Payload = json.RawMessage("null") }), errcode.EventMissingField, true},
		{"payload array", edit(t, "runtime.checkpoint", func(d *event.RuntimeCheckpoint) { d.Payload = json.RawMessage("[1]") }), errcode.EventInvalidField, true},
		{"checkpoint version 0", edit(t, "context.checkpoint", func(d *event.ContextCheckpoint) { d.Version = 0 }), errcode.EventInvalidField, true},
		{"tail content not UTF-8", edit(t, "context.checkpoint", func(d *event.ContextCheckpoint) {
			d.Tail = []model.Message{{Role: model.RoleUser, Content: "\xfe"}}
		}), errcode.EventInvalidField, false},
		{"failed without errorCode", edit(t, "turn.completed", func(d *event.TurnCompleted) { d.Status = event.StatusFailed }), errcode.EventMissingField, true},
		{"unknown storage", edit(t, "workspace.lifecycle", func(d *event.WorkspaceLifecycle) { d.Storage = "ram" }), errcode.EventInvalidField, true},
		{"negative files", edit(t, "workspace.lifecycle", func(d *event.WorkspaceLifecycle) { d.Files = intp(-1) }), errcode.EventInvalidField, true},
		{"skipped count off", edit(t, "workspace.lifecycle", func(d *event.WorkspaceLifecycle) { d.Skipped.Count = 4 }), errcode.EventInvalidField, true},
		{"skipped unknown reason", edit(t, "workspace.lifecycle", func(d *event.WorkspaceLifecycle) { d.Skipped.Reasons[0].Reason = "huge" }), errcode.EventInvalidField, true},
		{"skipped reasons out of order", edit(t, "workspace.lifecycle", func(d *event.WorkspaceLifecycle) {
			d.Skipped.Reasons[0], d.Skipped.Reasons[1] = d.Skipped.Reasons[1], d.Skipped.Reasons[0]
		}), errcode.EventInvalidField, true},
		{"skipped reason twice", edit(t, "workspace.lifecycle", func(d *event.WorkspaceLifecycle) { d.Skipped.Reasons[1].Reason = "binary" }), errcode.EventInvalidField, true},
		{"skipped reason count 0", edit(t, "workspace.lifecycle", func(d *event.WorkspaceLifecycle) {
			d.Skipped.Reasons[1].Count, d.Skipped.Count = 0, 2
		}), errcode.EventInvalidField, true},
		{"skipped without paths", edit(t, "workspace.lifecycle", func(d *event.WorkspaceLifecycle) { d.Skipped.Paths = []string{} }), errcode.EventInvalidField, true},
		{"skipped more paths than files", edit(t, "workspace.lifecycle", func(d *event.WorkspaceLifecycle) {
			d.Skipped.Paths = append(d.Skipped.Paths, "x")
		}), errcode.EventInvalidField, true},
		{"recovered without turn", edit(t, "workspace.recovered", func(d *event.WorkspaceRecovered) { d.TurnID = "" }), errcode.EventInvalidField, true},
		{"recovered without container", edit(t, "workspace.recovered", func(d *event.WorkspaceRecovered) { d.Container = "" }), errcode.EventInvalidField, true},
		{"skipped empty path", edit(t, "workspace.lifecycle", func(d *event.WorkspaceLifecycle) { d.Skipped.Paths[0] = "" }), errcode.EventInvalidField, true},
		{"retry attempt 0", edit(t, "model.retry", func(d *event.ModelRetry) { d.Attempt = 0 }), errcode.EventInvalidField, true},
		{"rewound without target", edit(t, "session.rewound", func(d *event.SessionRewound) { d.ToTurnID = "" }), errcode.EventInvalidField, true},
		{"rewound to turn 0", edit(t, "session.rewound", func(d *event.SessionRewound) { d.ToTurn = 0 }), errcode.EventInvalidField, true},
		{"rewound from a number without a turn", edit(t, "session.rewound", func(d *event.SessionRewound) { d.FromTurnID = "" }), errcode.EventInvalidField, true},
		{"applied without root", edit(t, "patch.applied", func(d *event.PatchApplied) { d.Root = "" }), errcode.EventInvalidField, true},
		{"applied hash short", edit(t, "patch.applied", func(d *event.PatchApplied) { d.SHA256 = "9f86" }), errcode.EventInvalidField, true},
		{"applied hash upper case", edit(t, "patch.applied", func(d *event.PatchApplied) { d.SHA256 = strings.ToUpper(d.SHA256) }), errcode.EventInvalidField, true},
		{"applied without files", edit(t, "patch.applied", func(d *event.PatchApplied) { d.Files = []event.PatchFile{} }), errcode.EventInvalidField, true},
		{"applied negative count", edit(t, "patch.applied", func(d *event.PatchApplied) { d.Files[0].Deleted = -1 }), errcode.EventInvalidField, true},
		{"applied file without path", edit(t, "patch.applied", func(d *event.PatchApplied) { d.Files[1].Path = "" }), errcode.EventInvalidField, true},
		{"applied without patch", edit(t, "patch.applied", func(d *event.PatchApplied) { d.Patch = "" }), errcode.EventInvalidField, true},
		{"fork without origin", edit(t, "session.forked", func(d *event.SessionForked) { d.FromSessionID = "" }), errcode.EventInvalidField, true},
		{"settings without change", edit(t, "settings.changed", func(d *event.SettingsChanged) { d.Changed = []string{} }), errcode.EventInvalidField, true},
		{"settings unknown name", edit(t, "settings.changed", func(d *event.SettingsChanged) { d.Changed = []string{"colour"} }), errcode.EventInvalidField, true},
		{"settings named twice", edit(t, "settings.changed", func(d *event.SettingsChanged) { d.Changed = []string{"model", "model"} }), errcode.EventInvalidField, true},
		{"settings window 0", edit(t, "settings.changed", func(d *event.SettingsChanged) { d.WindowTokens = 0 }), errcode.EventInvalidField, true},
		{"settings approve never", edit(t, "settings.changed", func(d *event.SettingsChanged) { d.Approve = "never" }), errcode.EventInvalidField, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := event.Encode(tt.ev)
			if got := errcode.Of(err); got != tt.want {
				t.Fatalf("Encode: code %q (%v), want %q", got, err, tt.want)
			}
			if b != nil {
				t.Errorf("Encode returned bytes with its error: %s", b)
			}
			if !tt.mirror {
				return
			}
			frame := rawFrame(t, tt.ev)
			if _, err := event.Decode(frame); errcode.Of(err) != tt.want {
				t.Errorf("Decode(%s): code %q (%v), want %q as Encode", frame, errcode.Of(err), err, tt.want)
			}
		})
	}
}

func TestEncodeCanonical(t *testing.T) {
	withTail := func(tail []model.Message) event.Event {
		return edit(t, "context.checkpoint", func(d *event.ContextCheckpoint) { d.Tail = tail })
	}
	stop := func(calls []model.ToolCall) event.Event {
		return edit(t, "message.completed/assistant", func(d *event.MessageCompleted) {
			d.FinishReason, d.ToolCalls = model.FinishStop, calls
		})
	}
	now := time.Now()
	tests := []struct {
		name string
		a, b event.Event
	}{
		{"same value", goldenEvent(t, "message.completed/assistant"), goldenEvent(t, "message.completed/assistant")},
		{"at in another zone, below the millisecond",
			goldenEvent(t, "turn.started"),
			envEdit(t, "turn.started", func(e *event.Event) {
				e.At = goldenAt.In(time.FixedZone("CET", 3600)).Add(999_999 * time.Nanosecond)
			})},
		{"at with a monotonic reading",
			envEdit(t, "turn.started", func(e *event.Event) { e.At = now }),
			envEdit(t, "turn.started", func(e *event.Event) { e.At = now.Round(0) })},
		{"nil tail", withTail(nil), withTail([]model.Message{})},
		{"empty tool calls", stop(nil), stop([]model.ToolCall{})},
		{"raw input with spaces",
			goldenEvent(t, "tool.call"),
			edit(t, "tool.call", func(d *event.ToolCall) { d.Input = json.RawMessage(" {\n  \"path\": \"cmd/main.go\"\n} ") })},
		{"empty output",
			goldenEvent(t, "tool.result/error"),
			edit(t, "tool.result/error", func(d *event.ToolResult) { d.Output = json.RawMessage{} })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustEncode(t, tt.a)
			b := mustEncode(t, tt.b)
			if !bytes.Equal(a, b) {
				t.Fatalf("equal values encode differently:\n%s\n%s", a, b)
			}
			if _, err := event.Decode(a); err != nil {
				t.Fatalf("Decode(Encode(v)): %v", err)
			}
		})
	}
}

func TestEncodeForm(t *testing.T) {
	b := mustEncode(t, goldenEvent(t, "message.completed/user"))
	for _, want := range []string{
		`{"v":1,"type":"message.completed","eventId":"evt-`,
		`"at":"2026-11-29T20:41:23.123Z","actor":"user","data":{"runId":`,
		`<b>&</b>`,    // no HTML escaping
		`\n— naïve ✓`, // control characters escaped, the rest verbatim
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("Encode = %s, want it to contain %s", b, want)
		}
	}
	if bytes.HasSuffix(b, []byte("\n")) {
		t.Error("Encode ends with a newline")
	}
}

// TestRoundTrip covers valid values at the edges: each encodes, decodes to
// an equal value, and re-encodes to the same bytes.
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		ev   event.Event
	}{
		{"escapes in the envelope", envEdit(t, "turn.started", func(e *event.Event) { e.ID = "evt-\"q\"\\\n\t<&>" })},
		{"control characters and unicode", edit(t, "message.completed/user", func(d *event.MessageCompleted) {
			d.Content = "\x00\x01\b\f\n\r\t\x1f\x7f \u2028\u2029 \ufffd é 🙂 </script>"
		})},
		{"longest steering", edit(t, "steering.queued", func(d *event.SteeringQueued) {
			d.Content = strings.Repeat("🙂", event.MaxContentRunes)
		})},
		{"latest at", envEdit(t, "turn.started", func(e *event.Event) {
			e.At = time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC)
		})},
		{"earliest at", envEdit(t, "turn.started", func(e *event.Event) {
			e.At = time.Date(1, 1, 1, 0, 0, 0, 1_000_000, time.UTC)
		})},
		{"largest count", edit(t, "budget.warning", func(d *event.BudgetWarning) { d.Used = int(^uint(0) >> 1) })},
		{"raw escapes kept verbatim", edit(t, "tool.call", func(d *event.ToolCall) {
			d.Input = json.RawMessage(`{"path":"caf\u00e9\/x","n":1.50,"e":1E3,"dup":1,"dup":2}`)
		})},
		{"raw string input", edit(t, "tool.call", func(d *event.ToolCall) { d.Input = json.RawMessage(`"ls -la"`) })},
		{"empty assistant content", edit(t, "message.completed/assistant", func(d *event.MessageCompleted) { d.Content = "" })},
		{"empty tail", edit(t, "context.checkpoint", func(d *event.ContextCheckpoint) { d.Tail = []model.Message{} })},
		{"canceled without errorCode", edit(t, "turn.completed", func(d *event.TurnCompleted) { d.Status = event.StatusCanceled })},
		{"optional keys left out", edit(t, "policy.decision", func(d *event.PolicyDecision) {
			d.Subject, d.Reason, d.RuleID = "", "", ""
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustEncode(t, tt.ev)
			got, err := event.Decode(b)
			if err != nil {
				t.Fatalf("Decode(%s): %v", b, err)
			}
			if diff := cmp.Diff(tt.ev, got); diff != "" {
				t.Errorf("Decode(Encode(v)) (-want +got):\n%s", diff)
			}
			if re := mustEncode(t, got); !bytes.Equal(re, b) {
				t.Errorf("re-encoding differs:\n got %s\nwant %s", re, b)
			}
		})
	}
}

// A discard records the patch the session goes on from (its earlier
// turns'): a discarded workspace.recovered may carry one, and it round-trips.
func TestDiscardedCarriesTheEarlierPatch(t *testing.T) {
	e := edit(t, "workspace.recovered", func(d *event.WorkspaceRecovered) { d.Discarded = true })
	b, err := event.Encode(e)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	got, err := event.Decode(b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if d := got.Data.(event.WorkspaceRecovered); !d.Discarded || d.Patch == "" || d.Patch != e.Data.(event.WorkspaceRecovered).Patch {
		t.Errorf("round trip = %+v", d)
	}
}
