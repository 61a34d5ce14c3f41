package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/quirks"
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
	want := quirks.Expect(t, f)

	var reasoning strings.Builder
	for _, ch := range chunks {
		if ch.Kind == model.ChunkReasoning {
			reasoning.WriteString(ch.Delta)
		}
	}
	if comp.Reasoning != want.Reasoning || reasoning.String() != want.Reasoning {
		t.Errorf("reasoning: completion %q, chunks %q, want %q", comp.Reasoning, reasoning.String(), want.Reasoning)
	}
	if want.Usage != nil {
		u := model.Usage{PromptTokens: want.Usage.Prompt, CompletionTokens: want.Usage.Completion,
			TotalTokens: want.Usage.Total, ReasoningTokens: want.Usage.Reasoning}
		if diff := cmp.Diff(u, comp.Usage); diff != "" {
			t.Errorf("usage (-want +got):\n%s", diff)
		}
	} else if !comp.Usage.Estimated {
		t.Errorf("usage %+v: the server sent none, want an estimate", comp.Usage)
	}
	if comp.FinishReason != want.FinishReason {
		t.Errorf("finish reason %q, want %q", comp.FinishReason, want.FinishReason)
	}
	if !want.Call {
		if len(comp.ToolCalls) != 0 || !want.CheckContent(comp.Content) {
			t.Errorf("text answer: %+v, want %d bytes starting %q", comp, want.ContentLen, want.ContentPrefix)
		}
		return
	}
	if len(comp.ToolCalls) != 1 || comp.Content != "" {
		t.Fatalf("round one: want one tool call, got %+v", comp)
	}
	tc := comp.ToolCalls[0]
	if tc.Name != "fs.read" || tc.BadArguments || compactJSON(t, tc.Arguments) != `{"path":"README.md"}` {
		t.Errorf("tool call = %+v", tc)
	}
	if want.CallID != "" && tc.ID != want.CallID {
		t.Errorf("tool call id %q, the server sent %q", tc.ID, want.CallID)
	}

	// Round two, as the runtime builds it from the completion.
	req.Messages = append(req.Messages,
		model.Message{ID: "msg-2", Role: model.RoleAssistant, Content: comp.Content, Reasoning: comp.Reasoning, ReasoningField: comp.ReasoningField, ToolCalls: comp.ToolCalls},
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
			if _, ok := prev["reasoning"]; ok {
				t.Error("reasoning sent for reasoning that came as reasoning_content")
			}
		}},
		{"groq_reasoning.sse", func(t *testing.T, comp *model.Completion, prev map[string]any) {
			// Reasoning that came as "reasoning" (Groq, OpenRouter, newer
			// vLLM) goes back under that name to a server that takes it.
			if comp.ReasoningField != "reasoning" || prev["reasoning"] != "The user asks for the README; read it." {
				t.Errorf("reasoning field %q, on the wire %v", comp.ReasoningField, prev["reasoning"])
			}
			if _, ok := prev["reasoning_content"]; ok {
				t.Error("reasoning_content sent for reasoning that came as reasoning")
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
				model.Message{ID: "msg-2", Role: model.RoleAssistant, Content: comp.Content, Reasoning: comp.Reasoning, ReasoningField: comp.ReasoningField, ToolCalls: comp.ToolCalls},
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

// strictServer answers like Groq: round one with the stream, and any
// request whose assistant messages carry a field the server does not know
// with its 400; requests it takes get a text answer.
type strictServer struct {
	first string // round one's stream
	mu    sync.Mutex
	reqs  [][]byte // guarded by mu
}

func (s *strictServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, body)
	n := len(s.reqs)
	s.mu.Unlock()
	var req struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	for i, m := range req.Messages {
		if string(m["role"]) != `"assistant"` {
			continue
		}
		for k := range m {
			if !slices.Contains([]string{"role", "content", "tool_calls", "name", "refusal"}, k) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"error":{"message":"'messages.%d' : for 'role:assistant' the following must be satisfied[('messages.%d' : property '%s' is unsupported)]","type":"invalid_request_error"}}`, i, i, k)
				return
			}
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if n == 1 {
		_, _ = io.WriteString(w, s.first)
		return
	}
	_, _ = io.WriteString(w, quirks.FinalAnswer)
}

func (s *strictServer) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// A server that refuses the reasoning field sent back (Groq and Cerebras
// answer 400 "property 'reasoning_content' is unsupported", and the same
// for reasoning) gets the request once more without it, announced as a
// retry; the client's later requests leave it out from the start.
func TestRefusedReasoningFieldIsStripped(t *testing.T) {
	tests := []struct {
		name   string
		legacy bool // the message was recorded before its reasoning's field was kept
		field  string
	}{
		{"reasoning, as it came", false, "reasoning"},
		{"reasoning_content, for reasoning recorded without its field", true, "reasoning_content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &strictServer{first: sse(t, "groq_reasoning.sse").body}
			hs := httptest.NewServer(srv)
			t.Cleanup(hs.Close)
			c, err := New(Config{BaseURL: hs.URL + "/v1", APIKey: testKey, Model: "m", Timeout: 10 * time.Second, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			req := baseRequest()
			chunks, err := drain(t, mustStream(t, c, t.Context(), req))
			if err != nil {
				t.Fatal(err)
			}
			comp := chunks[len(chunks)-1].Completion
			msg := model.Message{ID: "msg-2", Role: model.RoleAssistant, Reasoning: comp.Reasoning, ReasoningField: comp.ReasoningField, ToolCalls: comp.ToolCalls}
			if tt.legacy {
				msg.ReasoningField = ""
			}
			req.Messages = append(req.Messages, msg,
				model.Message{ID: "msg-3", Role: model.RoleTool, ToolCallID: comp.ToolCalls[0].ID, Name: "fs.read", Content: "{}"})
			chunks, err = drain(t, mustStream(t, c, t.Context(), req))
			if err != nil {
				t.Fatalf("round two: %v", err)
			}
			refused := "server answered 400 Bad Request: 'messages.2' : for 'role:assistant' the following must be satisfied[('messages.2' : property '" + tt.field + "' is unsupported)]"
			if diff := cmp.Diff(retry(1, errcode.ModelHTTPError, 0, refused), chunks[0]); diff != "" {
				t.Errorf("round two's first chunk (-want +got):\n%s", diff)
			}
			if last := chunks[len(chunks)-1]; last.Kind != model.ChunkCompletion || last.Completion.Content != "Done." {
				t.Errorf("round two ended with %+v", last)
			}
			reqs := srv.requests()
			if len(reqs) != 3 || !bytes.Contains(reqs[1], []byte(`"`+tt.field+`":`)) || bytes.Contains(reqs[2], []byte(`"`+tt.field+`":`)) {
				t.Fatalf("requests: %d; want round two with %s, then without:\n%s", len(reqs), tt.field, reqs[len(reqs)-1])
			}
			// Round three: the field stays out, no second refusal.
			req.Messages = append(req.Messages, model.Message{ID: "msg-4", Role: model.RoleAssistant, Content: "Done."},
				model.Message{ID: "msg-5", Role: model.RoleUser, Content: "and now?"})
			chunks, err = drain(t, mustStream(t, c, t.Context(), req))
			if err != nil || chunks[0].Kind == model.ChunkRetry {
				t.Fatalf("round three: %v %+v", err, chunks)
			}
			if n := len(srv.requests()); n != 4 {
				t.Errorf("%d requests after round three, want 4", n)
			}
		})
	}
}

// Which 400 answers name a refused reasoning field.
func TestRefusedField(t *testing.T) {
	sent := map[string][]int{"reasoning": {2}, "reasoning_content": {4}}
	tests := []struct {
		status int
		server string
		want   string
	}{
		{400, `'messages.2' : for 'role:assistant' the following must be satisfied[('messages.2' : property 'reasoning_content' is unsupported)]`, "reasoning_content"},
		{400, `'messages.2' : property 'reasoning' is unsupported, did you mean 'role'?`, "reasoning"},
		{422, `body.messages[2].reasoning: Extra inputs are not permitted`, "reasoning"},
		{400, `Missing reasoning_content field in the assistant message at message index 2`, ""},
		{400, `reasoning_effort is not supported with this model`, ""},
		{400, `max_tokens is too large`, ""},
		{500, `property 'reasoning' is unsupported`, ""},
		{429, `property 'reasoning' is unsupported`, ""},
	}
	for _, tt := range tests {
		if got := refusedField(&attemptError{status: tt.status, server: tt.server}, sent); got != tt.want {
			t.Errorf("%d %q: %q, want %q", tt.status, tt.server, got, tt.want)
		}
	}
	if got := refusedField(&attemptError{status: 400, server: `property 'reasoning' is unsupported`}, map[string][]int{"reasoning_content": {2}}); got != "" {
		t.Errorf("a field the request did not carry: %q", got)
	}
}
