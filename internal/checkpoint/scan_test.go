package checkpoint_test

import (
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/event"
)

func scanLog(t *testing.T, log []checkpoint.Record) *checkpoint.Scan {
	t.Helper()
	var s checkpoint.Scan
	for _, r := range log {
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	s.Done()
	return &s
}

// What a scan of a log holds: Request is the newest checkpoint that
// carries a next request (never one without); Abandoned names a turn
// started after the finished one that never finished, and is cleared when
// it names the finished turn itself.
func TestScanRequestAndAbandoned(t *testing.T) {
	log, err := readLog(t, filepath.Join("testdata", "logs", "good-one-turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s := scanLog(t, log)
	if s.Latest == nil || s.Finished == nil || s.Abandoned != "" {
		t.Fatalf("one finished turn: latest %v, finished %v, abandoned %q", s.Latest != nil, s.Finished != nil, s.Abandoned)
	}
	if s.Request == nil || s.Request.NextRequest == nil {
		t.Fatalf("Request = %+v, want the newest checkpoint with a next request", s.Request)
	}
	if s.Latest.NextRequest == nil && s.Request == s.Latest {
		t.Fatal("Request is the latest checkpoint, which has no next request")
	}
	turn := s.Finished.Identity.TurnID

	started := func(id string) event.TurnStarted {
		return event.TurnStarted{RunID: "run-x", SessionID: "sess-one", TurnID: id, InputMessageID: "msg-x"}
	}
	if got := scanLog(t, withEvent(t, log, started("turn-next"))); got.Abandoned != "turn-next" || got.Finished.Identity.TurnID != turn {
		t.Fatalf("a turn started after the finished one: abandoned %q, finished %s", got.Abandoned, got.Finished.Identity.TurnID)
	}
	if got := scanLog(t, withEvent(t, log, started(turn))); got.Abandoned != "" {
		t.Fatalf("a start naming the finished turn: abandoned %q, want none", got.Abandoned)
	}
}
