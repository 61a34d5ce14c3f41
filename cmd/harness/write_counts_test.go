package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

// Overwriting an unread 6000-line file in the Docker workspace with 3
// lines records +3 −6000 on its tool.result although the patch, over the
// tool's bound, is left out: in exec --json as it runs and in the stored
// log read back (what a resumed TUI folds).
func TestLargeOverwriteRecordsItsCountsDocker(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	var big strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&big, "line %d of a generated file long enough to matter\n", i+1)
	}
	u.write("gen.txt", big.String())
	s := u.script(`[{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"gen.txt","contents":"a\nb\nc\n"}}],"finishReason":"tool_calls"},
		{"content":"Shortened.","finishReason":"stop"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", s, "shorten gen.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	check := func(where string, evs []event.Event) {
		t.Helper()
		var found bool
		for _, e := range evs {
			if d, ok := e.Data.(event.ToolResult); ok && d.Tool == "fs.write" {
				found = true
				if !d.OK || d.Lines == nil || *d.Lines != (event.LineCounts{Added: 3, Deleted: 6000}) || d.Patch != "" {
					t.Errorf("%s: fs.write result ok=%v lines=%+v patch %d bytes, want +3 −6000 without the patch", where, d.OK, d.Lines, len(d.Patch))
				}
			}
		}
		if !found {
			t.Errorf("%s: no fs.write result", where)
		}
	}
	check("exec --json", r.events)
	stored := u.run("", "events", sessionOf(t, r.events))
	if stored.code != 0 {
		t.Fatalf("events: exit %d\n%s", stored.code, stored.stderr)
	}
	check("harness events", decodeLines(t, stored.stdout))
}
