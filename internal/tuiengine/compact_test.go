package tuiengine

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/tui"
)

// /compact on an idle session compacts at once: the compaction turn's
// events come back through Next (its summary, then turn.completed saying
// what it did), and a session with nothing to summarize gets a completed
// turn that says so.
func TestEngineCompactWhileIdle(t *testing.T) {
	script := writeScript(t, `[
		{"content": "Hello there; the project is a demo."},
		{"content": "You are welcome."},
		{"content": "SUMMARY: the user greeted and thanked; the project is a demo."}
	]`)
	eng, _ := newTestEngine(t, script, "")
	ctx := t.Context()
	if _, err := eng.Open(ctx, tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	compact := func(focus string) (event.TurnCompleted, int) {
		t.Helper()
		if err := eng.Compact(ctx, focus); err != nil {
			t.Fatal(err)
		}
		evs, _ := collect(t, eng, nil)
		n := 0
		for _, e := range evs {
			if _, ok := e.Data.(event.ContextCompacted); ok {
				n++
			}
		}
		return evs[len(evs)-1].Data.(event.TurnCompleted), n
	}
	if tc, n := compact(""); n != 0 || tc.Status != event.StatusCompleted || !strings.HasPrefix(tc.Note, "nothing to compact: ") {
		t.Errorf("an empty session's compaction: %d compactions, %+v", n, tc)
	}
	for _, text := range []string{"hi, what is this project?", "thanks"} {
		if _, err := eng.Send(ctx, text); err != nil {
			t.Fatal(err)
		}
		collect(t, eng, nil)
	}
	if tc, n := compact("the project"); n != 1 || tc.Status != event.StatusCompleted || !strings.HasPrefix(tc.Note, "compacted: ") {
		t.Errorf("%d compactions; the turn ended %+v", n, tc)
	}
}
