// Package openai is the model port's adapter for OpenAI-compatible Chat
// Completions servers (OpenAI, llama.cpp, vLLM, Ollama), streaming, over
// net/http with wire types of its own.
//
// It used github.com/openai/openai-go/v3 for the request and chunk types
// and to send the request; nothing else of it was used (retries, server-
// sent events and errors were already this package's). That SDK's
// initialization and generated code weighed on every process, whatever
// the command: 18 MB of the 40 MB binary, about 6 MiB of resident memory
// in a one-answer run (24.3 against 18.3 MiB) and 10 MiB in a long TUI
// session. The wire types here read only the fields this package uses,
// each kept raw until read, so that a field of the wrong type is told
// apart from one that is absent or null (MODEL_INVALID_RESPONSE).
//
// What it owns:
//
//   - The wire request. A model.Request is translated into a detached
//     copy: the system prompt first, then the messages in order (tool
//     results carry their tool_call_id), the advertised tools, max_tokens
//     (max_completion_tokens when a reasoning effort is asked for: local
//     servers all accept max_tokens, OpenAI's reasoning models only the
//     other), stream_options.include_usage, and the provider options
//     temperature, top_p, reasoning_effort and seed. The request itself
//     is never modified.
//   - Tool-name aliases (DESIGN §10). A name outside [A-Za-z0-9_-] goes on
//     the wire as "harness_" + lowercase hex of its UTF-8 bytes
//     (fs.read → harness_66732e72656164), in the tools and in earlier
//     assistant tool calls alike; an aliased tool's description starts
//     with its real name. Names are translated back on the way in, so
//     chunks, events, policy and the store only see dotted names.
//   - Stream assembly. Text and reasoning deltas (reasoning_content or
//     reasoning; a server sending both sends the same text, read once) are
//     passed on as they arrive, and the completion names the field the
//     reasoning came in (ReasoningField); tool calls are assembled by
//     their index and handed out only once the response is complete ("" as
//     arguments becomes {}; text that is not JSON is kept as a JSON string
//     with BadArguments set, for the runtime to answer with TOOL_BAD_INPUT;
//     a call without an id gets a generated call_…; fields beside id, type
//     and function, such as Gemini's extra_content, are kept in Extra). The
//     last finish reason sent wins (relays repeat it on every chunk) and is
//     mapped onto the port's (stop with tool calls means tool_calls;
//     content_filter is error). The last usage report wins, Groq's
//     x_groq.usage when there is no other; a total above prompt +
//     completion is kept (reasoning tokens). When the server sends no
//     usage, it is estimated as request bytes / 3 and response bytes / 3
//     rounded up, and marked Estimated.
//   - What goes back. An assistant message's reasoning is sent back on the
//     assistant messages of a turn (the messages between two user messages)
//     in which the model called a tool, and only there: DeepSeek's thinking
//     mode and Kimi refuse such a tool loop without it, vLLM and llama.cpp
//     chat templates that interleave thinking read it, and no server needs
//     it elsewhere. It goes under the field it came in: reasoning_content
//     (DeepSeek, Kimi, llama.cpp, older vLLM) or reasoning (vLLM since it
//     renamed the field, which reads only that name back); reasoning
//     recorded before the field was kept goes as reasoning_content. Groq
//     and Cerebras send reasoning but refuse either field in a request
//     (400 "property 'reasoning_content' is unsupported"): a 400 or 422
//     that names a reasoning field the request carries (and does not call
//     it missing or required) gets the request once more without it,
//     announced by a ChunkRetry (code MODEL_HTTP_ERROR, no pause, not
//     counted against MaxRetries), and the Client leaves that field out of
//     its later requests. A call's Extra fields are
//     echoed on it (never in place of id, type or function); BadArguments
//     go back as the text the model sent.
//   - The request: POST {base}/chat/completions with the JSON body built
//     once per request (again only when a refused reasoning field is taken
//     off), Content-Type and Accept, a User-Agent of harness/<version>, and
//     the key as a bearer token; no OPENAI_* variable is read.
//   - Chunks: choices[0].delta's content, refusal, reasoning fields and
//     tool calls (index, id, type, function, and any other field kept as
//     the call's Extra), finish_reason, usage and x_groq. Strings keep
//     bytes that are not UTF-8 as they came, so a character cut between two
//     chunks is whole again once joined; integers written as 12.0 count.
//   - Server-sent events, read by a decoder of its own: an "error:" field
//     (llama.cpp) or an "error" event, a bare JSON line (Ollama's
//     mid-stream errors), an event cut off by the end of the body.
//   - HTTP and transport failures, translated here and only here, with a
//     bounded retry policy.
//   - Configuration checks (New) and the user's config file
//     (LoadConfigFile); the caller resolves flags > environment > file,
//     this package reads no environment variable.
//   - DefaultSystemPrompt.
//   - The server's model list (Client.Models, GET {base}/models): the
//     ids and, where the server states it, each model's context window
//     (vLLM max_model_len, n_ctx, context_length; llama.cpp's
//     n_ctx_train apart). One attempt, no retry.
//   - The context window a server runs a model with (Client.Window, for
//     doctor and the window default): the list's, else — only when the
//     base URL is on loopback or the list shows llama.cpp's or Ollama's
//     marks, and the model is listed without a window — llama.cpp's GET
//     /props (default_generation_settings.n_ctx) or Ollama's POST /api/show
//     (num_ctx, else model_info's <arch>.context_length), else llama.cpp's
//     n_ctx_train; each one attempt bounded by Config.Timeout, with where
//     the window was read.
//
// Ordering guarantees: a stream yields zero or more ChunkRetry (only before
// any text), then ChunkDelta in arrival order, then every ChunkToolCall in
// index order, then exactly one ChunkCompletion whose content is the
// concatenation of the deltas, then io.EOF. Any failure ends the stream
// with one sticky error instead. Recv is called by one goroutine; Close may
// be called concurrently with it and aborts it.
//
// Retries: 429, 5xx and transport failures (but a TLS handshake that
// failed: a certificate, or a plain http server) are retried up to MaxRetries
// times (default 5), only while nothing of the response reached the
// caller, after a pause that doubles from RetryBaseDelay up to 10 s, or
// what the server's Retry-After / retry-after-ms asks for up to 60 s (a
// longer request, or a pause past the context's deadline, ends the stream
// with the error at once). Each retry is announced by a ChunkRetry before
// the pause; the runtime turns it into an event.
//
// Timeouts: Config.Timeout bounds each attempt until the first byte of the
// response body, and then every silence between two bytes; the context
// bounds the whole stream. MODEL_TIMEOUT names the base URL and what the
// server did: no answer within the timeout, or a stream that stalled after
// so many bytes.
//
// Secrets: the key is sent only in the Authorization header. Error messages
// are built here, never copied raw from a foreign error: the key, anything
// shaped like sk-…, bearer tokens, Authorization headers and URL query
// values are redacted from every text that goes into one, causes included.
//
// Codes returned: MODEL_INVALID_CONFIG (New, LoadConfigFile),
// MODEL_INVALID_REQUEST (Stream: an alias over 64 characters or colliding,
// a tool listed twice, unknown or mistyped provider options, a malformed
// message), MODEL_AUTH_ERROR (401, 403), MODEL_RATE_LIMITED (429),
// MODEL_CONTEXT_LENGTH (400, 413 or 422 whose text says the request is
// over the context window; not retried here, the runtime compacts),
// MODEL_HTTP_ERROR (other 4xx, 5xx, an error inside the stream in any of
// the shapes servers use: {"error":…}, [{"error":…}], {"object":"error"},
// an error: field; the server's message is kept),
// MODEL_TRANSPORT_ERROR (the connection failed or broke), MODEL_TIMEOUT
// (Config.Timeout or the context's deadline), MODEL_ABORTED (the context
// was canceled or the stream closed), MODEL_INVALID_RESPONSE (an event that
// is not a chunk, a stream cut off with neither finish reason nor [DONE],
// [DONE] before any chunk, an HTML page where the stream should be, a tool
// call without a name, an unknown harness_ alias, a second choice, more
// than 128 tool calls or 16 MiB).
package openai
