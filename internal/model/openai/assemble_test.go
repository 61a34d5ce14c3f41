package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// testAliases knows the five tools.
func testAliases(t testing.TB) *aliases {
	t.Helper()
	a := newAliases()
	for _, s := range toolSpecs() {
		if _, err := a.add(s.Name); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// assemble feeds chunk JSON lines to a fresh assembler and closes it. It
// returns the text the chunks carried.
func assemble(t testing.TB, lines []string, sawDone bool) (string, model.Completion, *model.Usage, error) {
	t.Helper()
	a := newAssembler(testAliases(t))
	n := 0
	a.newID = func() string { n++; return "call_gen" + itoa(n) }
	var text, think strings.Builder
	for _, l := range lines {
		d, r, err := a.add([]byte(l))
		if err != nil {
			return text.String(), model.Completion{}, nil, err
		}
		text.WriteString(d)
		think.WriteString(r)
	}
	comp, u, err := a.result(sawDone)
	if err == nil && comp.Reasoning != think.String() {
		t.Errorf("reasoning deltas %q differ from the completion's %q", think.String(), comp.Reasoning)
	}
	return text.String(), comp, u, err
}

func TestAssemble(t *testing.T) {
	ch := func(delta string, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `{"choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
	}
	tests := []struct {
		name      string
		lines     []string
		sawDone   bool
		want      model.Completion
		wantUsage *model.Usage
		wantCode  errcode.Code
	}{
		{
			name: "calls without index, told apart by id",
			lines: []string{
				ch(`{"tool_calls":[{"id":"a","function":{"name":"harness_66732e72656164","arguments":"{\"path\":"}}]}`, ""),
				ch(`{"tool_calls":[{"function":{"arguments":"\"x\"}"}}]}`, ""),
				ch(`{"tool_calls":[{"id":"b","function":{"name":"harness_6769742e64696666","arguments":""}}]}`, "tool_calls"),
			},
			want: model.Completion{FinishReason: model.FinishToolCalls, ToolCalls: []model.ToolCall{
				call("a", "fs.read", `{"path":"x"}`), call("b", "git.diff", `{}`)}},
		},
		{
			name: "name split across deltas, id repeated",
			lines: []string{
				ch(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"harness_6673"}}]}`, ""),
				ch(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"2e72656164","arguments":"{}"}}]}`, "tool_calls"),
			},
			want: model.Completion{FinishReason: model.FinishToolCalls, ToolCalls: []model.ToolCall{call("a", "fs.read", `{}`)}},
		},
		{
			name:  "unknown plain name passes for the runtime to refuse",
			lines: []string{ch(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"bash","arguments":"{}"}}]}`, "tool_calls")},
			want:  model.Completion{FinishReason: model.FinishToolCalls, ToolCalls: []model.ToolCall{call("a", "bash", `{}`)}},
		},
		{
			name: "a usage total above prompt + completion is kept (reasoning tokens)",
			lines: []string{ch(`{"content":"x"}`, "stop"),
				`{"choices":[],"usage":{"prompt_tokens":291,"completion_tokens":26,"total_tokens":513,"completion_tokens_details":{"reasoning_tokens":196}}}`},
			want:      model.Completion{Content: "x", FinishReason: model.FinishStop},
			wantUsage: &model.Usage{PromptTokens: 291, CompletionTokens: 26, TotalTokens: 513, ReasoningTokens: 196},
		},
		{
			name: "a usage total below prompt + completion is raised",
			lines: []string{ch(`{"content":"x"}`, "stop"),
				`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":1}}`},
			want:      model.Completion{Content: "x", FinishReason: model.FinishStop},
			wantUsage: &model.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5},
		},
		{
			name: "usage only in x_groq",
			lines: []string{ch(`{"content":"x"}`, "stop"),
				`{"choices":[],"x_groq":{"id":"req_1","usage":{"queue_time":0.06,"prompt_tokens":18,"completion_tokens":439,"total_tokens":457}}}`},
			want:      model.Completion{Content: "x", FinishReason: model.FinishStop},
			wantUsage: &model.Usage{PromptTokens: 18, CompletionTokens: 439, TotalTokens: 457},
		},
		{
			name:      "top-level usage wins over x_groq",
			lines:     []string{`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}],"x_groq":{"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}},"usage":{"prompt_tokens":45,"completion_tokens":662,"total_tokens":707}}`},
			want:      model.Completion{Content: "x", FinishReason: model.FinishStop},
			wantUsage: &model.Usage{PromptTokens: 45, CompletionTokens: 662, TotalTokens: 707},
		},
		{
			name: "the last usage report wins",
			lines: []string{`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":{"prompt_tokens":226,"total_tokens":226,"completion_tokens":0}}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":226,"total_tokens":246,"completion_tokens":20}}`},
			want:      model.Completion{Content: "x", FinishReason: model.FinishStop},
			wantUsage: &model.Usage{PromptTokens: 226, CompletionTokens: 20, TotalTokens: 246},
		},
		{
			name: "finish reason on every chunk: the last wins",
			lines: []string{ch(`{"content":"Hel"}`, "stop"), ch(`{"content":"lo"}`, "stop"),
				ch(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"harness_6769742e64696666","arguments":"{}"}}]}`, "stop"),
				ch(`{}`, "tool_calls")},
			want: model.Completion{Content: "Hello", FinishReason: model.FinishToolCalls, ToolCalls: []model.ToolCall{call("a", "git.diff", `{}`)}},
		},
		{
			name: "reasoning before the answer",
			lines: []string{ch(`{"role":"assistant","content":null,"reasoning_content":""}`, ""),
				ch(`{"content":null,"reasoning_content":"The user"}`, ""), ch(`{"reasoning_content":" wants x."}`, ""),
				ch(`{"content":"x","reasoning_content":null}`, "stop")},
			want: model.Completion{Content: "x", Reasoning: "The user wants x.", ReasoningField: "reasoning_content", FinishReason: model.FinishStop},
		},
		{
			name:  "reasoning under the name reasoning",
			lines: []string{ch(`{"reasoning":"hmm"}`, ""), ch(`{"content":"x"}`, "stop")},
			want:  model.Completion{Content: "x", Reasoning: "hmm", ReasoningField: "reasoning", FinishReason: model.FinishStop},
		},
		{
			name: "reasoning under both names (vLLM's compatibility) is read once",
			lines: []string{ch(`{"reasoning":"hm","reasoning_content":"hm"}`, ""), ch(`{"reasoning":"m.","reasoning_content":"m."}`, ""),
				ch(`{"content":"x"}`, "stop")},
			want: model.Completion{Content: "x", Reasoning: "hmm.", ReasoningField: "reasoning", FinishReason: model.FinishStop},
		},
		{
			name:  "reasoning of another shape carries no text",
			lines: []string{ch(`{"reasoning":{"summary":"?"},"reasoning_content":5}`, ""), ch(`{"content":"x"}`, "stop")},
			want:  model.Completion{Content: "x", FinishReason: model.FinishStop},
		},
		{
			name: "opaque per-call fields are kept",
			lines: []string{
				ch(`{"tool_calls":[{"index":0,"id":"a","type":"function","extra_content":{"google":{"thought_signature":"c2ln"}},"function":{"name":"harness_66732e72656164","arguments":"{\"path\":"}}]}`, ""),
				ch(`{"tool_calls":[{"index":0,"function":{"arguments":"\"x\"}"}}]}`, "tool_calls")},
			want: model.Completion{FinishReason: model.FinishToolCalls, ToolCalls: []model.ToolCall{{ID: "a", Name: "fs.read",
				Arguments: json.RawMessage(`{"path":"x"}`), Extra: json.RawMessage(`{"extra_content":{"google":{"thought_signature":"c2ln"}}}`)}}},
		},
		{
			name: "call without id gets a generated one",
			lines: []string{
				ch(`{"tool_calls":[{"index":0,"function":{"name":"harness_6769742e64696666","arguments":"{}"}},{"index":1,"function":{"name":"bash","arguments":"{}"}}]}`, "tool_calls")},
			want: model.Completion{FinishReason: model.FinishToolCalls, ToolCalls: []model.ToolCall{call("call_gen1", "git.diff", `{}`), call("call_gen2", "bash", `{}`)}},
		},
		{
			name: "arguments that are not JSON are kept as a string",
			lines: []string{
				ch(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"harness_66732e72656164","arguments":"{\"path\": \"README.md\""}}]}`, "tool_calls")},
			want: model.Completion{FinishReason: model.FinishToolCalls, ToolCalls: []model.ToolCall{{ID: "a", Name: "fs.read",
				Arguments: json.RawMessage(`"{\"path\": \"README.md\""`), BadArguments: true}}},
		},
		{
			name: "arguments cut by the length limit",
			lines: []string{
				ch(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"bash","arguments":"{\"argv\":[\"l"}}]}`, "length")},
			want: model.Completion{FinishReason: model.FinishLength, ToolCalls: []model.ToolCall{{ID: "a", Name: "bash",
				Arguments: json.RawMessage(`"{\"argv\":[\"l"`), BadArguments: true}}},
		},
		{
			name:  "null fields are absent",
			lines: []string{`{"choices":[{"index":0,"delta":{"content":null,"tool_calls":null,"refusal":null},"finish_reason":"stop"}],"usage":null}`},
			want:  model.Completion{FinishReason: model.FinishStop},
		},
		{name: "id changes mid-call", wantCode: errcode.ModelInvalidResponse, lines: []string{
			ch(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"bash"}}]}`, ""),
			ch(`{"tool_calls":[{"index":0,"id":"b","function":{"arguments":"{}"}}]}`, "tool_calls")}},
		{name: "second choice", wantCode: errcode.ModelInvalidResponse, lines: []string{
			`{"choices":[{"index":1,"delta":{"content":"x"},"finish_reason":null}]}`}},
		{name: "content of the wrong type", wantCode: errcode.ModelInvalidResponse, lines: []string{ch(`{"content":5}`, "")}},
		{name: "tool calls of the wrong type", wantCode: errcode.ModelInvalidResponse, lines: []string{ch(`{"tool_calls":{"index":0}}`, "")}},
		{name: "index of the wrong type", wantCode: errcode.ModelInvalidResponse, lines: []string{
			ch(`{"tool_calls":[{"index":"0","id":"a","function":{"name":"bash"}}]}`, "")}},
		{name: "negative index", wantCode: errcode.ModelInvalidResponse, lines: []string{
			ch(`{"tool_calls":[{"index":-1,"id":"a","function":{"name":"bash"}}]}`, "")}},
		{name: "custom tool type", wantCode: errcode.ModelInvalidResponse, lines: []string{
			ch(`{"tool_calls":[{"index":0,"id":"a","type":"custom","function":{"name":"bash"}}]}`, "")}},
		{name: "negative usage", wantCode: errcode.ModelInvalidResponse, lines: []string{
			`{"choices":[],"usage":{"prompt_tokens":-3,"completion_tokens":2,"total_tokens":-1}}`}},
		{name: "tool_calls without a call", wantCode: errcode.ModelInvalidResponse, lines: []string{ch(`{"content":"x"}`, "tool_calls")}},
		{name: "call without name", wantCode: errcode.ModelInvalidResponse, lines: []string{
			ch(`{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}`, "tool_calls")}},
		{name: "one id for two calls", wantCode: errcode.ModelInvalidResponse, lines: []string{
			ch(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"bash","arguments":"{}"}},{"index":1,"id":"a","function":{"name":"bash","arguments":"{}"}}]}`, "tool_calls")}},
		{name: "no finish reason and no [DONE]", wantCode: errcode.ModelInvalidResponse, lines: []string{ch(`{"content":"x"}`, "")}},
		{
			name:      "integral numbers written as decimals count",
			lines:     []string{`{"choices":[{"index":0.0,"delta":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7.0,"completion_tokens":1,"total_tokens":8e0}}`},
			want:      model.Completion{Content: "x", FinishReason: model.FinishStop},
			wantUsage: &model.Usage{PromptTokens: 7, CompletionTokens: 1, TotalTokens: 8},
		},
		{
			name:  "a null choice and unknown fields are skipped",
			lines: []string{`{"id":"x","object":"chat.completion.chunk","choices":[null,{"index":0,"delta":{"role":"assistant","content":"y","function_call":null},"logprobs":null,"finish_reason":"stop"}],"system_fingerprint":5}`},
			want:  model.Completion{Content: "y", FinishReason: model.FinishStop},
		},
		{name: "an event that is an array", wantCode: errcode.ModelInvalidResponse, lines: []string{`[{"choices":[]}]`}},
		{name: "choices of the wrong type", wantCode: errcode.ModelInvalidResponse, lines: []string{`{"choices":{"index":0}}`}},
		{name: "usage of the wrong type", wantCode: errcode.ModelInvalidResponse, lines: []string{`{"choices":[],"usage":"12"}`}},
		{name: "a token count of the wrong type", wantCode: errcode.ModelInvalidResponse, lines: []string{
			`{"choices":[],"usage":{"prompt_tokens":"7","completion_tokens":1,"total_tokens":8}}`}},
		{name: "a fractional index", wantCode: errcode.ModelInvalidResponse, lines: []string{
			ch(`{"tool_calls":[{"index":0.5,"id":"a","function":{"name":"bash"}}]}`, "")}},
		{name: "a choice that is not an object", wantCode: errcode.ModelInvalidResponse, lines: []string{`{"choices":[3]}`}},
		{name: "a delta that is not an object", wantCode: errcode.ModelInvalidResponse, lines: []string{`{"choices":[{"index":0,"delta":"x"}]}`}},
		{name: "a function of the wrong type", wantCode: errcode.ModelInvalidResponse, lines: []string{
			ch(`{"tool_calls":[{"index":0,"id":"a","function":"bash"}]}`, "")}},
		{name: "a finish reason of the wrong type", wantCode: errcode.ModelInvalidResponse, lines: []string{`{"choices":[{"index":0,"delta":{},"finish_reason":1}]}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, got, u, err := assemble(t, tt.lines, tt.sawDone)
			if code := errcode.Of(err); code != tt.wantCode {
				t.Fatalf("code = %q, want %q (%v)", code, tt.wantCode, err)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("completion (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantUsage, u); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if text != got.Content {
				t.Errorf("deltas %q differ from the content %q", text, got.Content)
			}
		})
	}
}

