package openai

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// Bounds on one response.
const (
	maxResponseBytes = 16 << 20 // text and tool-call bytes together
	maxToolCalls     = 128
)

// assembler folds the chunks of one streamed response into a completion:
// text and reasoning in arrival order, tool calls assembled by their index,
// the finish reason (the last one sent wins: some relays repeat it on every
// chunk) and the usage (the last report wins; Groq's x_groq.usage when
// there is no other). It never sees HTTP; the stream feeds it decoded
// chunks. Every rule it enforces fails with MODEL_INVALID_RESPONSE.
type assembler struct {
	names     *aliases
	content   strings.Builder
	reasoning strings.Builder
	// reasoningField is the field the reasoning came in (fieldReasoning
	// once any delta used it).
	reasoningField string
	calls          map[int64]*partialCall
	last           int64 // index of the call the latest tool-call delta touched
	finish         string
	usage          *model.Usage
	size           int
	newID          func() string // for tool calls that arrive without one
}

type partialCall struct {
	id    string
	name  strings.Builder
	args  strings.Builder
	extra map[string]json.RawMessage // opaque fields beside id, type and function
}

// The delta fields servers put reasoning text in: reasoning_content
// (DeepSeek, Kimi, Qwen, xAI, llama.cpp, vLLM before 0.11), reasoning
// (Groq, Cerebras, OpenRouter, newer vLLM; vLLM sends both for a while).
const (
	fieldReasoningContent = "reasoning_content"
	fieldReasoning        = "reasoning"
)

// deltaReasoning reads a delta's reasoning text and the field it came in.
// A server sending both fields sends the same text twice (vLLM's
// compatibility); it is read once, and named reasoning, the field such a
// server reads back. null and other shapes carry no text.
func deltaReasoning(extra map[string]respjson.Field) (text, field string) {
	str := func(name string) (string, bool) {
		f, ok := extra[name]
		var s string
		return s, ok && json.Unmarshal([]byte(f.Raw()), &s) == nil
	}
	rc, hasRC := str(fieldReasoningContent)
	r, hasR := str(fieldReasoning)
	switch {
	case hasRC && hasR:
		return cmp.Or(r, rc), fieldReasoning
	case hasR:
		return r, fieldReasoning
	case hasRC:
		return rc, fieldReasoningContent
	}
	return "", ""
}

// generatedCallID returns an id for a tool call the server sent without
// one, as other clients do: call_ and 24 random hex digits.
func generatedCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

func newAssembler(names *aliases) *assembler {
	return &assembler{names: names, calls: map[int64]*partialCall{}, newID: generatedCallID}
}

func invalidResponse(format string, args ...any) error {
	return &errcode.Error{Code: errcode.ModelInvalidResponse, Op: op, Message: fmt.Sprintf(format, args...)}
}

// badField reports a field that is present, not null, and of the wrong type.
func badField(f respjson.Field) bool {
	return !f.Valid() && f.Raw() != "" && f.Raw() != respjson.Null
}

