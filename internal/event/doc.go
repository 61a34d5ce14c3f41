// Package event owns the event envelope, the typed data of every event type
// and the one strict, canonical codec for them (DESIGN §3).
//
// # Envelope
//
// Every event is one JSON object, stored and printed byte-identical:
//
//	{"v":1,"type":"turn.started","eventId":"evt-…","at":"2026-11-29T20:41:23.123Z","actor":"kernel","data":{…}}
//
// Keys come in that order. v is Version (1). eventId is "evt-" and an id
// (NewID("evt") makes one: the prefix, a dash, a UUIDv7). at is UTC with
// exactly three fractional digits; Encode converts to UTC and truncates to
// the millisecond, and years outside 0001..9999 are rejected. actor says who
// caused the event: kernel (the runtime), user (input, steering, approvals),
// model (its output), tool (tool execution) or system (the environment:
// workspaces, forks, restores). The store adds seq and globalSeq outside the
// envelope; they are not this package's business.
//
// # Canonical form
//
// Encode writes compact JSON with HTML escaping off and no trailing newline
// (model.MarshalCanonical), data keys in the order of the DESIGN §3 table
// (struct field order), optional keys only when set, raw JSON values
// (tool.call input, tool.result output, runtime.checkpoint payload,
// toolCalls arguments) compacted. The same event always gives the same
// bytes. Decode accepts exactly the bytes Encode writes: it decodes, then
// re-encodes and compares, so a frame that would not be stored byte for byte
// is rejected even when every value in it is valid. Raw values are kept
// verbatim apart from whitespace, so escapes inside them stay as written.
//
// # Types
//
// One struct per type, named for it without the dots; Data is the value
// type (Decode returns TurnStarted, never *TurnStarted, and Encode rejects a
// pointer). Types lists them in this order:
//
//	agent.started         AgentStarted
//	turn.started          TurnStarted
//	message.completed     MessageCompleted
//	message.delta         MessageDelta
//	steering.queued       SteeringQueued
//	steering.applied      SteeringApplied
//	context.accounted     ContextAccounted
//	context.checkpoint    ContextCheckpoint
//	context.compacted     ContextCompacted
//	runtime.checkpoint    RuntimeCheckpoint
//	model.request         ModelRequest
//	model.response        ModelResponse
//	tool.call             ToolCall
//	policy.decision       PolicyDecision
//	permission.requested  PermissionRequested
//	permission.resolved   PermissionResolved
//	tool.result           ToolResult
//	budget.warning        BudgetWarning
//	workspace.lifecycle   WorkspaceLifecycle
//	turn.completed        TurnCompleted
//	agent.stopped         AgentStopped
//
// Additions beyond DESIGN §3:
//
//	input.queued      InputQueued     runId, sessionId, turnId, messageId, content (1..262144 chars):
//	                                  a message queued for the next turn
//	input.withdrawn   InputWithdrawn  runId, sessionId, turnId, messageId: a queued next-turn input
//	                                  or pending steering removed before it applied
//	model.retry       ModelRetry      requestId, attempt (from 1), code, delayMs, message?, runId,
//	                                  sessionId, turnId: the model adapter retrying a failed attempt
//	                                  (message: what failed, when the adapter said)
//	session.forked    SessionForked   sessionId, fromSessionId, fromTurnId?, abandonedTurnId?:
//	                                  a session continued from a point of another (or its own) history;
//	                                  no fromTurnId: from nothing (the other session finished no turn)
//	settings.changed  SettingsChanged sessionId, changed (1+ of model, baseUrl, contextWindow, compactAt,
//	                                  compactTail, budgetTokens, approve, maxTokens), model, baseUrl?,
//	                                  windowTokens, thresholdTokens, tailMessages, reserveTokens,
//	                                  budgetTokens, maxTokens, approve?: the settings in force from the next
//	                                  model request on, changed by the user (window, threshold, tail and
//	                                  reserve all 0: no compaction)
//	workspace.recovered WorkspaceRecovered sessionId, turnId, container?, patch?, discarded?: the patch
//	                                  of a turn whose end-of-turn diff failed, recovered from the
//	                                  container its workspace was kept in, or given up (discarded)
//	session.rewound   SessionRewound  sessionId, fromTurnId?, fromTurn, toTurnId, toTurn, patch?, undo?: the
//	                                  session went back to the end of turn toTurn (numbers count
//	                                  turn.started from 1); the terminal checkpoint that follows is that
//	                                  turn's, patch its workspace patch; undo: back to before the last rewind
//	patch.applied     PatchApplied    sessionId, turnId, root, sha256, files [{path, added, deleted}], patch,
//	                                  reverse?: turn turnId's workspace patch applied to the host tree at
//	                                  root (reverse: reverted there); sha256 of the patch's bytes
//	tool.output       ToolOutput      callId, stream (stdout, stderr), offset, text, truncated?: output of
//	                                  a running process.exec as it came, coalesced and bounded per call
//	                                  (64 KiB); for the screen and the audit, not the model
//	permission.revoked PermissionRevoked sessionId, action: the user took back the grant of a tool for
//	                                  the session (a permission.resolved of scope session); its calls
//	                                  are asked about again
//	job.started       JobStarted      sessionId, turnId?, callId?, jobId, argv, cwd?: a background job
//	                                  started (process.exec with background true) by that call
//	job.exited        JobExited       sessionId, turnId?, jobId, argv, reason (exited, stopped, closed,
//	                                  lost, ended), exitCode?, bytes, tail?: a background job ended, how,
//	                                  with its status when known, what it printed in all and its last
//	                                  2 KiB at most; never restarted
//
// workspace.lifecycle also carries skipped? {count, reasons [{reason,
// count}], paths}: what the copy left out (SkippedFiles), when anything was,
// and mounts? [{what, source, target, readOnly}]: what of the host the
// sandbox sees besides the copy (toolchains, dependency caches and folders,
// the build cache volume), and storage? (disk, tmpfs): where a Docker
// workspace keeps /workspace and $HOME — the container's own layer with a
// size quota, or memory volumes of the host.
//
// permission.requested also carries the question's subject, so a front end
// asks from it alone and pairs it with no tool.call: input? (the call's
// input, as its tool.call records it) and, for fs.write, patch? and lines?
// {added, deleted}: the change the write would make against the workspace
// file's current contents, computed as the write's tool.result patch is
// (tools.Preview). lines is absent when the file could not be read; zero
// lines with no patch mean the contents are the file's own.
//
// # Rules
//
// Beyond the key schema (exact keys, required keys present and not null,
// JSON kinds, integers where the field is a count), each type's data is
// checked:
//
//   - IDs are non-empty; so are model and tool names, actions, summaries and
//     tool error messages. Only eventId has a prefix rule; other IDs come
//     from several sources (the model's tool-call ids among them).
//   - Counts, tokens, revisions, durations and message.delta sequence are
//     >= 0; model.retry attempt is >= 1; the version fields of
//     context.checkpoint and runtime.checkpoint and model.request
//     contextVersion are DataVersion (1).
//   - steering.queued and input.queued content has 1..MaxContentRunes runes.
//   - steering.applied messageIds holds at least one ID and none twice.
//   - workspace.lifecycle skipped: count >= 1 is the sum of its reasons'
//     counts (each >= 1), reasons are among SkipReasons, each once and in
//     that order, paths hold 1..min(count, MaxSkippedPaths) non-empty paths.
//   - Enums: role (user, assistant, tool), finishReason (stop, tool_calls,
//     length, error), effect (allow, ask, deny), scope (once, run, session),
//     decision (allow, deny), status of turn.completed and agent.stopped
//     (completed, failed, canceled, budget_exceeded), metric (steps,
//     tokens, tool_calls), backend (local, docker), phase (opened,
//     disposed, restored), algorithm (utf8-upper-bound/v1,
//     bytes-per-token/v1 (older logs), char-mix/v1, reported-usage/v1), actor.
//   - message.completed: an assistant message requires requestId and
//     finishReason and may carry toolCalls; a tool message requires name and
//     toolCallId; neither kind may carry the other's fields, and a user
//     message carries none of them. Tool calls have a non-empty id (unique in
//     the message), a name, and arguments that are not null.
//   - context.checkpoint tail messages have a model role (system included),
//     toolCalls only on assistant messages, and toolCallId and name exactly
//     on tool messages.
//   - runtime.checkpoint payload is a JSON object; tool.call input may be any
//     JSON value but null.
//   - tool.result has error exactly when ok is false, and patch and lines
//     only when it is true; permission.requested input, when present, is
//     not null, and patch and lines come only with action fs.write. turn.completed requires
//     errorCode when the status is failed or budget_exceeded and forbids it
//     when completed. Error codes (tool.result error.code, turn.completed
//     errorCode, model.retry code) are upper-case letters, digits and
//     underscores; membership in internal/errcode is not checked, so a log
//     written by a newer Harness stays readable.
//   - policy.decision and permission.* action is the canonical (dotted) tool
//     name, not checked against the five tools: a call to an unknown tool is
//     still recorded before it fails with TOOL_NOT_FOUND.
//   - Usage totals are not cross-checked: model.response records what the
//     provider reported.
//
// # Codes
//
// Encode and Decode return *errcode.Error values with these codes; messages
// name the field path (data.toolCalls[0].id):
//
//   - EVENT_NOT_OBJECT: not valid UTF-8, not one JSON object, data after it.
//   - EVENT_UNKNOWN_KEY: a key the envelope or the data (or an object nested
//     in it) does not have, matched case-sensitively.
//   - EVENT_MISSING_FIELD: a required key absent or null, or a key the rest
//     of the value requires (requestId of an assistant message).
//   - EVENT_VERSION: v is not 1.
//   - EVENT_UNKNOWN_TYPE: a type outside the catalogue.
//   - EVENT_INVALID_FIELD: a duplicate key, a value of the wrong JSON kind,
//     out of range or outside its enum, a forbidden key, Data that is not
//     the value type for Type.
//   - EVENT_NON_CANONICAL: valid, but not the bytes Encode would write.
//
// Decode documents the order of the checks; the first failing one is
// reported.
package event
