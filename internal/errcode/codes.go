package errcode

// Every code, grouped by the boundary that returns it. Each doc line says who
// returns it, whether retrying can help and what to do.
const (
	// Internal: anything uncoded; a bug. Not retryable. Report it.
	Internal Code = "INTERNAL"

	// RuntimeInvalidInput: runtime; a request to the runtime is malformed
	// (empty prompt, a second active turn, a reused turn ID). Fix the call.
	RuntimeInvalidInput Code = "RUNTIME_INVALID_INPUT"
	// RuntimeRunExists: runtime; a run with this ID is already known. Use a new ID.
	RuntimeRunExists Code = "RUNTIME_RUN_EXISTS"
	// RuntimeRunNotFound: runtime; no run with this ID in this process.
	RuntimeRunNotFound Code = "RUNTIME_RUN_NOT_FOUND"
	// RuntimeRunTerminal: reserved; the runtime no longer returns it (text
	// sent to a canceled or completing turn waits and starts the next turn).
	RuntimeRunTerminal Code = "RUNTIME_RUN_TERMINAL"
	// RuntimeEventAppendFailed: runtime; the store refused or failed an append;
	// the turn ends. Check the store; the log holds everything acknowledged.
	RuntimeEventAppendFailed Code = "RUNTIME_EVENT_APPEND_FAILED"
	// RuntimeModelStreamInvalid: runtime; the model stream broke a rule (text
	// after a tool call, a reused call ID, a missing completion). Not retryable as is.
	RuntimeModelStreamInvalid Code = "RUNTIME_MODEL_STREAM_INVALID"
	// RuntimeModelTimeout: runtime; a model round passed its deadline. Retryable.
	RuntimeModelTimeout Code = "RUNTIME_MODEL_TIMEOUT"
	// RuntimeBudgetExceeded: runtime; a step, token or tool-call budget ran
	// out. Raise the budget or start a new session.
	RuntimeBudgetExceeded Code = "RUNTIME_BUDGET_EXCEEDED"
	// RuntimeContextOverflow: runtime; the next request cannot fit the window,
	// even after compaction. Raise the window or shorten the input.
	RuntimeContextOverflow Code = "RUNTIME_CONTEXT_OVERFLOW"
	// RuntimeSummaryFailed: runtime; the compaction summary was empty or its
	// round failed; nothing was committed. Retryable.
	RuntimeSummaryFailed Code = "RUNTIME_SUMMARY_FAILED"
	// RuntimeInvalidMessageState: runtime; the message history is inconsistent
	// (a tool result without its call). A bug or a corrupted log.
	RuntimeInvalidMessageState Code = "RUNTIME_INVALID_MESSAGE_STATE"
	// RuntimeCheckpointVersion: runtime; a checkpoint of an unknown version.
	// Use a Harness that knows it.
	RuntimeCheckpointVersion Code = "RUNTIME_CHECKPOINT_VERSION"
	// RuntimeCheckpointInvalid: runtime; a checkpoint failed strict parsing.
	// Not retryable; the session can be forked from an earlier one.
	RuntimeCheckpointInvalid Code = "RUNTIME_CHECKPOINT_INVALID"
	// RuntimeCheckpointInterrupted: runtime; the last turn never reached a
	// terminal checkpoint. Resume with --fork; nothing is replayed.
	RuntimeCheckpointInterrupted Code = "RUNTIME_CHECKPOINT_INTERRUPTED"
	// RuntimeRoundLimit: runtime; a turn reached its limit of model rounds
	// (--max-rounds) with the model still calling tools. Not retryable as
	// is: send a follow-up to go on, or raise --max-rounds.
	RuntimeRoundLimit Code = "RUNTIME_ROUND_LIMIT"
	// RuntimeLoopDetected: runtime; the model made the same tool call with
	// the same arguments and got the same result several times in a row,
	// or its calls went round in a cycle (the same few calls with the same
	// results over and over). Not retryable as is: send a follow-up that
	// changes its course.
	RuntimeLoopDetected Code = "RUNTIME_LOOP_DETECTED"

	// ToolNotFound: tools; the model named a tool that does not exist.
	ToolNotFound Code = "TOOL_NOT_FOUND"
	// ToolBadInput: tools; the arguments broke the tool's strict schema.
	ToolBadInput Code = "TOOL_BAD_INPUT"
	// ToolPolicyDenied: tools; the policy denied the call.
	ToolPolicyDenied Code = "TOOL_POLICY_DENIED"
	// ToolPermissionDenied: tools; the user (or no resolver) denied the call.
	ToolPermissionDenied Code = "TOOL_PERMISSION_DENIED"
	// ToolCanceled: tools; the turn was canceled while the tool ran.
	ToolCanceled Code = "TOOL_CANCELED"
	// ToolExecutionFailed: tools; the tool could not do its work (a missing file).
	ToolExecutionFailed Code = "TOOL_EXECUTION_FAILED"
	// ToolOutputLimit: tools; the serialized output passed 128 KiB, or the
	// share of the context window one result may take (tools.WithMaxOutput).
	ToolOutputLimit Code = "TOOL_OUTPUT_LIMIT"
	// WorkspaceIsolationRequired: tools, workspace; a write or a process was
	// asked of a workspace that is not an attested Docker workspace. Nothing ran.
	WorkspaceIsolationRequired Code = "WORKSPACE_ISOLATION_REQUIRED"
	// WorkspacePath: workspace; a path that is absolute, escapes, or names .git.
	WorkspacePath Code = "WORKSPACE_PATH"
	// WorkspaceScope: workspace; a path resolves outside the workspace (a symlink).
	WorkspaceScope Code = "WORKSPACE_SCOPE"
	// WorkspaceLimit: workspace; a file, byte or output limit was passed.
	WorkspaceLimit Code = "WORKSPACE_LIMIT"
	// WorkspaceNotFound: workspace; the file, directory or image does not exist.
	WorkspaceNotFound Code = "WORKSPACE_NOT_FOUND"
	// WorkspaceBusy: workspace; another operation holds the workspace. Retryable.
	WorkspaceBusy Code = "WORKSPACE_BUSY"
	// WorkspaceContainerFailed: dockerws; the Docker daemon or container failed.
	WorkspaceContainerFailed Code = "WORKSPACE_CONTAINER_FAILED"
	// WorkspaceCredentialInput: dockerws; the project holds a credential-like
	// path; it is never copied. Exclude it explicitly.
	WorkspaceCredentialInput Code = "WORKSPACE_CREDENTIAL_INPUT"
	// WorkspaceDisposed: workspace; the workspace was disposed.
	WorkspaceDisposed Code = "WORKSPACE_DISPOSED"
	// WorkspacePermission: workspace; the sandbox user may not read or
	// write the path (its mode bits say so): a tool error the model can
	// act on (chmod).
	WorkspacePermission Code = "WORKSPACE_PERMISSION"
	// WorkspaceMassDelete: app; a patch would delete most of the project
	// and the deletion was not confirmed (--allow-mass-delete).
	WorkspaceMassDelete Code = "WORKSPACE_MASS_DELETE"

	// SessNotFound: store; no such session, event or checkpoint.
	SessNotFound Code = "SESS_NOT_FOUND"
	// SessInvalidRecord: store; a record is malformed, too large, or names a
	// cursor past the last committed event. Not retryable.
	SessInvalidRecord Code = "SESS_INVALID_RECORD"
	// SessClosed: store, runtime; the store or session is closed (the
	// runtime: a command or record after Session.Close). Open it again.
	SessClosed Code = "SESS_CLOSED"
	// SessEventConflict: store; an event ID already stored with other bytes or
	// in another session. Not retryable.
	SessEventConflict Code = "SESS_EVENT_CONFLICT"
	// SessInvalidCursor: store; a read cursor below -1 or a bad page size.
	SessInvalidCursor Code = "SESS_INVALID_CURSOR"
	// SessCheckpointConflict: store; a stale expected revision or a cursor
	// going backwards. Reload and retry.
	SessCheckpointConflict Code = "SESS_CHECKPOINT_CONFLICT"
	// SessOwnershipLost: store; another owner holds the session now. Stop writing.
	SessOwnershipLost Code = "SESS_OWNERSHIP_LOST"
	// SessSchemaVersion: store; the database was written by a newer Harness.
	SessSchemaVersion Code = "SESS_SCHEMA_VERSION"
	// SessBusy: store; another live process holds the session. Wait, or take over explicitly.
	SessBusy Code = "SESS_BUSY"
	// SessDiskFull: store; the disk (or the database's size limit) is full,
	// so a write could not be stored. Free space and retry.
	SessDiskFull Code = "SESS_DISK_FULL"
	// SessReadOnly: store; the store file, its directory or its file system
	// is read-only: sessions can be listed and read, not written.
	SessReadOnly Code = "SESS_READ_ONLY"
	// SessProjectMissing: app; the project directory a session recorded is
	// gone, so its workspace cannot be rebuilt. Restore the directory, or
	// fork the session from inside the project it should work on.
	SessProjectMissing Code = "SESS_PROJECT_MISSING"
	// SessPatchConflict: app; the workspace patch a session recorded no
	// longer applies to its project tree (a file it changes was changed
	// since), so its workspace cannot be rebuilt. Restore the file the
	// message names (harness diff ID shows the patch), or start anew.
	SessPatchConflict Code = "SESS_PATCH_CONFLICT"
	// SessTurnNotFound: app; harness rewind (or /rewind) named a turn the
	// session does not have (a number past its turns, an unknown turn ID),
	// or --undo found no rewind to undo. Nothing changed; the turns are
	// listed by `harness rewind ID` with no TURN.
	SessTurnNotFound Code = "SESS_TURN_NOT_FOUND"
	// SessTurnUnfinished: app; a rewind to a turn that did not finish
	// (interrupted, or failed before its terminal checkpoint): there is no
	// state at its end to return to. Nothing changed; rewind to a finished
	// turn.
	SessTurnUnfinished Code = "SESS_TURN_UNFINISHED"
	// SessKeptWork: app; a rewind would leave behind the work of the last
	// turn, whose end-of-turn diff failed and whose files live only in a
	// kept container. Nothing changed and the container stays: recover the
	// work (`harness diff ID`, larger limits) or give it up (`harness
	// discard ID`), then rewind.
	SessKeptWork Code = "SESS_KEPT_WORK"

	// EventNotObject: event; a frame that is not one JSON object.
	EventNotObject Code = "EVENT_NOT_OBJECT"
	// EventUnknownKey: event; a key the envelope or the type's data does not have.
	EventUnknownKey Code = "EVENT_UNKNOWN_KEY"
	// EventMissingField: event; a required field is absent or null.
	EventMissingField Code = "EVENT_MISSING_FIELD"
	// EventVersion: event; an envelope version other than 1.
	EventVersion Code = "EVENT_VERSION"
	// EventUnknownType: event; a type that is not in the catalogue.
	EventUnknownType Code = "EVENT_UNKNOWN_TYPE"
	// EventInvalidField: event; a field of the wrong type or out of range.
	EventInvalidField Code = "EVENT_INVALID_FIELD"
	// EventNonCanonical: event; a frame that decodes but is not in canonical
	// form (key order, spacing, number or time format), so it could not be
	// stored byte-identical.
	EventNonCanonical Code = "EVENT_NON_CANONICAL"

	// ModelInvalidConfig: model; missing or bad provider settings.
	ModelInvalidConfig Code = "MODEL_INVALID_CONFIG"
	// ModelInvalidRequest: model; the request cannot be sent (alias collision).
	ModelInvalidRequest Code = "MODEL_INVALID_REQUEST"
	// ModelInvalidResponse: model; the provider sent something unusable.
	ModelInvalidResponse Code = "MODEL_INVALID_RESPONSE"
	// ModelAuthError: model; 401 or 403. Check the key.
	ModelAuthError Code = "MODEL_AUTH_ERROR"
	// ModelRateLimited: model; 429. Retryable after a pause.
	ModelRateLimited Code = "MODEL_RATE_LIMITED"
	// ModelHTTPError: model; another HTTP failure. 5xx is retryable.
	ModelHTTPError Code = "MODEL_HTTP_ERROR"
	// ModelContextLength: model; the server refused the request as longer
	// than its context window (400 context_length_exceeded, or the
	// messages of vLLM, llama.cpp and OpenAI). The runtime compacts and
	// retries once; otherwise compact, or lower --context-window.
	ModelContextLength Code = "MODEL_CONTEXT_LENGTH"
	// ModelTimeout: model; the provider did not answer in time. Retryable.
	ModelTimeout Code = "MODEL_TIMEOUT"
	// ModelTransportError: model; the connection failed. Retryable.
	ModelTransportError Code = "MODEL_TRANSPORT_ERROR"
	// ModelAborted: model; the request was canceled by the caller.
	ModelAborted Code = "MODEL_ABORTED"
)

