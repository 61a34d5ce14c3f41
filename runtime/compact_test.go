package runtime_test

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
)

// compactFixture: a small window, no advertised tools (so the occupancy is
// the conversation), and a 3,000-byte file whose reading fills the prefix.
func compactFixture(t *testing.T, js string, p compaction.Policy, budget int64) *fixture {
	t.Helper()
	m := script(t, js)
	f := newFixture(t, m, m, func(_ *runtime.SessionConfig, s *checkpoint.Settings) {
		s.Tools = []model.ToolSpec{}
		s.System = "sys"
		s.Context = p
		s.Budget.MaxModelTokens = budget
	})
	writeFile(t, f.root, "big.txt", strings.Repeat("a", 3000))
	return f
}

const compactScript = `[
 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"big.txt"}}]},
 {"toolCalls":[{"id":"c2","name":"fs.list","arguments":{"path":"."}}]},
 {"toolCalls":[{"id":"c3","name":"fs.list","arguments":{"path":"."}}]},
 {"content":"SUMMARY: read big.txt and listed files twice.","usage":{"promptTokens":100,"completionTokens":10}},
 {"content":"done","usage":{"promptTokens":20,"completionTokens":3}}]`

var smallWindow = compaction.Policy{WindowTokens: 8000, ThresholdTokens: 4000, TailMessages: 2, ReserveTokens: 1000}

func TestCompactionView(t *testing.T) {
	f := compactFixture(t, compactScript, smallWindow, 0)
	out := f.wait(f.start("first request: keep this word for word"))
	if out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	reqs := f.model.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	// Request 4 is the summary round: instruction + transcript, no tools.
	sum := reqs[3]
	if len(sum.Tools) != 0 || len(sum.Messages) != 2 || sum.Messages[0].Content != compaction.SummaryInstruction {
		t.Errorf("summary request = %+v", sum.Messages)
	}
	// Request 5: summary message, the pinned first request, then the tail.
	got := reqs[4].Messages
	if len(got) != 4 {
		t.Fatalf("compacted view has %d messages: %+v", len(got), got)
	}
	if got[0].Role != model.RoleSystem || got[0].Content != compaction.SummaryPrefix+"SUMMARY: read big.txt and listed files twice." {
		t.Errorf("summary message = %+v", got[0])
	}
	if got[1].Role != model.RoleUser || got[1].Content != "first request: keep this word for word" {
		t.Errorf("pinned first request = %+v", got[1])
	}
	if got[2].ToolCalls[0].ID != "c3" || got[3].ToolCallID != "c3" {
		t.Errorf("tail = %+v", got[2:])
	}
	evs := f.events()
	cc := ofType[event.ContextCompacted](evs)
	if len(cc) != 1 || cc[0].BeforeMessages != 7 || cc[0].AfterMessages != 4 || cc[0].AfterTokens >= cc[0].BeforeTokens {
		t.Errorf("context.compacted = %+v", cc)
	}
	if n := len(ofType[event.ContextCheckpoint](evs)); n != 1 {
		t.Errorf("context.checkpoint = %d", n)
	}
	acc := ofType[event.ContextAccounted](evs)
	summaries := 0
	for _, a := range acc {
		if a.SummaryRequest {
			summaries++
		}
	}
	if summaries != 1 || len(acc) != 5 {
		t.Errorf("context.accounted: %d, summary %d", len(acc), summaries)
	}
	// The originals are all still in the checkpoint, and every request is
	// rebuilt byte for byte.
	cps := f.checkpoints()
	last := cps[len(cps)-1]
	if len(last.History.Messages) != 8 {
		t.Errorf("history keeps %d messages, want all 8", len(last.History.Messages))
	}
	wantRebuilt(t, cps, f.model.RequestsJSON())
}

// A summary whose usage exhausts the budget is charged (110 in the
// terminal usage, never refunded) and ends the turn at once: no model
// request follows it.
func TestCompactionUsageIsCharged(t *testing.T) {
	f := compactFixture(t, compactScript, smallWindow, 110)
	out := f.wait(f.start("go"))
	if out.Usage.TotalTokens != 110 {
		t.Fatalf("terminal usage = %+v, want 110", out.Usage)
	}
	if out.Status != runtime.StatusBudgetExceeded || out.ErrorCode != errcode.RuntimeBudgetExceeded {
		t.Errorf("outcome = %+v", out)
	}
	if n := len(f.model.Requests()); n != 4 {
		t.Errorf("%d model requests, want 4 (none after the summary)", n)
	}
	tc := ofType[event.TurnCompleted](f.events())
	if tc[0].Usage.TotalTokens != 110 {
		t.Errorf("turn.completed usage = %+v", tc[0].Usage)
	}
}

