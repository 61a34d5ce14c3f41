package event_test

import (
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

func TestUserCallKind(t *testing.T) {
	const msg, req = "msg-0001", "req-0001"
	for _, tc := range []struct {
		name string
		d    event.ToolCall
		want string
	}{
		{"!command", event.ToolCall{RequestID: msg, ModelCallID: event.UserShellCallID(msg)}, event.UserShell},
		{"@mention", event.ToolCall{RequestID: msg, ModelCallID: event.UserMentionCallID(msg, 3)}, event.UserMention},
		{"model's call", event.ToolCall{RequestID: req, ModelCallID: "call_1"}, ""},
		{"model naming its call like the user's", event.ToolCall{RequestID: req, ModelCallID: "user-" + req + "-shell"}, ""},
		{"another message's call", event.ToolCall{RequestID: msg, ModelCallID: event.UserShellCallID("msg-0002")}, ""},
		{"no request", event.ToolCall{ModelCallID: "user--shell"}, ""},
	} {
		if got := event.UserCallKind(tc.d); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
