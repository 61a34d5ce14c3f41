package runtime_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/tools"
)

// @path in steering attaches the file, as in a turn's message: when the
// steering is applied, the read goes through the policy (here one that
// asks), is recorded as a tool call with its result, and the next request
// carries the file's contents in a user message after the steering; a
// denied read is attached as its error.
func TestSteeringMentionsAttachFiles(t *testing.T) {
	inner := script(t, `[
	 {"toolCalls":[{"id":"c1","name":"fs.list","arguments":{"path":"."}}]},
	 {"content":"seen"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{1: true}}
	askReads := runtime.PolicyFunc(func(c tools.Call) runtime.Decision {
		if c.Tool == "fs.read" {
			return runtime.Decision{Effect: runtime.Ask, RuleID: "ask-reads"}
		}
		return runtime.Decision{Effect: runtime.Allow, RuleID: "allow"}
	})
	f := newFixture(t, gm, inner, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { c.Policy = askReads })
	ctx := t.Context()
	sub, err := f.sess.Events(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	sent, err := f.sess.Send(ctx, "list the files")
	if err != nil {
		t.Fatal(err)
	}
	<-gm.started
	steer, err := f.sess.Send(ctx, "also look at @README.md and @main.go")
	if err != nil || steer.Kind != runtime.SentSteered {
		t.Fatalf("steer: %+v, %v", steer, err)
	}
	idle := f.sess.Idle()
	close(gm.release)
	// Answer the questions as they come (allow the first, deny the
	// second) until the turn ends.
	asked := 0
	for done := false; !done; {
		select {
		case <-sub.Ready():
			for _, p := range sub.Drain() {
				if q, ok := p.Event.Data.(event.PermissionRequested); ok {
					asked++
					if err := f.sess.Answer(ctx, q.PermissionID, runtime.PermissionAnswer{Allow: asked == 1}); err != nil {
						t.Fatal(err)
					}
				}
			}
		case <-idle:
			done = true
		}
	}
	if asked != 2 {
		t.Errorf("%d permission questions, want one per mentioned file", asked)
	}
	if out := f.wait(sent.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	var order []string
	for _, e := range f.events() {
		switch d := e.Data.(type) {
		case event.SteeringApplied:
			order = append(order, "steering.applied")
		case event.ToolCall:
			order = append(order, "tool.call "+d.Tool+" "+string(d.Input))
		case event.ToolResult:
			order = append(order, "tool.result "+d.Tool)
		case event.MessageCompleted:
			if d.Role == model.RoleUser && strings.HasPrefix(d.Content, event.AttachmentsMarker) {
				order = append(order, "attachments")
			}
		case event.ModelRequest:
			order = append(order, "model.request")
		}
	}
	want := []string{"model.request", "tool.call fs.list {\"path\":\".\"}", "tool.result fs.list", "steering.applied",
		`tool.call fs.read {"path":"README.md"}`, "tool.result fs.read", `tool.call fs.read {"path":"main.go"}`, "tool.result fs.read",
		"attachments", "model.request"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	reqs := inner.Requests()
	msgs := reqs[1].Messages
	last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
	if prev.Content != "also look at @README.md and @main.go" || !strings.Contains(last.Content, "# demo") ||
		!strings.Contains(last.Content, `<file path="main.go" error="TOOL_PERMISSION_DENIED`) {
		t.Errorf("the request after the steering ends with %q, %q", prev.Content, last.Content)
	}
}
