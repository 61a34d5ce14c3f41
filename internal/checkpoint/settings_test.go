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
