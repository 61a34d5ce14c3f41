package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// testKey is the key every test client sends; no error may ever show it.
const testKey = "sk-harness-test-0123456789abcdef"

// stall says where a reply blocks until the client gives up.
type stall int

const (
	noStall stall = iota
	stallBeforeHeaders
	stallAfterBody
)

// reply is what the server answers to one request.
type reply struct {
	status int
	header map[string]string
	body   string
	stall  stall
	hangup bool // drop the connection after the body
}

// sse is a 200 reply replaying a recorded stream from testdata.
func sse(t *testing.T, name string) reply {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: http.StatusOK, body: string(b)}
}

// recorded is one request the server received.
type recorded struct {
	path   string
	header http.Header
	body   []byte
}

// server is a real HTTP server on loopback that answers the n-th request
// with the n-th reply (the last one repeats).
type server struct {
	srv     *httptest.Server
	quit    chan struct{}
	stalled chan struct{} // one value each time a handler starts stalling

	mu      sync.Mutex
	replies []reply    // guarded by mu
	reqs    []recorded // guarded by mu
}

func newServer(t *testing.T, replies ...reply) *server {
	t.Helper()
	s := &server{replies: replies, quit: make(chan struct{}), stalled: make(chan struct{}, 16)}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	t.Cleanup(func() { close(s.quit) }) // runs first: frees stalled handlers
	return s
}

func (s *server) url() string { return s.srv.URL + "/v1" }

func (s *server) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, recorded{path: r.URL.Path, header: r.Header.Clone(), body: body})
	rep := s.replies[min(n, len(s.replies)-1)]
	s.mu.Unlock()

	if rep.stall == stallBeforeHeaders {
		s.block(r)
		return
	}
	ct := "application/json"
	if rep.status == http.StatusOK {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
	w.(http.Flusher).Flush()
	if rep.hangup {
		panic(http.ErrAbortHandler)
	}
	if rep.stall == stallAfterBody {
		s.block(r)
	}
}

func (s *server) block(r *http.Request) {
	s.stalled <- struct{}{}
	select {
	case <-r.Context().Done():
	case <-s.quit:
	}
}

// newClient builds a client for s with two fast retries.
func newClient(t *testing.T, s *server, mods ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: s.url(), APIKey: testKey, Model: "gpt-test", Timeout: 10 * time.Second, MaxRetries: 2, RetryBaseDelay: time.Millisecond}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// toolSpecs advertises the five tools.
func toolSpecs() []model.ToolSpec {
	obj := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)
	return []model.ToolSpec{
		{Name: "fs.read", Description: "Read a file.", Parameters: obj},
		{Name: "fs.list", Description: "List files.", Parameters: obj},
		{Name: "fs.write", Description: "Write a file.", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "process.exec", Description: "Run a program.", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "git.diff", Description: "Show the diff.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
}

func baseRequest() model.Request {
	return model.Request{
		RequestID: "req-1",
		Model:     "gpt-test",
		System:    "You are a test.",
		Messages:  []model.Message{{ID: "msg-1", Role: model.RoleUser, Content: "read the README"}},
		Tools:     toolSpecs(),
	}
}

// drain reads s to its end: the chunks and the terminal error (nil for io.EOF).
func drain(t *testing.T, s model.Stream) ([]model.Chunk, error) {
	t.Helper()
	var out []model.Chunk
	for range 100000 {
		c, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	t.Fatal("stream did not end")
	return nil, nil
}

func mustStream(t *testing.T, c *Client, ctx context.Context, req model.Request) model.Stream {
	t.Helper()
	s, err := c.Stream(ctx, req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// checkNoSecret fails if err's text shows the key or anything key-shaped.
func checkNoSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	text := err.Error()
	for _, s := range []string{testKey, "0123456789abcdef", "sk-harness", "sk-live"} {
		if strings.Contains(text, s) {
			t.Errorf("error text shows a secret (%q): %s", s, text)
		}
	}
}

func delta(s string) model.Chunk { return model.Chunk{Kind: model.ChunkDelta, Delta: s} }

func reasoning(s string) model.Chunk { return model.Chunk{Kind: model.ChunkReasoning, Delta: s} }

func call(id, name, args string) model.ToolCall {
	return model.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func toolChunk(id, name, args string) model.Chunk {
	c := call(id, name, args)
	return model.Chunk{Kind: model.ChunkToolCall, ToolCall: &c}
}

func completion(c model.Completion) model.Chunk {
	return model.Chunk{Kind: model.ChunkCompletion, Completion: &c}
}

// retry is a retry notice; msg is the failed attempt's message, with
// {url} standing for the test server's base URL (atURL fills it in).
func retry(attempt int, code errcode.Code, delayMs int, msg string) model.Chunk {
	return model.Chunk{Kind: model.ChunkRetry, Retry: &model.Retry{Attempt: attempt, Code: string(code), DelayMs: delayMs, Message: msg}}
}

// atURL returns chunks with {url} in their retry messages replaced by url.
func atURL(chunks []model.Chunk, url string) []model.Chunk {
	out := slices.Clone(chunks)
	for i, c := range out {
		if c.Retry != nil {
			r := *c.Retry
			r.Message = strings.ReplaceAll(r.Message, "{url}", url)
			out[i].Retry = &r
		}
	}
	return out
}

func usage(p, c int) model.Usage {
	return model.Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

// estimated is the usage the client estimates for a request body and a
// response of n bytes.
func estimated(body []byte, n int) model.Usage {
	p, c := ceilDiv(len(body), 3), ceilDiv(n, 3)
	return model.Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c, Estimated: true}
}