func TestAssembleLimits(t *testing.T) {
	t.Run("too many calls", func(t *testing.T) {
		var lines []string
		for i := range maxToolCalls + 1 {
			id := "c" + strings.Repeat("x", i)
			lines = append(lines, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":`+itoa(i)+`,"id":"`+id+`","function":{"name":"bash","arguments":"{}"}}]},"finish_reason":null}]}`)
		}
		_, _, _, err := assemble(t, lines, true)
		if code := errcode.Of(err); code != errcode.ModelInvalidResponse {
			t.Fatalf("code = %q, want MODEL_INVALID_RESPONSE", code)
		}
	})
	t.Run("too many bytes", func(t *testing.T) {
		piece, _ := json.Marshal(strings.Repeat("x", 1<<20))
		line := `{"choices":[{"index":0,"delta":{"content":` + string(piece) + `},"finish_reason":null}]}`
		_, _, _, err := assemble(t, slices.Repeat([]string{line}, 17), true)
		if code := errcode.Of(err); code != errcode.ModelInvalidResponse {
			t.Fatalf("code = %q, want MODEL_INVALID_RESPONSE", code)
		}
	})
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// sseData returns the data payloads of a recorded stream, [DONE] left out.
func sseData(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
			out = append(out, d)
		}
	}
	return out
}

