package app

import (
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
)

// The end of a run the store could not record is the owner's outcome of
// that run, or a failure with the outcome's counts when the outcome is of
// another run; its note always says the log does not hold it.
func TestUnrecorded(t *testing.T) {
	out := runtime.Outcome{RunID: "run-1", TurnID: "turn-1", Status: runtime.StatusCompleted,
		ErrorCode: errcode.RuntimeEventAppendFailed, Message: "append turn.completed: SESS_DISK_FULL",
		ModelRequests: 2, ToolCalls: 1}
	for _, c := range []struct {
		name, run string
		out       runtime.Outcome
		want      event.TurnCompleted
	}{
		{"its run", "run-1", out, event.TurnCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", Status: "completed",
			ErrorCode: string(errcode.RuntimeEventAppendFailed), ModelRequests: 2, ToolCalls: 1,
			Note: "append turn.completed: SESS_DISK_FULL " + UnrecordedNote}},
		{"another run", "run-0", out, event.TurnCompleted{RunID: "run-0", SessionID: "sess-1", TurnID: "turn-1", Status: "failed",
			ModelRequests: 2, ToolCalls: 1, Note: UnrecordedNote}},
		{"no message", "run-1", runtime.Outcome{RunID: "run-1", TurnID: "turn-1", Status: runtime.StatusCanceled},
			event.TurnCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", Status: "canceled", Note: UnrecordedNote}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Unrecorded("sess-1", c.run, c.out); got != c.want {
				t.Errorf("Unrecorded = %+v\nwant %+v", got, c.want)
			}
		})
	}
}
