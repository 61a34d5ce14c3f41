// Package model is the model port: the request the runtime sends, and the
// stream of text deltas, reasoning deltas, tool calls and one completion it
// gets back.
//
// Adapters: model/fake (scripted, for tests and demos) and model/openai
// (Chat Completions over HTTP, with its own wire types). Tool names in this package are the
// canonical dotted names (fs.read); an adapter that must rename them on the
// wire does so in its own detached copy and reverses it on the way in.
//
// A Request has a canonical JSON form (field order as declared, no HTML
// escaping): the runtime stores it in checkpoints and rebuilds it byte for
// byte, and the scripted model records what it received in the same form.
package model

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
)

// Role of a message.
type Role string

// Roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the conversation.
type Message struct {
	ID         string     `json:"id,omitempty"` // msg-…, the message.completed messageId
	Role       Role       `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`  // assistant only
	ToolCallID string     `json:"toolCallId,omitempty"` // tool only
	Name       string     `json:"name,omitempty"`       // tool only: the tool's name
	// Reasoning is the text a reasoning model produced before its answer
	// (assistant only). Adapters send it back where the server requires
	// it (DeepSeek's thinking mode, on messages with tool calls).
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningField names where the provider sent Reasoning (for
	// model/openai the delta field: reasoning_content or reasoning), so an
	// adapter sends it back under the name that server reads. Empty for
	// reasoning recorded before it was kept.
	ReasoningField string `json:"reasoningField,omitempty"`
}

// ToolCall is one call the model asked for. Arguments is the JSON the model
// produced; when that was not JSON, BadArguments is set and Arguments holds
// the text as a JSON string: the runtime answers the call with
// TOOL_BAD_INPUT, and adapters send the text back as it came. The runtime
// also keeps JSON null (which the log has no value for) and arguments over
// their bound (as a note of their size) that way.
type ToolCall struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments"`
	BadArguments bool            `json:"badArguments,omitempty"`
	// Extra holds opaque per-call fields a provider sent beside id, type
	// and function, as one compact JSON object (Gemini's
	// extra_content.google.thought_signature); adapters echo them on the
	// next request.
	Extra json.RawMessage `json:"extra,omitempty"`
}

// ToolSpec is what is advertised to the model for one tool.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema object
}

// Request is one model request.
type Request struct {
	RequestID       string          `json:"requestId"`
	Model           string          `json:"model"`
	System          string          `json:"system,omitempty"`
	Messages        []Message       `json:"messages"`
	Tools           []ToolSpec      `json:"tools,omitempty"`
	MaxTokens       int             `json:"maxTokens,omitempty"`
	ProviderOptions json.RawMessage `json:"providerOptions,omitempty"`
}

// Usage is what a response cost. TotalTokens is at least PromptTokens +
// CompletionTokens; it is more when the provider counts reasoning tokens
// apart from the completion (xAI), and the total is what budgets charge.
type Usage struct {
	PromptTokens     int  `json:"promptTokens"`
	CompletionTokens int  `json:"completionTokens"`
	TotalTokens      int  `json:"totalTokens"`
	ReasoningTokens  int  `json:"reasoningTokens,omitempty"` // as reported, informational: part of the total
	Estimated        bool `json:"estimated,omitempty"`       // the provider sent none; a conservative estimate
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		TotalTokens:      u.TotalTokens + v.TotalTokens,
		ReasoningTokens:  u.ReasoningTokens + v.ReasoningTokens,
		Estimated:        u.Estimated || v.Estimated,
	}
}

// Valid reports whether the counts are non-negative and the total covers
// prompt and completion.
func (u Usage) Valid() bool {
	return u.PromptTokens >= 0 && u.CompletionTokens >= 0 && u.ReasoningTokens >= 0 &&
		u.TotalTokens >= u.PromptTokens+u.CompletionTokens
}

// Finish reasons.
const (
	FinishStop      = "stop"
	FinishToolCalls = "tool_calls"
	FinishLength    = "length"
	FinishError     = "error"
)

// Completion closes a stream: the whole content, the reasoning, the tool
// calls, why it stopped and the usage.
type Completion struct {
	Content   string `json:"content"`
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningField is where the provider sent Reasoning (Message.ReasoningField).
	ReasoningField string     `json:"reasoningField,omitempty"`
	ToolCalls      []ToolCall `json:"toolCalls,omitempty"`
	FinishReason   string     `json:"finishReason"`
	Usage          Usage      `json:"usage"`
}

// ChunkKind says which field of a Chunk is set.
type ChunkKind int

// Chunk kinds.
const (
	ChunkDelta      ChunkKind = iota + 1 // Delta: a piece of assistant text
	ChunkToolCall                        // ToolCall: one complete tool call
	ChunkCompletion                      // Completion: the last chunk
	ChunkRetry                           // Retry: the adapter is retrying a failed attempt
	ChunkReasoning                       // Delta: a piece of the model's reasoning, before its answer
)

// Chunk is one item of a stream.
type Chunk struct {
	Kind       ChunkKind
	Delta      string // ChunkDelta: text; ChunkReasoning: reasoning
	ToolCall   *ToolCall
	Completion *Completion
	Retry      *Retry
}

// Retry reports that an attempt failed with a retryable code and the adapter
// will try again after Delay milliseconds. Only sent before any text or tool
// call of the response was streamed. Message says what failed, in the
// failed attempt's words (errcode.Message); it may be empty.
type Retry struct {
	Attempt int    `json:"attempt"`
	Code    string `json:"code"`
	DelayMs int    `json:"delayMs"`
	Message string `json:"message,omitempty"`
}

// Stream yields chunks until a ChunkCompletion, then io.EOF. Errors carry
// MODEL_* codes (errcode). Close releases the connection and may be called
// at any time, also concurrently with Recv to abort it.
type Stream interface {
	Recv() (Chunk, error)
	Close() error
}

// Model starts streamed requests. The context bounds the whole stream:
// canceling it aborts Recv with MODEL_ABORTED.
type Model interface {
	Name() string
	Stream(ctx context.Context, req Request) (Stream, error)
}

// MarshalCanonical returns v as compact JSON with no HTML escaping and no
// trailing newline: the one byte form the runtime stores and compares.
func MarshalCanonical(v any) ([]byte, error) {
	// The encoder writes into a reused buffer, and the result is copied
	// out at its exact size: a fresh buffer for every event would be grown
	// (allocated, zeroed and copied) to each event's size, which for tool
	// results of tens of KiB cost more than the encoding.
	b := canonicalBuffers.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= 1<<20 {
			b.Reset()
			canonicalBuffers.Put(b)
		}
	}()
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// canonicalBuffers are MarshalCanonical's encoding buffers; one over 1 MiB
// is left to the collector rather than kept.
var canonicalBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
