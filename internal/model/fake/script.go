package fake

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// maxScriptBytes bounds a script file.
const maxScriptBytes = 16 << 20

// maxDelayMs bounds delayMs and delayBetweenMs (ten minutes).
const maxDelayMs = 10 * 60 * 1000

// Step answers one model request. The zero Step answers with an empty
// completion (finish reason stop).
type Step struct {
	Content      string           // the whole assistant text
	ToolCalls    []model.ToolCall // streamed after the text, one chunk each
	Usage        Usage            // reported in the completion
	FinishReason string           // "" means tool_calls when ToolCalls is set, else stop
	Deltas       []string         // nil means Content as one delta; must concatenate to Content
	DelayMs      int              // wait before the first chunk
	// DelayBetweenMs waits between two chunks.
	DelayBetweenMs int

	// Test-only fields.

	Error          errcode.Code // Stream fails at once with this MODEL_* code
	Hang           bool         // after the deltas, block until aborted
	OmitCompletion bool         // end with io.EOF and no completion
	Chunks         []Chunk      // explicit chunks replacing the fields above
}

// Usage is a step's token count. TotalTokens may only be set in an explicit
// completion chunk; elsewhere the total is always prompt + completion.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      *int // nil: prompt + completion
	Estimated        bool // only in an explicit completion chunk
}

func (u Usage) model() model.Usage {
	total := u.PromptTokens + u.CompletionTokens
	if u.TotalTokens != nil {
		total = *u.TotalTokens
	}
	return model.Usage{
		PromptTokens:     u.PromptTokens,
		CompletionTokens: u.CompletionTokens,
		TotalTokens:      total,
		Estimated:        u.Estimated,
	}
}

// Chunk is one explicit chunk of a scripted stream; exactly one field is set.
type Chunk struct {
	Delta      *string
	ToolCall   *model.ToolCall
	Completion *Completion
	Retry      *model.Retry
	Error      errcode.Code // ends the stream with this MODEL_* code
}

// Completion is an explicit completion chunk, sent exactly as written.
type Completion struct {
	Content      string
	ToolCalls    []model.ToolCall
	FinishReason string
	Usage        Usage
}

// Load reads a script file (see Parse).
func Load(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errcode.Wrap(errcode.ModelInvalidConfig, "fake: open script", err)
	}
	defer func() { _ = f.Close() }() // only read: a failed close loses nothing
	data, err := io.ReadAll(io.LimitReader(f, maxScriptBytes+1))
	if err != nil {
		return nil, errcode.Wrap(errcode.ModelInvalidConfig, "fake: read script", err)
	}
	if len(data) > maxScriptBytes {
		return nil, errcode.Errorf(errcode.ModelInvalidConfig, "read script: larger than %d bytes", maxScriptBytes)
	}
	return Parse(data)
}

// Parse reads a script: a JSON array of steps, decoded strictly.
func Parse(data []byte) (*Model, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, errcode.New(errcode.ModelInvalidConfig, "parse script: not a JSON array")
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(trimmed, &raws); err != nil {
		return nil, errcode.Errorf(errcode.ModelInvalidConfig, "parse script: %v", err)
	}
	steps := make([]Step, len(raws))
	for i, raw := range raws {
		if err := decodeStep(raw, &steps[i]); err != nil {
			return nil, errcode.Errorf(errcode.ModelInvalidConfig, "parse step %d: %s", i+1, errcode.Message(err))
		}
		if err := steps[i].validate(); err != nil {
			return nil, errcode.Errorf(errcode.ModelInvalidConfig, "check step %d: %s", i+1, errcode.Message(err))
		}
	}
	return New(steps), nil
}

// object decodes data as one JSON object whose keys are all in allowed,
// spelled exactly (encoding/json alone would match keys case-insensitively).
func object(data []byte, what string, allowed ...string) (map[string]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errcode.Errorf(errcode.ModelInvalidConfig, "decode %s: not a JSON object", what)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return nil, errcode.Errorf(errcode.ModelInvalidConfig, "decode %s: %v", what, err)
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			return nil, errcode.Errorf(errcode.ModelInvalidConfig, "decode %s: unknown key %q", what, k)
		}
	}
	return m, nil
}

