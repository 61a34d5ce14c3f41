package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/model"
)

// longHistory is a session whose history is a first request and rounds
// tool rounds, each reading a 2.5 KB file, with a window that holds about
// a fifth of it: elide must elide most of the older results.
func longHistory(tb testing.TB, rounds int) *Session {
	tb.Helper()
	set := checkpoint.Settings{Model: "m", System: "sys", Tools: []model.ToolSpec{}}
	body := strings.Repeat("x", 2500)
	var occupancy int
	s := &Session{rt: &Runtime{}, settings: set}
	s.state = newState(set)
	s.state.addQuiet(model.Message{ID: "msg-first", Role: model.RoleUser, Content: "read them all"})
	for i := range rounds {
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("src/%04d.go", i)})
		id := fmt.Sprintf("call_%04d", i)
		s.state.addQuiet(model.Message{ID: fmt.Sprintf("msg-a%d", i), Role: model.RoleAssistant,
			ToolCalls: []model.ToolCall{{ID: id, Name: "fs.read", Arguments: args}}})
		occupancy = s.state.addQuietTool(fmt.Sprintf("msg-t%d", i), id, body)
	}
	window := occupancy / 5
	s.settings.Context = compaction.Policy{WindowTokens: window, ThresholdTokens: window / 2, TailMessages: 12, ReserveTokens: 1000}
	return s
}

func (st *state) addQuietTool(id, callID, content string) int {
	st.addQuiet(model.Message{ID: id, Role: model.RoleTool, Content: content, ToolCallID: callID, Name: "fs.read"})
	return st.meter.Tokens()
}

// elide leaves the meter equal to a full encoding of the view it chose,
// which fits, and whose elision range is as short as fitting allows.
func TestElideChoosesTheShortestFittingRange(t *testing.T) {
	s := longHistory(t, 200)
	tr := &turn{s: s}
	if err := tr.elide(); err != nil {
		t.Fatal(err)
	}
	st := &s.state
	view := st.view()
	full := compaction.Occupancy(s.settings.System, s.settings.Tools, view)
	if got := st.meter.Tokens(); got != full {
		t.Fatalf("meter %d after eliding, a full encoding of the view %d", got, full)
	}
	p := s.settings.Context
	if !compaction.Fits(p, full) {
		t.Fatalf("view of %d bytes does not fit %+v", full, p)
	}
	shorter := state{messages: st.messages, compact: st.compact}
	shorter.compact.ElideBefore -= 2 // the previous tool result left whole
	if occ := compaction.Occupancy(s.settings.System, s.settings.Tools, shorter.view()); compaction.Fits(p, occ) {
		t.Errorf("elideBefore %d is not the smallest that fits: %d fits too", st.compact.ElideBefore, shorter.compact.ElideBefore)
	}
}

// BenchmarkElideLongHistory times the elision of a history over the window
// at 100 and 800 messages' worth of tool rounds, alternately in the same
// run: linear work per message keeps the ratio of the per-message costs
// near 1 (it was 8 for the old per-candidate re-encoding).
func BenchmarkElideLongHistory(b *testing.B) {
	var small, large time.Duration
	for b.Loop() {
		for _, n := range []int{50, 400} {
			b.StopTimer()
			s := longHistory(b, n)
			tr := &turn{s: s}
			b.StartTimer()
			t0 := time.Now()
			if err := tr.elide(); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			if n == 50 {
				small += d
			} else {
				large += d
			}
		}
	}
	perSmall := float64(small.Nanoseconds()) / float64(b.N) / 101
	perLarge := float64(large.Nanoseconds()) / float64(b.N) / 801
	b.ReportMetric(perSmall/1e3, "µs/msg-at-101")
	b.ReportMetric(perLarge/1e3, "µs/msg-at-801")
	b.ReportMetric(perLarge/perSmall, "ratio")
}

// measure, which counts messages the state holds by their cached
// encodings, gives exactly what encoding the whole view gives: for the
// plain history, an elided one, a compacted one and a summary request.
func TestMeasureEqualsOccupancy(t *testing.T) {
	s := longHistory(t, 40)
	st := &s.state
	set := s.settings
	check := func(name, system string, tools []model.ToolSpec, view []model.Message) {
		t.Helper()
		got := st.measure(compaction.NewMeter(system, tools), view).Tokens()
		if want := compaction.Occupancy(system, tools, view); got != want {
			t.Errorf("%s: measure %d, Occupancy %d", name, got, want)
		}
	}
	check("whole", set.System, set.Tools, st.view())
	st.compact.ElideBefore = 30
	check("elided", set.System, set.Tools, st.view())
	st.compact = checkpoint.Compaction{Summary: "the files so far are Go sources", SummaryMessageID: "msg-sum", TailStart: 41,
		ThroughRevision: st.revision, Compactions: 1, ElideBefore: 60}
	st.firstUser = &st.messages[0]
	check("compacted", set.System, set.Tools, st.view())
	check("summary request", "", nil, compaction.SummaryRequestFocus(st.view()[:5], "the tests"))
}
