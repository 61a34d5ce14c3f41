package openai

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

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
func deltaReasoning(reasoningContent, reasoning json.RawMessage) (text, field string) {
	str := func(raw json.RawMessage) (string, bool) {
		s, ok := stringField(raw)
		return s, len(raw) > 0 && ok
	}
	rc, hasRC := str(reasoningContent)
	r, hasR := str(reasoning)
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

// The shapes of a chunk this adapter reads; every other field is ignored.
// Each value stays raw until it is read, so that a field of the wrong type
// is told apart from one that is absent or null.
type (
	wireChunk struct {
		Choices json.RawMessage `json:"choices"`
		Usage   json.RawMessage `json:"usage"`
		XGroq   json.RawMessage `json:"x_groq"`
	}
	wireChoice struct {
		Index        json.RawMessage `json:"index"`
		Delta        json.RawMessage `json:"delta"`
		FinishReason json.RawMessage `json:"finish_reason"`
	}
	wireDelta struct {
		Content          json.RawMessage `json:"content"`
		Refusal          json.RawMessage `json:"refusal"`
		ToolCalls        json.RawMessage `json:"tool_calls"`
		ReasoningContent json.RawMessage `json:"reasoning_content"`
		Reasoning        json.RawMessage `json:"reasoning"`
	}
	wireUsage struct {
		PromptTokens     json.RawMessage `json:"prompt_tokens"`
		CompletionTokens json.RawMessage `json:"completion_tokens"`
		TotalTokens      json.RawMessage `json:"total_tokens"`
		Details          json.RawMessage `json:"completion_tokens_details"`
	}
	wireFunctionDelta struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
)

// absent reports a value that is missing or null.
func absent(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// decodeAs decodes an object or array (open is '{' or '['); false when
// raw holds another type. An absent value decodes as the zero value.
func decodeAs(raw json.RawMessage, open byte, v any) bool {
	if absent(raw) {
		return true
	}
	return raw[0] == open && json.Unmarshal(raw, v) == nil
}

// stringField reads a string; ok is false for another type. Bytes that
// are not UTF-8 are kept as they came: a character a server cut between
// two chunks comes back whole once the deltas are joined, and what stays
// invalid is replaced downstream, where it is noted.
func stringField(raw json.RawMessage) (s string, ok bool) {
	if absent(raw) {
		return "", true
	}
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i++; i == len(body) {
			return "", false
		}
		switch body[i] {
		case '"', '\\', '/':
			out = append(out, body[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(body[i+1:])
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if i+2 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
					r2, ok = hex4(body[i+3:])
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r, i = d, i+6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(n), err == nil
}

// intField reads an integer (12.0 counts as one); set is false when the
// field is absent or null, ok false for another type or a number out of
// int64's range.
func intField(raw json.RawMessage) (n int64, set, ok bool) {
	if absent(raw) {
		return 0, false, true
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false, false
	}
	return int64(f), true, true
}

// add decodes one chunk (an event's JSON), folds it in and returns the
// text and the reasoning it carried.
func (a *assembler) add(data []byte) (text, reasoning string, err error) {
	var c wireChunk
	if len(data) == 0 || data[0] != '{' || json.Unmarshal(data, &c) != nil {
		return "", "", invalidResponse("read stream: an event is not a JSON object")
	}
	var choices []json.RawMessage
	var usage wireUsage
	if !decodeAs(c.Choices, '[', &choices) || !decodeAs(c.Usage, '{', &usage) {
		return "", "", invalidResponse("read chunk: choices or usage of the wrong type")
	}
	if !absent(c.Usage) {
		prompt, _, ok1 := intField(usage.PromptTokens)
		completion, _, ok2 := intField(usage.CompletionTokens)
		total, _, ok3 := intField(usage.TotalTokens)
		var details struct {
			ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
		}
		var think int64
		if decodeAs(usage.Details, '{', &details) {
			think, _, _ = intField(details.ReasoningTokens) // informational: a wrong type reads as none
		}
		u, err := readUsage(prompt, completion, total, think, !ok1 || !ok2 || !ok3)
		if err != nil {
			return "", "", err
		}
		a.usage = u
	} else if len(c.XGroq) > 0 && a.usage == nil {
		u, err := groqUsage(string(c.XGroq))
		if err != nil {
			return "", "", err
		}
		if u != nil {
			a.usage = u
		}
	}
	var out, think strings.Builder
	for _, raw := range choices {
		var ch wireChoice
		var d wireDelta
		if !decodeAs(raw, '{', &ch) || !decodeAs(ch.Delta, '{', &d) {
			return "", "", invalidResponse("read chunk: a choice or delta that is not an object")
		}
		if idx, _, ok := intField(ch.Index); !ok || idx != 0 {
			return "", "", invalidResponse("read chunk: choice %s, but one choice was asked for", truncate(string(ch.Index), 40))
		}
		content, ok1 := stringField(d.Content)
		refusal, ok2 := stringField(d.Refusal)
		finish, ok3 := stringField(ch.FinishReason)
		var calls []json.RawMessage
		if !ok1 || !ok2 || !ok3 || !decodeAs(d.ToolCalls, '[', &calls) {
			return "", "", invalidResponse("read chunk: a delta field of the wrong type")
		}
		out.WriteString(content + refusal)
		if text, field := deltaReasoning(d.ReasoningContent, d.Reasoning); text != "" {
			think.WriteString(text)
			if a.reasoningField == "" || field == fieldReasoning {
				a.reasoningField = field
			}
		}
		for _, tc := range calls {
			if err := a.addCall(tc); err != nil {
				return "", "", err
			}
		}
		if finish != "" {
			a.finish = finish
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
// new id and continues the latest call otherwise. Fields beside index, id,
// type and function are kept raw as the call's extra fields.
func (a *assembler) addCall(raw json.RawMessage) error {
	var fields map[string]json.RawMessage
	var f wireFunctionDelta
	if !decodeAs(raw, '{', &fields) || !decodeAs(fields["function"], '{', &f) {
		return invalidResponse("read tool call delta: a field of the wrong type")
	}
	index, indexed, ok1 := intField(fields["index"])
	id, ok2 := stringField(fields["id"])
	typ, ok3 := stringField(fields["type"])
	name, ok4 := stringField(f.Name)
	args, ok5 := stringField(f.Arguments)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return invalidResponse("read tool call delta: a field of the wrong type")
	}
	if typ != "" && typ != "function" {
		return invalidResponse("read tool call delta: type %q", truncate(typ, 40))
	}
	idx := index
	if !indexed {
		prev := a.calls[a.last]
		switch {
		case prev == nil:
			idx = 0
		case id != "" && prev.id != "" && id != prev.id:
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
	if id != "" {
		if p.id != "" && p.id != id {
			return invalidResponse("read tool call %d: id changed mid-call", idx)
		}
		p.id = id
	}
	p.name.WriteString(name)
	p.args.WriteString(args)
	a.size += len(name) + len(args)
	for k, v := range fields {
		if absent(v) || k == "index" || slices.Contains(callFields, k) {
			continue
		}
		if p.extra == nil {
			p.extra = map[string]json.RawMessage{}
		}
		p.extra[k] = v
		a.size += len(k) + len(v)
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