// Compacting inside a later turn keeps that turn's request word for word
// after the session's first one (it would otherwise live on only in the
// summary); the checkpoints rebuild every request, and a session restored
// after the compaction sends the same view.
func TestCompactionKeepsTheTurnsRequest(t *testing.T) {
	js := `[{"content":"hello"},` + strings.TrimPrefix(compactScript, "[")
	p := smallWindow
	p.ThresholdTokens += 300 // turn 1 adds to what the script's turn fills
	f := compactFixture(t, js, p, 0)
	if out := f.wait(f.start("first task: say hello")); out.Status != runtime.StatusCompleted {
		t.Fatalf("turn 1: %+v", out)
	}
	task := "second task: read big.txt, then list the files twice"
	if out := f.wait(f.start(task)); out.Status != runtime.StatusCompleted {
		t.Fatalf("turn 2: %+v", out)
	}
	reqs := f.model.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := reqs[5].Messages
	if len(got) != 5 || !compaction.IsSummary(got[0]) || got[1].Content != "first task: say hello" || got[2].Content != task ||
		got[2].Role != model.RoleUser || got[3].ToolCalls[0].ID != "c3" || got[4].ToolCallID != "c3" {
		t.Fatalf("compacted view in turn 2 = %+v", got)
	}
	cps := f.checkpoints()
	wantRebuilt(t, cps, f.model.RequestsJSON())
	if last := cps[len(cps)-1]; last.Context.TurnRequest == "" || last.TurnMessage().Content != task {
		t.Errorf("terminal checkpoint's turn request = %q", last.Context.TurnRequest)
	}
}

// A summary whose view is not smaller (here: a summary longer than what it
// replaces) commits nothing, yet its usage is charged: one that exhausts
// the budget ends the turn at once, with no request after it; without a
// budget the turn goes on and spends no second summary.
func TestCompactionSpentInVain(t *testing.T) {
	huge := `{"content":"` + strings.Repeat("summary ", 800) + `","usage":{"promptTokens":100,"completionTokens":10}}`
	summary := `{"content":"SUMMARY: read big.txt and listed files twice.","usage":{"promptTokens":100,"completionTokens":10}}`
	t.Run("budget", func(t *testing.T) {
		f := compactFixture(t, strings.Replace(compactScript, summary, huge, 1), smallWindow, 110)
		out := f.wait(f.start("go"))
		if out.Status != runtime.StatusBudgetExceeded || out.ErrorCode != errcode.RuntimeBudgetExceeded || out.Usage.TotalTokens != 110 {
			t.Fatalf("outcome = %+v, want budget_exceeded with the summary's 110 tokens charged", out)
		}
		if n := len(f.model.Requests()); n != 4 {
			t.Errorf("%d model requests, want 4 (none after the summary)", n)
		}
		if n := count(f.events(), event.TypeContextCompacted); n != 0 {
			t.Errorf("%d compactions committed", n)
		}
	})
	t.Run("once per turn", func(t *testing.T) {
		js := `[
 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"big.txt"}}]},
 {"toolCalls":[{"id":"c2","name":"fs.list","arguments":{"path":"."}}]},
 {"toolCalls":[{"id":"c3","name":"fs.list","arguments":{"path":"."}}]},
 ` + huge + `,
 {"toolCalls":[{"id":"c5","name":"fs.list","arguments":{"path":"."}}]},
 {"content":"done"}]`
		f := compactFixture(t, js, smallWindow, 0)
		out := f.wait(f.start("go"))
		if out.Status != runtime.StatusCompleted {
			t.Fatalf("outcome = %+v", out)
		}
		summaries := 0
		for _, a := range ofType[event.ContextAccounted](f.events()) {
			if a.SummaryRequest {
				summaries++
			}
		}
		if summaries != 1 || out.ModelRequests != 6 {
			t.Errorf("%d summary requests in %d requests, want 1 in 6", summaries, out.ModelRequests)
		}
	})
}

