package runtime_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/tools"
)

// chunkModel answers the n-th request with the n-th list of chunks and
// records the requests: the shapes real providers produce that the
// scripted model does not (reasoning, opaque call fields, broken
// arguments, totals above prompt + completion).
type chunkModel struct {
	answers [][]model.Chunk
	mu      sync.Mutex
	reqs    []model.Request // guarded by mu
}

func (c *chunkModel) Name() string { return "chunks" }

func (c *chunkModel) Stream(_ context.Context, req model.Request) (model.Stream, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.reqs)
	c.reqs = append(c.reqs, req)
	if n >= len(c.answers) {
		return nil, errcode.New(errcode.ModelInvalidResponse, "no more answers")
	}
	return &chunkStream{chunks: c.answers[n]}, nil
}

func (c *chunkModel) requests() []model.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]model.Request(nil), c.reqs...)
}

type chunkStream struct{ chunks []model.Chunk }

func (s *chunkStream) Recv() (model.Chunk, error) {
	if len(s.chunks) == 0 {
		return model.Chunk{}, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}

func (s *chunkStream) Close() error { return nil }

func TestProviderShapes(t *testing.T) {
	bad := model.ToolCall{ID: "call_bad", Name: "fs.read", Arguments: json.RawMessage(`"{\"path\": \"README.md\""`), BadArguments: true}
	good := model.ToolCall{ID: "call_sig", Name: "fs.read", Arguments: json.RawMessage(`{"path":"README.md"}`),
		Extra: json.RawMessage(`{"extra_content":{"google":{"thought_signature":"c2ln"}}}`)}
	round1 := model.Completion{Reasoning: "Read it.", ToolCalls: []model.ToolCall{bad, good}, FinishReason: model.FinishToolCalls,
		Usage: model.Usage{PromptTokens: 291, CompletionTokens: 26, TotalTokens: 513, ReasoningTokens: 196}}
	round2 := model.Completion{Content: "The README says", FinishReason: model.FinishLength,
		Usage: model.Usage{PromptTokens: 400, CompletionTokens: 4, TotalTokens: 404}}
	m := &chunkModel{answers: [][]model.Chunk{
		{{Kind: model.ChunkReasoning, Delta: "Read "}, {Kind: model.ChunkReasoning, Delta: "it."},
			{Kind: model.ChunkToolCall, ToolCall: &bad}, {Kind: model.ChunkToolCall, ToolCall: &good},
			{Kind: model.ChunkCompletion, Completion: &round1}},
		{{Kind: model.ChunkDelta, Delta: "The README says"}, {Kind: model.ChunkCompletion, Completion: &round2}},
	}}
	f := newFixture(t, m, nil, nil)
	out := f.wait(f.start("read the README"))
	if out.Status != runtime.StatusCompleted || !out.Truncated {
		t.Fatalf("outcome %+v, want completed and truncated", out)
	}
	if out.Usage.TotalTokens != 513+404 {
		t.Errorf("turn usage total %d, want the reported totals charged (917)", out.Usage.TotalTokens)
	}
	evs := f.events()

	// The reasoning is kept in the log.
	var asst []event.MessageCompleted
	for _, d := range ofType[event.MessageCompleted](evs) {
		if d.Role == model.RoleAssistant {
			asst = append(asst, d)
		}
	}
	if len(asst) != 2 || asst[0].Reasoning != "Read it." || asst[1].Reasoning != "" {
		t.Fatalf("assistant messages %+v", asst)
	}
	// The broken call goes back as TOOL_BAD_INPUT, the other one runs.
	res := ofType[event.ToolResult](evs)
	if len(res) != 2 || res[0].OK || res[0].Error.Code != string(errcode.ToolBadInput) || !res[1].OK {
		t.Fatalf("tool results %+v", res)
	}
	// Round two carries the reasoning, the broken arguments and the
	// provider's fields back.
	reqs := m.requests()
	prev := reqs[1].Messages[1]
	if prev.Reasoning != "Read it." || len(prev.ToolCalls) != 2 || !prev.ToolCalls[0].BadArguments ||
		string(prev.ToolCalls[1].Extra) != string(good.Extra) {
		t.Errorf("round two's assistant message %+v", prev)
	}
	resp := ofType[event.ModelResponse](evs)
	if resp[0].Usage != round1.Usage {
		t.Errorf("model.response usage %+v, want %+v", resp[0].Usage, round1.Usage)
	}
	done := ofType[event.TurnCompleted](evs)
	if len(done) != 1 || !done[0].Truncated || done[0].Status != string(runtime.StatusCompleted) {
		t.Errorf("turn.completed %+v, want completed and truncated", done)
	}
	// What the model was sent is rebuilt from the checkpoint, reasoning
	// and provider fields included.
	var rebuilt []model.Request
	for _, cp := range f.checkpoints() {
		if cp.NextRequest == nil {
			continue
		}
		req, err := runtime.ReconstructModelRequest(cp)
		if err != nil {
			t.Fatal(err)
		}
		rebuilt = append(rebuilt, req)
	}
	if len(rebuilt) != 2 {
		t.Fatalf("%d requests rebuilt, want 2", len(rebuilt))
	}
	for i := range rebuilt {
		a, _ := model.MarshalCanonical(rebuilt[i])
		b, _ := model.MarshalCanonical(reqs[i])
		if string(a) != string(b) {
			t.Errorf("request %d rebuilt\n%s\nsent\n%s", i, a, b)
		}
	}
}

// Interleaved-thinking servers send reasoning between pieces of text and
// after tool calls: it is accepted wherever it comes and kept in order;
// the other stream checks still hold.
func TestReasoningAnywhereInTheStream(t *testing.T) {
	call := model.ToolCall{ID: "call_1", Name: "fs.list", Arguments: json.RawMessage(`{"path":"."}`)}
	done := func(c model.Completion) model.Chunk { return model.Chunk{Kind: model.ChunkCompletion, Completion: &c} }
	text := func(s string) model.Chunk { return model.Chunk{Kind: model.ChunkDelta, Delta: s} }
	think := func(s string) model.Chunk { return model.Chunk{Kind: model.ChunkReasoning, Delta: s} }
	final := model.Completion{Content: "done", FinishReason: model.FinishStop}
	for _, tc := range []struct {
		name      string
		chunks    []model.Chunk
		code      errcode.Code // "" for a completed turn
		reasoning string       // of the first assistant message
	}{
		{"after text", []model.Chunk{text("Hi"), think("hmm, "), text(" there"), think("done."),
			done(model.Completion{Content: "Hi there", FinishReason: model.FinishStop})}, "", "hmm, done."},
		{"after a tool call", []model.Chunk{think("list "), {Kind: model.ChunkToolCall, ToolCall: &call}, think("then answer"),
			done(model.Completion{ToolCalls: []model.ToolCall{call}, FinishReason: model.FinishToolCalls})}, "", "list then answer"},
		{"text after a tool call", []model.Chunk{{Kind: model.ChunkToolCall, ToolCall: &call}, think("x"), text("late"),
			done(model.Completion{Content: "late", ToolCalls: []model.ToolCall{call}})}, errcode.RuntimeModelStreamInvalid, ""},
		{"final reasoning differs", []model.Chunk{text("Hi"), think("a"), done(model.Completion{Content: "Hi", Reasoning: "b"})},
			errcode.RuntimeModelStreamInvalid, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &chunkModel{answers: [][]model.Chunk{tc.chunks, {text("done"), done(final)}}}
			f := newFixture(t, m, nil, nil)
			out := f.wait(f.start("hello"))
			if tc.code != "" {
				if out.Status != runtime.StatusFailed || out.ErrorCode != tc.code {
					t.Fatalf("outcome %+v, want failed with %s", out, tc.code)
				}
				return
			}
			if out.Status != runtime.StatusCompleted {
				t.Fatalf("outcome %+v", out)
			}
			var asst []event.MessageCompleted
			for _, d := range ofType[event.MessageCompleted](f.events()) {
				if d.Role == model.RoleAssistant {
					asst = append(asst, d)
				}
			}
			if len(asst) == 0 || asst[0].Reasoning != tc.reasoning {
				t.Errorf("assistant messages %+v, want reasoning %q first", asst, tc.reasoning)
			}
		})
	}
}

