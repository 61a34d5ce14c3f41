package runtime_test

import (
	"testing"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/tools"
)

// With the ratio estimator, a request before any usage report is counted
// by its character mix (char-mix/v1); a plausible
// report then calibrates (reported-usage/v1); an implausible one (more
// tokens than bytes) falls back to the byte count (utf8-upper-bound/v1).
func TestEstimatorRatio(t *testing.T) {
	fm := script(t, `[
	  {"toolCalls":[{"id":"c1","name":"fs.list","arguments":{"path":"."}}],"usage":{"promptTokens":1000,"completionTokens":5}},
	  {"toolCalls":[{"id":"c2","name":"fs.read","arguments":{"path":"README.md"}}],"usage":{"promptTokens":99000000,"completionTokens":5}},
	  {"content":"done","usage":{"promptTokens":1200,"completionTokens":5}}]`)
	f := newFixture(t, fm, fm, func(c *runtime.SessionConfig, s *checkpoint.Settings) {
		c.Estimator = compaction.AlgorithmRatio
		s.Context = compaction.Policy{WindowTokens: 1000000, ThresholdTokens: 800000, TailMessages: 4, ReserveTokens: 1000}
	})
	if out := f.wait(f.start("list")); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	acc := ofType[event.ContextAccounted](f.events())
	want := []string{compaction.AlgorithmRatio, compaction.AlgorithmReported, compaction.Algorithm}
	if len(acc) != len(want) {
		t.Fatalf("%d context.accounted, want %d", len(acc), len(want))
	}
	for i, a := range acc {
		if a.Algorithm != want[i] {
			t.Errorf("request %d: algorithm %s, want %s", i+1, a.Algorithm, want[i])
		}
	}
	// The first figure is a third or less of the byte count the last one
	// (after the implausible report) uses for a larger request.
	if acc[0].OccupancyTokens*3 > acc[2].OccupancyTokens {
		t.Errorf("ratio estimate %d, byte count %d", acc[0].OccupancyTokens, acc[2].OccupancyTokens)
	}
}

// A session's configuration is checked as it opens: no model, no
// workspace or an unknown estimator is RUNTIME_INVALID_INPUT, and the
// session is not registered (its ID opens afterwards).
func TestSessionConfigInvalid(t *testing.T) {
	fm := script(t, `[]`)
	ws, err := workspace.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(runtime.Config{})
	_, log := memLog(t, "sess-config", "test-owner")
	settings := checkpoint.Settings{Model: "fake", Tools: tools.ModelSpecs()}
	for name, cfg := range map[string]runtime.SessionConfig{
		"no model":          {Workspace: ws},
		"no workspace":      {Model: fm},
		"unknown estimator": {Model: fm, Workspace: ws, Estimator: "guess/v1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := rt.OpenSession(t.Context(), log, cfg, settings)
			mustCode(t, err, errcode.RuntimeInvalidInput)
			_, err = rt.RestoreSession(t.Context(), log, cfg, nil, settings)
			mustCode(t, err, errcode.RuntimeInvalidInput)
		})
	}
	s, err := rt.OpenSession(t.Context(), log, runtime.SessionConfig{Model: fm, Workspace: ws}, settings)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}
