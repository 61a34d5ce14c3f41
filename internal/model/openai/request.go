package openai

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// callFields are the keys of a wire tool call that this package sets; a
// call's opaque Extra fields never replace them.
var callFields = []string{"id", "type", "function"}

// providerOptionKeys are the keys a request's ProviderOptions may carry.
var providerOptionKeys = []string{"temperature", "top_p", "reasoning_effort", "seed"}

// wireRequest is one request translated for the wire: detached from the
// model.Request it came from, with tool names aliased.
type wireRequest struct {
	params sdk.ChatCompletionNewParams
	names  *aliases
	size   int // bytes of the JSON body, for usage estimates
	// sent are the reasoning fields the assistant messages carry, each
	// with the indexes of the messages (in params.Messages) that carry it.
	sent map[string][]int
}

// buildRequest translates req. Reasoning goes back under the field it
// came in, except the fields in omit (those the server refused). Everything
// it rejects is MODEL_INVALID_REQUEST.
func buildRequest(req model.Request, defaultModel string, omit ...string) (*wireRequest, error) {
	names := newAliases()
	p := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(defaultModel),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if req.Model != "" {
		p.Model = shared.ChatModel(req.Model)
	}

	// Tools first: their aliases take precedence over names seen only in
	// the history.
	seen := map[string]bool{}
	for _, t := range req.Tools {
		if seen[t.Name] {
			return nil, errcode.Errorf(errcode.ModelInvalidRequest, "advertise tools: %q is listed twice", t.Name)
		}
		seen[t.Name] = true
		tool, err := wireTool(t, names)
		if err != nil {
			return nil, err
		}
		p.Tools = append(p.Tools, tool)
	}

	if req.System != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(req.System))
	}
	tooled := toolTurns(req.Messages)
	sent := map[string][]int{}
	for i, m := range req.Messages {
		msg, err := wireMessage(m, names)
		if err != nil {
			return nil, errcode.Errorf(errcode.ModelInvalidRequest, "translate message %d: %s", i, errcode.Message(err))
		}
		if field := backField(m); tooled[i] && field != "" && !slices.Contains(omit, field) {
			// DeepSeek's thinking mode (and Kimi's) refuses a tool loop
			// whose assistant messages lack their reasoning; vLLM and
			// llama.cpp templates that interleave thinking read it.
			msg.OfAssistant.SetExtraFields(map[string]any{field: m.Reasoning})
			sent[field] = append(sent[field], len(p.Messages))
		}
		p.Messages = append(p.Messages, msg)
	}
	if len(p.Messages) == 0 {
		return nil, errcode.New(errcode.ModelInvalidRequest, "translate messages: the request has none")
	}

	opts, err := parseProviderOptions(req.ProviderOptions)
	if err != nil {
		return nil, err
	}
	opts.apply(&p)
	if req.MaxTokens < 0 {
		return nil, errcode.New(errcode.ModelInvalidRequest, "set max tokens: negative")
	}
	if req.MaxTokens > 0 {
		// max_tokens is what llama.cpp, vLLM and Ollama all accept, and
		// OpenAI too for its chat models; OpenAI's reasoning models refuse
		// it and want max_completion_tokens, which a request asking for a
		// reasoning effort is meant for.
		if opts.reasoningEffort != "" {
			p.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}

	body, err := p.MarshalJSON()
	if err != nil {
		return nil, errcode.Wrap(errcode.ModelInvalidRequest, "openai: encode request", err)
	}
	return &wireRequest{params: p, names: names, size: len(body) + len(`,"stream":true`), sent: sent}, nil
}

