package openai

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/quirks"
	"github.com/harness-dev/harness/model"
)

const quirksArgs = `{"path": "README.md"}`

// Every recording of a real server, replayed through a loopback server:
// round one yields the tool call (renamed back to fs.read, with the
// arguments the server streamed), the reasoning and the usage the server
// reported; round two, built from that completion as the runtime would,
// carries what the server requires (the same call id, DeepSeek's
// reasoning_content) and is answered.
func TestQuirksRecorded(t *testing.T) {
	for _, path := range quirks.Files(t, quirks.Dir(t)) {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".sse"), func(t *testing.T) {
			f, err := quirks.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			replayQuirks(t, f)
		})
	}
}

func replayQuirks(t *testing.T, f *quirks.File) {
	t.Helper()
	srv := quirks.NewServer(t, f, WireName("fs.read"), quirksArgs)
	c, err := New(Config{BaseURL: srv.URL, APIKey: testKey, Model: "m", Timeout: 10 * time.Second, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	req := baseRequest()
	chunks, err := drain(t, mustStream(t, c, t.Context(), req))
	if err != nil {
		t.Fatalf("round one: %v", err)
	}
	comp := chunks[len(chunks)-1].Completion
	sum := f.Summary()

	var reasoning strings.Builder
	for _, ch := range chunks {
		if ch.Kind == model.ChunkReasoning {
			reasoning.WriteString(ch.Delta)
		}
	}
	if comp.Reasoning != sum.Reasoning || reasoning.String() != sum.Reasoning {
		t.Errorf("reasoning: completion %q, chunks %q, want %q", comp.Reasoning, reasoning.String(), sum.Reasoning)
	}
	if sum.Usage != nil {
		want := model.Usage{PromptTokens: sum.Usage.Prompt, CompletionTokens: sum.Usage.Completion,
			TotalTokens: sum.Usage.Total, ReasoningTokens: sum.Usage.Reasoning}
		if diff := cmp.Diff(want, comp.Usage); diff != "" {
			t.Errorf("usage (-want +got):\n%s", diff)
		}
	} else if !comp.Usage.Estimated {
		t.Errorf("usage %+v: the server sent none, want an estimate", comp.Usage)
	}
	if sum.Call == nil {
		if len(comp.ToolCalls) != 0 || comp.FinishReason != model.FinishStop || comp.Content == "" {
			t.Errorf("text answer: %+v", comp)
		}
		return
	}
	if len(comp.ToolCalls) != 1 || comp.FinishReason != model.FinishToolCalls {
		t.Fatalf("round one: want one tool call, got %+v", comp)
	}
	tc := comp.ToolCalls[0]
	if tc.Name != "fs.read" || tc.BadArguments || compactJSON(t, tc.Arguments) != `{"path":"README.md"}` {
		t.Errorf("tool call = %+v", tc)
	}
	if sum.Call.ID != "" && tc.ID != sum.Call.ID {
		t.Errorf("tool call id %q, the server sent %q", tc.ID, sum.Call.ID)
	}

	// Round two, as the runtime builds it from the completion.
	req.Messages = append(req.Messages,
		model.Message{ID: "msg-2", Role: model.RoleAssistant, Content: comp.Content, Reasoning: comp.Reasoning, ToolCalls: comp.ToolCalls},
		model.Message{ID: "msg-3", Role: model.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: `{"path":"README.md","content":"# hi\n","size":5}`})
	req.RequestID = "req-2"
	chunks, err = drain(t, mustStream(t, c, t.Context(), req))
	if err != nil {
		t.Fatalf("round two: %v (server: %v)", err, srv.Problems())
	}
	if p := srv.Problems(); len(p) > 0 {
		t.Fatalf("round two lacked: %v", p)
	}
	if last := chunks[len(chunks)-1]; last.Kind != model.ChunkCompletion {
		t.Fatalf("round two ended with %+v", last)
	}

	// Without what the server requires, it answers as it did for users.
	if f.Requires("reasoning_content") {
		req.Messages[1].Reasoning = ""
		srv := quirks.NewServer(t, f, WireName("fs.read"), quirksArgs)
		c, _ := New(Config{BaseURL: srv.URL, APIKey: testKey, Model: "m", Timeout: 10 * time.Second, MaxRetries: -1})
		first := req
		first.Messages = req.Messages[:1]
		if _, err := drain(t, mustStream(t, c, t.Context(), first)); err != nil {
			t.Fatal(err)
		}
		_, err := drain(t, mustStream(t, c, t.Context(), req))
		if code := errcode.Of(err); code != errcode.ModelHTTPError || !strings.Contains(err.Error(), "reasoning_content") {
			t.Errorf("round two without reasoning: %v (%s), want the server's 400", err, code)
		}
	}
}

func compactJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compact %s: %v", raw, err)
	}
	return b.String()
}

