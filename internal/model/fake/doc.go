// Package fake is the scripted model: a model.Model that answers the n-th
// request with the n-th step of a script, and the built-in demo model.
//
// A script is a JSON array (DESIGN §11), read strictly by Parse or Load: an
// unknown key, a key in the wrong case, a wrong type, deltas that do not
// concatenate to the content, an unknown finish reason or error code are all
// MODEL_INVALID_CONFIG. Each step is
//
//	{"content": "…", "deltas": ["…", "…"],
//	 "toolCalls": [{"id": "c1", "name": "fs.read", "arguments": {"path": "x"}}],
//	 "usage": {"promptTokens": 10, "completionTokens": 5},
//	 "finishReason": "tool_calls", "delayMs": 200, "delayBetweenMs": 10}
//
// and streams, in this order: the deltas (the content as one delta when
// deltas is absent; nothing when the content is empty), every tool call as
// one ChunkToolCall, one ChunkCompletion, then io.EOF. finishReason defaults
// to tool_calls when there are tool calls, else stop; usage.totalTokens is
// promptTokens + completionTokens. delayMs waits before the first chunk,
// delayBetweenMs between two chunks.
//
// Test-only fields script broken or slow streams:
//
//   - "error": "MODEL_…" — Stream returns that coded error at once.
//   - "hang": true — after the deltas, Recv blocks until the context is
//     canceled or the stream closed, then fails with MODEL_ABORTED.
//   - "omitCompletion": true — the stream ends with io.EOF and no completion.
//   - "chunks": [{"delta": "x"}, {"toolCall": {…}}, {"completion": {…}},
//     {"retry": {…}}, {"error": "MODEL_…"}] — an explicit ordered list that
//     replaces content, deltas, toolCalls, usage and finishReason (setting
//     both is an error), to script invalid orders such as text after a tool
//     call. A completion chunk is taken literally (its totalTokens too, when
//     given); a retry chunk has attempt, code and optionally delayMs and
//     message; an error chunk ends the stream with that code.
//
// Ordering guarantees: requests are answered in arrival order, one step
// each; every request is recorded, deep-copied, before it is answered
// (Requests, and RequestsJSON in model.MarshalCanonical form). A Model is
// safe for concurrent use; one Stream is read by one goroutine, and Close
// may be called concurrently with Recv to abort it.
//
// Codes returned: MODEL_INVALID_CONFIG (a bad script), MODEL_INVALID_REQUEST
// (a request that cannot be recorded canonically), RUNTIME_MODEL_STREAM_INVALID
// (a request past the end of the script), MODEL_ABORTED (the context was
// canceled or the stream closed), MODEL_TIMEOUT (the context's deadline
// passed), and whatever MODEL_* code a step scripts.
//
// The demo model (NewDemo) needs no script: it reads the conversation and,
// after each new user message, lists the workspace, reads the README,
// writes HARNESS_DEMO.md, runs ls -la, asks for the diff and explains how
// to configure a real provider. It is what `make run` uses when no provider
// is configured.
package fake
