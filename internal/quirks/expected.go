package quirks

import (
	"strings"
	"testing"
)

// Want is what the client must make of a recording's first response,
// written by hand from reading the file, not computed from it (a reading
// computed by code would share the mistakes of the code under test).
type Want struct {
	// Usage is the usage the server reported, as the port holds it (a
	// total below prompt + completion raised to it); nil when the server
	// reported none and an estimate is expected.
	Usage *Usage
	// Reasoning is the whole reasoning text the server streamed.
	Reasoning string
	// ContentLen and ContentPrefix describe a text answer.
	ContentLen    int
	ContentPrefix string
	// Call says response 1 asks for one tool call; CallID is its id as the
	// server sent it ("" when it sent none and one is generated).
	Call   bool
	CallID string
	// FinishReason is the port's: stop or tool_calls.
	FinishReason string
}

// Expected holds a Want for every recording in ../shared/quirks/streams,
// by file name. A recording without an entry fails the tests that replay
// it: read it and add one.
var Expected = map[string]Want{
	// Content filter results on every choice; reasoning tokens counted in
	// the usage but no reasoning text streamed.
	"azure-content-filter.sse": {
		Usage:      &Usage{Prompt: 15, Completion: 78, Total: 93, Reasoning: 64},
		ContentLen: 19, ContentPrefix: "Capital of Denmark.", FinishReason: "stop",
	},
	// 39 reasoning_content deltas before the call; usage on the finish chunk.
	"deepseek-reasoner-tool.sse": {
		Usage: &Usage{Prompt: 339, Completion: 83, Total: 422, Reasoning: 39},
		Reasoning: "The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. " +
			`Let me invoke the weather tool with the location parameter set to "San Francisco".`,
		Call: true, CallID: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", FinishReason: "tool_calls",
	},
	// Usage both in x_groq and at the top level: the same numbers.
	"groq-tool.sse": {
		Usage: &Usage{Prompt: 210, Completion: 15, Total: 225},
		Call:  true, CallID: "tk85n1k4m", FinishReason: "tool_calls",
	},
	// Usage only in x_groq.
	"groq-xgroq-usage.sse": {
		Usage: &Usage{Prompt: 18, Completion: 439, Total: 457},
		Call:  true, CallID: "call_O17Uplv4lJvD6DVdIvFFeRMw", FinishReason: "tool_calls",
	},
	// Reasoning, then the answer; finish reason and usage on the last
	// content chunk.
	"kimi-reasoning-text.sse": {
		Usage:     &Usage{Prompt: 9, Completion: 12, Total: 21, Reasoning: 7},
		Reasoning: "Thinking aloud. ", ContentLen: 6, ContentPrefix: "Hello!", FinishReason: "stop",
	},
	// The call, its finish reason and the usage in one chunk.
	"mistral-tool.sse": {
		Usage: &Usage{Prompt: 124, Completion: 22, Total: 146},
		Call:  true, CallID: "gSIMJiOkT", FinishReason: "tool_calls",
	},
	"openai-gpt4o-text.sse": {
		Usage:      &Usage{Prompt: 14, Completion: 30, Total: 44},
		ContentLen: 159, ContentPrefix: "I'm unable to provide real-time weather updates.", FinishReason: "stop",
	},
	"openai-gpt4o-tool.sse": {
		Usage: &Usage{Prompt: 44, Completion: 16, Total: 60},
		Call:  true, CallID: "call_4XzlGBLtUe9dy3GVNV4jhq7h", FinishReason: "tool_calls",
	},
	// Continuation deltas repeat "id":"": the first id stands.
	"qwen-dashscope-tool.sse": {
		Usage: &Usage{Prompt: 295, Completion: 22, Total: 317},
		Call:  true, CallID: "call_eee11723464a4b9eb8cee71d", FinishReason: "tool_calls",
	},
	// Usage on every chunk: the last one wins.
	"vllm-nim-usage-every-chunk.sse": {
		Usage: &Usage{Prompt: 226, Completion: 20, Total: 246},
		Call:  true, CallID: "chatcmpl-tool-b3b307239370432d9910d4b79b4dbbaa", FinishReason: "tool_calls",
	},
	// total_tokens 513 is not 291 + 26: the 196 reasoning tokens are
	// counted apart, and the total is kept.
	"xai-grok-tool.sse": {
		Usage:     &Usage{Prompt: 291, Completion: 26, Total: 513, Reasoning: 196},
		Reasoning: "First, the user is", Call: true, CallID: "call_55117580", FinishReason: "tool_calls",
	},
}

// Expect returns the Want of f, or fails t when the table has none.
func Expect(t testing.TB, f *File) Want {
	t.Helper()
	w, ok := Expected[f.Name]
	if !ok {
		t.Fatalf("%s has no entry in quirks.Expected: read the recording and write down what its first response must give", f.Name)
	}
	return w
}

// CheckContent reports whether content is the text answer w describes.
func (w Want) CheckContent(content string) bool {
	return len(content) == w.ContentLen && strings.HasPrefix(content, w.ContentPrefix)
}