// The hand-made streams of each shape: round two carries back what round
// one brought (reasoning on the tool-call message, opaque per-call fields,
// a generated id, the model's own broken arguments).
func TestRoundTwoCarriesBack(t *testing.T) {
	tests := []struct {
		file  string
		check func(t *testing.T, comp *model.Completion, prev map[string]any)
	}{
		{"reasoning_tool.sse", func(t *testing.T, comp *model.Completion, prev map[string]any) {
			if prev["reasoning_content"] != "The user wants the README." {
				t.Errorf("reasoning_content on the wire = %v", prev["reasoning_content"])
			}
		}},
		{"thought_signature.sse", func(t *testing.T, comp *model.Completion, prev map[string]any) {
			tc := prev["tool_calls"].([]any)[0].(map[string]any)
			sig, _ := json.Marshal(tc["extra_content"])
			if string(sig) != `{"google":{"thought_signature":"CpUCAdHtim9Sig+x1"}}` {
				t.Errorf("extra_content on the wire = %s", sig)
			}
			if _, ok := prev["reasoning_content"]; ok {
				t.Error("reasoning_content sent for a message without reasoning")
			}
		}},
		{"no_call_id.sse", func(t *testing.T, comp *model.Completion, prev map[string]any) {
			id := comp.ToolCalls[0].ID
			if !strings.HasPrefix(id, "call_") || len(id) != len("call_")+24 {
				t.Errorf("generated id %q", id)
			}
			if got := prev["tool_calls"].([]any)[0].(map[string]any)["id"]; got != id {
				t.Errorf("id on the wire %v, want the generated %q", got, id)
			}
		}},
		{"invalid_args.sse", func(t *testing.T, comp *model.Completion, prev map[string]any) {
			fn := prev["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
			if fn["arguments"] != `{"path": "README.md"` {
				t.Errorf("arguments on the wire = %q, want the model's text as it came", fn["arguments"])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".sse"), func(t *testing.T) {
			srv := newServer(t, sse(t, tt.file), sse(t, "plain.sse"))
			c := newClient(t, srv)
			req := baseRequest()
			chunks, err := drain(t, mustStream(t, c, t.Context(), req))
			if err != nil {
				t.Fatal(err)
			}
			comp := chunks[len(chunks)-1].Completion
			if len(comp.ToolCalls) != 1 {
				t.Fatalf("completion %+v, want one call", comp)
			}
			tc := comp.ToolCalls[0]
			req.Messages = append(req.Messages,
				model.Message{ID: "msg-2", Role: model.RoleAssistant, Content: comp.Content, Reasoning: comp.Reasoning, ToolCalls: comp.ToolCalls},
				model.Message{ID: "msg-3", Role: model.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: `{"error":"TOOL_BAD_INPUT"}`})
			if _, err := drain(t, mustStream(t, c, t.Context(), req)); err != nil {
				t.Fatal(err)
			}
			var body struct {
				Messages []map[string]any `json:"messages"`
			}
			if err := json.Unmarshal(srv.requests()[1].body, &body); err != nil {
				t.Fatal(err)
			}
			prev := body.Messages[2]
			if prev["role"] != "assistant" || body.Messages[3]["tool_call_id"] != tc.ID {
				t.Fatalf("round two messages = %v", body.Messages)
			}
			tt.check(t, comp, prev)
		})
	}
}

// Answers that are not a stream, or errors in other shapes, end with a code
// and the server's words.
func TestNonStreamAnswers(t *testing.T) {
	tests := []struct {
		name     string
		reply    reply
		wantCode errcode.Code
		wantText string
	}{
		{"html page with status 200", reply{status: 200, header: map[string]string{"Content-Type": "text/html; charset=utf-8"},
			body: "<!DOCTYPE html><html><body>Sign in</body></html>"}, errcode.ModelInvalidResponse, "HTML page"},
		{"html page sent as an event stream", reply{status: 200, body: "<html>\n<body>Welcome to nginx!</body>\n</html>\n"},
			errcode.ModelInvalidResponse, "HTML page"},
		{"array-wrapped error body", reply{status: 400,
			body: `[{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}]`},
			errcode.ModelHTTPError, "missing a thought_signature"},
		{"flat error body", reply{status: 400, body: `{"object":"error","message":"max_tokens is too large: 9000","type":"BadRequestError","param":null,"code":400}`},
			errcode.ModelHTTPError, "max_tokens is too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.reply)
			_, err := drain(t, mustStream(t, newClient(t, srv), t.Context(), baseRequest()))
			if code := errcode.Of(err); code != tt.wantCode || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("err = %v (%s), want %s with %q", err, code, tt.wantCode, tt.wantText)
			}
		})
	}
}
