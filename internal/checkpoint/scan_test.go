package checkpoint_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
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

// An empty log restores to nothing: no checkpoint, and both seqs -1 (no
// event yet), as a new session starts.
func TestRestoreEmptyLog(t *testing.T) {
	got, err := checkpoint.RestoreLog(nil)
	if err != nil || got != (checkpoint.Restored{AfterSeq: -1, LastSeq: -1}) {
		t.Fatalf("RestoreLog(nil) = %+v, %v", got, err)
	}
}

// sized returns cp with its system text grown so that its canonical
// payload is n bytes, and that payload.
func sized(t *testing.T, cp *checkpoint.Checkpoint, n int) (*checkpoint.Checkpoint, []byte) {
	t.Helper()
	c := *cp
	payload, err := checkpoint.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	c.Settings.System += strings.Repeat("x", n-len(payload))
	if payload, err = checkpoint.Marshal(&c); err != nil || len(payload) != n {
		t.Fatalf("payload of %d bytes, want %d: %v", len(payload), n, err)
	}
	return &c, payload
}

// The payload bound is inclusive, in Parse and in Save alike: a payload
// of exactly MaxBytes (a valid checkpoint whose system text fills it) is
// taken, one byte more is RUNTIME_CHECKPOINT_INVALID.
func TestParseBoundIsInclusive(t *testing.T) {
	log, err := readLog(t, filepath.Join("testdata", "logs", "good-one-turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cp := scanLog(t, log).Latest
	for n, code := range map[int]errcode.Code{checkpoint.MaxBytes: "", checkpoint.MaxBytes + 1: errcode.RuntimeCheckpointInvalid} {
		c, payload := sized(t, cp, n)
		if _, err := checkpoint.Parse(payload); errcode.Of(err) != code {
			t.Errorf("Parse of %d bytes: code %q, want %q", n, errcode.Of(err), code)
		}
		if _, _, _, err := (checkpoint.Row{}).Save(c); errcode.Of(err) != code {
			t.Errorf("Save of %d bytes: code %q, want %q", n, errcode.Of(err), code)
		}
	}
}

// A next request's counters start at 0: boundary, step and max tokens of 0
// parse, -1 is RUNTIME_CHECKPOINT_INVALID.
func TestNextRequestCountersFromZero(t *testing.T) {
	log, err := readLog(t, filepath.Join("testdata", "logs", "good-one-turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	req := scanLog(t, log).Request
	for i, code := range []errcode.Code{"", "", errcode.RuntimeCheckpointInvalid, errcode.RuntimeCheckpointInvalid} {
		n := []int{0, -1}[i/2]
		c := *req
		next := *c.NextRequest
		if i%2 == 0 {
			next.Boundary = n
		} else {
			next.Step = n
		}
		c.NextRequest = &next
		payload, err := checkpoint.Marshal(&c)
		if err == nil {
			_, err = checkpoint.Parse(payload)
		}
		if errcode.Of(err) != code {
			t.Errorf("boundary %d: code %q, want %q (%v)", n, errcode.Of(err), code, err)
		}
	}
}

// Counters and cursors are bounded inclusively: zero counters, a tail or
// elision cursor at the end of the history and a compaction through the
// current revision parse; one past any bound is RUNTIME_CHECKPOINT_INVALID.
func TestCountersAndCursorsInclusive(t *testing.T) {
	log, err := readLog(t, filepath.Join("testdata", "logs", "good-one-turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cp := scanLog(t, log).Latest
	total := len(cp.History.Messages)
	for name, c := range map[string]struct {
		edit func(*checkpoint.Checkpoint)
		code errcode.Code
	}{
		"zero counters": {func(c *checkpoint.Checkpoint) {
			c.Accounting.ModelRequests, c.Accounting.ToolCalls, c.Accounting.TranscriptBytes = 0, 0, 0
		}, ""},
		"cursors at the end": {func(c *checkpoint.Checkpoint) {
			c.Context.Compaction.TailStart, c.Context.Compaction.ElideBefore = total, total
			c.Context.Compaction.ThroughRevision = c.History.Revision
		}, ""},
		"negative model requests": {func(c *checkpoint.Checkpoint) { c.Accounting.ModelRequests = -1 }, errcode.RuntimeCheckpointInvalid},
		"negative tool calls":     {func(c *checkpoint.Checkpoint) { c.Accounting.ToolCalls = -1 }, errcode.RuntimeCheckpointInvalid},
		"negative transcript":     {func(c *checkpoint.Checkpoint) { c.Accounting.TranscriptBytes = -1 }, errcode.RuntimeCheckpointInvalid},
		"tail past the end":       {func(c *checkpoint.Checkpoint) { c.Context.Compaction.TailStart = total + 1 }, errcode.RuntimeCheckpointInvalid},
		"elision past the end":    {func(c *checkpoint.Checkpoint) { c.Context.Compaction.ElideBefore = total + 1 }, errcode.RuntimeCheckpointInvalid},
		"through a later revision": {func(c *checkpoint.Checkpoint) {
			c.Context.Compaction.ThroughRevision = c.History.Revision + 1
		}, errcode.RuntimeCheckpointInvalid},
	} {
		c2 := *cp
		c.edit(&c2)
		payload, err := checkpoint.Marshal(&c2)
		if err == nil {
			_, err = checkpoint.Parse(payload)
		}
		if errcode.Of(err) != c.code {
			t.Errorf("%s: code %q, want %q (%v)", name, errcode.Of(err), c.code, err)
		}
	}
}
