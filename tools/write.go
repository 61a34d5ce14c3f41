package tools

import (
	"context"

	"github.com/aymanbagabas/go-udiff"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

const writeDescription = `Create or replace one file of the workspace, an isolated copy of the project ` +
	`(the developer's files change only when they apply the final patch). ` +
	`path is relative to the workspace root, with no "..", "." or empty segments and no .git; ` +
	`missing parent directories are created. contents is the whole new file, UTF-8 text of at most 131072 bytes. ` +
	`Returns {path, bytes}. Needs the isolated Docker workspace: on a read-only workspace it fails ` +
	`with WORKSPACE_ISOLATION_REQUIRED and nothing is written.`

// WriteInput is the input of fs.write.
type WriteInput struct {
	Path     string `json:"path"`
	Contents string `json:"contents"`
}

// writeOutput is the output of fs.write.
type writeOutput struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
	// change is the unified diff from the previous contents, lines its
	// size (not encoded: they go to the record, not to the model).
	change string
	lines  *LineCounts
}

func (o writeOutput) patch() (string, *LineCounts) { return o.change, o.lines }

// MaxPatchBytes bounds the diff an fs.write keeps for its record; a
// larger one is left out, its line counts kept.
const MaxPatchBytes = 256 << 10

// writePatch is the unified diff of a write from old to new contents ("" when
// equal or larger than MaxPatchBytes) and the lines it adds and deletes.
func writePatch(path string, old []byte, existed bool, contents string) (string, *LineCounts) {
	from := "a/" + path
	if !existed {
		from = "/dev/null"
	}
	prev := string(old)
	u, err := udiff.ToUnifiedDiff(from, "b/"+path, prev, udiff.Lines(prev, contents), udiff.DefaultContextLines)
	if err != nil {
		return "", nil // edits from udiff.Lines are consistent: not reached
	}
	n := &LineCounts{}
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				n.Added++
			case udiff.Delete:
				n.Deleted++
			}
		}
	}
	p := u.String()
	if len(p) > MaxPatchBytes {
		p = ""
	}
	return p, n
}

var writeFields = []field{{
	name: "path", kind: kindString, required: true, min: 1, max: MaxPathBytes,
	desc: "File path relative to the workspace root (at most 4096 bytes).",
}, {
	name: "contents", kind: kindString, required: true, min: 0, max: MaxWriteBytes,
	desc: "The complete new contents of the file, UTF-8 text of at most 131072 bytes.",
}}

var writeTool = &tool{
	name:        "fs.write",
	description: writeDescription,
	mutates:     true,
	fields:      writeFields,
	build: func(v values) any {
		return WriteInput{Path: v["path"].(string), Contents: v["contents"].(string)}
	},
	check: func(in any) (*ResultError, bool) {
		w, ok := in.(WriteInput)
		if !ok {
			return nil, false
		}
		if rerr := checkPathField("fs.write", writeFields[0], w.Path, false); rerr != nil {
			return rerr, true
		}
		return checkString("fs.write", writeFields[1], w.Contents), true
	},
	subject: func(in any) string { return in.(WriteInput).Path },
	run: func(ctx context.Context, ws workspace.Workspace, in any) (any, error) {
		w := in.(WriteInput)
		// The previous contents, for the record's diff: the screen counts
		// the change against the file as it was, not as the model saw it.
		old, existed, known := priorContents(ctx, ws, w.Path)
		if err := ws.WriteFile(ctx, w.Path, []byte(w.Contents)); err != nil {
			return nil, err
		}
		out := writeOutput{Path: w.Path, Bytes: len(w.Contents)}
		if known {
			out.change, out.lines = writePatch(w.Path, old, existed, w.Contents)
		}
		return out, nil
	},
}

// priorContents reads a file a write replaces: its contents, whether it
// existed, and whether that is known (false when the read failed another
// way than "not found").
func priorContents(ctx context.Context, ws workspace.Workspace, path string) (old []byte, existed, known bool) {
	old, err := ws.ReadFile(ctx, path)
	existed = err == nil
	return old, existed, existed || errcode.Of(err) == errcode.WorkspaceNotFound
}

// Preview is the change c would make, for the question asked before it
// runs: for fs.write, the unified diff against the workspace file's
// current contents and the lines it adds and deletes, computed as the
// write's own record computes them (writePatch), so the question and the
// result show one diff. Lines is nil for another tool, when the file
// cannot be read (or ws is nil), and for a write that creates an empty
// file (no change to show); zero counts with no patch mean the contents
// are the file's own. The patch is "" when larger than MaxPatchBytes.
// Preview only reads.
func Preview(ctx context.Context, ws workspace.Workspace, c Call) (patch string, lines *LineCounts) {
	w, ok := c.Input.(WriteInput)
	if c.Tool != "fs.write" || !ok || ws == nil {
		return "", nil
	}
	old, existed, known := priorContents(ctx, ws, w.Path)
	if !known || (!existed && w.Contents == "") {
		return "", nil
	}
	return writePatch(w.Path, old, existed, w.Contents)
}