// A failed summary commits no replacement.
func TestCompactionFailedSummary(t *testing.T) {
	for name, step := range map[string]string{
		"empty":        `{"content":"   "}`,
		"model error":  `{"error":"MODEL_HTTP_ERROR"}`,
		"finish error": `{"content":"half a summ","finishReason":"error"}`,
	} {
		t.Run(name, func(t *testing.T) {
			js := strings.Replace(compactScript, `{"content":"SUMMARY: read big.txt and listed files twice.","usage":{"promptTokens":100,"completionTokens":10}}`, step, 1)
			f := compactFixture(t, js, smallWindow, 0)
			out := f.wait(f.start("go"))
			if out.ErrorCode != errcode.RuntimeSummaryFailed {
				t.Fatalf("outcome = %+v", out)
			}
			evs := f.events()
			if n := count(evs, event.TypeContextCompacted) + count(evs, event.TypeContextCheckpoint); n != 0 {
				t.Errorf("a failed compaction committed %d events", n)
			}
			cps := f.checkpoints()
			if c := cps[len(cps)-1].Context.Compaction; c.Compactions != 0 || c.Summary != "" {
				t.Errorf("compaction state = %+v", c)
			}
		})
	}
}

// A tail that does not fit the window cannot be fixed by compaction: a
// request (pinned word for word) that alone is over the window.
func TestCompactionOverflow(t *testing.T) {
	js := `[{"content":"S"}]`
	f := compactFixture(t, js, compaction.Policy{WindowTokens: 2000, ThresholdTokens: 1000, TailMessages: 2, ReserveTokens: 200}, 0)
	out := f.wait(f.start("go " + strings.Repeat("and on ", 300)))
	if out.ErrorCode != errcode.RuntimeContextOverflow {
		t.Fatalf("outcome = %+v", out)
	}
	if n := count(f.events(), event.TypeContextCompacted); n != 0 {
		t.Errorf("compacted %d times", n)
	}
}

// A single turn whose history is shorter than the tail still compacts:
// the tail shrinks to the newest complete round, and the first request
// stays pinned word for word.
func TestCompactionInsideTurnShrinksTail(t *testing.T) {
	js := `[
 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"big.txt"}}]},
 {"toolCalls":[{"id":"c2","name":"fs.read","arguments":{"path":"big.txt"}}]},
 {"content":"SUMMARY: read big.txt."},
 {"content":"done"}]`
	p := compaction.Policy{WindowTokens: 10000, ThresholdTokens: 5000, TailMessages: 12, ReserveTokens: 1000}
	f := compactFixture(t, js, p, 0)
	out := f.wait(f.start("the first request"))
	if out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	reqs := f.model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := reqs[3].Messages
	if len(got) != 4 || got[1].Content != "the first request" || got[2].ToolCalls[0].ID != "c2" || got[3].ToolCallID != "c2" {
		t.Fatalf("compacted view = %+v", got)
	}
	if n := count(f.events(), event.TypeContextCompacted); n != 1 {
		t.Errorf("compacted %d times", n)
	}
}

// Reported usage calibrates the occupancy: the first request is counted in
// bytes, the next ones from the reported prompt tokens; an implausible
// report (fewer tokens than a tenth of the bytes) falls back to bytes.
func TestCalibratedAccounting(t *testing.T) {
	js := `[
 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"big.txt"}}],"usage":{"promptTokens":10,"completionTokens":5}},
 {"toolCalls":[{"id":"c2","name":"fs.list","arguments":{"path":"."}}],"usage":{"promptTokens":900,"completionTokens":5}},
 {"content":"done","usage":{"promptTokens":1000,"completionTokens":5}}]`
	f := compactFixture(t, js, compaction.Policy{WindowTokens: 100000, ThresholdTokens: 80000, TailMessages: 2, ReserveTokens: 1000}, 0)
	out := f.wait(f.start("go"))
	if out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	acc := ofType[event.ContextAccounted](f.events())
	if len(acc) != 3 {
		t.Fatalf("%d context.accounted", len(acc))
	}
	// Request 1: no report yet. Request 2: the report of 10 tokens for
	// ~40 bytes is implausible. Request 3: 900 tokens reported for
	// request 2, plus the fs.list round at that ratio with the margin.
	if acc[0].Algorithm != compaction.Algorithm || acc[1].Algorithm != compaction.Algorithm || acc[2].Algorithm != compaction.AlgorithmReported {
		t.Fatalf("algorithms = %s %s %s", acc[0].Algorithm, acc[1].Algorithm, acc[2].Algorithm)
	}
	bytes2 := acc[1].OccupancyTokens
	if acc[2].OccupancyTokens <= 900 || acc[2].OccupancyTokens >= bytes2 {
		t.Errorf("calibrated occupancy %d, want above 900 and below the %d bytes of request 2", acc[2].OccupancyTokens, bytes2)
	}
	cps := f.checkpoints()
	c := cps[len(cps)-1].Context.Compaction.Calibration
	if c == nil || c.Tokens != 1000 {
		t.Fatalf("checkpoint calibration = %+v", c)
	}
}