// Provider input never ends a turn with an internal code: tool arguments
// that are not a JSON object (null, an array, a string, a number) are
// answered with TOOL_BAD_INPUT and the turn goes on; bytes that are not
// UTF-8 in the text, the reasoning or the arguments are replaced with
// U+FFFD and the turn's note says so.
func TestProviderInputIsNeverAnInternalFailure(t *testing.T) {
	for _, args := range []string{`null`, `[1,2]`, `"README.md"`, `42`, ` null `} {
		t.Run(args, func(t *testing.T) {
			call := model.ToolCall{ID: "call_1", Name: "git.diff", Arguments: json.RawMessage(args)}
			round1 := model.Completion{ToolCalls: []model.ToolCall{call}, FinishReason: model.FinishToolCalls}
			round2 := model.Completion{Content: "ok", FinishReason: model.FinishStop}
			m := &chunkModel{answers: [][]model.Chunk{
				{{Kind: model.ChunkToolCall, ToolCall: &call}, {Kind: model.ChunkCompletion, Completion: &round1}},
				{{Kind: model.ChunkDelta, Delta: "ok"}, {Kind: model.ChunkCompletion, Completion: &round2}},
			}}
			f := newFixture(t, m, nil, nil)
			out := f.wait(f.start("diff"))
			if out.Status != runtime.StatusCompleted {
				t.Fatalf("outcome %+v, want completed", out)
			}
			res := ofType[event.ToolResult](f.events())
			if len(res) != 1 || res[0].OK || res[0].Error.Code != string(errcode.ToolBadInput) {
				t.Fatalf("tool results %+v, want one TOOL_BAD_INPUT", res)
			}
			// The call goes back to the provider as it came: null (which
			// the log has no value for) as its text.
			sent := m.requests()[1].Messages[1].ToolCalls[0]
			back := string(sent.Arguments)
			if sent.BadArguments {
				_ = json.Unmarshal(sent.Arguments, &back)
			}
			if back != args {
				t.Errorf("round two's call %+v, want the arguments %q kept as they came", sent, args)
			}
		})
	}

	t.Run("invalid UTF-8", func(t *testing.T) {
		call := model.ToolCall{ID: "call_1", Name: "fs.read", Arguments: json.RawMessage("{\"path\":\"READ\xffME.md\"}")}
		round1 := model.Completion{Content: "look\xe2\x82 here", Reasoning: "th\xffink", ToolCalls: []model.ToolCall{call}, FinishReason: model.FinishToolCalls}
		round2 := model.Completion{Content: "do\xffne", FinishReason: model.FinishStop}
		m := &chunkModel{answers: [][]model.Chunk{
			{{Kind: model.ChunkReasoning, Delta: "th\xffink"}, {Kind: model.ChunkDelta, Delta: "look\xe2\x82"}, {Kind: model.ChunkDelta, Delta: " here"},
				{Kind: model.ChunkToolCall, ToolCall: &call}, {Kind: model.ChunkCompletion, Completion: &round1}},
			{{Kind: model.ChunkDelta, Delta: "do\xffne"}, {Kind: model.ChunkCompletion, Completion: &round2}},
		}}
		f := newFixture(t, m, nil, nil)
		out := f.wait(f.start("read"))
		if out.Status != runtime.StatusCompleted || out.Message == "" {
			t.Fatalf("outcome %+v, want completed with a note", out)
		}
		evs := f.events()
		var asst []event.MessageCompleted
		for _, d := range ofType[event.MessageCompleted](evs) {
			if d.Role == model.RoleAssistant {
				asst = append(asst, d)
			}
		}
		if len(asst) != 2 || asst[0].Content != "look\uFFFD here" || asst[0].Reasoning != "th\uFFFDink" || asst[1].Content != "do\uFFFDne" {
			t.Fatalf("assistant messages %+v", asst)
		}
		if got := string(asst[0].ToolCalls[0].Arguments); got != "{\"path\":\"READ\uFFFDME.md\"}" {
			t.Errorf("recorded arguments %q", got)
		}
		res := ofType[event.ToolResult](evs)
		if len(res) != 1 || res[0].OK || res[0].Error.Code != string(errcode.WorkspaceNotFound) {
			t.Errorf("tool results %+v, want the read of the replaced name to fail as a tool error", res)
		}
		done := ofType[event.TurnCompleted](evs)
		if len(done) != 1 || done[0].Note == "" {
			t.Errorf("turn.completed %+v, want a note saying bytes were replaced", done)
		}
	})
}

