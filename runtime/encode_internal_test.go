package runtime

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// completedOf is m's message.completed data.
func completedOf(m model.Message) event.MessageCompleted {
	d := event.MessageCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", MessageID: m.ID, Role: m.Role,
		Content: m.Content, ToolCalls: m.ToolCalls, Name: m.Name, ToolCallID: m.ToolCallID, Reasoning: m.Reasoning,
		ReasoningField: m.ReasoningField}
	if m.Role == model.RoleAssistant {
		d.RequestID, d.FinishReason = "req-1", "stop"
	}
	return d
}

// frameOf encodes m's message.completed as a store would.
func frameOf(t testing.TB, m model.Message) []byte {
	t.Helper()
	d := completedOf(m)
	b, err := event.Encode(event.Event{ID: "evt-1", Type: event.TypeMessageCompleted, At: time.Unix(1, 0), Actor: event.ActorModel, Data: d})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkEncodedMessage: built from the frame or not, the bytes are the
// message's canonical encoding.
func checkEncodedMessage(t *testing.T, m model.Message) {
	t.Helper()
	want, err := model.MarshalCanonical(m)
	if err != nil {
		t.Fatal(err)
	}
	got := encodedMessage(m, frameOf(t, m), completedOf(m))
	if got != nil && !bytes.Equal(got, want) {
		t.Fatalf("encodedMessage:\n%s\nMarshalCanonical:\n%s", got, want)
	}
	if got == nil && len(m.Content) >= 512 {
		t.Fatalf("a content of %d bytes was escaped again", len(m.Content))
	}
}

// A message's encoding taken from its message.completed frame is exactly
// its canonical encoding, whatever the content holds.
func TestEncodedMessageIsCanonical(t *testing.T) {
	big := strings.Repeat(`{"path":"a.go","content":"x \"quoted\" <b>&amp;</b> é 😀 \u2028 \\ \t"}`+"\n", 20)
	args := json.RawMessage(`{"content":"not this one","path":"` + strings.Repeat("p", 600) + `"}`)
	for _, m := range []model.Message{
		{ID: "msg-t1", Role: model.RoleTool, Content: big, ToolCallID: "call_1", Name: "fs.read"},
		{ID: "msg-a1", Role: model.RoleAssistant, Content: big, ToolCalls: []model.ToolCall{{ID: "call_2", Name: "fs.read", Arguments: args}},
			Reasoning: "thought", ReasoningField: "reasoning_content"},
		{ID: `msg-"content":""`, Role: model.RoleAssistant, Content: big},
		{ID: "msg-s", Role: model.RoleTool, Content: "short", ToolCallID: "c", Name: "fs.read"},
		{ID: "msg-e", Role: model.RoleAssistant, Content: ""},
	} {
		checkEncodedMessage(t, m)
	}
	m := model.Message{ID: "msg-t1", Role: model.RoleTool, Content: big, ToolCallID: "call_1", Name: "fs.read"}
	if encodedMessage(m, []byte(`{"v":1,"type":"tool.result"}`), completedOf(m)) != nil {
		t.Error("content taken from a frame of another type")
	}
	other := m
	other.ToolCallID = "call_2"
	if encodedMessage(m, frameOf(t, other), completedOf(m)) != nil {
		t.Error("content taken from the frame of other data")
	}
}

// FuzzEncodedMessage: the content is a small unit repeated (to the
// splice size and beyond) here, not in the seeds: seeds of 1000 bytes made
// every new input a minute-long minimization and the target ran 3 inputs
// in 30 s.
func FuzzEncodedMessage(f *testing.F) {
	f.Add(`a"b\c`, uint8(200), "call_1")
	f.Add("é\u2028<>&", uint8(150), `"content":""`)
	f.Add("x", uint8(0), "")
	f.Fuzz(func(t *testing.T, unit string, times uint8, id string) {
		content := strings.Repeat(unit, int(times))
		m := model.Message{ID: "msg-" + id, Role: model.RoleTool, Content: content, ToolCallID: "call_1", Name: "fs.read"}
		d := event.MessageCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", MessageID: m.ID, Role: m.Role,
			Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		frame, err := event.Encode(event.Event{ID: "evt-1", Type: event.TypeMessageCompleted, At: time.Unix(1, 0), Actor: event.ActorTool, Data: d})
		if err != nil {
			return // not recordable: never pushed
		}
		want, _ := model.MarshalCanonical(m)
		if got := encodedMessage(m, frame, d); got != nil && !bytes.Equal(got, want) {
			t.Fatalf("encodedMessage = %s, want %s", got, want)
		}
	})
}
