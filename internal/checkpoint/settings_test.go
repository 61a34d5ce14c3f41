package checkpoint

import (
	"testing"
	"time"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/event"
)

func encoded(t *testing.T, d event.Data) []byte {
	t.Helper()
	b, err := event.Encode(event.Event{Type: d.EventType(), ID: event.NewID("evt"), At: time.Unix(0, 0), Actor: event.ActorUser, Data: d})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A settings change recorded after the last finished turn (flags on a
// resume that ran no turn, /model then quit) is what the next resume and
// the next fork start from.
func TestSettingsChangedAfterTheTurnFolds(t *testing.T) {
	cp := &Checkpoint{Identity: Identity{Phase: PhaseTerminal, TurnID: "turn-1"},
		Settings: Settings{Model: "fake:a.json", Context: compaction.Policy{WindowTokens: 128000, ThresholdTokens: 102400, TailMessages: 12, ReserveTokens: 8192}}}
	change := event.SettingsChanged{SessionID: "sess-1", Changed: []string{"model", "contextWindow"}, Model: "fake:b.json",
		WindowTokens: 64000, ThresholdTokens: 51200, TailMessages: 12, ReserveTokens: 8000, BudgetTokens: 500}
	tail := []Record{
		{Seq: 5, Type: string(event.TypeTurnCompleted), Body: []byte(`{"data":{"turnId":"turn-1"}}`)},
		{Seq: 6, Type: string(event.TypeSettingsChanged), Body: encoded(t, change)},
	}
	r, err := Restore(cp, 4, tail)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Checkpoint.Settings
	if got.Model != "fake:b.json" || got.Context.WindowTokens != 64000 || got.Budget.MaxModelTokens != 500 {
		t.Fatalf("restored settings %+v", got)
	}
	if cp.Settings.Model != "fake:a.json" {
		t.Fatal("Restore changed the caller's checkpoint")
	}

	var s Scan
	s.Finished = cp
	if err := s.Add(tail[1]); err != nil {
		t.Fatal(err)
	}
	if s.Finished.Settings.Model != "fake:b.json" {
		t.Fatalf("a fork would start on %s", s.Finished.Settings.Model)
	}
}

// A background job's end recorded after its turn finished (the job
// outlived the turn, or was stopped between turns) leaves the session
// resumable at that turn; a job.started there is still an interruption
// (only a tool call starts a job).
func TestJobExitedAfterTheTurnRestores(t *testing.T) {
	cp := &Checkpoint{Identity: Identity{Phase: PhaseTerminal, TurnID: "turn-1"}}
	code := 137
	tail := []Record{
		{Seq: 5, Type: string(event.TypeTurnCompleted), Body: []byte(`{"data":{"turnId":"turn-1"}}`)},
		{Seq: 6, Type: string(event.TypeJobExited), Body: encoded(t, event.JobExited{SessionID: "sess-1", TurnID: "turn-1",
			JobID: "job-1", Argv: []string{"sleep", "600"}, Reason: event.JobReasonClosed, ExitCode: &code})},
	}
	r, err := Restore(cp, 4, tail)
	if err != nil {
		t.Fatal(err)
	}
	if r.Checkpoint.Identity.TurnID != "turn-1" || r.LastSeq != 6 {
		t.Fatalf("restored %+v", r)
	}
	started := append(tail, Record{Seq: 7, Type: string(event.TypeJobStarted), Body: encoded(t, event.JobStarted{SessionID: "sess-1",
		TurnID: "turn-1", CallID: "c1", JobID: "job-2", Argv: []string{"sleep", "1"}})})
	if _, err := Restore(cp, 4, started); err == nil {
		t.Fatal("a job.started after the terminal checkpoint restored")
	}
}
