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

// CanonicalHead's rule: a type or ID needing a JSON escape (a control
// byte below 0x20, DEL and bytes above it, a quote, a backslash) is never
// a canonical head, whatever the body says; printable ASCII from the space
// to '~' is, when the body starts with exactly that envelope; a body
// shorter than the envelope is not.
func TestCanonicalHeadNeedsPlainASCII(t *testing.T) {
	head := func(typ, id string) []byte { return []byte(`{"v":1,"type":"` + typ + `","eventId":"` + id + `","at":`) }
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"evt-1", true}, {"a b", true}, {"a~b", true}, {" ", true}, {"~", true},
		{"a\x1fb", false}, {"a\x7fb", false}, {"a\x80b", false}, {"é", false},
		{`a"b`, false}, {`a\b`, false}, {"\x00", false},
	} {
		if got := event.CanonicalHead(head("turn.started", c.id), "turn.started", c.id); got != c.want {
			t.Errorf("CanonicalHead(id %q) = %v, want %v", c.id, got, c.want)
		}
		if got := event.CanonicalHead(head(c.id, "evt-1"), c.id, "evt-1"); got != c.want {
			t.Errorf("CanonicalHead(type %q) = %v, want %v", c.id, got, c.want)
		}
	}
	full := []byte(`{"v":1,"type":"turn.started","eventId":"evt-1",`)
	if !event.CanonicalHead(full, "turn.started", "evt-1") {
		t.Errorf("CanonicalHead refused the bare envelope %s", full)
	}
	for n := range len(full) {
		if event.CanonicalHead(full[:n], "turn.started", "evt-1") {
			t.Errorf("CanonicalHead accepted the first %d bytes of the envelope", n)
		}
	}
}

// Summarize reads a turn's end: its status and total tokens, zero tokens
// included (a turn that never reached the model still ends).
func TestSummarizeTurnCompleted(t *testing.T) {
	for _, total := range []int{0, 42} {
		done := encodeData(t, event.TurnCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1",
			Status: event.StatusCompleted, Usage: model.Usage{TotalTokens: total}})
		s, err := event.Summarize(done, "turn.completed", "evt-1")
		if err != nil || s.TurnStatus != event.StatusCompleted || s.TotalTokens != int64(total) || s.TurnStarted || s.HasUserText {
			t.Fatalf("turn.completed with %d tokens: %+v %v", total, s, err)
		}
	}
}
