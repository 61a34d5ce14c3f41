package openai

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// wireBody mirrors the Chat Completions request fields the tests look at.
type wireBody struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		ToolCallID string  `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	Stream              bool     `json:"stream"`
	Temperature         *float64 `json:"temperature"`
	TopP                *float64 `json:"top_p"`
	Seed                *int64   `json:"seed"`
	ReasoningEffort     string   `json:"reasoning_effort"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func decodeBody(t *testing.T, b []byte) wireBody {
	t.Helper()
	var w wireBody
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatalf("decode wire body: %v\n%s", err, b)
	}
	return w
}

func ptr[T any](v T) *T { return &v }

func TestWireRequest(t *testing.T) {
	srv := newServer(t, sse(t, "plain.sse"))
	c := newClient(t, srv)
	req := model.Request{
		RequestID: "req-9",
		Model:     "gpt-other",
		System:    "be brief",
		Messages: []model.Message{
			{Role: model.RoleUser, Content: "list"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "git.diff"}}},
			{Role: model.RoleTool, ToolCallID: "c1", Name: "git.diff", Content: `{"patch":""}`},
			{Role: model.RoleSystem, Content: "Conversation summary (v1): none"},
			{Role: model.RoleAssistant, Content: "ok"},
		},
		Tools:     []model.ToolSpec{{Name: "plain_tool", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":10}}}`)}},
		MaxTokens: 512,
	}
	if _, err := drain(t, mustStream(t, c, t.Context(), req)); err != nil {
		t.Fatal(err)
	}
	got := srv.requests()[0]
	if got.path != "/v1/chat/completions" {
		t.Errorf("path = %q", got.path)
	}
	if a := got.header.Get("Authorization"); a != "Bearer "+testKey {
		t.Errorf("Authorization header missing or wrong")
	}
	w := decodeBody(t, got.body)
	if w.Model != "gpt-other" || !w.Stream || !w.StreamOptions.IncludeUsage || w.MaxTokens == nil || *w.MaxTokens != 512 || w.MaxCompletionTokens != nil {
		t.Errorf("model %q stream %v include_usage %v max_tokens %v max_completion_tokens %v",
			w.Model, w.Stream, w.StreamOptions.IncludeUsage, w.MaxTokens, w.MaxCompletionTokens)
	}
	type msg struct {
		Role, Content, ToolCallID, Calls string
	}
	var msgs []msg
	for _, m := range w.Messages {
		x := msg{Role: m.Role, ToolCallID: m.ToolCallID}
		if m.Content != nil {
			x.Content = *m.Content
		} else {
			x.Content = "<absent>"
		}
		for _, tc := range m.ToolCalls {
			x.Calls += tc.ID + ":" + tc.Type + ":" + tc.Function.Name + ":" + tc.Function.Arguments
		}
		msgs = append(msgs, x)
	}
	want := []msg{
		{Role: "system", Content: "be brief"},
		{Role: "user", Content: "list"},
		{Role: "assistant", Content: "<absent>", Calls: "c1:function:harness_6769742e64696666:{}"},
		{Role: "tool", Content: `{"patch":""}`, ToolCallID: "c1"},
		{Role: "system", Content: "Conversation summary (v1): none"},
		{Role: "assistant", Content: "ok"},
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if len(w.Tools) != 1 || w.Tools[0].Type != "function" || w.Tools[0].Function.Name != "plain_tool" || w.Tools[0].Function.Description != "d" {
		t.Fatalf("tools = %+v", w.Tools)
	}
	var params any
	if err := json.Unmarshal(w.Tools[0].Function.Parameters, &params); err != nil {
		t.Fatal(err)
	}
	wantParams := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": 10.0}}}
	if diff := cmp.Diff(wantParams, params); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
}

func TestProviderOptions(t *testing.T) {
	tests := []struct {
		name      string
		options   string
		maxTokens int
		check     func(t *testing.T, w wireBody)
	}{
		{
			name: "none",
			check: func(t *testing.T, w wireBody) {
				if w.Temperature != nil || w.TopP != nil || w.Seed != nil || w.ReasoningEffort != "" || w.MaxTokens != nil {
					t.Errorf("unexpected sampling fields: %+v", w)
				}
			},
		},
		{
			name:      "sampling",
			options:   `{"temperature":0.2,"top_p":0.9,"seed":7}`,
			maxTokens: 100,
			check: func(t *testing.T, w wireBody) {
				if diff := cmp.Diff([]any{ptr(0.2), ptr(0.9), ptr(int64(7)), ptr(100)},
					[]any{w.Temperature, w.TopP, w.Seed, w.MaxTokens}); diff != "" {
					t.Errorf("temperature, top_p, seed, max_tokens (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:      "reasoning effort uses max_completion_tokens",
			options:   `{"reasoning_effort":"low"}`,
			maxTokens: 2048,
			check: func(t *testing.T, w wireBody) {
				if w.ReasoningEffort != "low" || w.MaxTokens != nil || w.MaxCompletionTokens == nil || *w.MaxCompletionTokens != 2048 {
					t.Errorf("reasoning_effort %q max_tokens %v max_completion_tokens %v", w.ReasoningEffort, w.MaxTokens, w.MaxCompletionTokens)
				}
			},
		},
		{
			name:    "null",
			options: `null`,
			check:   func(*testing.T, wireBody) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, sse(t, "plain.sse"))
			req := baseRequest()
			req.ProviderOptions = json.RawMessage(tt.options)
			req.MaxTokens = tt.maxTokens
			if _, err := drain(t, mustStream(t, newClient(t, srv), t.Context(), req)); err != nil {
				t.Fatal(err)
			}
			tt.check(t, decodeBody(t, srv.requests()[0].body))
		})
	}
}

func TestRequestRejected(t *testing.T) {
	long := strings.Repeat("a.", 15) // 30 bytes: alias of 8 + 60 characters
	tests := []struct {
		name string
		edit func(r *model.Request)
	}{
		{"alias over 64 characters", func(r *model.Request) {
			r.Tools = append(r.Tools, model.ToolSpec{Name: long})
		}},
		{"alias over 64 characters in the history", func(r *model.Request) {
			r.Messages = append(r.Messages, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call("c1", long, `{}`)}})
		}},
		{"alias collision", func(r *model.Request) {
			r.Tools = append(r.Tools, model.ToolSpec{Name: "harness_66732e72656164"})
		}},
		{"alias collision with the history", func(r *model.Request) {
			r.Messages = append(r.Messages, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call("c1", "harness_66732e72656164", `{}`)}})
		}},
		{"duplicate tool names", func(r *model.Request) {
			r.Tools = append(r.Tools, model.ToolSpec{Name: "fs.read"})
		}},
		{"empty tool name", func(r *model.Request) {
			r.Tools = append(r.Tools, model.ToolSpec{Name: ""})
		}},
		{"unknown provider option", func(r *model.Request) { r.ProviderOptions = json.RawMessage(`{"temperature":1,"logit_bias":{}}`) }},
		{"provider option in the wrong case", func(r *model.Request) { r.ProviderOptions = json.RawMessage(`{"Temperature":1}`) }},
		{"provider option of the wrong type", func(r *model.Request) { r.ProviderOptions = json.RawMessage(`{"temperature":"hot"}`) }},
		{"seed as a string", func(r *model.Request) { r.ProviderOptions = json.RawMessage(`{"seed":"5"}`) }},
		{"seed not an integer", func(r *model.Request) { r.ProviderOptions = json.RawMessage(`{"seed":1.5}`) }},
		{"empty reasoning effort", func(r *model.Request) { r.ProviderOptions = json.RawMessage(`{"reasoning_effort":""}`) }},
		{"provider options not an object", func(r *model.Request) { r.ProviderOptions = json.RawMessage(`[1]`) }},
		{"parameters not an object", func(r *model.Request) { r.Tools[0].Parameters = json.RawMessage(`["path"]`) }},
		{"tool message without call id", func(r *model.Request) {
			r.Messages = append(r.Messages, model.Message{Role: model.RoleTool, Content: "x"})
		}},
		{"assistant call without id", func(r *model.Request) {
			r.Messages = append(r.Messages, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call("", "fs.read", `{}`)}})
		}},
		{"unknown role", func(r *model.Request) { r.Messages[0].Role = "developer" }},
		{"negative max tokens", func(r *model.Request) { r.MaxTokens = -1 }},
		{"no messages", func(r *model.Request) { r.System, r.Messages = "", nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, sse(t, "plain.sse"))
			req := baseRequest()
			tt.edit(&req)
			s, err := newClient(t, srv).Stream(t.Context(), req)
			if err == nil {
				_ = s.Close()
			}
			if code := errcode.Of(err); code != errcode.ModelInvalidRequest {
				t.Fatalf("code = %q, want MODEL_INVALID_REQUEST (%v)", code, err)
			}
			if n := len(srv.requests()); n != 0 {
				t.Errorf("server got %d requests, want none", n)
			}
		})
	}
}

