package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
)

// Bounds on one response.
const (
	maxResponseBytes = 16 << 20 // text and tool-call bytes together
	maxToolCalls     = 128
)

// assembler folds the chunks of one streamed response into a completion:
// text in arrival order, tool calls assembled by their index, the finish
// reason and the usage. It never sees HTTP; the stream feeds it decoded
// chunks. Every rule it enforces fails with MODEL_INVALID_RESPONSE.
type assembler struct {
	names   *aliases
	content strings.Builder
	calls   map[int64]*partialCall
	last    int64 // index of the call the latest tool-call delta touched
	finish  string
	usage   *model.Usage
	size    int
}

type partialCall struct {
	id   string
	name strings.Builder
	args strings.Builder
}

func newAssembler(names *aliases) *assembler {
	return &assembler{names: names, calls: map[int64]*partialCall{}}
}

func invalidResponse(format string, args ...any) error {
	return &errcode.Error{Code: errcode.ModelInvalidResponse, Op: op, Message: fmt.Sprintf(format, args...)}
}

// badField reports a field that is present, not null, and of the wrong type.
func badField(f respjson.Field) bool {
	return !f.Valid() && f.Raw() != "" && f.Raw() != respjson.Null
}

// add folds one chunk in and returns the text it carried.
func (a *assembler) add(c sdk.ChatCompletionChunk) (string, error) {
	if badField(c.JSON.Choices) || badField(c.JSON.Usage) {
		return "", invalidResponse("read chunk: choices or usage of the wrong type")
	}
	if c.JSON.Usage.Valid() {
		u := c.Usage
		if badField(u.JSON.PromptTokens) || badField(u.JSON.CompletionTokens) ||
			u.PromptTokens < 0 || u.CompletionTokens < 0 || u.PromptTokens > math32 || u.CompletionTokens > math32 {
			return "", invalidResponse("read usage: token counts out of range")
		}
		a.usage = &model.Usage{
			PromptTokens:     int(u.PromptTokens),
			CompletionTokens: int(u.CompletionTokens),
			TotalTokens:      int(u.PromptTokens + u.CompletionTokens),
		}
	}
	var text strings.Builder
	for _, ch := range c.Choices {
		if badField(ch.JSON.Index) || ch.Index != 0 {
			return "", invalidResponse("read chunk: choice %d, but one choice was asked for", ch.Index)
		}
		d := ch.Delta
		if badField(ch.JSON.Delta) || badField(ch.JSON.FinishReason) || badField(d.JSON.Content) ||
			badField(d.JSON.Refusal) || badField(d.JSON.ToolCalls) {
			return "", invalidResponse("read chunk: a delta field of the wrong type")
		}
		piece := d.Content + d.Refusal
		if a.finish != "" && (piece != "" || len(d.ToolCalls) > 0) {
			return "", invalidResponse("read chunk: content after the finish reason")
		}
		text.WriteString(piece)
		for _, tc := range d.ToolCalls {
			if err := a.addCall(tc); err != nil {
				return "", err
			}
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	a.size += text.Len()
	if a.size > maxResponseBytes {
		return "", invalidResponse("read response: more than %d bytes", maxResponseBytes)
	}
	a.content.WriteString(text.String())
	return text.String(), nil
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
			return model.Completion{}, nil, invalidResponse("read tool call %d: no id", i)
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
		if !json.Valid([]byte(args)) {
			return model.Completion{}, nil, invalidResponse("read tool call %q (%s): arguments are not valid JSON", truncate(p.id, 80), name)
		}
		calls = append(calls, model.ToolCall{ID: p.id, Name: name, Arguments: json.RawMessage(args)})
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
	return model.Completion{Content: a.content.String(), ToolCalls: calls, FinishReason: reason}, usage, nil
}

// finishReason maps a wire finish reason onto the port's. Servers that say
// stop (or nothing, or something of their own) while returning tool calls
// mean tool_calls; content_filter means the provider cut the answer.
func finishReason(wire string, hasCalls bool) string {
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
	n := len(c.Content)
	for _, tc := range c.ToolCalls {
		n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
	return n
}