// /compact while idle compacts at once, as a compaction turn: no user
// message, one summary round recorded in the order of any compaction, a
// terminal checkpoint holding the compacted state and a completed
// turn.completed whose note says what it did. The focus reaches the
// summarizer; the summary request is rebuilt from its checkpoint, and a
// session restored from the terminal one sends the compacted view.
func TestCompactWhileIdle(t *testing.T) {
	js := `[
 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"big.txt"}}]},
 {"content":"read it"},
 {"content":"SUMMARY: big.txt holds a's.","deltas":["SUMMARY: ","big.txt holds a's."]},
 {"content":"done"}]`
	f := compactFixture(t, js, compaction.Policy{WindowTokens: 100000, ThresholdTokens: 80000, TailMessages: 12, ReserveTokens: 1000}, 0)
	if out := f.wait(f.start("read big.txt")); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	seen := len(f.events())
	sent, err := f.sess.Compact(t.Context(), "the contents of big.txt")
	if err != nil || sent.Kind != runtime.SentCompacting {
		t.Fatalf("compact: %+v, %v", sent, err)
	}
	out := f.wait(sent.RunID)
	if out.Status != runtime.StatusCompleted || !strings.HasPrefix(out.Message, "compacted: ") || out.ModelRequests != 1 {
		t.Fatalf("compaction turn: %+v", out)
	}
	evs := f.events()[seen:]
	var order []string
	for _, e := range evs {
		if e.Type != event.TypeMessageDelta || order[len(order)-1] != string(event.TypeMessageDelta) {
			order = append(order, string(e.Type))
		}
	}
	want := []string{"agent.started", "turn.started", "context.accounted", "model.request", "runtime.checkpoint", "message.delta",
		"model.response", "context.checkpoint", "context.compacted", "runtime.checkpoint", "turn.completed", "agent.stopped"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("events of the compaction turn (-want +got):\n%s", diff)
	}
	ts := ofType[event.TurnStarted](evs)
	if len(ts) != 1 || ts[0].InputMessageID != "" || ts[0].Compact == nil || ts[0].Compact.Focus != "the contents of big.txt" {
		t.Errorf("turn.started = %+v", ts)
	}
	if n := len(ofType[event.MessageCompleted](evs)); n != 0 {
		t.Errorf("%d messages recorded by a compaction turn", n)
	}
	tc := ofType[event.TurnCompleted](evs)
	if len(tc) != 1 || tc[0].Note != out.Message || tc[0].ErrorCode != "" {
		t.Errorf("turn.completed = %+v", tc)
	}
	reqs := f.model.Requests()
	if !strings.Contains(reqs[2].Messages[0].Content, "what concerns: the contents of big.txt") {
		t.Errorf("summary instruction = %q", reqs[2].Messages[0].Content)
	}
	received := f.model.RequestsJSON()
	cps := f.checkpoints()
	var summaryCP *checkpoint.Checkpoint
	for _, cp := range cps {
		if cp.Identity.Phase == "summary" {
			summaryCP = cp
		}
	}
	if summaryCP == nil || summaryCP.NextRequest.Focus != "the contents of big.txt" {
		t.Fatalf("no summary checkpoint with the focus: %+v", summaryCP)
	}
	if req, err := runtime.ReconstructModelRequest(summaryCP); err != nil {
		t.Fatal(err)
	} else if b, _ := model.MarshalCanonical(req); !bytes.Equal(b, received[2]) {
		t.Errorf("the summary request is not rebuilt:\n%s\n%s", b, received[2])
	}

	// Restored from its terminal checkpoint in another runtime, the
	// session's next request is the compacted view.
	f.sess.Close(t.Context())
	rp, err := runtime.LatestTerminal(t.Context(), f.st, f.sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if c := rp.Checkpoint.Context.Compaction; c.Compactions != 1 || c.Summary != "SUMMARY: big.txt holds a's." {
		t.Fatalf("terminal compaction state = %+v", c)
	}
	rt := runtime.New(runtime.Config{})
	s, err := rt.RestoreSession(t.Context(), f.log, runtime.SessionConfig{Model: f.model, Workspace: mustLocal(t, f.root)}, rp.Checkpoint, checkpoint.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	next, err := s.Send(t.Context(), "and now?")
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := rt.Wait(t.Context(), next.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("next turn: %+v", out)
	}
	last := f.model.Requests()[3].Messages
	if len(last) != 4 || !compaction.IsSummary(last[0]) || last[1].Content != "read big.txt" || last[2].Content != "read it" || last[3].Content != "and now?" {
		t.Errorf("compacted view = %+v", last)
	}
	cps = f.checkpoints()
	if req, err := runtime.ReconstructModelRequest(cps[len(cps)-2]); err != nil {
		t.Fatal(err)
	} else if b, _ := model.MarshalCanonical(req); !bytes.Equal(b, f.model.RequestsJSON()[3]) {
		t.Errorf("the request after the compaction is not rebuilt:\n%s\n%s", b, f.model.RequestsJSON()[3])
	}
}

// /compact with nothing to summarize (a fresh session; one whose history
// is only the pinned first request and its answer) records a completed
// compaction turn whose note says so, and spends no model request; a
// session without a context policy refuses.
func TestCompactNothingToCompact(t *testing.T) {
	f := compactFixture(t, `[{"content":"hello"}]`, smallWindow, 0)
	for i, before := range []func(){func() {}, func() { f.wait(f.start("hi")) }} {
		before()
		sent, err := f.sess.Compact(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		out := f.wait(sent.RunID)
		if out.Status != runtime.StatusCompleted || out.ModelRequests != 0 || !strings.HasPrefix(out.Message, "nothing to compact: ") {
			t.Errorf("case %d: %+v", i, out)
		}
	}
	tc := ofType[event.TurnCompleted](f.events())
	if len(tc) != 3 || !strings.HasPrefix(tc[2].Note, "nothing to compact: ") || count(f.events(), event.TypeContextAccounted) != 1 {
		t.Errorf("turn.completed = %+v", tc)
	}
	g := newFixture(t, script(t, `[{"content":"x"}]`), nil, func(_ *runtime.SessionConfig, s *checkpoint.Settings) { s.Context = compaction.Policy{} })
	if _, err := g.sess.Compact(t.Context(), ""); errcode.Of(err) != errcode.RuntimeInvalidInput {
		t.Errorf("no policy: %v", err)
	}
	if _, err := f.sess.Compact(t.Context(), "bad \xff focus"); errcode.Of(err) != errcode.RuntimeInvalidInput {
		t.Errorf("invalid focus: %v", err)
	}
}

// /compact while a turn runs compacts before that turn's next model
// request, whatever the occupancy.
func TestCompactDuringTurn(t *testing.T) {
	inner := script(t, `[
 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"big.txt"}}]},
 {"toolCalls":[{"id":"c2","name":"fs.list","arguments":{"path":"."}}]},
 {"content":"SUMMARY: read big.txt."},
 {"content":"done"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{2: true}}
	f := newFixture(t, gm, inner, func(_ *runtime.SessionConfig, s *checkpoint.Settings) {
		s.Tools, s.System = []model.ToolSpec{}, "sys"
		s.Context = compaction.Policy{WindowTokens: 100000, ThresholdTokens: 80000, TailMessages: 2, ReserveTokens: 1000}
	})
	writeFile(t, f.root, "big.txt", strings.Repeat("a", 3000))
	sent, err := f.sess.Send(t.Context(), "read big.txt")
	if err != nil {
		t.Fatal(err)
	}
	<-gm.started
	asked, err := f.sess.Compact(t.Context(), "")
	if err != nil || asked.Kind != runtime.SentCompactAsked || asked.RunID != sent.RunID {
		t.Fatalf("compact during the turn: %+v, %v", asked, err)
	}
	close(gm.release)
	if out := f.wait(sent.RunID); out.Status != runtime.StatusCompleted || out.ModelRequests != 4 {
		t.Fatalf("outcome = %+v", out)
	}
	if n := count(f.events(), event.TypeContextCompacted); n != 1 {
		t.Errorf("compacted %d times", n)
	}
	if n := count(f.events(), event.TypeTurnStarted); n != 1 {
		t.Errorf("%d turns, want the one", n)
	}
}

// The calibration survives a restore from the checkpoint, and a switch to
// another model starts it afresh: that model's first request is counted
// in bytes again.
func TestCalibrationSurvivesRestoreNotModelSwitch(t *testing.T) {
	js := `[
 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"big.txt"}}],"usage":{"promptTokens":30,"completionTokens":5}},
 {"content":"read it","usage":{"promptTokens":900,"completionTokens":5}},
 {"content":"again","usage":{"promptTokens":950,"completionTokens":5}}]`
	p := compaction.Policy{WindowTokens: 100000, ThresholdTokens: 80000, TailMessages: 12, ReserveTokens: 1000}
	f := compactFixture(t, js, p, 0)
	if out := f.wait(f.start("read big.txt")); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	calibrated := f.sess.Occupancy()
	cps := f.checkpoints()
	rt2 := runtime.New(runtime.Config{})
	restored, err := rt2.RestoreSession(t.Context(), f.log, runtime.SessionConfig{Model: f.model, Workspace: mustLocal(t, f.root)}, cps[len(cps)-1], checkpoint.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if got := restored.Occupancy(); got != calibrated {
		t.Errorf("restored occupancy %d, want the calibrated %d", got, calibrated)
	}
	set := f.sess.Settings()
	if err := f.sess.ChangeSettings(t.Context(), event.SettingsChanged{Changed: []string{"model"}, Model: "another",
		WindowTokens: p.WindowTokens, ThresholdTokens: p.ThresholdTokens, TailMessages: p.TailMessages, ReserveTokens: p.ReserveTokens,
		MaxTokens: set.MaxTokens}); err != nil {
		t.Fatal(err)
	}
	if out := f.wait(f.start("again")); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	acc := ofType[event.ContextAccounted](f.events())
	last := acc[len(acc)-1]
	if last.Algorithm != compaction.Algorithm || last.OccupancyTokens <= calibrated {
		t.Errorf("after the model switch: %s %d (calibrated was %d)", last.Algorithm, last.OccupancyTokens, calibrated)
	}
	if acc[1].Algorithm != compaction.AlgorithmReported {
		t.Errorf("second request of the first model: %s", acc[1].Algorithm)
	}
}

// providerModel is a model that names its provider, as model/openai does
// with its base URL.
type providerModel struct {
	model.Model
	provider string
}

func (p providerModel) Provider() string { return p.provider }

// The calibration is keyed on the provider and the model: the same model
// name behind another provider starts afresh, counted in bytes; behind the
// same provider it carries on.
func TestCalibrationKeyedOnProvider(t *testing.T) {
	js := `[
 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"big.txt"}}],"usage":{"promptTokens":30,"completionTokens":5}},
 {"content":"read it","usage":{"promptTokens":900,"completionTokens":5}},
 {"content":"again","usage":{"promptTokens":950,"completionTokens":5}},
 {"content":"elsewhere","usage":{"promptTokens":950,"completionTokens":5}}]`
	m := script(t, js)
	p := compaction.Policy{WindowTokens: 100000, ThresholdTokens: 80000, TailMessages: 12, ReserveTokens: 1000}
	f := newFixture(t, providerModel{m, "http://127.0.0.1:1/v1"}, m, func(_ *runtime.SessionConfig, s *checkpoint.Settings) {
		s.Tools, s.System, s.Context = []model.ToolSpec{}, "sys", p
	})
	writeFile(t, f.root, "big.txt", strings.Repeat("a", 3000))
	if out := f.wait(f.start("read big.txt")); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	cps := f.checkpoints()
	if c := cps[len(cps)-1].Context.Compaction.Calibration; c == nil || c.Provider != "http://127.0.0.1:1/v1" || c.Model != "fake" {
		t.Fatalf("calibration %+v, want one for the provider and model", c)
	}
	resume := func(provider string) string {
		t.Helper()
		cps := f.checkpoints()
		rt := runtime.New(runtime.Config{})
		s, err := rt.RestoreSession(t.Context(), f.log, runtime.SessionConfig{Model: providerModel{m, provider}, Workspace: mustLocal(t, f.root)}, cps[len(cps)-1], checkpoint.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(t.Context())
		id, err := s.Start(t.Context(), runtime.StartRequest{Input: "once more"})
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := rt.Wait(t.Context(), id); out.Status != runtime.StatusCompleted {
			t.Fatalf("outcome = %+v", out)
		}
		acc := ofType[event.ContextAccounted](f.events())
		return acc[len(acc)-1].Algorithm
	}
	f.sess.Close(t.Context())
	if got := resume("http://127.0.0.1:1/v1"); got != compaction.AlgorithmReported {
		t.Errorf("same provider: %s, want %s", got, compaction.AlgorithmReported)
	}
	if got := resume("http://127.0.0.1:2/v1"); got != compaction.Algorithm {
		t.Errorf("another provider, same model name: %s, want %s", got, compaction.Algorithm)
	}
}

// A summary round's usage calibrates: with no model round reporting any,
// the request after the compaction is counted from the summary's report.
func TestSummaryUsageCalibrates(t *testing.T) {
	js := strings.Replace(compactScript, `"usage":{"promptTokens":100,"completionTokens":10}`, `"usage":{"promptTokens":1500,"completionTokens":10}`, 1)
	js = strings.Replace(js, `{"content":"done","usage":{"promptTokens":20,"completionTokens":3}}`, `{"content":"done"}`, 1)
	f := compactFixture(t, js, smallWindow, 0)
	if out := f.wait(f.start("go")); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	acc := ofType[event.ContextAccounted](f.events())
	if len(acc) != 5 || !acc[3].SummaryRequest {
		t.Fatalf("context.accounted = %+v", acc)
	}
	for i, a := range acc[:4] {
		if a.Algorithm != compaction.Algorithm {
			t.Errorf("request %d: %s before any report", i+1, a.Algorithm)
		}
	}
	if acc[4].Algorithm != compaction.AlgorithmReported {
		t.Errorf("request after the summary: %s, want %s", acc[4].Algorithm, compaction.AlgorithmReported)
	}
	// The checkpoint of that request holds the summary's report.
	var c *compaction.Calibration
	for _, cp := range f.checkpoints() {
		if cp.NextRequest != nil {
			c = cp.Context.Compaction.Calibration
		}
	}
	if c == nil || c.Tokens != 1500 {
		t.Errorf("calibration %+v, want the summary's 1500 tokens", c)
	}
}

// A round whose tool results exceed the window continues: the older large
// results of the round are elided in the view (the note names the path),
// the newest one is sent whole, the originals stay in the checkpoint, and
// every request is rebuilt byte for byte.
func TestCompactionElidesLargeRoundResults(t *testing.T) {
	js := `[
 {"toolCalls":[
  {"id":"c1","name":"fs.read","arguments":{"path":"a.txt"}},
  {"id":"c2","name":"fs.read","arguments":{"path":"b.txt"}},
  {"id":"c3","name":"fs.read","arguments":{"path":"c.txt"}},
  {"id":"c4","name":"fs.read","arguments":{"path":"d.txt"}}]},
 {"content":"done"}]`
	f := compactFixture(t, js, smallWindow, 0)
	for _, name := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		writeFile(t, f.root, name, strings.Repeat(name[:1], 3000))
	}
	out := f.wait(f.start("read the four files"))
	if out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	reqs := f.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (no summary request)", len(reqs))
	}
	got := reqs[1].Messages
	if len(got) != 6 || got[0].Content != "read the four files" {
		t.Fatalf("view = %+v", got)
	}
	elided := 0
	for i, m := range got[2:] {
		path := string(rune('a'+i)) + ".txt"
		if compaction.IsElided(m) {
			elided++
			if !strings.Contains(m.Content, path) || m.ToolCallID != "c"+string(rune('1'+i)) {
				t.Errorf("elided note %d = %q", i, m.Content)
			}
		} else if !strings.Contains(m.Content, strings.Repeat(path[:1], 3000)) {
			t.Errorf("result %d is neither elided nor whole: %.80q", i, m.Content)
		}
	}
	if elided == 0 || compaction.IsElided(got[5]) {
		t.Errorf("elided %d results; newest elided: %v", elided, compaction.IsElided(got[5]))
	}
	if n := count(f.events(), event.TypeContextCompacted); n != 0 {
		t.Errorf("compacted %d times", n)
	}
	cps := f.checkpoints()
	last := cps[len(cps)-1]
	for _, m := range last.History.Messages {
		if compaction.IsElided(m) {
			t.Errorf("the checkpoint holds an elided message: %+v", m)
		}
	}
	if last.Context.Compaction.ElideBefore == 0 {
		t.Errorf("checkpoint compaction state = %+v", last.Context.Compaction)
	}
	wantRebuilt(t, cps, f.model.RequestsJSON())
}

// A tool result that could not fit the window even alone (with the
// system text, the pinned requests and its call) never enters the
// history, where it could only end the turn RUNTIME_CONTEXT_OVERFLOW at
// the next request: the tool refuses it (TOOL_OUTPUT_LIMIT naming the
// window's share) and the model goes on, as it would after any refusal.
// A result that fits is kept, and the requests rebuild from the
// checkpoints byte for byte.
func TestResultOverTheWindowIsRefused(t *testing.T) {
	js := `[
 {"toolCalls":[
  {"id":"c1","name":"fs.read","arguments":{"path":"a.txt"}},
  {"id":"c2","name":"fs.read","arguments":{"path":"huge.txt"}}]},
 {"content":"done"}]`
	f := compactFixture(t, js, smallWindow, 0)
	writeFile(t, f.root, "a.txt", strings.Repeat("a", 3000))
	writeFile(t, f.root, "huge.txt", strings.Repeat("h", 9000))
	out := f.wait(f.start("go"))
	if out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	reqs := f.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var tool []string
	for _, m := range reqs[1].Messages {
		if m.Role == model.RoleTool {
			tool = append(tool, m.ToolCallID+": "+m.Content[:min(len(m.Content), 200)])
		}
	}
	if len(tool) != 2 || !strings.Contains(tool[0], `"content":"aaa`) ||
		!strings.Contains(tool[1], "TOOL_OUTPUT_LIMIT") || !strings.Contains(tool[1], "one result may take in this session's context window") {
		t.Fatalf("tool results sent back:\n%s", strings.Join(tool, "\n"))
	}
	wantRebuilt(t, f.checkpoints(), f.model.RequestsJSON())
}

