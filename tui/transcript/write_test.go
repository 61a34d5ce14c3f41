package transcript

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/tui/diffview"
)

// The audit's report: overwriting an unread 6000-line file with 3 lines
// showed +3 −0 live and after resume (the tool's patch, over its bound,
// was not recorded), +3 −6000 only in the approval. The tool now records
// the counts whatever the patch's size, and every card shows them.
func TestWriteCardCountsALargeOverwrite(t *testing.T) {
	var old strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&old, "line %d of a generated file long enough to matter\n", i+1)
	}
	const contents = "# new\\nshort\\nfile\\n"
	call := event.ToolCall{CallID: "call-1", Tool: "fs.write", Input: raw(`{"path":"gen.txt","contents":"` + contents + `"}`), RunID: "run-1"}
	result := event.ToolResult{CallID: "call-1", Tool: "fs.write", OK: true, Output: raw(`{"path":"gen.txt","bytes":17}`), DurationMs: 9,
		Lines: &event.LineCounts{Added: 3, Deleted: 6000}} // no patch: over MaxPatchBytes
	start := event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", InputMessageID: "msg-u"}
	card := func(tr *Transcript) string { return plain(tr.blocks[tr.byCall["call-1"]].lines(ctxAt(100), false)) }

	t.Run("live", func(t *testing.T) {
		tr := New()
		tr.Apply(ev(1, start))
		tr.Apply(ev(2, call))
		if text := card(tr); !strings.Contains(text, "3 lines") {
			t.Errorf("the running card guesses against nothing:\n%s", text)
		}
		tr.Apply(ev(3, result))
		text := card(tr)
		if !strings.Contains(text, "fs.write  gen.txt  +3 −6000") || !strings.Contains(text, "too large to show here") {
			t.Errorf("the finished card:\n%s", text)
		}
		if strings.Contains(text, "+# new") || strings.Contains(text, "not read in this session") {
			t.Errorf("the card shows a diff against contents it never saw:\n%s", text)
		}
	})
	t.Run("resumed", func(t *testing.T) {
		tr := New()
		for i, d := range []event.Data{start, call, result} {
			tr.Apply(ev(i+1, d))
		}
		if text := card(tr); !strings.Contains(text, "fs.write  gen.txt  +3 −6000") {
			t.Errorf("the replayed card:\n%s", text)
		}
	})
	t.Run("approved", func(t *testing.T) {
		tr := New()
		tr.Apply(ev(1, start))
		tr.Apply(ev(2, call))
		tr.Apply(ev(3, event.PermissionRequested{PermissionID: "perm-1", CallID: "call-1", Action: "fs.write", Subject: "gen.txt", Scope: event.ScopeOnce}))
		tr.PreviewWrite("call-1", diffview.Unified("gen.txt", old.String(), "# new\nshort\nfile\n", false))
		if text := card(tr); !strings.Contains(text, "+3 −6000") {
			t.Errorf("the card waiting for approval:\n%s", text)
		}
		tr.Apply(ev(4, event.PermissionResolved{PermissionID: "perm-1", CallID: "call-1", Action: "fs.write", Scope: event.ScopeOnce, Decision: event.DecisionAllow}))
		tr.Apply(ev(5, result))
		text := card(tr)
		if !strings.Contains(text, "fs.write  gen.txt  +3 −6000") || !strings.Contains(text, "-line 1 of a generated file") {
			t.Errorf("the approved card keeps neither the counts nor the preview's diff:\n%s", text)
		}
	})
}