// FuzzAssemble feeds arbitrary sequences of chunk JSON (one per line) to
// the assembler. It must never panic, fail only with MODEL_INVALID_RESPONSE,
// and accept only completions that keep the port's promises.
func FuzzAssemble(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.sse"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no recorded streams: %v", err)
	}
	for _, p := range files {
		data := strings.Join(sseData(f, p), "\n")
		f.Add(data, true)
		f.Add(data, false)
	}
	f.Add(`{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"harness_","arguments":" "}}]},"finish_reason":"stop"}]}`, false)

	f.Fuzz(func(t *testing.T, data string, sawDone bool) {
		names := testAliases(t)
		a := newAssembler(names)
		var text, think strings.Builder
		for _, line := range strings.Split(data, "\n") {
			d, r, err := a.add([]byte(line))
			if err != nil {
				if code := errcode.Of(err); code != errcode.ModelInvalidResponse {
					t.Fatalf("add: code %q: %v", code, err)
				}
				return
			}
			text.WriteString(d)
			think.WriteString(r)
		}
		comp, u, err := a.result(sawDone)
		if err != nil {
			if code := errcode.Of(err); code != errcode.ModelInvalidResponse {
				t.Fatalf("result: code %q: %v", code, err)
			}
			return
		}
		if comp.Content != text.String() || comp.Reasoning != think.String() {
			t.Fatalf("content %q / reasoning %q differ from the deltas %q / %q", comp.Content, comp.Reasoning, text.String(), think.String())
		}
		switch comp.FinishReason {
		case model.FinishStop, model.FinishLength, model.FinishError:
		case model.FinishToolCalls:
			if len(comp.ToolCalls) == 0 {
				t.Fatal("tool_calls without a call")
			}
		default:
			t.Fatalf("finish reason %q", comp.FinishReason)
		}
		if len(comp.ToolCalls) > 0 && comp.FinishReason == model.FinishStop {
			t.Fatal("tool calls with finish reason stop")
		}
		ids := map[string]bool{}
		for _, c := range comp.ToolCalls {
			if c.ID == "" || ids[c.ID] {
				t.Fatalf("tool call id %q empty or reused", c.ID)
			}
			ids[c.ID] = true
			if !json.Valid(c.Arguments) || (c.BadArguments && c.Arguments[0] != '"') {
				t.Fatalf("tool call %s: invalid arguments %q", c.ID, c.Arguments)
			}
			if len(c.Extra) > 0 && (c.Extra[0] != '{' || !json.Valid(c.Extra)) {
				t.Fatalf("tool call %s: extra fields %q", c.ID, c.Extra)
			}
			if c.Name == "" || (strings.HasPrefix(c.Name, AliasPrefix) && !names.known(c.Name)) {
				t.Fatalf("tool call %s: name %q is an unknown alias", c.ID, c.Name)
			}
		}
		if u != nil && (u.PromptTokens < 0 || u.CompletionTokens < 0 || !u.Valid() || u.Estimated) {
			t.Fatalf("usage %+v", *u)
		}
	})
}

// stringField reads JSON strings as encoding/json does, but keeps bytes
// that are not UTF-8 as they came.
func TestStringField(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want string
		ok   bool
	}{
		{`"plain"`, "plain", true},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", true},
		{`"\u00e9\ud83d\ude00"`, "é😀", true},
		{`"lone \ud83d and \ude00"`, "lone \uFFFD and \uFFFD", true},
		{"\"cut \xe2\x82\"", "cut \xe2\x82", true},
		{`null`, "", true},
		{``, "", true},
		{`5`, "", false},
		{`"\x"`, "", false},
		{`"\u12"`, "", false},
		{`"open`, "", false},
	} {
		got, ok := stringField(json.RawMessage(tt.raw))
		if got != tt.want || ok != tt.ok {
			t.Errorf("stringField(%s) = %q, %v; want %q, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzStringField(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\u0000"`, `"x\\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var want string
		if !utf8.ValidString(raw) || json.Unmarshal([]byte(raw), &want) != nil || raw == "null" || len(raw) == 0 || raw[0] != '"' {
			return
		}
		if got, ok := stringField(json.RawMessage(raw)); !ok || got != want {
			t.Fatalf("stringField(%s) = %q, %v; encoding/json reads %q", raw, got, ok, want)
		}
	})
}
