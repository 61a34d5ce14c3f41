package tools

import (
	"context"
	"strconv"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
)

const diffDescription = `Show every change made in the workspace so far, as one unified patch against ` +
	`the project as it was when the session started (applicable with git apply). Takes no arguments: {}. ` +
	`Returns {patch}; an empty patch means nothing changed. Binary and large files are carried whole ` +
	`("GIT binary patch"). Lines starting "` + workspace.LeftOutPrefix + `" come first and name, with why, ` +
	`files that changed but that the patch cannot carry (they will not reach the user's project). A patch ` +
	`over 128 KiB, or over the share of the context window one result may take, fails with TOOL_OUTPUT_LIMIT, ` +
	`naming the changed files: read those with fs.read instead.`

// DiffInput is the input of git.diff: always {}.
type DiffInput struct{}

// diffOutput is the output of git.diff.
type diffOutput struct {
	Patch string `json:"patch"`
}

var diffTool = &tool{
	name:        "git.diff",
	description: diffDescription,
	fields:      nil,
	build:       func(values) any { return DiffInput{} },
	check: func(in any) (*ResultError, bool) {
		_, ok := in.(DiffInput)
		return nil, ok
	},
	subject: func(any) string { return "" },
	run: func(ctx context.Context, ws workspace.Workspace, _ any) (any, error) {
		patch, err := ws.Diff(ctx)
		if err != nil {
			return nil, err
		}
		out := diffOutput{Patch: patch}
		b, err := model.MarshalCanonical(out)
		if limit := maxOutput(ctx); err == nil && len(b) > limit {
			left := ""
			if l := strings.Join(workspace.LeftOut(patch), "; "); l != "" {
				left, _ = cut("; left out of the patch: "+l, 4096, true)
			}
			return nil, toolError(errcode.ToolOutputLimit,
				"git.diff: the patch is %d bytes, %s; read the changed files with fs.read instead: %s%s",
				len(b), overWhat(limit), changedFiles(patch), left)
		}
		return out, nil
	},
}

// changedFiles names the files of a unified patch, from its ---/+++ lines,
// in order and without repeats; at most 50 names and 4 KiB are shown.
func changedFiles(patch string) string {
	const maxNames, maxBytes = 50, 4096
	var names []string
	seen := map[string]bool{}
	more := 0
	for line := range strings.Lines(patch) {
		var name string
		switch {
		case strings.HasPrefix(line, "+++ b/"):
			name = line[len("+++ b/"):]
		case strings.HasPrefix(line, "--- a/"):
			name = line[len("--- a/"):]
		case strings.HasPrefix(line, "diff --git a/"):
			// A binary patch has no ---/+++ lines: "diff --git a/P b/P".
			rest := strings.TrimRight(line[len("diff --git a/"):], "\r\n")
			if p := rest[:max((len(rest)-3)/2, 0)]; rest == p+" b/"+p {
				name = p
			}
		default:
			continue
		}
		name = strings.TrimRight(name, "\r\n")
		if i := strings.IndexByte(name, '\t'); i >= 0 {
			name = name[:i] // a timestamp after the name
		}
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		if len(names) < maxNames {
			names = append(names, name)
		} else {
			more++
		}
	}
	s := strings.Join(names, ", ")
	if len(s) > maxBytes {
		s, _ = cut(s, maxBytes, true)
		s += "…"
	}
	if more > 0 {
		s += " and " + strconv.Itoa(more) + " more"
	}
	if s == "" {
		s = "(no file names found in the patch)"
	}
	return s
}
