package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

// chatServer is an OpenAI-compatible server on loopback that answers each
// Chat Completions request with the next recorded SSE stream.
type chatServer struct {
	mu      sync.Mutex
	streams []string
	bodies  []string
}

func (c *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		// GET /models, asked at start-up for the context window: this
		// server states none.
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, string(body))
	n := len(c.bodies) - 1
	c.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" || n >= len(c.streams) {
		http.Error(w, `{"error":{"message":"unexpected"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, c.streams[n])
}

func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func alias(name string) string { return "harness_" + hex.EncodeToString([]byte(name)) }

// harness exec against a local OpenAI-compatible server completes a turn
// with a real tool call in Docker; the wire shows aliased tool names, the
// stored events the dotted ones.
func TestExecAgainstLocalProvider(t *testing.T) {
	needDocker(t)
	args, _ := json.Marshal(map[string]string{"path": "hello.txt", "contents": "hi from the model\n"})
	call := fmt.Sprintf(`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":%q,"arguments":%q}}]},"finish_reason":null}]}`, alias("fs.write"), string(args))
	srv := &chatServer{streams: []string{
		sse(call,
			`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}`),
		sse(`{"id":"y","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Wrote "},"finish_reason":null}]}`,
			`{"id":"y","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hello.txt."},"finish_reason":"stop"}]}`,
			`{"id":"y","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":80,"completion_tokens":4,"total_tokens":84}}`),
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	u := newUser(t)
	u.write("README.md", "# provider test\n")
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--base-url", hs.URL+"/v1", "--model", "m", "write hello.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var ok bool
	for _, e := range r.events {
		if d, isCall := e.Data.(event.ToolCall); isCall && d.Tool != "fs.write" {
			t.Errorf("stored tool name %q", d.Tool)
		}
		if d, isRes := e.Data.(event.ToolResult); isRes {
			ok = d.OK && d.Tool == "fs.write"
		}
		if d, isDone := e.Data.(event.TurnCompleted); isDone && d.Usage.TotalTokens != 144 {
			t.Errorf("usage = %+v", d.Usage)
		}
	}
	if !ok {
		t.Fatalf("the write did not run in Docker: %v", typesOf(r.events))
	}
	if len(srv.bodies) != 2 {
		t.Fatalf("%d requests", len(srv.bodies))
	}
	second := srv.bodies[1]
	if !strings.Contains(second, alias("fs.read")) || strings.Contains(second, `"fs.read"`) || !strings.Contains(second, `"name":"`+alias("fs.write")+`"`) {
		t.Errorf("wire request does not use aliases:\n%.600s", second)
	}
	d := u.run("", "diff", sessionOf(t, r.events))
	if !strings.Contains(d.stdout, "+hi from the model") {
		t.Errorf("diff = %s", d.stdout)
	}
}

func TestDoctor(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	r := u.run("", "doctor", "--image", "no-such-image-here")
	if r.code != 1 || !strings.Contains(r.stdout, "WORKSPACE_NOT_FOUND") || !strings.Contains(r.stdout, "make sandbox-image") {
		t.Errorf("doctor: exit %d\n%s", r.code, r.stdout)
	}
	ok := u.run("", "doctor", "--image", "harness-busybox")
	if ok.code != 0 {
		t.Errorf("doctor with a good image: exit %d\n%s", ok.code, ok.stdout)
	}
}

// Provider failures end the turn once, with the provider's code; 429 is
// retried (visible as model.retry) and then succeeds.
func TestExecProviderFailures(t *testing.T) {
	answer := sse(`{"id":"y","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"fine"},"finish_reason":"stop"}]}`)
	cases := []struct {
		name     string
		statuses []int // per request: 0 serves the answer
		code     int
		want     string
		retries  int
	}{
		{"401", []int{401}, 1, "MODEL_AUTH_ERROR", 0},
		{"429 then ok", []int{429, 0}, 0, "", 1},
		{"500 always", []int{500, 500, 500, 500, 500, 500}, 1, "MODEL_HTTP_ERROR", 5}, // the first attempt and five retries
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n int
			var mu sync.Mutex
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet { // GET /models at start-up
					http.NotFound(w, r)
					return
				}
				mu.Lock()
				i := n
				n++
				mu.Unlock()
				if i < len(c.statuses) && c.statuses[i] != 0 {
					w.Header().Set("Retry-After", "0")
					http.Error(w, `{"error":{"message":"nope"}}`, c.statuses[i])
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, answer)
			}))
			defer hs.Close()
			u := newUser(t)
			r := u.run("", "exec", "--json", "--workspace", "local", "--base-url", hs.URL+"/v1", "--model", "m", "hi")
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, c.code, r.stderr)
			}
			var completed, retries int
			for _, e := range r.events {
				switch d := e.Data.(type) {
				case event.TurnCompleted:
					completed++
					if d.ErrorCode != c.want {
						t.Errorf("errorCode %q, want %q", d.ErrorCode, c.want)
					}
				case event.ModelRetry:
					retries++
					if want := "server answered " + strconv.Itoa(c.statuses[0]); !strings.HasPrefix(d.Message, want) || !strings.HasSuffix(d.Message, ": nope") {
						t.Errorf("model.retry message %q, want %q…: nope", d.Message, want)
					}
				}
			}
			if completed != 1 || retries != c.retries {
				t.Errorf("turn.completed %d, model.retry %d (want 1, %d)", completed, retries, c.retries)
			}
			if strings.Contains(r.stdout+r.stderr, "Bearer") {
				t.Error("an authorization header leaked")
			}
		})
	}
}

