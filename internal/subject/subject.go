// Package subject is the short form of a tool call's input the front ends
// show on a call's line: a path for the file tools, the command line for
// process.exec, the input's JSON on one line otherwise. The TUI's cards
// and the headless runner's lines show a call the same way. It imports
// only the standard library, so the headless runner uses it without
// linking a terminal UI.
package subject

import (
	"encoding/json"
	"strings"
)

// Of is the short form of a call of tool with input: a path, a command
// line ("" when there is nothing to show, as for git.diff).
func Of(tool string, input json.RawMessage) string {
	switch tool {
	case "fs.read", "fs.list", "fs.write":
		var in struct {
			Path *string `json:"path"`
		}
		if json.Unmarshal(input, &in) == nil && in.Path != nil {
			return *in.Path
		}
	case "process.exec":
		var in struct {
			Argv []string `json:"argv"`
			Cwd  string   `json:"cwd"`
		}
		if json.Unmarshal(input, &in) == nil && len(in.Argv) > 0 {
			s := shellJoin(in.Argv)
			if in.Cwd != "" && in.Cwd != "." {
				s += "  (in " + in.Cwd + ")"
			}
			return s
		}
	case "git.diff":
		return ""
	}
	s := strings.Join(strings.Fields(string(input)), " ")
	if s == "{}" || s == "null" {
		return ""
	}
	return s
}

// shellJoin shows argv as a shell reader would type it; it is never run.
func shellJoin(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts[i] = strings.ReplaceAll(a, "\n", "⏎")
	}
	return strings.Join(parts, " ")
}