// All lists every code in declaration order; the golden test pins it.
var All = []Code{
	Internal,
	RuntimeInvalidInput, RuntimeRunExists, RuntimeRunNotFound, RuntimeRunTerminal,
	RuntimeEventAppendFailed, RuntimeModelStreamInvalid, RuntimeModelTimeout,
	RuntimeBudgetExceeded, RuntimeContextOverflow, RuntimeSummaryFailed,
	RuntimeInvalidMessageState, RuntimeCheckpointVersion, RuntimeCheckpointInvalid,
	RuntimeCheckpointInterrupted, RuntimeRoundLimit, RuntimeLoopDetected,
	ToolNotFound, ToolBadInput, ToolPolicyDenied, ToolPermissionDenied, ToolCanceled,
	ToolExecutionFailed, ToolOutputLimit, WorkspaceIsolationRequired, WorkspacePath,
	WorkspaceScope, WorkspaceLimit, WorkspaceNotFound, WorkspaceBusy,
	WorkspaceContainerFailed, WorkspaceCredentialInput, WorkspaceDisposed, WorkspacePermission,
	WorkspaceMassDelete,
	SessNotFound, SessInvalidRecord, SessClosed, SessEventConflict, SessInvalidCursor,
	SessCheckpointConflict, SessOwnershipLost, SessSchemaVersion, SessBusy, SessDiskFull, SessReadOnly,
	SessProjectMissing, SessPatchConflict, SessTurnNotFound, SessTurnUnfinished, SessKeptWork,
	EventNotObject, EventUnknownKey, EventMissingField, EventVersion, EventUnknownType,
	EventInvalidField, EventNonCanonical,
	ModelInvalidConfig, ModelInvalidRequest, ModelInvalidResponse, ModelAuthError,
	ModelRateLimited, ModelHTTPError, ModelContextLength, ModelTimeout, ModelTransportError, ModelAborted,
}
