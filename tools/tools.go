package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
)

// Bounds of DESIGN §5, and the caps this package chooses to stay inside them.
const (
	// MaxOutputBytes bounds the serialized output of every tool.
	MaxOutputBytes = 128 << 10
	// MaxPathBytes bounds path and cwd.
	MaxPathBytes = workspace.MaxPathBytes
	// MaxWriteBytes bounds fs.write contents.
	MaxWriteBytes = 131072
	// MaxArgs and MaxArgBytes bound process.exec argv.
	MaxArgs     = 128
	MaxArgBytes = 8192
	// MaxTimeoutMs is the longest process.exec timeout, and
	// DefaultTimeoutMs the one a call that names none gets: a cold build
	// and test of a real project takes minutes, not seconds.
	MaxTimeoutMs     = 600000
	DefaultTimeoutMs = 120000
	// MaxListEntries caps the entries fs.list returns.
	MaxListEntries = 2000
	// MaxStreamBytes caps each of stdout and stderr of process.exec, so
	// that both fit in MaxOutputBytes.
	MaxStreamBytes = 48 << 10
)

// Spec describes one tool as the provider advertises it.
type Spec struct {
	Name        string
	Description string          // what the model reads
	Schema      json.RawMessage // JSON Schema of the input object
	Mutates     bool            // fs.write and process.exec: need an attested workspace
}

// Call is one parsed tool call, ready for policy and Execute.
type Call struct {
	Tool    string
	Input   any    // ReadInput, ListInput, WriteInput, ExecInput or DiffInput
	Subject string // the path, or argv joined for display; "" for git.diff
}

// ResultError is the error half of a tool result, as the model sees it.
type ResultError struct {
	Code    errcode.Code `json:"code"`
	Message string       `json:"message"`
}

// Result is what one call did. Output is canonical compact JSON (see
// model.MarshalCanonical) when OK; Error is set when not.
type Result struct {
	OK       bool
	Output   json.RawMessage
	Error    *ResultError
	Duration time.Duration
	// Patch is what a successful fs.write changed, as a unified diff
	// against the file's previous contents in the workspace (not for the
	// model: the runtime records it on tool.result for the screen); ""
	// when larger than MaxPatchBytes. Lines counts that change, also when
	// Patch is left out; nil when the previous contents could not be read.
	Patch string
	Lines *LineCounts
}

// LineCounts is the size of a change in lines.
type LineCounts struct{ Added, Deleted int }

// patcher is an output that knows the change its call made.
type patcher interface {
	patch() (string, *LineCounts)
}

// tool is one entry of the fixed table.
type tool struct {
	name        string
	description string
	mutates     bool
	fields      []field
	schema      json.RawMessage
	// build turns decoded values into the typed input.
	build func(values) any
	// check validates a typed input: nil if in has the tool's input type and
	// follows every rule; the bool is false when in has another type.
	check func(in any) (*ResultError, bool)
	// subject renders the typed input for policy and display.
	subject func(in any) string
	// run performs the call. An error is either a workspace error or an
	// *errcode.Error the tool made; Execute turns both into results.
	run func(ctx context.Context, ws workspace.Workspace, in any) (any, error)
}

// table holds the five tools in their contractual order.
var table = []*tool{readTool, listTool, writeTool, execTool, diffTool}

func init() {
	for _, t := range table {
		t.schema = schema(t.fields)
	}
}

func lookup(name string) *tool {
	for _, t := range table {
		if t.name == name {
			return t
		}
	}
	return nil
}

// All returns the five tools in order: fs.read, fs.list, fs.write,
// process.exec, git.diff. The slice and schemas are fresh copies.
func All() []Spec {
	out := make([]Spec, len(table))
	for i, t := range table {
		out[i] = Spec{Name: t.name, Description: t.description, Schema: bytes.Clone(t.schema), Mutates: t.mutates}
	}
	return out
}

// ModelSpecs returns All as the model port advertises tools.
func ModelSpecs() []model.ToolSpec {
	out := make([]model.ToolSpec, len(table))
	for i, s := range All() {
		out[i] = model.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Schema}
	}
	return out
}

