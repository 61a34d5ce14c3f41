package event_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// A compaction turn's turn.started carries compact (with its focus, if
// any) instead of an input message; a turn.started needs exactly one of
// the two.
func TestTurnStartedOfACompactionTurn(t *testing.T) {
	ts := goldenLine(t, "turn.started")
	for _, d := range []event.TurnStarted{
		{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", Compact: &event.CompactInput{}},
		{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", Compact: &event.CompactInput{Focus: "the parser"}},
	} {
		body := mustEncode(t, event.Event{Type: event.TypeTurnStarted, ID: "evt-1", At: time.Date(2026, 11, 29, 20, 41, 23, 123e6, time.UTC), Actor: event.ActorKernel, Data: d})
		got, err := event.Decode(body)
		if err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		if diff := cmp.Diff(d, got.Data); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
	for _, tc := range []struct {
		name, body string
		code       errcode.Code
	}{
		{"neither", sub(t, ts, `,"inputMessageId":"msg-u1"`, ``), errcode.EventMissingField},
		{"both", sub(t, ts, `"inputMessageId":"msg-u1"`, `"inputMessageId":"msg-u1","compact":{}`), errcode.EventInvalidField},
		{"empty input", sub(t, ts, `"inputMessageId":"msg-u1"`, `"inputMessageId":""`), errcode.EventMissingField},
	} {
		if _, err := event.Decode([]byte(tc.body)); errcode.Of(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
}
