package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/model"
)

// A reply that echoes the API key — whole in one delta, split across
// deltas of the text or of the reasoning, and in a tool call's arguments,
// plain or JSON-escaped, well-formed or not — reaches the runtime (and so
// the log) redacted, and its deltas still add up to the completion's
// content and reasoning.
func TestEchoedKeyIsRedacted(t *testing.T) {
	half := len(testKey) / 2
	deltas := []string{"your key is ", testKey, " and again ", testKey[:half], testKey[half:], "."}
	thoughts := []string{"I saw ", testKey[:3], testKey[3:half], testKey[half:], " in the env; also ", testKey[:half]}
	var body strings.Builder
	for _, d := range thoughts {
		b, _ := json.Marshal(d)
		fmt.Fprintf(&body, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":%s},\"finish_reason\":null}]}\n\n", b)
	}
	for _, d := range deltas {
		b, _ := json.Marshal(d)
		fmt.Fprintf(&body, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", b)
	}
	escaped := `\u0073k` + strings.ReplaceAll(testKey[2:], "-", `\u002d`) // the key, JSON-escaped
	for i, a := range []string{
		`{"path":"` + testKey + `.txt"}`,
		`{"path":"` + escaped + `.txt", "n": 1}`,
		`{"path": "` + escaped, // not JSON: BadArguments
	} {
		args, _ := json.Marshal(a)
		fmt.Fprintf(&body, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"id\":\"call_%d\",\"type\":\"function\",\"function\":{\"name\":\"fs_read\",\"arguments\":%s}}]},\"finish_reason\":null}]}\n\n", i, i, args)
	}
	body.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
	srv := newServer(t, reply{status: http.StatusOK, body: body.String()})
	c := newClient(t, srv)
	chunks, err := drain(t, mustStream(t, c, t.Context(), baseRequest()))
	if err != nil {
		t.Fatal(err)
	}
	var text, think strings.Builder
	var comp *model.Completion
	answered := false
	for _, ch := range chunks {
		switch ch.Kind {
		case model.ChunkDelta:
			text.WriteString(ch.Delta)
			answered = true
		case model.ChunkReasoning:
			think.WriteString(ch.Delta)
			if answered {
				t.Errorf("reasoning %q after the answer began", ch.Delta)
			}
		case model.ChunkCompletion:
			comp = ch.Completion
		case model.ChunkToolCall:
			if holdsKey(ch.ToolCall.Arguments) {
				t.Errorf("tool call arguments hold the key: %s", ch.ToolCall.Arguments)
			}
		}
	}
	want := "your key is " + redacted + " and again " + redacted + "."
	if text.String() != want {
		t.Errorf("deltas = %q, want %q", text.String(), want)
	}
	wantThink := "I saw " + redacted + " in the env; also " + testKey[:half]
	if think.String() != wantThink {
		t.Errorf("reasoning deltas = %q, want %q", think.String(), wantThink)
	}
	if comp == nil || comp.Content != want || comp.Reasoning != wantThink {
		t.Fatalf("completion = %+v", comp)
	}
	if len(comp.ToolCalls) != 3 {
		t.Fatalf("tool calls = %+v", comp.ToolCalls)
	}
	for i, tc := range comp.ToolCalls {
		if holdsKey(tc.Arguments) || !json.Valid(tc.Arguments) || tc.BadArguments != (i == 2) {
			t.Errorf("completion tool call %d arguments = %s (bad %v)", i, tc.Arguments, tc.BadArguments)
		}
	}
	var args struct {
		Path string `json:"path"`
		N    int    `json:"n"`
	}
	if err := json.Unmarshal(comp.ToolCalls[1].Arguments, &args); err != nil || args.Path != redacted+".txt" || args.N != 1 {
		t.Errorf("escaped key's arguments = %s (%v)", comp.ToolCalls[1].Arguments, err)
	}
}

// holdsKey reports whether JSON text holds the key, plain or in the
// escaped form the test server sends (\u0073k…, escaped once more inside
// a JSON string).
func holdsKey(raw json.RawMessage) bool {
	return strings.Contains(string(raw), testKey) || strings.Contains(string(raw), `u0073k`)
}

// A short placeholder key (what local servers take, whatever it says) is
// not redacted from replies: the model's text and a file it writes keep
// the word. Only keys of minEchoKeyBytes and more are.
func TestPlaceholderKeyIsNotRedactedFromReplies(t *testing.T) {
	args, _ := json.Marshal(`{"path":"main.go","contents":"package main // uses ollama\n"}`)
	body := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"package main and ollama\"},\"finish_reason\":null}]}\n\n" +
		fmt.Sprintf("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_0\",\"type\":\"function\",\"function\":{\"name\":\"fs_write\",\"arguments\":%s}}]},\"finish_reason\":null}]}\n\n", args) +
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
	for _, key := range []string{"k", "ollama"} {
		srv := newServer(t, reply{status: http.StatusOK, body: body})
		c := newClient(t, srv, func(cfg *Config) { cfg.APIKey = key })
		chunks, err := drain(t, mustStream(t, c, t.Context(), baseRequest()))
		if err != nil {
			t.Fatal(err)
		}
		var comp *model.Completion
		for _, ch := range chunks {
			if ch.Kind == model.ChunkCompletion {
				comp = ch.Completion
			}
		}
		if comp == nil || comp.Content != "package main and ollama" || len(comp.ToolCalls) != 1 ||
			!strings.Contains(string(comp.ToolCalls[0].Arguments), "package main // uses ollama") {
			t.Fatalf("key %q: completion %+v, want the text and the file as the model wrote them", key, comp)
		}
	}
	if echoKeyOf(testKey) != testKey {
		t.Fatalf("a key of %d bytes is not redacted from replies", len(testKey))
	}
}