// Parse strictly decodes a call's arguments. It returns TOOL_NOT_FOUND for
// a name that is not exactly one of the five, TOOL_BAD_INPUT for arguments
// that are not one JSON object matching the tool's schema (the message
// names the field), and WORKSPACE_PATH for a path or cwd that breaks the
// path rules. Parse is pure.
func Parse(name string, args json.RawMessage) (Call, *ResultError) {
	t := lookup(name)
	if t == nil {
		return Call{}, notFound(name)
	}
	vals, rerr := decodeArgs(t.name, t.fields, args)
	if rerr != nil {
		return Call{}, rerr
	}
	in := t.build(vals)
	if rerr, _ := t.check(in); rerr != nil {
		return Call{}, rerr
	}
	return Call{Tool: t.name, Input: in, Subject: t.subject(in)}, nil
}

// Execute runs c on ws. Every failure the model should see is a Result
// with an error code: TOOL_NOT_FOUND, TOOL_BAD_INPUT and WORKSPACE_PATH (the
// input is validated again, so a Call built by hand gets the same checks as
// Parse), WORKSPACE_ISOLATION_REQUIRED (fs.write or process.exec on a
// workspace that is not attested; checked before the workspace is touched),
// TOOL_CANCELED (ctx done before or during the call), TOOL_OUTPUT_LIMIT,
// TOOL_EXECUTION_FAILED (also a call that passed its deadline: see
// CallDeadline), and the workspace's own WORKSPACE_* codes.
//
// Execute also returns a Go error, beside a failed Result, only when the
// workspace itself failed (WORKSPACE_CONTAINER_FAILED, WORKSPACE_DISPOSED)
// or ws is nil; the runtime ends the turn on those.
func Execute(ctx context.Context, ws workspace.Workspace, c Call) (Result, error) {
	start := time.Now()
	res, err := execute(ctx, ws, c)
	res.Duration = time.Since(start)
	return res, err
}

func execute(ctx context.Context, ws workspace.Workspace, c Call) (Result, error) {
	t := lookup(c.Tool)
	if t == nil {
		return failed(notFound(c.Tool)), nil
	}
	rerr, ok := t.check(c.Input)
	if !ok {
		return failed(&ResultError{Code: errcode.ToolBadInput,
			Message: fmt.Sprintf("%s: input of type %T belongs to another tool", t.name, c.Input)}), nil
	}
	if rerr != nil {
		return failed(rerr), nil
	}
	if t.mutates && !attested(ws) {
		return failed(&ResultError{Code: errcode.WorkspaceIsolationRequired,
			Message: t.name + " needs the isolated Docker workspace; this workspace is read-only, so nothing was done"}), nil
	}
	if ws == nil {
		err := &errcode.Error{Code: errcode.Internal, Op: "execute " + t.name, Message: "no workspace"}
		return failed(&ResultError{Code: errcode.Internal, Message: err.Message}), err
	}
	if ctx.Err() != nil {
		return failed(canceled(t.name)), nil
	}
	limit := callDeadline(t.name, c.Input)
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := t.run(rctx, ws, c.Input)
	if err != nil {
		if ctx.Err() == nil && rctx.Err() != nil {
			return failed(&ResultError{Code: errcode.ToolExecutionFailed,
				Message: fmt.Sprintf("%s did not finish within %s and was stopped", t.name, limit)}), nil
		}
		return fromError(ctx, t.name, err)
	}
	var b []byte
	if a, ok := out.(canonicalAppender); ok {
		b = a.appendCanonical(nil)
	} else if b, err = model.MarshalCanonical(out); err != nil {
		return failed(&ResultError{Code: errcode.ToolExecutionFailed, Message: t.name + ": encode output"}), nil
	}
	if limit := maxOutput(ctx); len(b) > limit {
		return failed(outputLimit(t.name, len(b), limit)), nil
	}
	res := Result{OK: true, Output: b}
	if p, ok := out.(patcher); ok {
		res.Patch, res.Lines = p.patch()
	}
	return res, nil
}