// A provider that takes the connection and never answers, or stalls
// mid-stream, ends exec with MODEL_TIMEOUT naming the URL and what the
// server did, after --provider-timeout rather than the default two minutes.
func TestExecNamesProviderTimeout(t *testing.T) {
	first := sse(`{"id":"y","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"half"},"finish_reason":null}]}`)
	first = first[:strings.Index(first, "data: [DONE]")]
	cases := []struct {
		name  string
		body  string // sent before the server falls silent; "" sends no headers
		cause string
	}{
		{"never answers", "", "no answer within 300ms"},
		{"stalls mid-stream", first, fmt.Sprintf("stalled after %d bytes, nothing for 300ms", len(first))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			quit := make(chan struct{})
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body) // read to the end, so the server sees the client go
				if c.body != "" && r.Method == http.MethodPost {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, c.body)
					w.(http.Flusher).Flush()
				}
				select {
				case <-r.Context().Done(): // the client gives up
				case <-quit:
				}
			}))
			defer hs.Close()
			defer close(quit) // runs first
			u := newUser(t)
			base := hs.URL + "/v1"
			r := u.run("", "exec", "--json", "--workspace", "local", "--provider-timeout", "300ms", "--base-url", base, "--model", "m", "hi")
			if r.code != exitFailed {
				t.Fatalf("exit %d, want %d\n%s", r.code, exitFailed, r.stderr)
			}
			tc := ofType[event.TurnCompleted](r.events)
			if len(tc) != 1 || tc[0].ErrorCode != "MODEL_TIMEOUT" {
				t.Fatalf("turn.completed %+v, want MODEL_TIMEOUT", tc)
			}
			if !strings.Contains(tc[0].Note, base+": "+c.cause) {
				t.Errorf("the outcome does not name %s and %q: %q", base, c.cause, tc[0].Note)
			}
		})
	}
	u := newUser(t)
	if r := u.run("", "exec", "--workspace", "local", "--provider-timeout", "-1s", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "hi"); r.code != exitUsage {
		t.Errorf("--provider-timeout -1s: exit %d, want %d\n%s", r.code, exitUsage, r.stderr)
	}
}

// A server that echoes the API key in its reasoning — split across deltas
// — and in a tool call's arguments, JSON-escaped: the turn completes (the
// streamed reasoning adds up to the recorded one) and neither the printed
// events nor the store hold the key.
func TestExecRedactsKeyInReasoning(t *testing.T) {
	const key = "sk-harness-exec-0123456789abcdef"
	part := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	escaped := `\u0073k` + key[2:]
	args, _ := json.Marshal(`{"path": "` + escaped + `.md"}`)
	srv := &chatServer{streams: []string{
		sse(chunkJSON(`{"role":"assistant","reasoning_content":"The key is "}`, ""),
			chunkJSON(`{"reasoning_content":`+part(key[:9])+`}`, ""),
			chunkJSON(`{"reasoning_content":`+part(key[9:])+`}`, ""),
			chunkJSON(`{"reasoning_content":`+part(", and "+key)+`}`, ""),
			chunkJSON(`{"tool_calls":[{"index":0,"id":"call_k","type":"function","function":{"name":"`+alias("fs.read")+`","arguments":`+string(args)+`}}]}`, "tool_calls")),
		sse(chunkJSON(`{"role":"assistant","content":"Done."}`, "stop")),
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	u := newUser(t)
	u.extra = append(u.extra, "OPENAI_API_KEY="+key)
	r := u.run("", "exec", "--json", "--workspace", "local", "--base-url", hs.URL+"/v1", "--model", "m", "read")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var reasoning string
	for _, m := range ofType[event.MessageCompleted](r.events) {
		if m.Role == "assistant" && m.Reasoning != "" {
			reasoning = m.Reasoning
		}
	}
	if reasoning != "The key is [REDACTED], and [REDACTED]" {
		t.Errorf("recorded reasoning %q", reasoning)
	}
	stored := u.run("", "events", sessionOf(t, r.events))
	db, err := os.ReadFile(u.db)
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(u.db + "-wal") // absent once checkpointed
	for name, text := range map[string]string{"stdout": r.stdout, "events": stored.stdout, "store": string(db) + string(wal)} {
		if strings.Contains(text, key) || strings.Contains(text, "u0073k") {
			t.Errorf("%s holds the key", name)
		}
	}
}
