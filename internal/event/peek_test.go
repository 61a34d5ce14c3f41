package event_test

import (
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

func encodeData(t *testing.T, d event.Data) []byte {
	t.Helper()
	b, err := event.Encode(event.Event{Type: d.EventType(), ID: "evt-1", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Actor: "kernel", Data: d})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What a store reads of an event without decoding it agrees with the
// codec: the canonical head, the turn, the summary fields.
func TestSummarize(t *testing.T) {
	started := encodeData(t, event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", InputMessageID: "msg-1"})
	if !event.CanonicalHead(started, "turn.started", "evt-1") || event.CanonicalHead(started, "turn.started", "evt-2") || event.CanonicalHead(started, `a"b`, "evt-1") {
		t.Fatal("CanonicalHead disagrees with Encode")
	}
	if got := event.TurnOf(started); got != "turn-1" {
		t.Fatalf("TurnOf = %q", got)
	}
	if s, err := event.Summarize(started, "turn.started", "evt-1"); err != nil || !s.TurnStarted {
		t.Fatalf("turn.started: %+v %v", s, err)
	}
	user := encodeData(t, event.MessageCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", MessageID: "msg-1", Role: model.RoleUser, Content: "hello"})
	if s, err := event.Summarize(user, "message.completed", "evt-1"); err != nil || !s.HasUserText || s.UserText != "hello" {
		t.Fatalf("message.completed: %+v %v", s, err)
	}
	for _, c := range []struct {
		name, typ, id string
		body          string
	}{
		{"not an object", "turn.started", "evt-1", `[1]`},
		{"other type", "turn.completed", "evt-1", string(started)},
		{"other id", "turn.started", "evt-2", string(started)},
		{"no status", "turn.completed", "evt-1", `{"type":"turn.completed","eventId":"evt-1","data":{"usage":{"totalTokens":1}}}`},
		{"negative tokens", "turn.completed", "evt-1", `{"type":"turn.completed","eventId":"evt-1","data":{"status":"completed","usage":{"totalTokens":-1}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := event.Summarize([]byte(c.body), c.typ, c.id)
			if errcode.Of(err) != errcode.EventNotObject {
				t.Fatalf("code %s", errcode.Of(err))
			}
		})
	}
}
