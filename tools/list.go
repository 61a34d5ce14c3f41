package tools

import (
	"context"
	"encoding/json"

	"github.com/harness-dev/harness/internal/workspace"
)

const listDescription = `List the regular files under a directory of the workspace, an isolated copy of the project. ` +
	`path is relative to the workspace root; "." lists the whole tree. ` +
	`Returns {path, entries, total, truncated?}: entries are sorted file paths relative to the root ` +
	`(pass them to fs.read as they are), total counts every file found. ` +
	`At most 2000 entries fit (fewer when the context window is small); when truncated is true, list a subdirectory. ` +
	`.git, directories themselves and symlinks are not listed.`

// ListInput is the input of fs.list.
type ListInput struct {
	Path string `json:"path"`
}

// listOutput is the output of fs.list.
type listOutput struct {
	Path      string   `json:"path"`
	Entries   []string `json:"entries"`
	Total     int      `json:"total"`
	Truncated bool     `json:"truncated,omitempty"`
}

var listFields = []field{{
	name: "path", kind: kindString, required: true, min: 1, max: MaxPathBytes,
	desc: `Directory relative to the workspace root; "." for the whole tree (at most 4096 bytes).`,
}}

var listTool = &tool{
	name:        "fs.list",
	description: listDescription,
	fields:      listFields,
	build:       func(v values) any { return ListInput{Path: v["path"].(string)} },
	check: func(in any) (*ResultError, bool) {
		l, ok := in.(ListInput)
		if !ok {
			return nil, false
		}
		return checkPathField("fs.list", listFields[0], l.Path, true), true
	},
	subject: func(in any) string { return in.(ListInput).Path },
	run: func(ctx context.Context, ws workspace.Workspace, in any) (any, error) {
		p := in.(ListInput).Path
		all, err := ws.List(ctx, p)
		if err != nil {
			return nil, err
		}
		return fitList(p, all, maxOutput(ctx)), nil
	},
}

// fitList keeps the first entries that fit both MaxListEntries and the
// output limit, with room to spare for the envelope.
func fitList(p string, all []string, limit int) listOutput {
	out := listOutput{Path: p, Entries: []string{}, Total: len(all)}
	base, _ := json.Marshal(listOutput{Path: p, Entries: []string{}, Total: len(all), Truncated: true})
	size := len(base)
	for _, e := range all {
		q, _ := json.Marshal(e)
		if len(out.Entries) == MaxListEntries || size+len(q)+1 > limit {
			out.Truncated = true
			break
		}
		size += len(q) + 1
		out.Entries = append(out.Entries, e)
	}
	return out
}
