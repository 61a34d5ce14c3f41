package compaction_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/model"
)

// benchHistory returns n messages shaped like a working session: a user
// request, an assistant tool call, a tool result of about 2 KiB, an answer.
func benchHistory(n int) []model.Message {
	out := make([]model.Message, n)
	for i := range out {
		switch i % 4 {
		case 0:
			out[i] = model.Message{ID: fmt.Sprintf("msg-%d", i), Role: model.RoleUser, Content: "Run the tests in ./parser and fix what fails; keep the API <Parse>."}
		case 1:
			out[i] = model.Message{ID: fmt.Sprintf("msg-%d", i), Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: fmt.Sprintf("call-%d", i), Name: "proc.run", Arguments: json.RawMessage(`{"argv":["go","test","./parser/"]}`)},
			}}
		case 2:
			out[i] = benchResult(i)
		case 3:
			out[i] = model.Message{ID: fmt.Sprintf("msg-%d", i), Role: model.RoleAssistant, Content: "The quoted-field test fails on embedded newlines; fixing the scanner — données, 日本語."}
		}
	}
	return out
}

func benchResult(i int) model.Message {
	return model.Message{
		ID: fmt.Sprintf("msg-%d", i), Role: model.RoleTool, ToolCallID: fmt.Sprintf("call-%d", i-1), Name: "proc.run",
		Content: `{"exitCode":1,"stdout":"` + strings.Repeat(`--- FAIL: TestQuoted (0.00s)\n    parse_test.go:41: got \"a\", want \"a\\nb\"\n`, 24) + `"}`,
	}
}

var benchTools = []model.ToolSpec{
	{Name: "fs.read", Description: "Read a file of the workspace.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "proc.run", Description: "Run a process in the workspace.", Parameters: json.RawMessage(`{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"}}},"required":["argv"]}`)},
}

// benchMeterAdd measures adding one message, the same 2 KiB tool result
// every time, to a meter already holding held messages.
func benchMeterAdd(b *testing.B, held int) {
	base := compaction.NewMeter("You are Harness, a coding agent.", benchTools)
	base.Reset(benchHistory(held))
	next := benchResult(held)
	var total int
	for b.Loop() {
		m := base.Clone()
		total = m.Add(next)
	}
	if total <= base.Tokens() {
		b.Fatalf("Add returned %d, not above %d", total, base.Tokens())
	}
}

// BenchmarkMeterAdd10th and BenchmarkMeterAdd10000th add the same message
// to meters holding 9 and 9,999 messages: equal ns/op shows that the cost
// of a message does not grow with the history.
func BenchmarkMeterAdd10th(b *testing.B)    { benchMeterAdd(b, 9) }
func BenchmarkMeterAdd10000th(b *testing.B) { benchMeterAdd(b, 9999) }

// BenchmarkFullSerialize10000 is the naive baseline: encoding the whole
// request of 10,000 messages, as a non-incremental count would for every
// appended message.
func BenchmarkFullSerialize10000(b *testing.B) {
	msgs := benchHistory(10000)
	var n int
	for b.Loop() {
		n = compaction.Occupancy("You are Harness, a coding agent.", benchTools, msgs)
	}
	if n == 0 {
		b.Fatal("Occupancy returned 0")
	}
}
