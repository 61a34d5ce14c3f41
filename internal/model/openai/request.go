package openai

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// callFields are the keys of a wire tool call that this package sets; a
// call's opaque Extra fields never replace them.
var callFields = []string{"id", "type", "function"}

// providerOptionKeys are the keys a request's ProviderOptions may carry.
var providerOptionKeys = []string{"temperature", "top_p", "reasoning_effort", "seed"}

// wireRequest is one request translated for the wire: detached from the
// model.Request it came from, with tool names aliased, and its JSON body.
type wireRequest struct {
	params wireParams
	body   []byte // the JSON body, as sent
	names  *aliases
	// sent are the reasoning fields the assistant messages carry, each
	// with the indexes of the messages (in params.Messages) that carry it.
	sent map[string][]int
}

// wireParams is the body of a streamed Chat Completions request: the
// fields this adapter sets, each left out when unset.
type wireParams struct {
	Model               string          `json:"model"`
	Messages            []wireMsg       `json:"messages"`
	Tools               []wireToolDef   `json:"tools,omitempty"`
	MaxTokens           *int64          `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
	Seed                *int64          `json:"seed,omitempty"`
	Stream              bool            `json:"stream"`
	StreamOptions       wireStreamUsage `json:"stream_options"`
}

type wireStreamUsage struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireMsg is one message of any role. Content is always sent but on an
// assistant message that only calls tools; the reasoning fields only on
// the assistant messages that carry reasoning back.
type wireMsg struct {
	Role             model.Role `json:"role"`
	Content          *string    `json:"content,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	ToolCalls        []wireCall `json:"tool_calls,omitempty"`
	ReasoningContent *string    `json:"reasoning_content,omitempty"`
	Reasoning        *string    `json:"reasoning,omitempty"`
}

// reasoningField points at the field of m named field.
func (m *wireMsg) reasoningField(field string) **string {
	if field == fieldReasoning {
		return &m.Reasoning
	}
	return &m.ReasoningContent
}

// wireCall is an assistant message's tool call, with the opaque fields
// the server sent beside id, type and function (Gemini's extra_content).
type wireCall struct {
	ID        string
	Name      string
	Arguments string
	Extra     map[string]json.RawMessage // never holds a key of callFields
}

// MarshalJSON writes id, type and function, then the extra fields in key
// order, their values as the server sent them.
func (c wireCall) MarshalJSON() ([]byte, error) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	b, err := encodeJSON(struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}{c.ID, "function", fn{c.Name, c.Arguments}})
	if err != nil || len(c.Extra) == 0 {
		return b, err
	}
	b = b[:len(b)-1]
	for _, k := range slices.Sorted(maps.Keys(c.Extra)) {
		key, err := encodeJSON(k)
		if err != nil {
			return nil, err
		}
		b = append(append(append(append(b, ','), key...), ':'), c.Extra[k]...)
	}
	return append(b, '}'), nil
}

// wireToolDef is one advertised function tool.
type wireToolDef struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// encodeJSON is json.Marshal without escaping <, > and & (the text goes
// to a model, not into HTML), and without a trailing newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encode sets w.body from w.params.
func (w *wireRequest) encode() error {
	body, err := encodeJSON(w.params)
	if err != nil {
		return errcode.Wrap(errcode.ModelInvalidRequest, "openai: encode request", err)
	}
	w.body = body
	return nil
}

