package checkpoint_test

import (
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// The current turn's request is recorded by ID and must name a user
// message of the history; a checkpoint without one (every log written
// before it was recorded) parses as before.
func TestTurnRequestNamesAUserMessage(t *testing.T) {
	log, err := readLog(t, filepath.Join("testdata", "logs", "good-one-turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rp, err := checkpoint.RestoreLog(log)
	if err != nil {
		t.Fatal(err)
	}
	cp := *rp.Checkpoint
	if cp.Context.TurnRequest != "" || cp.TurnMessage() != nil {
		t.Fatalf("an old log has turn request %q", cp.Context.TurnRequest)
	}
	var userID, otherID string
	for _, m := range cp.History.Messages {
		if m.Role == model.RoleUser && userID == "" {
			userID = m.ID
		} else if m.Role != model.RoleUser && otherID == "" {
			otherID = m.ID
		}
	}
	for _, tc := range []struct {
		id   string
		code errcode.Code
	}{
		{userID, ""},
		{otherID, errcode.RuntimeCheckpointInvalid},
		{"msg-none", errcode.RuntimeCheckpointInvalid},
	} {
		c := cp
		c.Context.TurnRequest = tc.id
		b, err := checkpoint.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := checkpoint.Parse(b)
		if errcode.Of(err) != tc.code && !(tc.code == "" && err == nil) {
			t.Errorf("turn request %s: %v, want %s", tc.id, err, tc.code)
		}
		if tc.code == "" && (got.TurnMessage() == nil || got.TurnMessage().ID != userID) {
			t.Errorf("turn request %s: message %+v", tc.id, got.TurnMessage())
		}
	}
}

// The seen tool-call IDs are the history's: a log written before they
// were derived (each checkpoint listing them) and one written after
// (listing none) restore to the same set, with nothing extra to carry.
func TestSeenCallsFromTheHistory(t *testing.T) {
	for _, name := range []string{"good-two-turns", "good-two-turns-derived-seen-ids"} {
		log, err := readLog(t, filepath.Join("testdata", "logs", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		rp, err := checkpoint.RestoreLog(log)
		if err != nil {
			t.Fatal(err)
		}
		seen, extra := rp.Checkpoint.SeenCalls()
		if len(seen) != 2 || !seen["c1"] || !seen["c2"] || len(extra) != 0 {
			t.Errorf("%s: seen %v, extra %v", name, seen, extra)
		}
	}
	cp := checkpoint.Checkpoint{Control: checkpoint.Control{SeenModelCallIDs: []string{"a", "z"}},
		History: checkpoint.History{Messages: []model.Message{{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "a"}}}}}}
	if seen, extra := cp.SeenCalls(); len(seen) != 2 || len(extra) != 1 || extra[0] != "z" {
		t.Errorf("listed beyond the history: seen %v, extra %v", seen, extra)
	}
}