// Arguments over their bound and a tool name over its bound are kept in
// the history as a short note of their size, not as megabytes every later
// request would carry; the model gets TOOL_BAD_INPUT / TOOL_NOT_FOUND and
// the turn goes on.
func TestProviderInputOverItsBoundIsKeptShort(t *testing.T) {
	huge := model.ToolCall{ID: "call_big", Name: "fs.write",
		Arguments: json.RawMessage(`{"path":"a.txt","contents":"` + strings.Repeat("x", tools.MaxArgsBytes) + `"}`)}
	long := model.ToolCall{ID: "call_name", Name: strings.Repeat("n", 1<<20), Arguments: json.RawMessage(`{}`)}
	round1 := model.Completion{ToolCalls: []model.ToolCall{huge, long}, FinishReason: model.FinishToolCalls}
	round2 := model.Completion{Content: "ok", FinishReason: model.FinishStop}
	m := &chunkModel{answers: [][]model.Chunk{
		{{Kind: model.ChunkCompletion, Completion: &round1}},
		{{Kind: model.ChunkDelta, Delta: "ok"}, {Kind: model.ChunkCompletion, Completion: &round2}},
	}}
	f := newFixture(t, m, nil, nil)
	out := f.wait(f.start("write"))
	if out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome %+v, want completed", out)
	}
	evs := f.events()
	res := ofType[event.ToolResult](evs)
	if len(res) != 2 || res[0].Error == nil || res[0].Error.Code != string(errcode.ToolBadInput) ||
		res[1].Error == nil || res[1].Error.Code != string(errcode.ToolNotFound) {
		t.Fatalf("tool results %+v, want TOOL_BAD_INPUT then TOOL_NOT_FOUND", res)
	}
	for _, e := range evs {
		if b, _ := event.Encode(e); len(b) > 64<<10 {
			t.Errorf("%s is %d bytes: the oversized input was kept", e.Type, len(b))
		}
	}
	sent := m.requests()[1].Messages[1].ToolCalls
	if len(sent[0].Arguments) > 200 || len(sent[1].Name) > runtime.MaxToolNameBytes {
		t.Errorf("round two carries %d bytes of arguments and a name of %d bytes", len(sent[0].Arguments), len(sent[1].Name))
	}
}