// buildRequest translates req. Reasoning goes back under the field it
// came in, except the fields in omit (those the server refused). Everything
// it rejects is MODEL_INVALID_REQUEST.
func buildRequest(req model.Request, defaultModel string, omit ...string) (*wireRequest, error) {
	names := newAliases()
	p := wireParams{Model: defaultModel, Stream: true, StreamOptions: wireStreamUsage{IncludeUsage: true}}
	if req.Model != "" {
		p.Model = req.Model
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
		p.Messages = append(p.Messages, wireMsg{Role: model.RoleSystem, Content: &req.System})
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
			*msg.reasoningField(field) = &m.Reasoning
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
		n := int64(req.MaxTokens)
		if opts.reasoningEffort != "" {
			p.MaxCompletionTokens = &n
		} else {
			p.MaxTokens = &n
		}
	}

	w := &wireRequest{params: p, names: names, sent: sent}
	if err := w.encode(); err != nil {
		return nil, err
	}
	return w, nil
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
		*out.params.Messages[i].reasoningField(field) = nil
	}
	out.sent = maps.Clone(w.sent)
	delete(out.sent, field)
	if err := out.encode(); err != nil {
		return nil, err
	}
	return &out, nil
}

func wireTool(t model.ToolSpec, names *aliases) (wireToolDef, error) {
	w, err := names.add(t.Name)
	if err != nil {
		return wireToolDef{}, err
	}
	fn := wireFunction{Name: w, Description: t.Description}
	if w != t.Name {
		// The alias means nothing to the model; the description carries
		// the real name, which the system prompt uses.
		fn.Description = strings.TrimSpace(t.Name + ": " + t.Description)
	}
	if len(bytes.TrimSpace(t.Parameters)) > 0 {
		// Values stay raw, so numbers and key order reach the wire exactly
		// as written (compacted).
		var schema map[string]json.RawMessage
		if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema == nil {
			return wireToolDef{}, errcode.Errorf(errcode.ModelInvalidRequest,
				"advertise tool %q: parameters are not a JSON object", t.Name)
		}
		fn.Parameters = t.Parameters
	}
	return wireToolDef{Type: "function", Function: fn}, nil
}

func wireMessage(m model.Message, names *aliases) (wireMsg, error) {
	switch m.Role {
	case model.RoleSystem, model.RoleUser:
		return wireMsg{Role: m.Role, Content: &m.Content}, nil
	case model.RoleTool:
		if m.ToolCallID == "" {
			return wireMsg{}, errcode.New(errcode.ModelInvalidRequest, "tool message without a tool call id")
		}
		return wireMsg{Role: m.Role, Content: &m.Content, ToolCallID: m.ToolCallID}, nil
	case model.RoleAssistant:
		a := wireMsg{Role: m.Role}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content = &m.Content
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" {
				return wireMsg{}, errcode.New(errcode.ModelInvalidRequest, "assistant tool call without an id")
			}
			w, err := names.add(tc.Name)
			if err != nil {
				return wireMsg{}, err
			}
			args := strings.TrimSpace(string(tc.Arguments))
			if tc.BadArguments {
				// The text the model sent, as it came: it gets to see
				// what it got wrong.
				if json.Unmarshal(tc.Arguments, &args) != nil {
					return wireMsg{}, errcode.New(errcode.ModelInvalidRequest, "assistant tool call with bad arguments that are not a JSON string")
				}
			}
			if args == "" {
				args = "{}"
			}
			fc := wireCall{ID: tc.ID, Name: w, Arguments: args}
			if len(tc.Extra) > 0 {
				var fields map[string]json.RawMessage
				if json.Unmarshal(tc.Extra, &fields) != nil || fields == nil {
					return wireMsg{}, errcode.New(errcode.ModelInvalidRequest, "assistant tool call whose extra fields are not a JSON object")
				}
				for _, k := range callFields {
					delete(fields, k) // never in place of what is set here
				}
				if len(fields) > 0 {
					fc.Extra = fields // raw: the bytes the server sent
				}
			}
			a.ToolCalls = append(a.ToolCalls, fc)
		}
		return a, nil
	}
	return wireMsg{}, errcode.Errorf(errcode.ModelInvalidRequest, "unknown role %q", m.Role)
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

func (o providerOptions) apply(p *wireParams) {
	p.Temperature, p.TopP, p.ReasoningEffort, p.Seed = o.temperature, o.topP, o.reasoningEffort, o.seed
}
