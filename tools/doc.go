// Package tools owns the five tools the model acts through, and nothing
// else: their names, model-facing descriptions and JSON schemas, the strict
// decoding of their arguments, and the bounds on their outputs.
//
// The tools are, in this order, fs.read, fs.list, fs.write, process.exec and
// git.diff (All, ModelSpecs). There is no second, hidden set. Each tool's
// description lives beside its code (read.go, list.go, …); its input fields
// are declared once, and that one table produces the schema the provider
// advertises, drives the decoder and re-validates typed input in Execute.
//
// # Flow
//
// The runtime calls Parse on the model's raw arguments, records the Call
// (tool.call), asks its policy about Call.Subject, and then calls Execute.
// Parse is pure. Execute validates the input again (a Call built by hand
// gets the same checks), then, for the two mutating tools (fs.write and
// process.exec), checks workspace.Attested before anything else touches
// the workspace: on a local workspace, or on any wrapper, embedding type or
// look-alike of a Docker workspace, the call fails with
// WORKSPACE_ISOLATION_REQUIRED and the workspace is never called.
//
// # Strict decoding
//
// Arguments must be exactly one JSON object, valid UTF-8, with nothing but
// whitespace after it. Keys match field names exactly (encoding/json alone
// would match them case-insensitively and drop unknown ones); a repeated key
// is refused; a required field may not be null (an optional field set to
// null counts as absent); integers are written as integers (no fraction, no
// exponent); strings may not hold an unpaired UTF-16 surrogate escape (which
// encoding/json would silently turn into U+FFFD). A shell-style call such as
// {"cmd":"ls -la"} or argv given as a string is refused, never interpreted.
// Every refusal is TOOL_BAD_INPUT and its message names the field; a path or
// cwd that breaks the path rules of workspace.CheckPath is WORKSPACE_PATH.
//
// # Bounds (DESIGN §5)
//
// path and cwd 1..4096 bytes ("." only for fs.list and cwd); fs.write
// contents UTF-8 of at most 131072 bytes; argv 1..128 strings of at most
// 8192 bytes, no NUL; timeoutMs 1..600000, default 120000. Any serialized
// output over 128 KiB, or over the smaller bound the runtime passes for a
// small context window (WithMaxOutput), is TOOL_OUTPUT_LIMIT. Within that,
// the tools choose:
// fs.list returns at most 2000 entries (with total and truncated, so a large
// tree still yields a useful answer); process.exec asks the workspace for
// at most 48 KiB per stream and, should escaping still push the result over
// the limit, shortens the larger stream further (the process ran, so its
// exit code must reach the model); git.diff over the limit fails and names
// the changed files so the model can read them instead; fs.read of a binary
// (non-UTF-8) file is TOOL_EXECUTION_FAILED.
//
// # Outputs and errors
//
// Outputs are canonical compact JSON (model.MarshalCanonical):
//
//	fs.read       {path, content, size}
//	fs.list       {path, entries, total, truncated?}
//	fs.write      {path, bytes}
//	process.exec  {exitCode, stdout, stderr, timedOut?, stdoutTruncated?, stderrTruncated?, note?}
//	              background start, status, output, stop: {jobId, argv, cwd?, state, exitCode?, reason?,
//	              bytes, offset, output, skipped?, next, note?}; action list: {jobs: [{jobId, argv, …}]}
//	git.diff      {patch}
//
// A failed tool is a Result with a code; the model sees it. Codes:
// TOOL_NOT_FOUND, TOOL_BAD_INPUT, TOOL_CANCELED (the context ended before or
// during the call), TOOL_EXECUTION_FAILED, TOOL_OUTPUT_LIMIT,
// WORKSPACE_ISOLATION_REQUIRED, WORKSPACE_PATH, and the workspace's own
// WORKSPACE_SCOPE, WORKSPACE_NOT_FOUND, WORKSPACE_LIMIT, WORKSPACE_BUSY.
// Execute returns a Go error as well only when the workspace itself failed
// (WORKSPACE_CONTAINER_FAILED, WORKSPACE_DISPOSED, or any code of an open
// that failed in the background: workspace.ErrOpenFailed) or was nil
// (INTERNAL); the runtime ends the turn on those. An uncoded workspace error becomes
// TOOL_EXECUTION_FAILED with a generic message, so no raw cause reaches the
// model.
//
// This package imports model, workspace and internal/errcode; never runtime,
// tui or dockerws.
package tools