// toolTurns marks the assistant messages whose reasoning goes back: those
// of a turn (the messages between two user messages) in which the model
// called a tool, as DeepSeek asks; a turn without tool calls needs none.
func toolTurns(msgs []model.Message) []bool {
	out := make([]bool, len(msgs))
	start := 0
	mark := func(end int) {
		called := false
		for _, m := range msgs[start:end] {
			called = called || (m.Role == model.RoleAssistant && len(m.ToolCalls) > 0)
		}
		for i := start; i < end && called; i++ {
			out[i] = msgs[i].Role == model.RoleAssistant
		}
	}
	for i, m := range msgs {
		if m.Role == model.RoleUser {
			mark(i)
			start = i + 1
		}
	}
	mark(len(msgs))
	return out
}

// backField is the field an assistant message's reasoning goes back
// under: the one it came in; reasoning_content for reasoning recorded
// before the field was kept (DeepSeek's, the only server that required
// it then); "" when there is none.
func backField(m model.Message) string {
	if m.Role != model.RoleAssistant || m.Reasoning == "" {
		return ""
	}
	switch m.ReasoningField {
	case fieldReasoning, fieldReasoningContent:
		return m.ReasoningField
	case "":
		return fieldReasoningContent
	}
	return "" // a field this adapter does not know: not ours to send
}

// without returns w with field taken off every assistant message that
// carries it, for a server that refused it.
func (w *wireRequest) without(field string) (*wireRequest, error) {
	out := *w
	out.params.Messages = slices.Clone(w.params.Messages)
	for _, i := range w.sent[field] {
		a := *out.params.Messages[i].OfAssistant
		extra := maps.Clone(a.ExtraFields())
		delete(extra, field)
		a.SetExtraFields(extra)
		out.params.Messages[i].OfAssistant = &a
	}
	out.sent = maps.Clone(w.sent)
	delete(out.sent, field)
	body, err := out.params.MarshalJSON()
	if err != nil {
		return nil, errcode.Wrap(errcode.ModelInvalidRequest, "openai: encode request", err)
	}
	out.size = len(body) + len(`,"stream":true`)
	return &out, nil
}

func wireTool(t model.ToolSpec, names *aliases) (sdk.ChatCompletionToolUnionParam, error) {
	w, err := names.add(t.Name)
	if err != nil {
		return sdk.ChatCompletionToolUnionParam{}, err
	}
	fn := shared.FunctionDefinitionParam{Name: w}
	desc := t.Description
	if w != t.Name {
		// The alias means nothing to the model; the description carries
		// the real name, which the system prompt uses.
		desc = strings.TrimSpace(t.Name + ": " + desc)
	}
	if desc != "" {
		fn.Description = sdk.String(desc)
	}
	if len(bytes.TrimSpace(t.Parameters)) > 0 {
		// Values stay raw, so numbers and nested key order reach the wire
		// exactly as written.
		var schema map[string]json.RawMessage
		if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema == nil {
			return sdk.ChatCompletionToolUnionParam{}, errcode.Errorf(errcode.ModelInvalidRequest,
				"advertise tool %q: parameters are not a JSON object", t.Name)
		}
		fn.Parameters = make(shared.FunctionParameters, len(schema))
		for k, v := range schema {
			fn.Parameters[k] = v
		}
	}
	return sdk.ChatCompletionToolUnionParam{OfFunction: &sdk.ChatCompletionFunctionToolParam{Function: fn}}, nil
}

