package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

func TestRecordedStreams(t *testing.T) {
	tests := []struct {
		file string
		// want builds the expected chunks; body is the request the server
		// received (estimated usage depends on its size).
		want     func(body []byte) []model.Chunk
		wantCode errcode.Code
		wantText string // the server's message, kept in the error
	}{
		{
			file: "plain.sse",
			want: func([]byte) []model.Chunk {
				return []model.Chunk{delta("Hello"), delta(", "), delta("world"), delta("!"),
					completion(model.Completion{Content: "Hello, world!", FinishReason: model.FinishStop, Usage: usage(42, 4)})}
			},
		},
		{
			file: "tool_call.sse",
			want: func([]byte) []model.Chunk {
				c := call("call_Qx1", "fs.read", `{"path":"README.md"}`)
				return []model.Chunk{toolChunk("call_Qx1", "fs.read", `{"path":"README.md"}`),
					completion(model.Completion{ToolCalls: []model.ToolCall{c}, FinishReason: model.FinishToolCalls, Usage: usage(120, 18)})}
			},
		},
		{
			file: "tool_calls_multi.sse",
			want: func([]byte) []model.Chunk {
				calls := []model.ToolCall{
					call("call_A", "fs.list", `{"path": "."}`),
					call("call_B", "git.diff", `{}`),
					call("call_C", "process.exec", `{"argv":["go","test","./..."]}`),
				}
				return []model.Chunk{delta("Looking at "), delta("both."),
					toolChunk("call_A", "fs.list", `{"path": "."}`),
					toolChunk("call_B", "git.diff", `{}`),
					toolChunk("call_C", "process.exec", `{"argv":["go","test","./..."]}`),
					completion(model.Completion{Content: "Looking at both.", ToolCalls: calls, FinishReason: model.FinishToolCalls, Usage: usage(300, 60)})}
			},
		},
		{
			file: "no_usage.sse",
			want: func(body []byte) []model.Chunk {
				return []model.Chunk{delta("Hi"), delta(" there"),
					completion(model.Completion{Content: "Hi there", FinishReason: model.FinishStop, Usage: estimated(body, len("Hi there"))})}
			},
		},
		{
			file: "done_without_finish.sse",
			want: func(body []byte) []model.Chunk {
				return []model.Chunk{delta("Done"), delta("."),
					completion(model.Completion{Content: "Done.", FinishReason: model.FinishLength, Usage: estimated(body, 5)})} // no finish reason: truncated
			},
		},
		{
			file: "finish_without_done.sse",
			want: func(body []byte) []model.Chunk {
				return []model.Chunk{delta("Short"),
					completion(model.Completion{Content: "Short", FinishReason: model.FinishLength, Usage: estimated(body, 5)})}
			},
		},
		{
			file: "tool_call_stop.sse",
			want: func(body []byte) []model.Chunk {
				c := call("call_o1", "fs.read", `{"path":"go.mod"}`)
				n := len("call_o1") + len("fs.read") + len(`{"path":"go.mod"}`)
				return []model.Chunk{toolChunk("call_o1", "fs.read", `{"path":"go.mod"}`),
					completion(model.Completion{ToolCalls: []model.ToolCall{c}, FinishReason: model.FinishToolCalls, Usage: estimated(body, n)})}
			},
		},
		{
			file: "content_filter.sse",
			want: func([]byte) []model.Chunk {
				return []model.Chunk{delta("I can't help with that."),
					completion(model.Completion{Content: "I can't help with that.", FinishReason: model.FinishError, Usage: usage(50, 7)})}
			},
		},
		{
			file: "comments.sse",
			want: func([]byte) []model.Chunk {
				return []model.Chunk{delta("pong"), completion(model.Completion{Content: "pong", FinishReason: model.FinishStop, Usage: usage(5, 1)})}
			},
		},
		{
			file:     "truncated.sse",
			want:     func([]byte) []model.Chunk { return []model.Chunk{delta("I will"), delta(" now")} },
			wantCode: errcode.ModelInvalidResponse,
		},
		{
			file: "invalid_args.sse",
			want: func([]byte) []model.Chunk {
				c := model.ToolCall{ID: "call_bad", Name: "fs.read", Arguments: json.RawMessage(`"{\"path\": \"README.md\""`), BadArguments: true}
				return []model.Chunk{{Kind: model.ChunkToolCall, ToolCall: &c},
					completion(model.Completion{ToolCalls: []model.ToolCall{c}, FinishReason: model.FinishToolCalls, Usage: usage(100, 9)})}
			},
		},
		{
			file: "finish_every_chunk.sse",
			want: func([]byte) []model.Chunk {
				c := call("call_r1", "fs.read", `{"path":"README.md"}`)
				return []model.Chunk{delta("Hel"), delta("lo"), toolChunk("call_r1", "fs.read", `{"path":"README.md"}`),
					completion(model.Completion{Content: "Hello", ToolCalls: []model.ToolCall{c}, FinishReason: model.FinishToolCalls, Usage: usage(30, 9)})}
			},
		},
		{
			file: "xgroq_usage.sse",
			want: func([]byte) []model.Chunk {
				return []model.Chunk{delta("Hi"), completion(model.Completion{Content: "Hi", FinishReason: model.FinishStop, Usage: usage(18, 2)})}
			},
		},
		{
			file: "length.sse",
			want: func([]byte) []model.Chunk {
				return []model.Chunk{delta("The first half of a long"), delta(" answer"),
					completion(model.Completion{Content: "The first half of a long answer", FinishReason: model.FinishLength, Usage: usage(40, 8)})}
			},
		},
		{
			file: "reasoning_tool.sse",
			want: func([]byte) []model.Chunk {
				c := call("call_00_ds1", "fs.read", `{"path":"README.md"}`)
				// The "s" ending the first delta could begin the key: it
				// is held back until the next one shows it does not.
				return []model.Chunk{reasoning("The user want"), reasoning("s the README."), toolChunk("call_00_ds1", "fs.read", `{"path":"README.md"}`),
					completion(model.Completion{Reasoning: "The user wants the README.", ReasoningField: "reasoning_content", ToolCalls: []model.ToolCall{c}, FinishReason: model.FinishToolCalls,
						Usage: model.Usage{PromptTokens: 300, CompletionTokens: 40, TotalTokens: 340, ReasoningTokens: 25}})}
			},
		},
		{
			file: "thought_signature.sse",
			want: func([]byte) []model.Chunk {
				c := call("function-call-1", "fs.read", `{"path":"README.md"}`)
				c.Extra = json.RawMessage(`{"extra_content":{"google":{"thought_signature":"CpUCAdHtim9Sig+x1"}}}`)
				return []model.Chunk{{Kind: model.ChunkToolCall, ToolCall: &c},
					completion(model.Completion{ToolCalls: []model.ToolCall{c}, FinishReason: model.FinishToolCalls, Usage: model.Usage{PromptTokens: 120, CompletionTokens: 12, TotalTokens: 170}})}
			},
		},
		{
			file:     "sse_error_field.sse",
			want:     func([]byte) []model.Chunk { return nil },
			wantCode: errcode.ModelHTTPError,
			wantText: "the request exceeds the available context size",
		},
		{
			file:     "flat_error.sse",
			want:     func([]byte) []model.Chunk { return nil },
			wantCode: errcode.ModelHTTPError,
			wantText: "maximum context length is 4096 tokens",
		},
		{
			file:     "array_error.sse",
			want:     func([]byte) []model.Chunk { return nil },
			wantCode: errcode.ModelHTTPError,
			wantText: "missing a thought_signature",
		},
		{
			file:     "ollama_error.sse",
			want:     func([]byte) []model.Chunk { return []model.Chunk{delta("Let me")} },
			wantCode: errcode.ModelHTTPError,
			wantText: "model requires more system memory",
		},
		{
			file:     "done_only.sse",
			want:     func([]byte) []model.Chunk { return nil },
			wantCode: errcode.ModelInvalidResponse,
		},
		{
			file:     "unknown_alias.sse",
			want:     func([]byte) []model.Chunk { return nil },
			wantCode: errcode.ModelInvalidResponse,
		},
		{
			file:     "malformed.sse",
			want:     func([]byte) []model.Chunk { return []model.Chunk{delta("ok")} },
			wantCode: errcode.ModelInvalidResponse,
		},
		{
			file:     "stream_error.sse",
			want:     func([]byte) []model.Chunk { return nil },
			wantCode: errcode.ModelHTTPError,
		},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".sse"), func(t *testing.T) {
			srv := newServer(t, sse(t, tt.file))
			c := newClient(t, srv, func(c *Config) { c.MaxRetries = -1 })
			got, err := drain(t, mustStream(t, c, t.Context(), baseRequest()))
			if code := errcode.Of(err); code != tt.wantCode {
				t.Fatalf("code = %q, want %q (%v)", code, tt.wantCode, err)
			}
			checkNoSecret(t, err)
			if err != nil && !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q lost the server's message %q", err, tt.wantText)
			}
			reqs := srv.requests()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1", len(reqs))
			}
			if diff := cmp.Diff(tt.want(reqs[0].body), got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAliasRoundTrip(t *testing.T) {
	srv := newServer(t, sse(t, "tool_call.sse"))
	c := newClient(t, srv)
	req := baseRequest()
	req.Messages = append(req.Messages,
		model.Message{ID: "msg-2", Role: model.RoleAssistant, Content: "First go.mod.",
			ToolCalls: []model.ToolCall{call("call_prev", "fs.read", `{"path":"go.mod"}`)}},
		model.Message{ID: "msg-3", Role: model.RoleTool, ToolCallID: "call_prev", Name: "fs.read", Content: `{"path":"go.mod","content":"module x","size":8}`},
	)
	before := cloneForTest(req)

	got, err := drain(t, mustStream(t, c, t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, req); diff != "" {
		t.Errorf("the request was modified (-before +after):\n%s", diff)
	}

	// The wire shows the aliases.
	body := decodeBody(t, srv.requests()[0].body)
	var toolNames, descs []string
	for _, tool := range body.Tools {
		toolNames = append(toolNames, tool.Function.Name)
		descs = append(descs, tool.Function.Description)
	}
	wantNames := []string{"harness_66732e72656164", "harness_66732e6c697374", "harness_66732e7772697465",
		"harness_70726f636573732e65786563", "harness_6769742e64696666"}
	if diff := cmp.Diff(wantNames, toolNames); diff != "" {
		t.Errorf("advertised names (-want +got):\n%s", diff)
	}
	if descs[0] != "fs.read: Read a file." {
		t.Errorf("aliased tool description = %q, want the real name first", descs[0])
	}
	prev := body.Messages[2]
	if prev.Role != "assistant" || len(prev.ToolCalls) != 1 || prev.ToolCalls[0].Function.Name != "harness_66732e72656164" {
		t.Errorf("earlier assistant tool call on the wire = %+v, want the alias", prev)
	}
	if body.Messages[3].Role != "tool" || body.Messages[3].ToolCallID != "call_prev" {
		t.Errorf("tool result on the wire = %+v", body.Messages[3])
	}
	if strings.Contains(string(srv.requests()[0].body), `"fs.read"`) {
		t.Error("the dotted name reached the wire")
	}

	// The chunks coming back say fs.read.
	if got[0].Kind != model.ChunkToolCall || got[0].ToolCall.Name != "fs.read" ||
		got[len(got)-1].Completion.ToolCalls[0].Name != "fs.read" {
		t.Errorf("chunks = %+v, want fs.read", got)
	}
}

func TestStreamPausesAndAborts(t *testing.T) {
	t.Run("cancel mid-stream", func(t *testing.T) {
		srv := newServer(t, reply{status: http.StatusOK, body: firstEvents(t, "plain.sse", 2), stall: stallAfterBody})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		s := mustStream(t, newClient(t, srv), ctx, baseRequest())
		if c, err := s.Recv(); err != nil || c.Delta != "Hello" {
			t.Fatalf("first chunk = %+v, %v", c, err)
		}
		<-srv.stalled
		cancel()
		_, err := s.Recv()
		if code := errcode.Of(err); code != errcode.ModelAborted {
			t.Fatalf("code = %q, want MODEL_ABORTED (%v)", code, err)
		}
		if _, err := s.Recv(); errcode.Of(err) != errcode.ModelAborted {
			t.Errorf("the end is not sticky: %v", err)
		}
	})
	t.Run("close during recv", func(t *testing.T) {
		srv := newServer(t, reply{status: http.StatusOK, body: firstEvents(t, "plain.sse", 2), stall: stallAfterBody})
		s := mustStream(t, newClient(t, srv), t.Context(), baseRequest())
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := s.Recv()
			done <- err
		}()
		<-srv.stalled
		_ = s.Close()
		if code := errcode.Of(<-done); code != errcode.ModelAborted {
			t.Fatalf("code = %q, want MODEL_ABORTED", code)
		}
	})
	t.Run("close during a retry pause", func(t *testing.T) {
		srv := newServer(t, reply{status: http.StatusTooManyRequests, header: map[string]string{"Retry-After": "30"}, body: `{}`})
		s := mustStream(t, newClient(t, srv), t.Context(), baseRequest())
		c, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(retry(1, errcode.ModelRateLimited, 30000, "server answered 429 Too Many Requests"), c); diff != "" {
			t.Fatalf("retry chunk (-want +got):\n%s", diff)
		}
		done := make(chan error, 1)
		go func() {
			_, err := s.Recv()
			done <- err
		}()
		_ = s.Close()
		if code := errcode.Of(<-done); code != errcode.ModelAborted {
			t.Fatalf("code = %q, want MODEL_ABORTED", code)
		}
		if n := len(srv.requests()); n != 1 {
			t.Errorf("server got %d requests after the close, want 1", n)
		}
	})
	t.Run("context canceled before the first recv", func(t *testing.T) {
		srv := newServer(t, sse(t, "plain.sse"))
		ctx, cancel := context.WithCancel(t.Context())
		s := mustStream(t, newClient(t, srv), ctx, baseRequest())
		cancel()
		_, err := s.Recv()
		if code := errcode.Of(err); code != errcode.ModelAborted {
			t.Fatalf("code = %q, want MODEL_ABORTED (%v)", code, err)
		}
	})
}

func TestTimeouts(t *testing.T) {
	short := func(c *Config) { c.Timeout = 100 * time.Millisecond }
	tests := []struct {
		name   string
		reply  func(t *testing.T) reply
		cfg    func(*Config)
		ctx    func(t *testing.T) context.Context
		before []model.Chunk
		says   string // after the base URL
	}{
		{
			name:  "no headers",
			reply: func(*testing.T) reply { return reply{stall: stallBeforeHeaders} },
			cfg:   short,
			says:  ": no answer within 100ms",
		},
		{
			name:  "headers and no byte",
			reply: func(*testing.T) reply { return reply{status: http.StatusOK, stall: stallAfterBody} },
			cfg:   short,
			says:  ": no answer within 100ms",
		},
		{
			name: "stalled mid-stream",
			reply: func(t *testing.T) reply {
				return reply{status: http.StatusOK, body: firstEvents(t, "plain.sse", 2), stall: stallAfterBody}
			},
			cfg:    short,
			before: []model.Chunk{delta("Hello")},
			says:   fmt.Sprintf(": stalled after %d bytes, nothing for 100ms", len(firstEvents(t, "plain.sse", 2))),
		},
		{
			name:  "context deadline",
			reply: func(*testing.T) reply { return reply{status: http.StatusOK, stall: stallAfterBody} },
			cfg:   func(*Config) {},
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
				t.Cleanup(cancel)
				return ctx
			},
			says: ": the model round's deadline passed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.reply(t))
			ctx := t.Context()
			if tt.ctx != nil {
				ctx = tt.ctx(t)
			}
			got, err := drain(t, mustStream(t, newClient(t, srv, tt.cfg), ctx, baseRequest()))
			if code := errcode.Of(err); code != errcode.ModelTimeout {
				t.Fatalf("code = %q, want MODEL_TIMEOUT (%v)", code, err)
			}
			if !strings.Contains(errcode.Message(err), srv.url()+tt.says) {
				t.Errorf("message %q does not name %s and the cause %q", errcode.Message(err), srv.url(), tt.says)
			}
			if diff := cmp.Diff(tt.before, got); diff != "" {
				t.Errorf("chunks before the timeout (-want +got):\n%s", diff)
			}
			if n := len(srv.requests()); n != 1 {
				t.Errorf("server got %d requests; a timeout is not retried", n)
			}
		})
	}
}

