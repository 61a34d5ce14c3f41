package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/model/openai"
	"github.com/harness-dev/harness/internal/quirks"
)

// harness exec against every recorded real server: round one's tool call
// is recognised and run (fs.read on the read-only local workspace) and its
// usage recorded as the server reported it; round two carries what the
// server requires and the turn completes.
func TestExecReplaysRecordedServers(t *testing.T) {
	for _, path := range quirks.Files(t, quirks.Dir(t)) {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".sse"), func(t *testing.T) {
			t.Parallel()
			f, err := quirks.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			want := quirks.Expect(t, f)
			srv := quirks.NewServer(t, f, openai.WireName("fs.read"), `{"path": "README.md"}`)
			u := newUser(t)
			u.write("README.md", "# quirks\n")
			r := u.run("", "exec", "--json", "--workspace", "local", "--base-url", srv.URL, "--model", "m", "read the README")
			if r.code != 0 {
				t.Fatalf("exit %d (server: %v)\n%s", r.code, srv.Problems(), r.stderr)
			}
			if p := srv.Problems(); len(p) > 0 {
				t.Fatalf("a request lacked what the server requires: %v", p)
			}
			responses := ofType[event.ModelResponse](r.events)
			if len(responses) == 0 {
				t.Fatal("no model.response")
			}
			if want.Usage != nil {
				u := model.Usage{PromptTokens: want.Usage.Prompt, CompletionTokens: want.Usage.Completion,
					TotalTokens: want.Usage.Total, ReasoningTokens: want.Usage.Reasoning}
				if responses[0].Usage != u {
					t.Errorf("round one usage %+v, want %+v", responses[0].Usage, u)
				}
			}
			if responses[0].FinishReason != want.FinishReason {
				t.Errorf("round one finish reason %q, want %q", responses[0].FinishReason, want.FinishReason)
			}
			var reasoning string
			for _, m := range ofType[event.MessageCompleted](r.events) {
				if m.Role == model.RoleAssistant && reasoning == "" {
					reasoning = m.Reasoning
				}
			}
			if reasoning != want.Reasoning {
				t.Errorf("recorded reasoning %q, the server sent %q", reasoning, want.Reasoning)
			}
			results := ofType[event.ToolResult](r.events)
			if !want.Call {
				if len(results) != 0 || len(responses) != 1 {
					t.Errorf("a text answer ran %d tools in %d rounds", len(results), len(responses))
				}
				return
			}
			if len(results) != 1 || !results[0].OK || results[0].Tool != "fs.read" {
				t.Fatalf("tool results %+v, want one fs.read that ran", results)
			}
			calls := ofType[event.ToolCall](r.events)
			if want.CallID != "" && calls[0].ModelCallID != want.CallID {
				t.Errorf("model call id %q, the server sent %q", calls[0].ModelCallID, want.CallID)
			}
			if len(responses) != 2 || len(srv.Requests()) != 2 {
				t.Errorf("%d rounds, %d requests; want 2", len(responses), len(srv.Requests()))
			}
		})
	}
}

func ofType[T event.Data](evs []event.Event) []T {
	var out []T
	for _, e := range evs {
		if d, ok := e.Data.(T); ok {
			out = append(out, d)
		}
	}
	return out
}

// chunkJSON is one hand-made Chat Completions chunk with one choice.
func chunkJSON(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
}

