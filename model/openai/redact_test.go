package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/harness-dev/harness/model"
)

// A reply that echoes the API key — whole in one delta, split across
// deltas, and in a tool call's arguments — reaches the runtime (and so the
// log) redacted, and its deltas still add up to the completion's content.
func TestEchoedKeyIsRedacted(t *testing.T) {
	half := len(testKey) / 2
	deltas := []string{"your key is ", testKey, " and again ", testKey[:half], testKey[half:], "."}
	var body strings.Builder
	for _, d := range deltas {
		b, _ := json.Marshal(d)
		fmt.Fprintf(&body, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", b)
	}
	args, _ := json.Marshal(`{"path":"` + testKey + `.txt"}`)
	fmt.Fprintf(&body, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"fs_read\",\"arguments\":%s}}]},\"finish_reason\":null}]}\n\n", args)
	body.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
	srv := newServer(t, reply{status: http.StatusOK, body: body.String()})
	c := newClient(t, srv)
	chunks, err := drain(t, mustStream(t, c, t.Context(), baseRequest()))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var comp *model.Completion
	for _, ch := range chunks {
		switch ch.Kind {
		case model.ChunkDelta:
			text.WriteString(ch.Delta)
		case model.ChunkCompletion:
			comp = ch.Completion
		case model.ChunkToolCall:
			if strings.Contains(string(ch.ToolCall.Arguments), testKey) {
				t.Errorf("tool call arguments hold the key: %s", ch.ToolCall.Arguments)
			}
		}
	}
	want := "your key is " + redacted + " and again " + redacted + "."
	if text.String() != want {
		t.Errorf("deltas = %q, want %q", text.String(), want)
	}
	if comp == nil || comp.Content != want {
		t.Fatalf("completion = %+v", comp)
	}
	for _, tc := range comp.ToolCalls {
		if strings.Contains(string(tc.Arguments), testKey) || !json.Valid(tc.Arguments) {
			t.Errorf("completion tool call arguments = %s", tc.Arguments)
		}
	}
}
