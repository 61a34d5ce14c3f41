package fake

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// drain reads s to its end and returns the chunks and the terminal error
// (nil for io.EOF).
func drain(t *testing.T, s model.Stream) ([]model.Chunk, error) {
	t.Helper()
	var out []model.Chunk
	for range 10000 {
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

func mustParse(t *testing.T, script string) *Model {
	t.Helper()
	m, err := Parse([]byte(script))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return m
}

func mustStream(t *testing.T, m model.Model, ctx context.Context, req model.Request) model.Stream {
	t.Helper()
	s, err := m.Stream(ctx, req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func delta(s string) model.Chunk { return model.Chunk{Kind: model.ChunkDelta, Delta: s} }

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

func TestParseStreams(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		want    []model.Chunk
		wantErr errcode.Code
	}{
		{
			name:   "plain answer is one delta",
			script: `[{"content":"hello","usage":{"promptTokens":3,"completionTokens":2}}]`,
			want: []model.Chunk{delta("hello"), completion(model.Completion{
				Content: "hello", FinishReason: model.FinishStop,
				Usage: model.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5},
			})},
		},
		{
			name:   "explicit deltas",
			script: `[{"content":"hello","deltas":["he","l","lo"]}]`,
			want: []model.Chunk{delta("he"), delta("l"), delta("lo"),
				completion(model.Completion{Content: "hello", FinishReason: model.FinishStop})},
		},
		{
			name:   "empty step",
			script: `[{}]`,
			want:   []model.Chunk{completion(model.Completion{FinishReason: model.FinishStop})},
		},
		{
			name: "tool calls default to tool_calls and {} arguments",
			script: `[{"content":"look","toolCalls":[{"id":"c1","name":"fs.list","arguments":{"path":"."}},
				{"id":"c2","name":"git.diff"}]}]`,
			want: []model.Chunk{
				delta("look"),
				toolChunk("c1", "fs.list", `{"path":"."}`),
				toolChunk("c2", "git.diff", `{}`),
				completion(model.Completion{Content: "look", FinishReason: model.FinishToolCalls,
					ToolCalls: []model.ToolCall{call("c1", "fs.list", `{"path":"."}`), call("c2", "git.diff", `{}`)}}),
			},
		},
		{
			name:   "finish reason length",
			script: `[{"content":"cut","finishReason":"length"}]`,
			want:   []model.Chunk{delta("cut"), completion(model.Completion{Content: "cut", FinishReason: model.FinishLength})},
		},
		{
			name:   "omitCompletion ends without completion",
			script: `[{"content":"x","toolCalls":[{"id":"c1","name":"git.diff","arguments":{}}],"omitCompletion":true}]`,
			want:   []model.Chunk{delta("x"), toolChunk("c1", "git.diff", `{}`)},
		},
		{
			name: "explicit chunks script invalid orders literally",
			script: `[{"chunks":[
				{"toolCall":{"id":"c1","name":"fs.read","arguments":{"path":"a"}}},
				{"delta":"late text"},
				{"retry":{"attempt":1,"code":"MODEL_RATE_LIMITED","delayMs":5}},
				{"completion":{"content":"other","finishReason":"weird","usage":{"promptTokens":1,"completionTokens":1,"totalTokens":7,"estimated":true}}}
			]}]`,
			want: []model.Chunk{
				toolChunk("c1", "fs.read", `{"path":"a"}`),
				delta("late text"),
				{Kind: model.ChunkRetry, Retry: &model.Retry{Attempt: 1, Code: "MODEL_RATE_LIMITED", DelayMs: 5}},
				completion(model.Completion{Content: "other", FinishReason: "weird",
					Usage: model.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 7, Estimated: true}}),
			},
		},
		{
			name:    "error chunk ends the stream mid-way",
			script:  `[{"chunks":[{"delta":"par"},{"error":"MODEL_TRANSPORT_ERROR"},{"delta":"never"}]}]`,
			want:    []model.Chunk{delta("par")},
			wantErr: errcode.ModelTransportError,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustParse(t, tt.script)
			s := mustStream(t, m, t.Context(), model.Request{RequestID: "req-1", Model: "m"})
			got, err := drain(t, s)
			if code := errcode.Of(err); code != tt.wantErr {
				t.Fatalf("terminal code = %q, want %q (%v)", code, tt.wantErr, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			// The end is sticky.
			if _, err2 := s.Recv(); errcode.Of(err2) != tt.wantErr && !(tt.wantErr == "" && errors.Is(err2, io.EOF)) {
				t.Errorf("Recv after end = %v", err2)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		{"not an array", `{"content":"x"}`},
		{"empty input", ``},
		{"step not an object", `["x"]`},
		{"unknown key", `[{"content":"x","temperature":1}]`},
		{"key in the wrong case", `[{"Content":"x"}]`},
		{"wrong type", `[{"content":5}]`},
		{"null value", `[{"content":null}]`},
		{"deltas differ from content", `[{"content":"hello","deltas":["he","y"]}]`},
		{"empty deltas for content", `[{"content":"hello","deltas":[]}]`},
		{"unknown finish reason", `[{"finishReason":"done"}]`},
		{"error not a model code", `[{"error":"TOOL_BAD_INPUT"}]`},
		{"error unknown", `[{"error":"MODEL_NOPE"}]`},
		{"error with content", `[{"error":"MODEL_HTTP_ERROR","content":"x"}]`},
		{"negative delay", `[{"delayMs":-1}]`},
		{"tool call without id", `[{"toolCalls":[{"name":"fs.read"}]}]`},
		{"tool call unknown key", `[{"toolCalls":[{"id":"c","name":"fs.read","args":{}}]}]`},
		{"tool call ids reused", `[{"toolCalls":[{"id":"c","name":"fs.read"},{"id":"c","name":"fs.list"}]}]`},
		{"usage total in a step", `[{"usage":{"promptTokens":1,"completionTokens":1,"totalTokens":2}}]`},
		{"usage negative", `[{"usage":{"promptTokens":-1,"completionTokens":1}}]`},
		{"chunks with content", `[{"content":"x","chunks":[{"delta":"x"}]}]`},
		{"chunk with two keys", `[{"chunks":[{"delta":"x","error":"MODEL_ABORTED"}]}]`},
		{"chunk with no key", `[{"chunks":[{}]}]`},
		{"chunk unknown key", `[{"chunks":[{"text":"x"}]}]`},
		{"chunk error not a model code", `[{"chunks":[{"error":"INTERNAL"}]}]`},
		{"retry without code", `[{"chunks":[{"retry":{"attempt":1}}]}]`},
		{"trailing garbage", `[{}] x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.script))
			if code := errcode.Of(err); code != errcode.ModelInvalidConfig {
				t.Fatalf("Parse code = %q, want MODEL_INVALID_CONFIG (%v)", code, err)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	m, err := Load(filepath.Join("testdata", "tour.json"))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		s := mustStream(t, m, t.Context(), model.Request{RequestID: "req-1"})
		got, err := drain(t, s)
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 200*time.Millisecond {
			t.Errorf("first chunk after %v, want the scripted 200ms", waited)
		}
		want := []model.Chunk{
			delta("Let me "), delta("read it."),
			toolChunk("c1", "fs.read", `{"path": "README.md"}`),
			completion(model.Completion{Content: "Let me read it.", FinishReason: model.FinishToolCalls,
				ToolCalls: []model.ToolCall{call("c1", "fs.read", `{"path": "README.md"}`)},
				Usage:     model.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}}),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("chunks (-want +got):\n%s", diff)
		}
	})

	t.Run("missing file", func(t *testing.T) {
		_, err := Load(filepath.Join(t.TempDir(), "nope.json"))
		if code := errcode.Of(err); code != errcode.ModelInvalidConfig {
			t.Fatalf("code = %q, want MODEL_INVALID_CONFIG", code)
		}
	})
	t.Run("bad file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "bad.json")
		if err := os.WriteFile(p, []byte(`[{"contnet":"x"}]`), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if code := errcode.Of(err); code != errcode.ModelInvalidConfig {
			t.Fatalf("code = %q, want MODEL_INVALID_CONFIG", code)
		}
	})
}

func TestScriptEndsAndErrors(t *testing.T) {
	m := mustParse(t, `[{"error":"MODEL_RATE_LIMITED"},{"content":"ok"}]`)
	req := model.Request{RequestID: "req-1", Model: "m"}

	if _, err := m.Stream(t.Context(), req); errcode.Of(err) != errcode.ModelRateLimited {
		t.Fatalf("step 1: code = %q, want MODEL_RATE_LIMITED", errcode.Of(err))
	}
	s := mustStream(t, m, t.Context(), req)
	if _, err := drain(t, s); err != nil {
		t.Fatalf("step 2: %v", err)
	}
	if _, err := m.Stream(t.Context(), req); errcode.Of(err) != errcode.RuntimeModelStreamInvalid {
		t.Fatalf("step 3: code = %q, want RUNTIME_MODEL_STREAM_INVALID", errcode.Of(err))
	}
	if got := len(m.Requests()); got != 3 {
		t.Errorf("recorded %d requests, want all 3", got)
	}
}

func TestNewChecksSteps(t *testing.T) {
	m := New([]Step{{Content: "abc", Deltas: []string{"a"}}})
	if _, err := m.Stream(t.Context(), model.Request{}); errcode.Of(err) != errcode.ModelInvalidConfig {
		t.Fatalf("code = %q, want MODEL_INVALID_CONFIG", errcode.Of(err))
	}
}

func TestNewCopiesSteps(t *testing.T) {
	step := Step{Content: "ab", Deltas: []string{"a", "b"},
		ToolCalls: []model.ToolCall{call("c1", "fs.read", `{"path":"x"}`)}}
	steps := []Step{step, step}
	m := New(steps)
	steps[0].Deltas[0] = "z"
	steps[0].ToolCalls[0].Arguments[2] = 'P'
	want := []model.Chunk{delta("a"), delta("b"), toolChunk("c1", "fs.read", `{"path":"x"}`),
		completion(model.Completion{Content: "ab", FinishReason: model.FinishToolCalls,
			ToolCalls: []model.ToolCall{call("c1", "fs.read", `{"path":"x"}`)}})}
	for i := range 2 {
		got, err := drain(t, mustStream(t, m, t.Context(), model.Request{}))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("stream %d changed with the caller's data (-want +got):\n%s", i+1, diff)
		}
		// The receiver owns its chunks: mutating them must not reach the next stream.
		got[2].ToolCall.Arguments[2] = 'Q'
		got[3].Completion.ToolCalls[0].Arguments[2] = 'Q'
	}
}

func TestRequestsAreDeepCopies(t *testing.T) {
	m := mustParse(t, `[{"content":"a"},{"content":"b"}]`)
	req := model.Request{
		RequestID: "req-1", Model: "m", System: "sys",
		Messages: []model.Message{
			{ID: "msg-1", Role: model.RoleUser, Content: "hi <b>"},
			{ID: "msg-2", Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call("c1", "fs.read", `{"path":"x"}`)}},
			{ID: "msg-3", Role: model.RoleTool, ToolCallID: "c1", Name: "fs.read", Content: "{}"},
		},
		Tools:           []model.ToolSpec{{Name: "fs.read", Description: "read", Parameters: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens:       100,
		ProviderOptions: json.RawMessage(`{"temperature":0}`),
	}
	wantJSON, err := model.MarshalCanonical(req)
	if err != nil {
		t.Fatal(err)
	}
	want := cloneRequest(req)
	s := mustStream(t, m, t.Context(), req)
	if _, err := drain(t, s); err != nil {
		t.Fatal(err)
	}

	// The caller mutates its request after sending it.
	req.Messages[0].Content = "changed"
	req.Messages[1].ToolCalls[0].Arguments[2] = 'X'
	req.Tools[0].Parameters[2] = 'X'
	req.ProviderOptions[2] = 'X'

	got := m.Requests()
	if diff := cmp.Diff([]model.Request{want}, got); diff != "" {
		t.Errorf("Requests (-want +got):\n%s", diff)
	}
	// Mutating what Requests returned changes nothing either.
	got[0].Messages[0].Content = "again"
	if m.Requests()[0].Messages[0].Content != "hi <b>" {
		t.Error("Requests returned shared memory")
	}
	raws := m.RequestsJSON()
	if diff := cmp.Diff([]string{string(wantJSON)}, []string{string(raws[0])}); diff != "" {
		t.Errorf("RequestsJSON (-want +got):\n%s", diff)
	}
}

func TestConcurrentRequestsGetDistinctSteps(t *testing.T) {
	const n = 16
	steps := make([]Step, n)
	for i := range steps {
		steps[i] = Step{Content: string(rune('a' + i))}
	}
	m := New(steps)
	var wg sync.WaitGroup
	got := make(chan string, n)
	for range n {
		wg.Go(func() {
			s, err := m.Stream(t.Context(), model.Request{Model: "m"})
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			c, err := s.Recv()
			if err != nil {
				t.Error(err)
				return
			}
			got <- c.Delta
		})
	}
	wg.Wait()
	close(got)
	seen := map[string]bool{}
	for d := range got {
		seen[d] = true
	}
	if len(seen) != n || len(m.Requests()) != n {
		t.Errorf("got %d distinct answers and %d requests, want %d", len(seen), len(m.Requests()), n)
	}
}

func TestAbort(t *testing.T) {
	tests := []struct {
		name   string
		script string
		abort  func(cancel context.CancelFunc, s model.Stream)
		want   errcode.Code
		before []model.Chunk // chunks read before the blocking Recv
	}{
		{
			name:   "hang until canceled",
			script: `[{"content":"partial","hang":true}]`,
			abort:  func(cancel context.CancelFunc, _ model.Stream) { cancel() },
			want:   errcode.ModelAborted,
			before: []model.Chunk{delta("partial")},
		},
		{
			name:   "hang until closed",
			script: `[{"hang":true}]`,
			abort:  func(_ context.CancelFunc, s model.Stream) { _ = s.Close() },
			want:   errcode.ModelAborted,
		},
		{
			name:   "close aborts a pending delay",
			script: `[{"content":"x","delayMs":600000}]`,
			abort:  func(_ context.CancelFunc, s model.Stream) { _ = s.Close() },
			want:   errcode.ModelAborted,
		},
		{
			name:   "cancel aborts a delay between chunks",
			script: `[{"content":"ab","deltas":["a","b"],"delayBetweenMs":600000}]`,
			abort:  func(cancel context.CancelFunc, _ model.Stream) { cancel() },
			want:   errcode.ModelAborted,
			before: []model.Chunk{delta("a")},
		},
		{
			name:   "hang after explicit chunks",
			script: `[{"chunks":[{"delta":"a"}],"hang":true}]`,
			abort:  func(cancel context.CancelFunc, _ model.Stream) { cancel() },
			want:   errcode.ModelAborted,
			before: []model.Chunk{delta("a")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				m := mustParse(t, tt.script)
				s := mustStream(t, m, ctx, model.Request{})
				var got []model.Chunk
				for range tt.before {
					c, err := s.Recv()
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, c)
				}
				if diff := cmp.Diff(tt.before, got); diff != "" {
					t.Fatalf("chunks before blocking (-want +got):\n%s", diff)
				}
				start := time.Now()
				done := make(chan error, 1)
				go func() {
					_, err := s.Recv()
					done <- err
				}()
				synctest.Wait() // Recv is blocked now
				select {
				case err := <-done:
					t.Fatalf("Recv returned before the abort: %v", err)
				default:
				}
				tt.abort(cancel, s)
				err := <-done
				if code := errcode.Of(err); code != tt.want {
					t.Fatalf("code = %q, want %q (%v)", code, tt.want, err)
				}
				if time.Since(start) != 0 {
					t.Errorf("abort waited for the scripted delay")
				}
				if _, err := s.Recv(); errcode.Of(err) != tt.want {
					t.Errorf("Recv after abort: %v", err)
				}
			})
		})
	}
}

func TestDeadlineIsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		s := mustStream(t, mustParse(t, `[{"hang":true}]`), ctx, model.Request{})
		_, err := s.Recv()
		if code := errcode.Of(err); code != errcode.ModelTimeout {
			t.Fatalf("code = %q, want MODEL_TIMEOUT (%v)", code, err)
		}
	})
}