// Text sent while a compaction turn runs is not steering (that turn sends
// no request it could join): it waits for the compaction to end and starts
// the next turn, which sends the compacted view.
func TestSendDuringCompactionStartsTheNextTurn(t *testing.T) {
	synctest.Test(t, sendDuringCompaction)
}

func sendDuringCompaction(t *testing.T) {
	inner := script(t, `[
 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"big.txt"}}]},
 {"content":"read it"},
 {"content":"SUMMARY: big.txt holds a's."},
 {"content":"done"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{3: true}}
	f := newFixture(t, gm, inner, func(_ *runtime.SessionConfig, s *checkpoint.Settings) {
		s.Tools, s.System = []model.ToolSpec{}, "sys"
		s.Context = compaction.Policy{WindowTokens: 100000, ThresholdTokens: 80000, TailMessages: 12, ReserveTokens: 1000}
	})
	writeFile(t, f.root, "big.txt", strings.Repeat("a", 3000))
	ctx := t.Context()
	first, _ := f.sess.Send(ctx, "read big.txt")
	f.wait(first.RunID)
	compacting, err := f.sess.Compact(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	<-gm.started // the summary request is in flight
	type result struct {
		sent runtime.Sent
		err  error
	}
	got := make(chan result, 1)
	go func() {
		s, err := f.sess.Send(ctx, "and now?")
		got <- result{s, err}
	}()
	synctest.Wait() // Send waits for the compaction turn to end
	select {
	case r := <-got:
		t.Fatalf("send returned during the compaction: %+v, %v", r.sent, r.err)
	default:
	}
	close(gm.release)
	r := <-got
	if r.err != nil || r.sent.Kind != runtime.SentStarted || r.sent.RunID == compacting.RunID {
		t.Fatalf("send during the compaction: %+v, %v", r.sent, r.err)
	}
	if out := f.wait(r.sent.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("next turn: %+v", out)
	}
	if n := count(f.events(), event.TypeSteeringQueued); n != 0 {
		t.Errorf("%d steering.queued", n)
	}
	reqs := inner.Requests()
	if last := reqs[len(reqs)-1].Messages; !compaction.IsSummary(last[0]) || last[len(last)-1].Content != "and now?" {
		t.Errorf("the next turn's request = %+v", last)
	}
}