// value decodes one field; null is refused so that a key is either absent
// or meaningful.
func value(raw json.RawMessage, key string, v any) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return errcode.Errorf(errcode.ModelInvalidConfig, "decode %s: null", key)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errcode.Errorf(errcode.ModelInvalidConfig, "decode %s: %v", key, err)
	}
	return nil
}

func decodeStep(data []byte, s *Step) error {
	m, err := object(data, "step", "content", "toolCalls", "usage", "finishReason", "deltas",
		"delayMs", "delayBetweenMs", "error", "hang", "omitCompletion", "chunks")
	if err != nil {
		return err
	}
	for k, raw := range m {
		switch k {
		case "content":
			err = value(raw, k, &s.Content)
		case "toolCalls":
			s.ToolCalls, err = decodeToolCalls(raw)
		case "usage":
			s.Usage, err = decodeUsage(raw, false)
		case "finishReason":
			err = value(raw, k, &s.FinishReason)
		case "deltas":
			err = value(raw, k, &s.Deltas)
			if err == nil && s.Deltas == nil {
				s.Deltas = []string{}
			}
		case "delayMs":
			err = value(raw, k, &s.DelayMs)
		case "delayBetweenMs":
			err = value(raw, k, &s.DelayBetweenMs)
		case "error":
			err = value(raw, k, &s.Error)
		case "hang":
			err = value(raw, k, &s.Hang)
		case "omitCompletion":
			err = value(raw, k, &s.OmitCompletion)
		case "chunks":
			s.Chunks, err = decodeChunks(raw)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func decodeToolCalls(raw json.RawMessage) ([]model.ToolCall, error) {
	var raws []json.RawMessage
	if err := value(raw, "toolCalls", &raws); err != nil {
		return nil, err
	}
	calls := make([]model.ToolCall, len(raws))
	for i, r := range raws {
		c, err := decodeToolCall(r)
		if err != nil {
			return nil, err
		}
		calls[i] = c
	}
	return calls, nil
}

func decodeToolCall(raw json.RawMessage) (model.ToolCall, error) {
	var c model.ToolCall
	m, err := object(raw, "tool call", "id", "name", "arguments")
	if err != nil {
		return c, err
	}
	if err := requireKeys(m, "tool call", "id", "name"); err != nil {
		return c, err
	}
	if err := value(m["id"], "id", &c.ID); err != nil {
		return c, err
	}
	if err := value(m["name"], "name", &c.Name); err != nil {
		return c, err
	}
	if a, ok := m["arguments"]; ok {
		c.Arguments = json.RawMessage(bytes.Clone(bytes.TrimSpace(a)))
	}
	return c, nil
}

func requireKeys(m map[string]json.RawMessage, what string, keys ...string) error {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return errcode.Errorf(errcode.ModelInvalidConfig, "decode %s: missing %q", what, k)
		}
	}
	return nil
}

// decodeUsage reads a usage object; literal allows totalTokens and
// estimated (explicit completion chunks only).
func decodeUsage(raw json.RawMessage, literal bool) (Usage, error) {
	var u Usage
	keys := []string{"promptTokens", "completionTokens"}
	if literal {
		keys = append(keys, "totalTokens", "estimated")
	}
	m, err := object(raw, "usage", keys...)
	if err != nil {
		return u, err
	}
	for k, r := range m {
		switch k {
		case "promptTokens":
			err = value(r, k, &u.PromptTokens)
		case "completionTokens":
			err = value(r, k, &u.CompletionTokens)
		case "totalTokens":
			var t int
			err = value(r, k, &t)
			u.TotalTokens = &t
		case "estimated":
			err = value(r, k, &u.Estimated)
		}
		if err != nil {
			return u, err
		}
	}
	return u, nil
}

func decodeChunks(raw json.RawMessage) ([]Chunk, error) {
	var raws []json.RawMessage
	if err := value(raw, "chunks", &raws); err != nil {
		return nil, err
	}
	chunks := make([]Chunk, len(raws))
	for i, r := range raws {
		m, err := object(r, "chunk", "delta", "toolCall", "completion", "retry", "error")
		if err != nil {
			return nil, err
		}
		if len(m) != 1 {
			return nil, errcode.Errorf(errcode.ModelInvalidConfig, "decode chunk %d: want exactly one key, got %d", i+1, len(m))
		}
		c := &chunks[i]
		for k, r := range m {
			switch k {
			case "delta":
				var d string
				err = value(r, k, &d)
				c.Delta = &d
			case "toolCall":
				var tc model.ToolCall
				tc, err = decodeToolCall(r)
				c.ToolCall = &tc
			case "completion":
				c.Completion, err = decodeCompletion(r)
			case "retry":
				c.Retry, err = decodeRetry(r)
			case "error":
				err = value(r, k, &c.Error)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return chunks, nil
}

func decodeCompletion(raw json.RawMessage) (*Completion, error) {
	m, err := object(raw, "completion", "content", "toolCalls", "finishReason", "usage")
	if err != nil {
		return nil, err
	}
	c := &Completion{}
	for k, r := range m {
		switch k {
		case "content":
			err = value(r, k, &c.Content)
		case "toolCalls":
			c.ToolCalls, err = decodeToolCalls(r)
		case "finishReason":
			err = value(r, k, &c.FinishReason)
		case "usage":
			c.Usage, err = decodeUsage(r, true)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

func decodeRetry(raw json.RawMessage) (*model.Retry, error) {
	m, err := object(raw, "retry", "attempt", "code", "delayMs", "message")
	if err != nil {
		return nil, err
	}
	if err := requireKeys(m, "retry", "attempt", "code"); err != nil {
		return nil, err
	}
	r := &model.Retry{}
	for k, v := range m {
		switch k {
		case "attempt":
			err = value(v, k, &r.Attempt)
		case "code":
			err = value(v, k, &r.Code)
		case "delayMs":
			err = value(v, k, &r.DelayMs)
		case "message":
			err = value(v, k, &r.Message)
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

// validate checks a step; Parse calls it for every step and Stream again
// for steps built in Go.
func (s *Step) validate() error {
	bad := func(format string, args ...any) error {
		return errcode.Errorf(errcode.ModelInvalidConfig, format, args...)
	}
	if s.DelayMs < 0 || s.DelayMs > maxDelayMs || s.DelayBetweenMs < 0 || s.DelayBetweenMs > maxDelayMs {
		return bad("check delays: want 0..%d ms", maxDelayMs)
	}
	if s.Error != "" {
		if !isModelCode(s.Error) {
			return bad("check error: %q is not a MODEL_* code", s.Error)
		}
		if s.Content != "" || s.ToolCalls != nil || s.Deltas != nil || s.Chunks != nil || s.Hang ||
			s.OmitCompletion || s.FinishReason != "" || s.Usage != (Usage{}) || s.DelayMs != 0 || s.DelayBetweenMs != 0 {
			return bad("check error step: error stands alone")
		}
		return nil
	}
	if err := checkUsage(s.Usage); err != nil {
		return err
	}
	if s.Chunks != nil {
		if s.Content != "" || s.ToolCalls != nil || s.Deltas != nil || s.FinishReason != "" ||
			s.Usage != (Usage{}) || s.OmitCompletion {
			return bad("check chunks: chunks replace content, deltas, toolCalls, usage, finishReason and omitCompletion")
		}
		for i, c := range s.Chunks {
			if err := c.validate(); err != nil {
				return bad("check chunk %d: %s", i+1, errcode.Message(err))
			}
		}
		return nil
	}
	if s.Deltas != nil && strings.Join(s.Deltas, "") != s.Content {
		return bad("check deltas: they do not concatenate to the content")
	}
	switch s.FinishReason {
	case "", model.FinishStop, model.FinishToolCalls, model.FinishLength, model.FinishError:
	default:
		return bad("check finishReason: unknown %q", s.FinishReason)
	}
	seen := map[string]bool{}
	for _, c := range s.ToolCalls {
		if err := checkToolCall(c); err != nil {
			return err
		}
		if seen[c.ID] {
			return bad("check tool calls: id %q used twice", c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

func (c Chunk) validate() error {
	n := 0
	if c.Delta != nil {
		n++
	}
	if c.ToolCall != nil {
		n++
		if err := checkToolCall(*c.ToolCall); err != nil {
			return err
		}
	}
	if c.Completion != nil {
		n++
		for _, tc := range c.Completion.ToolCalls {
			if err := checkToolCall(tc); err != nil {
				return err
			}
		}
	}
	if c.Retry != nil {
		n++
	}
	if c.Error != "" {
		n++
		if !isModelCode(c.Error) {
			return errcode.Errorf(errcode.ModelInvalidConfig, "check error: %q is not a MODEL_* code", c.Error)
		}
	}
	if n != 1 {
		return errcode.Errorf(errcode.ModelInvalidConfig, "check chunk: want exactly one field, got %d", n)
	}
	return nil
}

func checkToolCall(c model.ToolCall) error {
	if c.ID == "" || c.Name == "" {
		return errcode.New(errcode.ModelInvalidConfig, "check tool call: id and name are required")
	}
	if len(c.Arguments) > 0 && !json.Valid(c.Arguments) {
		return errcode.Errorf(errcode.ModelInvalidConfig, "check tool call %s: arguments are not valid JSON", c.ID)
	}
	return nil
}

func checkUsage(u Usage) error {
	if u.PromptTokens < 0 || u.CompletionTokens < 0 {
		return errcode.New(errcode.ModelInvalidConfig, "check usage: negative token count")
	}
	if u.TotalTokens != nil || u.Estimated {
		return errcode.New(errcode.ModelInvalidConfig, "check usage: totalTokens and estimated belong to explicit completion chunks")
	}
	return nil
}

func isModelCode(c errcode.Code) bool {
	return strings.HasPrefix(string(c), "MODEL_") && slices.Contains(errcode.All, c)
}

// cloneCall deep-copies a tool call, defaulting empty arguments to {}.
func cloneCall(c model.ToolCall) model.ToolCall {
	args := bytes.Clone(c.Arguments)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return model.ToolCall{ID: c.ID, Name: c.Name, Arguments: args}
}

func cloneCalls(cs []model.ToolCall) []model.ToolCall {
	if cs == nil {
		return nil
	}
	out := make([]model.ToolCall, len(cs))
	for i, c := range cs {
		out[i] = cloneCall(c)
	}
	return out
}

// cloneStep deep-copies a step so that a caller of New can reuse its slices.
func cloneStep(s Step) Step {
	out := s
	out.ToolCalls = cloneCalls(s.ToolCalls)
	out.Deltas = slices.Clone(s.Deltas)
	out.Usage = cloneUsage(s.Usage)
	if s.Chunks != nil {
		out.Chunks = make([]Chunk, len(s.Chunks))
		for i, c := range s.Chunks {
			out.Chunks[i] = cloneChunk(c)
		}
	}
	return out
}

func cloneUsage(u Usage) Usage {
	if u.TotalTokens != nil {
		t := *u.TotalTokens
		u.TotalTokens = &t
	}
	return u
}

func cloneChunk(c Chunk) Chunk {
	out := Chunk{Error: c.Error}
	if c.Delta != nil {
		d := *c.Delta
		out.Delta = &d
	}
	if c.ToolCall != nil {
		tc := cloneCall(*c.ToolCall)
		out.ToolCall = &tc
	}
	if c.Completion != nil {
		out.Completion = &Completion{
			Content:      c.Completion.Content,
			ToolCalls:    cloneCalls(c.Completion.ToolCalls),
			FinishReason: c.Completion.FinishReason,
			Usage:        cloneUsage(c.Completion.Usage),
		}
	}
	if c.Retry != nil {
		r := *c.Retry
		out.Retry = &r
	}
	return out
}