// firstEvents returns the first n events of a recorded stream.
func firstEvents(t *testing.T, file string, n int) string {
	t.Helper()
	events := strings.SplitAfter(sse(t, file).body, "\n\n")
	return strings.Join(events[:n], "")
}

func cloneForTest(r model.Request) model.Request {
	b, err := model.MarshalCanonical(r)
	if err != nil {
		panic(err)
	}
	var out model.Request
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// A model that calls a tool by its canonical name with other separators
// (fs_read for fs.read, as the descriptions name the tools) gets that
// tool; a name that fits none passes on for the runtime to refuse.
func TestLooseToolNames(t *testing.T) {
	a := newAliases()
	for _, c := range []string{"fs.read", "fs.list", "process.exec"} {
		if _, err := a.add(c); err != nil {
			t.Fatal(err)
		}
	}
	for wire, want := range map[string]string{
		"harness_66732e72656164": "fs.read", "fs.read": "fs.read", "fs_read": "fs.read", "fs-read": "fs.read",
		"FS_Read": "fs.read", "process_exec": "process.exec", "fsread": "fsread", "shell": "shell",
	} {
		got, err := a.canonical(wire)
		if err != nil || got != want {
			t.Errorf("canonical(%q) = %q, %v; want %q", wire, got, err, want)
		}
	}
}