// Hand-made shapes of each behaviour, through the binary: what the turn
// ends with, its code, and what the user reads.
func TestExecProviderShapes(t *testing.T) {
	readCall := func(args string) string {
		a, _ := json.Marshal(args)
		return chunkJSON(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"`+alias("fs.read")+`","arguments":`+string(a)+`}}]}`, "tool_calls")
	}
	done := sse(chunkJSON(`{"role":"assistant","content":"Done."}`, "stop"))
	cases := []struct {
		name     string
		streams  []string
		exit     int
		code     string // turn.completed errorCode
		stderr   string // what the user reads
		check    func(t *testing.T, r result, bodies []string)
		requests int
	}{
		{name: "length cut", streams: []string{sse(chunkJSON(`{"role":"assistant","content":"The first half"}`, "length"))},
			stderr: "raise --max-tokens", requests: 1,
			check: func(t *testing.T, r result, _ []string) {
				tc := ofType[event.TurnCompleted](r.events)
				if len(tc) != 1 || !tc[0].Truncated || tc[0].Status != event.StatusCompleted {
					t.Errorf("turn.completed %+v, want completed and truncated", tc)
				}
			}},
		{name: "arguments that are not JSON", streams: []string{sse(readCall(`{"path": "README.md"`)), done}, requests: 2,
			check: func(t *testing.T, r result, bodies []string) {
				res := ofType[event.ToolResult](r.events)
				if len(res) != 1 || res[0].OK || res[0].Error.Code != string(errcode.ToolBadInput) {
					t.Errorf("tool results %+v, want TOOL_BAD_INPUT", res)
				}
				if !strings.Contains(bodies[1], `"arguments":"{\"path\": \"README.md\""`) || !strings.Contains(bodies[1], "TOOL_BAD_INPUT") {
					t.Errorf("round two does not show the model its call and the error:\n%s", bodies[1])
				}
			}},
		{name: "tool call without an id (SGLang)", requests: 2,
			streams: []string{sse(chunkJSON(`{"role":"assistant","tool_calls":[{"index":0,"type":"function","function":{"name":"`+alias("fs.read")+`","arguments":"{\"path\": \"README.md\"}"}}]}`, "tool_calls")), done},
			check: func(t *testing.T, r result, bodies []string) {
				calls := ofType[event.ToolCall](r.events)
				if len(calls) != 1 || !regexp.MustCompile(`^call_[0-9a-f]{24}$`).MatchString(calls[0].ModelCallID) {
					t.Fatalf("tool.call %+v, want a generated call_ id recorded", calls)
				}
				id := calls[0].ModelCallID
				var req struct {
					Messages []struct {
						Role       string `json:"role"`
						ToolCallID string `json:"tool_call_id"`
						ToolCalls  []struct {
							ID string `json:"id"`
						} `json:"tool_calls"`
					} `json:"messages"`
				}
				if err := json.Unmarshal([]byte(bodies[1]), &req); err != nil {
					t.Fatal(err)
				}
				var sent, answered bool
				for _, m := range req.Messages {
					sent = sent || (m.Role == "assistant" && len(m.ToolCalls) == 1 && m.ToolCalls[0].ID == id)
					answered = answered || (m.Role == "tool" && m.ToolCallID == id)
				}
				if !sent || !answered {
					t.Errorf("round two does not carry the generated id %s on the call (%v) and its result (%v)", id, sent, answered)
				}
			}},
		{name: "llama.cpp error field", exit: 1, code: "MODEL_HTTP_ERROR", stderr: "exceeds the available context size", requests: 1,
			streams: []string{"error: {\"code\":400,\"message\":\"the request exceeds the available context size, try increasing it\",\"type\":\"exceed_context_size_error\"}\n\n"}},
		{name: "vLLM flat error", exit: 1, code: "MODEL_HTTP_ERROR", stderr: "maximum context length", requests: 1,
			streams: []string{sse(`{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`)}},
		{name: "done alone", exit: 1, code: "MODEL_INVALID_RESPONSE", stderr: "[DONE] before any chunk", requests: 1,
			streams: []string{"data: [DONE]\n\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := &chatServer{streams: c.streams}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			u := newUser(t)
			u.write("README.md", "# shapes\n")
			r := u.run("", "exec", "--json", "--workspace", "local", "--base-url", hs.URL+"/v1", "--model", "m", "go")
			if r.code != c.exit {
				t.Fatalf("exit %d, want %d\n%s", r.code, c.exit, r.stderr)
			}
			tc := ofType[event.TurnCompleted](r.events)
			if len(tc) != 1 || tc[0].ErrorCode != c.code {
				t.Fatalf("turn.completed %+v, want error code %q", tc, c.code)
			}
			if c.stderr != "" {
				// --json prints events; the words are in the note, and
				// the plain run prints them.
				again := httptest.NewServer(&chatServer{streams: c.streams})
				defer again.Close()
				plain := u.run("", "exec", "--workspace", "local", "--base-url", again.URL+"/v1", "--model", "m", "go")
				if !strings.Contains(tc[0].Note+plain.stderr, c.stderr) {
					t.Errorf("the user does not read %q:\nnote %q\n%s", c.stderr, tc[0].Note, plain.stderr)
				}
			}
			srv.mu.Lock()
			bodies := append([]string(nil), srv.bodies...)
			srv.mu.Unlock()
			if len(bodies) < c.requests {
				t.Fatalf("%d requests, want %d", len(bodies), c.requests)
			}
			if c.check != nil {
				c.check(t, r, bodies)
			}
		})
	}
}

// AGENTS.md reaches the model: its text is in the system message on the
// wire, the session records the file, and the user is told; CLAUDE.md
// stands in when there is no AGENTS.md; --no-project-instructions leaves
// it out.
func TestProjectInstructions(t *testing.T) {
	answer := sse(chunkJSON(`{"role":"assistant","content":"ok"}`, "stop"))
	system := func(t *testing.T, body string) string {
		t.Helper()
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			MaxTokens int `json:"max_tokens"`
		}
		if err := json.Unmarshal([]byte(body), &req); err != nil || len(req.Messages) == 0 || req.Messages[0].Role != "system" {
			t.Fatalf("request without a system message: %v\n%s", err, body)
		}
		return req.Messages[0].Content
	}
	// instructions reads the instruction files the first checkpoint of a
	// run records in its settings.
	instructions := func(t *testing.T, evs []event.Event) []string {
		t.Helper()
		cps := ofType[event.RuntimeCheckpoint](evs)
		if len(cps) == 0 {
			t.Fatal("no runtime.checkpoint")
		}
		var p struct {
			Settings struct {
				Instructions []string `json:"instructions"`
			} `json:"settings"`
		}
		if err := json.Unmarshal(cps[0].Payload, &p); err != nil {
			t.Fatal(err)
		}
		return p.Settings.Instructions
	}
	cases := []struct {
		name     string
		files    map[string]string
		dir      string // working directory inside the project
		flags    []string
		config   string // the user's config file
		want     []string
		notWant  []string
		using    string
		instr    []string // recorded in the checkpoint's settings
		resume   bool     // a follow-up after AGENTS.md changed keeps the recorded text
		gitRoot  bool
		maxToken int
	}{
		{name: "AGENTS.md", files: map[string]string{"AGENTS.md": "Marker-7f3a: run make check before finishing.", "CLAUDE.md": "Marker-claude"},
			want: []string{"Marker-7f3a: run make check before finishing.", "from AGENTS.md"}, notWant: []string{"Marker-claude"}, using: "using AGENTS.md",
			instr: []string{"AGENTS.md"}, resume: true},
		{name: "CLAUDE.md when there is no AGENTS.md", files: map[string]string{"CLAUDE.md": "Marker-claude-91"},
			want: []string{"Marker-claude-91"}, using: "using CLAUDE.md", instr: []string{"CLAUDE.md"}},
		{name: "the root's and the nearest above the working directory", gitRoot: true, dir: "svc/api",
			files: map[string]string{"AGENTS.md": "Marker-root", "svc/AGENTS.md": "Marker-svc", "svc/api/main.go": "package main\n"},
			want:  []string{"Marker-root", "Marker-svc", "from svc/AGENTS.md"}, using: "using AGENTS.md, svc/AGENTS.md",
			instr: []string{"AGENTS.md", "svc/AGENTS.md"}},
		{name: "turned off", files: map[string]string{"AGENTS.md": "Marker-off"}, flags: []string{"--no-project-instructions"},
			notWant: []string{"Marker-off"}},
		{name: "max tokens", files: map[string]string{}, flags: []string{"--max-tokens", "1234"}, maxToken: 1234},
		{name: "max tokens from the config file", files: map[string]string{}, config: `{"maxTokens": 777}`, maxToken: 777},
		{name: "--max-tokens over the config file", files: map[string]string{}, config: `{"maxTokens": 777}`,
			flags: []string{"--max-tokens", "1234"}, maxToken: 1234},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := &chatServer{streams: []string{answer, answer}}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			u := newUser(t)
			for name, body := range c.files {
				u.write(name, body)
			}
			if c.gitRoot {
				u.write(".git/HEAD", "ref: refs/heads/main\n")
			}
			if c.config != "" {
				cfg := filepath.Join(u.home, "config", "harness", "config.json")
				if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cfg, []byte(c.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			dir := filepath.Join(u.project, filepath.FromSlash(c.dir))
			args := append([]string{"exec", "--json", "--workspace", "local", "--base-url", hs.URL + "/v1", "--model", "m"}, c.flags...)
			r := u.runIn(dir, "", append(args, "hi")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if got := instructions(t, r.events); !slices.Equal(got, c.instr) {
				t.Errorf("checkpoint settings.instructions = %q, want %q", got, c.instr)
			}
			srv.mu.Lock()
			body := srv.bodies[0]
			srv.mu.Unlock()
			if c.resume {
				u.write("AGENTS.md", "Marker-changed-later")
				again := u.runIn(dir, "", "exec", "--json", "--workspace", "local", "--base-url", hs.URL+"/v1", "--model", "m",
					"--resume", sessionOf(t, r.events), "again")
				if again.code != 0 {
					t.Fatalf("resume: exit %d\n%s", again.code, again.stderr)
				}
				if got := instructions(t, again.events); !slices.Equal(got, c.instr) {
					t.Errorf("after resume, settings.instructions = %q, want %q", got, c.instr)
				}
				srv.mu.Lock()
				resumed := system(t, srv.bodies[1])
				srv.mu.Unlock()
				if !strings.Contains(resumed, c.want[0]) || strings.Contains(resumed, "Marker-changed-later") {
					t.Errorf("the resumed request's system message does not keep the recorded instructions:\n%s", resumed)
				}
			}
			sys := system(t, body)
			if !strings.HasPrefix(sys, openai.DefaultSystemPrompt) {
				t.Errorf("the system prompt no longer starts with the default")
			}
			for _, w := range c.want {
				if !strings.Contains(sys, w) {
					t.Errorf("system message lacks %q", w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(sys, w) {
					t.Errorf("system message has %q", w)
				}
			}
			if c.using != "" {
				// --json prints events only; the plain run tells the user.
				plain := httptest.NewServer(&chatServer{streams: []string{answer}})
				defer plain.Close()
				p := u.runIn(dir, "", "exec", "--workspace", "local", "--base-url", plain.URL+"/v1", "--model", "m", "hi")
				if !strings.Contains(p.stderr, c.using) {
					t.Errorf("stderr does not say %q:\n%s", c.using, p.stderr)
				}
			}
			if c.maxToken > 0 && !strings.Contains(body, fmt.Sprintf(`"max_tokens":%d`, c.maxToken)) {
				t.Errorf("max_tokens on the wire is not %d:\n%s", c.maxToken, body)
			}
		})
	}
}

// Reasoning that came in the reasoning field (Groq's gpt-oss) is recorded
// with that field; sent back to a server that refuses it (Groq's 400
// "property 'reasoning' is unsupported"), the round is sent once more
// without it, recorded as model.retry, and the turn completes.
func TestExecReasoningRefusedByServer(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(body))
		n := len(bodies)
		mu.Unlock()
		if strings.Contains(string(body), `"reasoning":`) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"'messages.2' : for 'role:assistant' the following must be satisfied[('messages.2' : property 'reasoning' is unsupported)]","type":"invalid_request_error"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			a, _ := json.Marshal(`{"path":"README.md"}`)
			io.WriteString(w, sse(chunkJSON(`{"role":"assistant","reasoning":"Read the README first."}`, ""),
				chunkJSON(`{"tool_calls":[{"id":"fc_1","type":"function","function":{"name":"`+alias("fs.read")+`","arguments":`+string(a)+`},"index":0}]}`, "tool_calls")))
			return
		}
		io.WriteString(w, sse(chunkJSON(`{"role":"assistant","content":"Done."}`, "stop")))
	}))
	defer hs.Close()
	u := newUser(t)
	u.write("README.md", "# refused\n")
	r := u.run("", "exec", "--json", "--workspace", "local", "--base-url", hs.URL+"/v1", "--model", "m", "read it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var asst *event.MessageCompleted
	for _, m := range ofType[event.MessageCompleted](r.events) {
		if m.Role == model.RoleAssistant && asst == nil {
			asst = &m
		}
	}
	if asst == nil || asst.Reasoning != "Read the README first." || asst.ReasoningField != "reasoning" {
		t.Fatalf("assistant message %+v, want its reasoning and the field it came in", asst)
	}
	retries := ofType[event.ModelRetry](r.events)
	if len(retries) != 1 || retries[0].Code != string(errcode.ModelHTTPError) {
		t.Errorf("model.retry %+v, want one for the refused field", retries)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 3 || !strings.Contains(bodies[1], `"reasoning":"Read the README first."`) || strings.Contains(bodies[2], `"reasoning"`) {
		t.Errorf("%d requests; want round two with the reasoning, then without", len(bodies))
	}
}