// canonicalAppender is an output that writes its own canonical encoding
// (what model.MarshalCanonical would write), faster.
type canonicalAppender interface {
	appendCanonical(dst []byte) []byte
}

// Deadlines of one call, whatever the workspace does: a call never holds
// the workspace (and the turn) longer. process.exec gets its own timeout
// plus ExecGrace for waiting its turn and for the kill and clean-up.
var (
	CallDeadline = time.Minute
	DiffDeadline = 2 * time.Minute
	ExecGrace    = time.Minute
)

func callDeadline(name string, in any) time.Duration {
	switch e := in.(type) {
	case ExecInput:
		return time.Duration(e.TimeoutMs)*time.Millisecond + ExecGrace
	case DiffInput:
		return DiffDeadline
	}
	return CallDeadline
}

// fromError turns a failure of run into a result, and into a Go error too
// when the workspace itself is gone.
func fromError(ctx context.Context, name string, err error) (Result, error) {
	if ctx.Err() != nil {
		return failed(canceled(name)), nil
	}
	code := errcode.Of(err)
	if errors.Is(err, workspace.ErrOpenFailed) {
		// The workspace never opened: nothing can work, whatever its code.
		return failed(&ResultError{Code: code, Message: errcode.Message(err)}), err
	}
	switch code {
	case errcode.WorkspaceContainerFailed, errcode.WorkspaceDisposed:
		return failed(&ResultError{Code: code, Message: errcode.Message(err)}), err
	case errcode.Internal:
		return failed(&ResultError{Code: errcode.ToolExecutionFailed, Message: name + " failed"}), nil
	}
	return failed(&ResultError{Code: code, Message: errcode.Message(err)}), nil
}

func failed(e *ResultError) Result { return Result{Error: e} }

func notFound(name string) *ResultError {
	shown := name
	if len(shown) > 64 {
		shown = strings.ToValidUTF8(shown[:64], "") + "…"
	}
	return &ResultError{Code: errcode.ToolNotFound,
		Message: fmt.Sprintf("no tool named %q; the tools are %s", shown, strings.Join(names(), ", "))}
}

func canceled(name string) *ResultError {
	return &ResultError{Code: errcode.ToolCanceled, Message: name + " was canceled"}
}

func outputLimit(name string, n, limit int) *ResultError {
	return &ResultError{Code: errcode.ToolOutputLimit,
		Message: fmt.Sprintf("%s output is %d bytes, %s", name, n, overWhat(limit))}
}

// toolError makes the *errcode.Error a tool returns from run.
func toolError(code errcode.Code, format string, args ...any) error {
	return errcode.Errorf(code, format, args...)
}

// checkPathField validates a path-like field: its bounds (TOOL_BAD_INPUT),
// then the path rules (WORKSPACE_PATH); "." passes only when dotOK.
func checkPathField(tool string, f field, p string, dotOK bool) *ResultError {
	if rerr := checkString(tool, f, p); rerr != nil {
		return rerr
	}
	if err := workspace.CheckPath(p); err != nil {
		return &ResultError{Code: errcode.Of(err), Message: tool + ": " + f.name + ": " + errcode.Message(err)}
	}
	if p == "." && !dotOK {
		return &ResultError{Code: errcode.WorkspacePath,
			Message: tool + ": " + f.name + ` "." is the workspace root, not a file`}
	}
	return nil
}

// names lists the tools in order, for messages.
func names() []string {
	out := make([]string, len(table))
	for i, t := range table {
		out[i] = t.name
	}
	return out
}

// attested is workspace.Attested, made safe for a workspace whose dynamic
// value cannot be a map key (a struct value holding a map, slice or func):
// the registry lookup would panic on it, and such a value was certainly
// never registered.
func attested(ws workspace.Workspace) bool {
	if ws == nil || !reflect.ValueOf(ws).Comparable() {
		return false
	}
	return workspace.Attested(ws)
}
