package headless

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
)

// The outcome line counts in words that agree with the number.
func TestOutcomeLineCounts(t *testing.T) {
	for _, c := range []struct {
		requests, calls, tokens int
		want                    string
	}{
		{1, 1, 1, "turn turn-1: completed · 1 model request · 1 tool call · 1 token\n"},
		{2, 0, 15, "turn turn-1: completed · 2 model requests · 0 tool calls · 15 tokens\n"},
	} {
		var stderr bytes.Buffer
		a := &run{Options: Options{Stderr: &stderr}}
		a.printOutcome(event.TurnCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", Status: event.StatusCompleted,
			ModelRequests: c.requests, ToolCalls: c.calls, Usage: model.Usage{TotalTokens: c.tokens}})
		if got := stderr.String(); got != c.want {
			t.Errorf("outcome line %q, want %q", got, c.want)
		}
	}
}

// A compaction's summary is not part of the answer: stdout gets the
// answer's text only, stderr says that the context was compacted.
func TestSummaryIsNotPrinted(t *testing.T) {
	var stdout, stderr bytes.Buffer
	a := &run{Options: Options{Stdout: &stdout, Stderr: &stderr}, printedSeq: -1}
	run := func(d event.Data) event.Event { return event.Event{Type: d.EventType(), Data: d} }
	evs := []event.Event{
		run(event.ContextAccounted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", RequestID: "req-s", SummaryRequest: true}),
		run(event.MessageDelta{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", RequestID: "req-s", MessageID: "msg-s", Delta: "Summary: files were read"}),
		run(event.MessageCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", MessageID: "msg-s", Role: model.RoleAssistant, RequestID: "req-s", Content: "Summary: files were read"}),
		run(event.ContextCompacted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", SummaryMessageID: "msg-s", Summary: "Summary: files were read", BeforeMessages: 9, AfterMessages: 3}),
		run(event.MessageDelta{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", RequestID: "req-2", MessageID: "msg-2", Delta: "They share a package."}),
		run(event.MessageCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", MessageID: "msg-2", Role: model.RoleAssistant, RequestID: "req-2", Content: "They share a package."}),
	}
	var batch []runtime.Published
	for i, e := range evs {
		batch = append(batch, runtime.Published{Seq: int64(i), Event: e})
	}
	a.printEvents(&printer{}, batch, nil)
	if got := stdout.String(); got != "They share a package.\n" {
		t.Errorf("stdout %q, want the answer alone", got)
	}
	if !bytes.Contains(stderr.Bytes(), []byte("context compacted: 9 → 3 messages")) {
		t.Errorf("stderr %q does not say the context was compacted", stderr.String())
	}
}

// A completed turn's note (an empty answer) is on its outcome line.
func TestEmptyAnswerIsSaid(t *testing.T) {
	var stdout, stderr bytes.Buffer
	a := &run{Options: Options{Stdout: &stdout, Stderr: &stderr}, printedSeq: -1}
	evs := []event.Data{
		event.MessageCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", MessageID: "msg-a", Role: model.RoleAssistant, RequestID: "req-1", FinishReason: "stop"},
		event.TurnCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", Status: event.StatusCompleted, OutputMessageID: "msg-a", ModelRequests: 1,
			Note: "the model's answer was empty: it sent no text and no tool call"},
	}
	var batch []runtime.Published
	for i, d := range evs {
		batch = append(batch, runtime.Published{Seq: int64(i), Event: event.Event{Type: d.EventType(), Data: d}})
	}
	a.printEvents(&printer{}, batch, nil)
	if !bytes.Contains(stderr.Bytes(), []byte("the model's answer was empty")) || stdout.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// exec's text mode shows a call as the TUI's card does: the command line
// shell-quoted and whole, a path for a file tool; it printed the input's
// raw JSON cut at about 110 characters.
func TestCallLineIsReadable(t *testing.T) {
	long := "go test -run 'TestSomethingLong|TestAnotherLongName|TestAThirdOne' -count=1 -race ./internal/headless/... ./internal/app/..."
	for _, c := range []struct {
		call event.ToolCall
		want string
	}{
		{event.ToolCall{Tool: "process.exec", Input: []byte(`{"argv":["sh","-c",` + strconv.Quote(long) + `]}`)}, "▸ process.exec sh -c '" + strings.ReplaceAll(long, "'", `'\''`) + "'\n"},
		{event.ToolCall{Tool: "fs.read", Input: []byte(`{"path":"internal/app/app.go"}`)}, "▸ fs.read internal/app/app.go\n"},
		{event.ToolCall{Tool: "git.diff", Input: []byte(`{}`)}, "▸ git.diff\n"},
	} {
		var stdout, stderr bytes.Buffer
		a := &run{Options: Options{Stdout: &stdout, Stderr: &stderr}, printedSeq: -1}
		c.call.RunID, c.call.SessionID, c.call.TurnID, c.call.CallID = "run-1", "sess-1", "turn-1", "call-1"
		a.printEvents(&printer{}, []runtime.Published{{Seq: 0, Event: event.Event{Type: c.call.EventType(), Data: c.call}}}, nil)
		if got := stderr.String(); got != c.want {
			t.Errorf("call line\n%q, want\n%q", got, c.want)
		}
	}
}
