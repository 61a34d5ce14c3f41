package event_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/event"
)

// The fast path's rule: every frame Encode writes is accepted by the fast
// path alone (no strict re-check: that is what keeps reading a log cheap)
// and yields the event Decode and the strict path yield; a frame that is
// not byte for byte canonical (an escape in the envelope, another key
// order, a missing closing brace, an unknown type) is left to the strict
// path.
func TestDecodeFastTakesEveryCanonicalFrame(t *testing.T) {
	for _, g := range goldenEvents() {
		line := mustEncode(t, g.ev)
		ev, ok := event.DecodeFast(line)
		if !ok {
			t.Errorf("%s: the fast path refused a canonical frame: %s", g.name, line)
			continue
		}
		if diff := cmp.Diff(g.ev, ev); diff != "" {
			t.Errorf("%s: fast path (-want +got):\n%s", g.name, diff)
		}
	}
	line := []byte(goldenLine(t, "turn.started"))
	for name, frame := range map[string][]byte{
		"escaped type":      bytes.Replace(line, []byte(`"type":"t`), []byte(`"type":"\u0074`), 1),
		"escaped eventId":   bytes.Replace(line, []byte(`"eventId":"`), []byte(`"eventId":"\u0030`), 1),
		"no closing brace":  bytes.TrimSuffix(line, []byte("}")),
		"space after brace": append(bytes.Clone(line), ' '),
		"unknown type":      bytes.Replace(line, []byte(`"type":"turn.started"`), []byte(`"type":"turn.startex"`), 1),
		"space in envelope": bytes.Replace(line, []byte(`{"v":1,"type":"`), []byte(`{"v":1, "type":"`), 1),
		"bad time":          bytes.Replace(line, []byte(`"at":"2`), []byte(`"at":"x`), 1),
	} {
		if bytes.Equal(frame, line) {
			t.Fatalf("%s: the edit did not apply to %s", name, line)
		}
		if _, ok := event.DecodeFast(frame); ok {
			t.Errorf("%s: the fast path accepted a non-canonical frame: %s", name, frame)
		}
	}
}