// add folds one chunk in and returns the text and the reasoning it carried.
func (a *assembler) add(c sdk.ChatCompletionChunk) (text, reasoning string, err error) {
	if badField(c.JSON.Choices) || badField(c.JSON.Usage) {
		return "", "", invalidResponse("read chunk: choices or usage of the wrong type")
	}
	if c.JSON.Usage.Valid() {
		u, err := readUsage(c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens,
			c.Usage.CompletionTokensDetails.ReasoningTokens,
			badField(c.Usage.JSON.PromptTokens) || badField(c.Usage.JSON.CompletionTokens) || badField(c.Usage.JSON.TotalTokens))
		if err != nil {
			return "", "", err
		}
		a.usage = u
	} else if xg, ok := c.JSON.ExtraFields["x_groq"]; ok && a.usage == nil {
		u, err := groqUsage(xg.Raw())
		if err != nil {
			return "", "", err
		}
		if u != nil {
			a.usage = u
		}
	}
	var out, think strings.Builder
	for _, ch := range c.Choices {
		if badField(ch.JSON.Index) || ch.Index != 0 {
			return "", "", invalidResponse("read chunk: choice %d, but one choice was asked for", ch.Index)
		}
		d := ch.Delta
		if badField(ch.JSON.Delta) || badField(ch.JSON.FinishReason) || badField(d.JSON.Content) ||
			badField(d.JSON.Refusal) || badField(d.JSON.ToolCalls) {
			return "", "", invalidResponse("read chunk: a delta field of the wrong type")
		}
		out.WriteString(d.Content + d.Refusal)
		if text, field := deltaReasoning(d.JSON.ExtraFields); text != "" {
			think.WriteString(text)
			if a.reasoningField == "" || field == fieldReasoning {
				a.reasoningField = field
			}
		}
		for _, tc := range d.ToolCalls {
			if err := a.addCall(tc); err != nil {
				return "", "", err
			}
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	a.size += out.Len() + think.Len()
	if a.size > maxResponseBytes {
		return "", "", invalidResponse("read response: more than %d bytes", maxResponseBytes)
	}
	a.content.WriteString(out.String())
	a.reasoning.WriteString(think.String())
	return out.String(), think.String(), nil
}

// readUsage checks reported token counts. A total below prompt +
// completion is raised to it; one above is kept (reasoning tokens counted
// apart, xAI).
func readUsage(prompt, completion, total, reasoning int64, mistyped bool) (*model.Usage, error) {
	if mistyped || prompt < 0 || completion < 0 || total < 0 || reasoning < 0 ||
		prompt > math32 || completion > math32 || total > math32 || reasoning > math32 {
		return nil, invalidResponse("read usage: token counts out of range")
	}
	return &model.Usage{
		PromptTokens:     int(prompt),
		CompletionTokens: int(completion),
		TotalTokens:      int(max(total, prompt+completion)),
		ReasoningTokens:  int(reasoning),
	}, nil
}

// groqUsage reads the usage Groq sends inside x_groq; nil when there is none.
func groqUsage(raw string) (*model.Usage, error) {
	var x struct {
		Usage *struct {
			PromptTokens     json.Number `json:"prompt_tokens"`
			CompletionTokens json.Number `json:"completion_tokens"`
			TotalTokens      json.Number `json:"total_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal([]byte(raw), &x) != nil || x.Usage == nil {
		return nil, nil // x_groq is informational; a shape we do not know is ignored
	}
	n := func(v json.Number) (int64, bool) {
		if v == "" {
			return 0, true
		}
		i, err := v.Int64()
		return i, err == nil
	}
	p, ok1 := n(x.Usage.PromptTokens)
	c, ok2 := n(x.Usage.CompletionTokens)
	t, ok3 := n(x.Usage.TotalTokens)
	return readUsage(p, c, t, 0, !ok1 || !ok2 || !ok3)
}

const math32 = 1<<31 - 1

// addCall folds one tool-call delta into the call at its index. A delta
// without an index (some local servers) opens a new call when it brings a
// new id and continues the latest call otherwise.
func (a *assembler) addCall(tc sdk.ChatCompletionChunkChoiceDeltaToolCall) error {
	f := tc.Function
	if badField(tc.JSON.Index) || badField(tc.JSON.ID) || badField(tc.JSON.Type) || badField(tc.JSON.Function) ||
		badField(f.JSON.Name) || badField(f.JSON.Arguments) {
		return invalidResponse("read tool call delta: a field of the wrong type")
	}
	if tc.Type != "" && tc.Type != "function" {
		return invalidResponse("read tool call delta: type %q", truncate(tc.Type, 40))
	}
	idx := tc.Index
	if !tc.JSON.Index.Valid() {
		prev := a.calls[a.last]
		switch {
		case prev == nil:
			idx = 0
		case tc.ID != "" && prev.id != "" && tc.ID != prev.id:
			idx = slices.Max(keys(a.calls)) + 1
		default:
			idx = a.last
		}
	}
	if idx < 0 {
		return invalidResponse("read tool call delta: negative index")
	}
	p := a.calls[idx]
	if p == nil {
		if len(a.calls) >= maxToolCalls {
			return invalidResponse("read tool calls: more than %d", maxToolCalls)
		}
		p = &partialCall{}
		a.calls[idx] = p
	}
	a.last = idx
	if tc.ID != "" {
		if p.id != "" && p.id != tc.ID {
			return invalidResponse("read tool call %d: id changed mid-call", idx)
		}
		p.id = tc.ID
	}
	p.name.WriteString(f.Name)
	p.args.WriteString(f.Arguments)
	a.size += len(f.Name) + len(f.Arguments)
	for k, v := range tc.JSON.ExtraFields {
		raw := v.Raw()
		if raw == "" || raw == respjson.Null || !json.Valid([]byte(raw)) {
			continue
		}
		if p.extra == nil {
			p.extra = map[string]json.RawMessage{}
		}
		p.extra[k] = json.RawMessage(raw)
		a.size += len(k) + len(raw)
	}
	if a.size > maxResponseBytes {
		return invalidResponse("read response: more than %d bytes", maxResponseBytes)
	}
	return nil
}

func keys(m map[int64]*partialCall) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// result closes the response. sawDone says whether the server sent
// [DONE]; a stream with neither a finish reason nor [DONE] was cut off.
// The usage is returned apart (nil when the server sent none).
func (a *assembler) result(sawDone bool) (model.Completion, *model.Usage, error) {
	if a.finish == "" && !sawDone {
		return model.Completion{}, nil, invalidResponse("read stream: it ended without a finish reason or [DONE]")
	}
	idxs := keys(a.calls)
	slices.Sort(idxs)
	var calls []model.ToolCall
	ids := map[string]bool{}
	for _, i := range idxs {
		p := a.calls[i]
		if p.id == "" {
			p.id = a.newID() // SGLang sends none
		}
		if ids[p.id] {
			return model.Completion{}, nil, invalidResponse("read tool call %d: id %q used twice", i, truncate(p.id, 80))
		}
		ids[p.id] = true
		if p.name.Len() == 0 {
			return model.Completion{}, nil, invalidResponse("read tool call %d: no name", i)
		}
		name, err := a.names.canonical(p.name.String())
		if err != nil {
			return model.Completion{}, nil, err
		}
		args := strings.TrimSpace(p.args.String())
		if args == "" {
			args = "{}"
		}
		tc := model.ToolCall{ID: p.id, Name: name, Arguments: json.RawMessage(args)}
		if !json.Valid([]byte(args)) {
			// The model gets the call back with TOOL_BAD_INPUT and may
			// correct it; the text is kept as a JSON string.
			quoted, _ := model.MarshalCanonical(args)
			tc.Arguments, tc.BadArguments = quoted, true
		}
		if len(p.extra) > 0 {
			tc.Extra, _ = model.MarshalCanonical(p.extra) // keys sorted, values compact: one byte form
		}
		calls = append(calls, tc)
	}
	reason := finishReason(a.finish, len(calls) > 0)
	if reason == model.FinishToolCalls && len(calls) == 0 {
		return model.Completion{}, nil, invalidResponse("read stream: finish reason tool_calls without a tool call")
	}
	var usage *model.Usage
	if a.usage != nil {
		u := *a.usage
		usage = &u
	}
	comp := model.Completion{Content: a.content.String(), Reasoning: a.reasoning.String(), ToolCalls: calls, FinishReason: reason}
	if comp.Reasoning != "" {
		comp.ReasoningField = a.reasoningField
	}
	return comp, usage, nil
}

// finishReason maps a wire finish reason onto the port's. Servers that say
// stop (or nothing, or something of their own) while returning tool calls
// mean tool_calls; content_filter means the provider cut the answer. An
// answer of text that ended ([DONE]) with no finish reason at all was not
// said to be complete: length, so that it is recorded as truncated.
func finishReason(wire string, hasCalls bool) string {
	if wire == "" && !hasCalls {
		return model.FinishLength
	}
	switch wire {
	case "length":
		return model.FinishLength
	case "content_filter":
		return model.FinishError
	case "tool_calls", "function_call":
		return model.FinishToolCalls
	}
	if hasCalls {
		return model.FinishToolCalls
	}
	return model.FinishStop
}

// responseBytes is the size of a completion's text and tool calls, for
// usage estimates.
func responseBytes(c model.Completion) int {
	n := len(c.Content) + len(c.Reasoning)
	for _, tc := range c.ToolCalls {
		n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
	return n
}