func wireMessage(m model.Message, names *aliases) (sdk.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case model.RoleSystem:
		return sdk.SystemMessage(m.Content), nil
	case model.RoleUser:
		return sdk.UserMessage(m.Content), nil
	case model.RoleTool:
		if m.ToolCallID == "" {
			return sdk.ChatCompletionMessageParamUnion{}, errcode.New(errcode.ModelInvalidRequest, "tool message without a tool call id")
		}
		return sdk.ToolMessage(m.Content, m.ToolCallID), nil
	case model.RoleAssistant:
		var a sdk.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = sdk.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" {
				return sdk.ChatCompletionMessageParamUnion{}, errcode.New(errcode.ModelInvalidRequest, "assistant tool call without an id")
			}
			w, err := names.add(tc.Name)
			if err != nil {
				return sdk.ChatCompletionMessageParamUnion{}, err
			}
			args := strings.TrimSpace(string(tc.Arguments))
			if tc.BadArguments {
				// The text the model sent, as it came: it gets to see
				// what it got wrong.
				if json.Unmarshal(tc.Arguments, &args) != nil {
					return sdk.ChatCompletionMessageParamUnion{}, errcode.New(errcode.ModelInvalidRequest, "assistant tool call with bad arguments that are not a JSON string")
				}
			}
			if args == "" {
				args = "{}"
			}
			fc := &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID:       tc.ID,
				Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: w, Arguments: args},
			}
			if len(tc.Extra) > 0 {
				var fields map[string]json.RawMessage
				if json.Unmarshal(tc.Extra, &fields) != nil || fields == nil {
					return sdk.ChatCompletionMessageParamUnion{}, errcode.New(errcode.ModelInvalidRequest, "assistant tool call whose extra fields are not a JSON object")
				}
				extra := make(map[string]any, len(fields))
				for k, v := range fields {
					if slices.Contains(callFields, k) {
						continue // never in place of what is set here
					}
					extra[k] = v // raw: the bytes the server sent
				}
				if len(extra) > 0 {
					fc.SetExtraFields(extra)
				}
			}
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: fc})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return sdk.ChatCompletionMessageParamUnion{}, errcode.Errorf(errcode.ModelInvalidRequest, "unknown role %q", m.Role)
}

// providerOptions are the sampling settings a request may pass through.
type providerOptions struct {
	temperature     *float64
	topP            *float64
	reasoningEffort string
	seed            *int64
}

// parseProviderOptions reads a JSON object with the keys of
// providerOptionKeys, spelled exactly; anything else is MODEL_INVALID_REQUEST.
func parseProviderOptions(raw json.RawMessage) (providerOptions, error) {
	var o providerOptions
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return o, nil
	}
	bad := func(format string, args ...any) (providerOptions, error) {
		return providerOptions{}, errcode.Errorf(errcode.ModelInvalidRequest, format, args...)
	}
	var m map[string]json.RawMessage
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &m) != nil {
		return bad("read provider options: not a JSON object")
	}
	for k, v := range m {
		if !slices.Contains(providerOptionKeys, k) {
			return bad("read provider options: unknown key %q (known: %s)", truncate(k, 40), strings.Join(providerOptionKeys, ", "))
		}
		switch k {
		case "temperature", "top_p":
			var f float64
			if json.Unmarshal(v, &f) != nil || bytes.Equal(bytes.TrimSpace(v), []byte("null")) || math.IsNaN(f) || f < 0 {
				return bad("read provider option %s: want a non-negative number", k)
			}
			if k == "temperature" {
				o.temperature = &f
			} else {
				o.topP = &f
			}
		case "reasoning_effort":
			var s string
			if json.Unmarshal(v, &s) != nil || s == "" {
				return bad("read provider option %s: want a non-empty string", k)
			}
			o.reasoningEffort = s
		case "seed":
			var n json.Number
			v = bytes.TrimSpace(v)
			if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) || json.Unmarshal(v, &n) != nil {
				return bad("read provider option %s: want an integer", k)
			}
			i, err := n.Int64()
			if err != nil {
				return bad("read provider option %s: want an integer", k)
			}
			o.seed = &i
		}
	}
	return o, nil
}

func (o providerOptions) apply(p *sdk.ChatCompletionNewParams) {
	if o.temperature != nil {
		p.Temperature = sdk.Float(*o.temperature)
	}
	if o.topP != nil {
		p.TopP = sdk.Float(*o.topP)
	}
	if o.reasoningEffort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(o.reasoningEffort)
	}
	if o.seed != nil {
		p.Seed = sdk.Int(*o.seed)
	}
}
