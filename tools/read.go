package tools

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
)

const readDescription = `Read one UTF-8 text file of the workspace, an isolated copy of the project. ` +
	`path is relative to the workspace root and slash-separated, with no "..", "." or empty segments and no .git. ` +
	`Returns {path, content, size} (size in bytes). Fails for a directory (use fs.list), a binary file, ` +
	`a file over 128 KiB or over the share of the context window one result may take ` +
	`(TOOL_OUTPUT_LIMIT, naming the bound; read part of it with process.exec, e.g. ["sed","-n","1,200p",path]), ` +
	`and a symlink or hard link that may lead outside the workspace (WORKSPACE_SCOPE).`

// ReadInput is the input of fs.read.
type ReadInput struct {
	Path string `json:"path"`
}

// readOutput is the output of fs.read.
type readOutput struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Size    int    `json:"size"`
}

var readFields = []field{{
	name: "path", kind: kindString, required: true, min: 1, max: MaxPathBytes,
	desc: "File path relative to the workspace root, e.g. cmd/main.go (at most 4096 bytes).",
}}

var readTool = &tool{
	name:        "fs.read",
	description: readDescription,
	fields:      readFields,
	build:       func(v values) any { return ReadInput{Path: v["path"].(string)} },
	check: func(in any) (*ResultError, bool) {
		r, ok := in.(ReadInput)
		if !ok {
			return nil, false
		}
		return checkPathField("fs.read", readFields[0], r.Path, false), true
	},
	subject: func(in any) string { return in.(ReadInput).Path },
	run: func(ctx context.Context, ws workspace.Workspace, in any) (any, error) {
		p := in.(ReadInput).Path
		data, err := ws.ReadFile(ctx, p)
		if errcode.Of(err) == errcode.WorkspaceLimit && !errors.Is(err, workspace.ErrOpenFailed) {
			return nil, toolError(errcode.ToolOutputLimit,
				"fs.read: %s is too large to return; read part of it with process.exec", p)
		}
		if err != nil {
			return nil, err
		}
		// (>= is an equivalent mutant: a file of exactly MaxOutputBytes
		// cannot fit with its envelope either, and Execute refuses its
		// output with the same TOOL_OUTPUT_LIMIT.)
		if limit := maxOutput(ctx); len(data) > limit {
			return nil, toolError(errcode.ToolOutputLimit,
				"fs.read: %s is %d bytes, %s; read part of it with process.exec (sed -n, head, tail)",
				p, len(data), overWhat(limit))
		}
		if !utf8.Valid(data) {
			return nil, toolError(errcode.ToolExecutionFailed,
				"fs.read: %s is binary (not UTF-8 text); inspect it with process.exec (file, od)", p)
		}
		return readResult{path: p, data: data}, nil
	},
}

// readResult is fs.read's output, readOutput, written without copying the
// file into a string first and escaped at AppendCanonicalString's speed:
// a turn reads files of tens of KiB in every round.
type readResult struct {
	path string
	data []byte // valid UTF-8
}

// appendCanonical appends model.MarshalCanonical(readOutput{…}).
func (r readResult) appendCanonical(dst []byte) []byte {
	// Room for the escapes of source code, so the buffer is rarely grown.
	// (A capacity: its arithmetic's mutants change no output, equivalent.)
	dst = slices.Grow(dst, len(r.path)+len(r.data)+len(r.data)/8+48)
	dst = append(dst, `{"path":`...)
	dst = model.AppendCanonicalString(dst, r.path)
	dst = append(dst, `,"content":`...)
	dst = model.AppendCanonicalString(dst, r.data)
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendInt(dst, int64(len(r.data)), 10)
	return append(dst, '}')
}
