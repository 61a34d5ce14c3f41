package event_test

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// job.started and job.exited follow their rules: a job ID, a command, a
// known reason, a bounded UTF-8 tail, a call only with its turn; and a
// frame with a key their data does not have is refused.
func TestJobEventRules(t *testing.T) {
	for _, c := range []struct {
		name string
		e    event.Event
		code errcode.Code
	}{
		{"started", edit(t, "job.started", func(d *event.JobStarted) {}), ""},
		{"started without job", edit(t, "job.started", func(d *event.JobStarted) { d.JobID = "" }), errcode.EventInvalidField},
		{"started without argv", edit(t, "job.started", func(d *event.JobStarted) { d.Argv = nil }), errcode.EventInvalidField},
		{"started with an empty program", edit(t, "job.started", func(d *event.JobStarted) { d.Argv = []string{""} }), errcode.EventInvalidField},
		{"started by a call of no turn", edit(t, "job.started", func(d *event.JobStarted) { d.TurnID = "" }), errcode.EventInvalidField},
		{"exited", edit(t, "job.exited", func(d *event.JobExited) {}), ""},
		{"exited for an unknown reason", edit(t, "job.exited", func(d *event.JobExited) { d.Reason = "crashed" }), errcode.EventInvalidField},
		{"exited without reason", edit(t, "job.exited", func(d *event.JobExited) { d.Reason = "" }), errcode.EventInvalidField},
		{"exited with negative bytes", edit(t, "job.exited", func(d *event.JobExited) { d.Bytes = -1 }), errcode.EventInvalidField},
		{"exited with a long tail", edit(t, "job.exited", func(d *event.JobExited) { d.Tail = strings.Repeat("x", event.MaxJobTailBytes+1) }), errcode.EventInvalidField},
		{"exited with a full tail", edit(t, "job.exited", func(d *event.JobExited) { d.Tail = strings.Repeat("x", event.MaxJobTailBytes) }), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := event.Encode(c.e)
			if got := errcode.Of(err); err != nil && got != c.code || err == nil && c.code != "" {
				t.Fatalf("Encode: %v, want code %q", err, c.code)
			}
			if err != nil {
				return
			}
			if _, err := event.Decode(b); err != nil {
				t.Fatalf("Decode(%s): %v", b, err)
			}
		})
	}
	b, err := event.Encode(goldenEvent(t, "job.exited"))
	if err != nil {
		t.Fatal(err)
	}
	extra := strings.Replace(string(b), `"reason":`, `"signal":"TERM","reason":`, 1)
	if _, err := event.Decode([]byte(extra)); errcode.Of(err) != errcode.EventUnknownKey {
		t.Fatalf("Decode with an unknown key: %v", err)
	}
}