func TestHTTPFailures(t *testing.T) {
	keyEcho := `{"error":{"message":"Incorrect API key provided: ` + testKey + `. Header was Authorization: Bearer ` + testKey + `","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	// The retry notices say what failed, with the key taken out.
	const keyEchoAnswer = "server answered 500 Internal Server Error: Incorrect API key provided: [REDACTED]. Header was Authorization: [REDACTED]"
	fail := func(status int, body string, header map[string]string) reply {
		return reply{status: status, body: body, header: header}
	}
	plain := func(t *testing.T) reply { return sse(t, "plain.sse") }
	answer := []model.Chunk{delta("Hello"), delta(", "), delta("world"), delta("!"),
		completion(model.Completion{Content: "Hello, world!", FinishReason: model.FinishStop, Usage: usage(42, 4)})}
	tests := []struct {
		name     string
		replies  func(t *testing.T) []reply
		cfg      func(*Config)
		want     []model.Chunk
		wantCode errcode.Code
		wantReqs int
	}{
		{
			name:     "401",
			replies:  func(*testing.T) []reply { return []reply{fail(401, keyEcho, nil)} },
			wantCode: errcode.ModelAuthError, wantReqs: 1,
		},
		{
			name:     "403",
			replies:  func(*testing.T) []reply { return []reply{fail(403, `{"error":{"message":"forbidden"}}`, nil)} },
			wantCode: errcode.ModelAuthError, wantReqs: 1,
		},
		{
			name:     "400 is not retried",
			replies:  func(*testing.T) []reply { return []reply{fail(400, keyEcho, nil)} },
			wantCode: errcode.ModelHTTPError, wantReqs: 1,
		},
		{
			name:     "404 with a plain body",
			replies:  func(*testing.T) []reply { return []reply{fail(404, "no such route, key "+testKey, nil)} },
			wantCode: errcode.ModelHTTPError, wantReqs: 1,
		},
		{
			name: "429 then success",
			replies: func(t *testing.T) []reply {
				return []reply{fail(429, `{"error":{"message":"Rate limit reached"}}`, map[string]string{"Retry-After": "0"}), plain(t)}
			},
			want:     append([]model.Chunk{retry(1, errcode.ModelRateLimited, 0, "server answered 429 Too Many Requests: Rate limit reached")}, answer...),
			wantReqs: 2,
		},
		{
			name: "429 with retry-after-ms",
			replies: func(t *testing.T) []reply {
				return []reply{fail(429, `{}`, map[string]string{"Retry-After-Ms": "5"}), plain(t)}
			},
			want:     append([]model.Chunk{retry(1, errcode.ModelRateLimited, 5, "server answered 429 Too Many Requests")}, answer...),
			wantReqs: 2,
		},
		{
			name:     "500 on every attempt",
			replies:  func(*testing.T) []reply { return []reply{fail(500, keyEcho, nil)} },
			want:     []model.Chunk{retry(1, errcode.ModelHTTPError, 1, keyEchoAnswer), retry(2, errcode.ModelHTTPError, 2, keyEchoAnswer)},
			wantCode: errcode.ModelHTTPError, wantReqs: 3,
		},
		{
			name:     "503 on every attempt, default retries",
			replies:  func(*testing.T) []reply { return []reply{fail(503, `{}`, map[string]string{"Retry-After": "0"})} },
			cfg:      func(c *Config) { c.MaxRetries = 0 }, // DefaultMaxRetries
			want:     busy(DefaultMaxRetries),
			wantCode: errcode.ModelHTTPError, wantReqs: DefaultMaxRetries + 1,
		},
		{
			name:     "500 without retries",
			replies:  func(*testing.T) []reply { return []reply{fail(500, "oops", nil)} },
			cfg:      func(c *Config) { c.MaxRetries = -1 },
			wantCode: errcode.ModelHTTPError, wantReqs: 1,
		},
		{
			name:     "503 asking for too long a pause",
			replies:  func(*testing.T) []reply { return []reply{fail(503, `{}`, map[string]string{"Retry-After": "3600"})} },
			wantCode: errcode.ModelHTTPError, wantReqs: 1,
		},
		{
			name: "502 then success",
			replies: func(t *testing.T) []reply {
				return []reply{fail(502, "<html>bad gateway</html>", nil), plain(t)}
			},
			want:     append([]model.Chunk{retry(1, errcode.ModelHTTPError, 1, "server answered 502 Bad Gateway: <html>bad gateway</html>")}, answer...),
			wantReqs: 2,
		},
		{
			name: "connection dropped before any content is retried",
			replies: func(t *testing.T) []reply {
				return []reply{{status: http.StatusOK, body: firstEvents(t, "plain.sse", 1), hangup: true}, plain(t)}
			},
			want:     append([]model.Chunk{retry(1, errcode.ModelTransportError, 1, "reach {url}: the server closed the connection")}, answer...),
			wantReqs: 2,
		},
		{
			name: "connection dropped after content is not retried",
			replies: func(t *testing.T) []reply {
				return []reply{{status: http.StatusOK, body: firstEvents(t, "plain.sse", 3), hangup: true}, plain(t)}
			},
			want:     []model.Chunk{delta("Hello"), delta(", ")},
			wantCode: errcode.ModelTransportError, wantReqs: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.replies(t)...)
			cfg := func(*Config) {}
			if tt.cfg != nil {
				cfg = tt.cfg
			}
			got, err := drain(t, mustStream(t, newClient(t, srv, cfg), t.Context(), baseRequest()))
			if code := errcode.Of(err); code != tt.wantCode {
				t.Fatalf("code = %q, want %q (%v)", code, tt.wantCode, err)
			}
			checkNoSecret(t, err)
			if diff := cmp.Diff(atURL(tt.want, srv.url()), got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if n := len(srv.requests()); n != tt.wantReqs {
				t.Errorf("server got %d requests, want %d", n, tt.wantReqs)
			}
		})
	}
}

// busy is the retry notices of n attempts answered 503 with Retry-After 0.
func busy(n int) []model.Chunk {
	var out []model.Chunk
	for i := 1; i <= n; i++ {
		out = append(out, retry(i, errcode.ModelHTTPError, 0, "server answered 503 Service Unavailable"))
	}
	return out
}

// A server that refuses the connection gets two retries, however many an
// overloaded one would get (the default's five): it is down, or the port
// is wrong, and the turn says so within seconds.
func TestTransportError(t *testing.T) {
	srv := newServer(t, sse(t, "plain.sse"))
	// MaxRetries 0: DefaultMaxRetries.
	c := newClient(t, srv, func(c *Config) { c.MaxRetries = 0 })
	srv.srv.Close() // nothing listens there any more
	got, err := drain(t, mustStream(t, c, t.Context(), baseRequest()))
	if code := errcode.Of(err); code != errcode.ModelTransportError {
		t.Fatalf("code = %q, want MODEL_TRANSPORT_ERROR (%v)", code, err)
	}
	checkNoSecret(t, err)
	const refused = "reach {url}: connection refused (is the server running, on this port?)"
	want := []model.Chunk{retry(1, errcode.ModelTransportError, 1, refused), retry(2, errcode.ModelTransportError, 2, refused)}
	if diff := cmp.Diff(atURL(want, srv.url()), got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}

func TestIgnoresEnvironment(t *testing.T) {
	decoy := newServer(t, sse(t, "plain.sse"))
	t.Setenv("OPENAI_API_KEY", "sk-from-environment-0000")
	t.Setenv("OPENAI_BASE_URL", decoy.url())
	t.Setenv("OPENAI_ORG_ID", "org-from-environment")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-From-Env: 1")

	srv := newServer(t, sse(t, "plain.sse"))
	if _, err := drain(t, mustStream(t, newClient(t, srv), t.Context(), baseRequest())); err != nil {
		t.Fatal(err)
	}
	if n := len(decoy.requests()); n != 0 {
		t.Fatalf("OPENAI_BASE_URL was followed (%d requests)", n)
	}
	h := srv.requests()[0].header
	got := []string{h.Get("Authorization"), h.Get("OpenAI-Organization"), h.Get("X-From-Env")}
	if diff := cmp.Diff([]string{"Bearer " + testKey, "", ""}, got); diff != "" {
		t.Errorf("headers taken from the environment (-want +got):\n%s", diff)
	}

	// A loopback server without a key gets no Authorization header, even
	// with OPENAI_API_KEY set.
	srv2 := newServer(t, sse(t, "plain.sse"))
	if _, err := drain(t, mustStream(t, newClient(t, srv2, func(c *Config) { c.APIKey = "" }), t.Context(), baseRequest())); err != nil {
		t.Fatal(err)
	}
	if a := srv2.requests()[0].header.Get("Authorization"); a != "" {
		t.Errorf("Authorization = %q, want none", a)
	}
}

// A call's opaque extra fields are echoed with their own keys, but one
// named like a field the request sets (id, type, function) never replaces
// it on the wire.
func TestExtraFieldsNeverReplaceOurs(t *testing.T) {
	req := baseRequest()
	req.Messages = append(req.Messages,
		model.Message{ID: "msg-2", Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{
			ID: "call_1", Name: "fs.read", Arguments: json.RawMessage(`{"path":"README.md"}`),
			Extra: json.RawMessage(`{"extra_content":{"google":{"thought_signature":"sig"}},"function":{"name":"evil","arguments":"{}"},"id":"call_evil","type":"web"}`),
		}}},
		model.Message{ID: "msg-3", Role: model.RoleTool, ToolCallID: "call_1", Name: "fs.read", Content: "{}"})
	w, err := buildRequest(req, "gpt-test")
	if err != nil {
		t.Fatal(err)
	}
	body := w.body
	got := decodeBody(t, body).Messages[2].ToolCalls
	if len(got) != 1 || got[0].ID != "call_1" || got[0].Type != "function" ||
		got[0].Function.Name != WireName("fs.read") || got[0].Function.Arguments != `{"path":"README.md"}` {
		t.Errorf("wire tool call = %+v, want ours", got)
	}
	var raw struct {
		Messages []struct {
			ToolCalls []map[string]json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	if sig := string(raw.Messages[2].ToolCalls[0]["extra_content"]); sig != `{"google":{"thought_signature":"sig"}}` {
		t.Errorf("extra_content on the wire = %s", sig)
	}
}

// Reasoning goes back on the assistant messages of a turn that called a
// tool (DeepSeek's rule: its final answer included), under the field it
// came in, and not on a turn that called none.
func TestReasoningGoesBackInToolTurns(t *testing.T) {
	req := baseRequest()
	req.Messages = append(req.Messages,
		model.Message{ID: "msg-2", Role: model.RoleAssistant, Reasoning: "A", ReasoningField: "reasoning", ToolCalls: []model.ToolCall{call("call_1", "fs.read", `{"path":"x"}`)}},
		model.Message{ID: "msg-3", Role: model.RoleTool, ToolCallID: "call_1", Name: "fs.read", Content: "{}"},
		model.Message{ID: "msg-4", Role: model.RoleAssistant, Content: "read it", Reasoning: "B", ReasoningField: "reasoning"},
		model.Message{ID: "msg-5", Role: model.RoleUser, Content: "thanks"},
		model.Message{ID: "msg-6", Role: model.RoleAssistant, Content: "welcome", Reasoning: "C", ReasoningField: "reasoning_content"},
		model.Message{ID: "msg-7", Role: model.RoleUser, Content: "more"},
		model.Message{ID: "msg-8", Role: model.RoleAssistant, Reasoning: "D", ToolCalls: []model.ToolCall{call("call_2", "fs.read", `{"path":"y"}`)}},
		model.Message{ID: "msg-9", Role: model.RoleTool, ToolCallID: "call_2", Name: "fs.read", Content: "{}"})
	w, err := buildRequest(req, "gpt-test")
	if err != nil {
		t.Fatal(err)
	}
	body := w.body
	var got struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{ // per assistant message: its reasoning fields on the wire
		{"reasoning": "A"}, {"reasoning": "B"}, {}, {"reasoning_content": "D"}, // D: recorded without its field
	}
	var have []map[string]any
	for _, m := range got.Messages {
		if m["role"] != "assistant" {
			continue
		}
		f := map[string]any{}
		for _, k := range []string{"reasoning", "reasoning_content"} {
			if v, ok := m[k]; ok {
				f[k] = v
			}
		}
		have = append(have, f)
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("reasoning on the wire (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]int{"reasoning": {2, 4}, "reasoning_content": {8}}, w.sent); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
}
