package runtime

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// FuzzFitCall: whatever name and JSON arguments a provider sends, the call
// as fitted is recorded (tool.call and message.completed encode), is
// bounded, and keeps what was valid: arguments that were valid UTF-8 JSON
// and not null come back unchanged; text the runtime answers
// TOOL_BAD_INPUT for is a JSON string.
func FuzzFitCall(f *testing.F) {
	f.Add("fs.read", []byte(`{"path":"README.md"}`), false)
	f.Add("git.diff", []byte(`null`), false)
	f.Add("git.diff", []byte(" null\n"), false)
	f.Add("fs.read", []byte("{\"path\":\"READ\xffME\"}"), false)
	f.Add("fs.\xffread", []byte(`[1,"\u00e9"]`), false)
	f.Add("fs.read", []byte(`"{\"path\""`), true)
	f.Fuzz(func(t *testing.T, name string, args []byte, bad bool) {
		if name == "" || !json.Valid(args) || (bad && args[0] != '"') {
			return // the stream check refuses these before fitCall
		}
		c, replaced := fitCall(model.ToolCall{ID: "call_1", Name: name, Arguments: args, BadArguments: bad})
		if !utf8.ValidString(c.Name) || len(c.Name) > MaxToolNameBytes+64 || !json.Valid(c.Arguments) || !utf8.Valid(c.Arguments) {
			t.Fatalf("fitted call %q %q", c.Name, c.Arguments)
		}
		if c.BadArguments && c.Arguments[0] != '"' {
			t.Fatalf("bad arguments kept as %q, not as a JSON string", c.Arguments)
		}
		if replaced != (!utf8.ValidString(name) || (!bad && !utf8.Valid(args) && strings.TrimSpace(string(args)) != "null")) {
			t.Fatalf("replaced = %v for %q %q", replaced, name, args)
		}
		if utf8.Valid(args) && !bad && strings.TrimSpace(string(args)) != "null" && string(c.Arguments) != string(args) {
			t.Fatalf("valid arguments %q changed to %q", args, c.Arguments)
		}
		d := event.ToolCall{CallID: "call-1", Tool: c.Name, Input: rawOrString(c.Arguments), ModelCallID: c.ID, RequestID: "req-1",
			RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1"}
		if _, err := event.Encode(event.Event{ID: "evt-1", Type: event.TypeToolCall, At: time.Unix(1, 0), Actor: event.ActorKernel, Data: d}); err != nil {
			t.Fatalf("tool.call of the fitted call: %v", err)
		}
		m := event.MessageCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", MessageID: "msg-1", Role: model.RoleAssistant,
			RequestID: "req-1", FinishReason: "tool_calls", ToolCalls: []model.ToolCall{c}}
		if _, err := event.Encode(event.Event{ID: "evt-2", Type: event.TypeMessageCompleted, At: time.Unix(1, 0), Actor: event.ActorModel, Data: m}); err != nil {
			t.Fatalf("message.completed of the fitted call: %v", err)
		}
	})
}
