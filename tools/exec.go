package tools

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/argv"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
)

const execDescription = `Run one program in the workspace, an isolated copy of the project inside a ` +
	`locked-down container with no network. argv is the program and its arguments as an array of strings ` +
	`(1..128 items, each at most 8192 bytes, no NUL); there is no shell, so pipes, redirections and globs ` +
	`are not interpreted: write ["sh","-c","..."] explicitly when you need them. ` +
	`cwd is a directory relative to the workspace root (default: the root). ` +
	`timeoutMs is 1..600000 (default 120000: enough for most builds and test runs); a process still running then is killed and timedOut is true. ` +
	`Returns {exitCode, stdout, stderr, timedOut?, stdoutTruncated?, stderrTruncated?}; each stream keeps ` +
	`at most 48 KiB, its start and its end (less when the context window is small). A non-zero exit code is a normal result. ` +
	jobsDescription + ` Needs the isolated Docker workspace: on a ` +
	`read-only workspace it fails with WORKSPACE_ISOLATION_REQUIRED and nothing runs.`

// ExecInput is the input of process.exec. Parse fills TimeoutMs with the
// default when the call leaves it out; Cwd "" means the workspace root.
//
// Background, Action, Job and Offset are the background jobs' settings
// (jobs.go): Background starts Argv as a job; Action (with no Argv) lists,
// reads or stops jobs, and then TimeoutMs is 0.
type ExecInput struct {
	Argv       []string `json:"argv,omitempty"`
	Cwd        string   `json:"cwd,omitempty"`
	TimeoutMs  int64    `json:"timeoutMs,omitempty"`
	Background bool     `json:"background,omitempty"`
	Action     string   `json:"action,omitempty"`
	Job        string   `json:"job,omitempty"`
	Offset     int64    `json:"offset,omitempty"`
}

var execFields = []field{{
	name: "argv", kind: kindStrings, min: 1, max: MaxArgs, itemMax: MaxArgBytes, noNUL: true,
	desc: `Program and arguments, e.g. ["go","test","./..."]; no shell is involved. Required unless action is given.`,
}, {
	name: "cwd", kind: kindString, min: 1, max: MaxPathBytes,
	desc: `Working directory relative to the workspace root; "." or absent for the root.`,
}, {
	name: "timeoutMs", kind: kindInt, min: 1, max: MaxTimeoutMs, def: ptr(DefaultTimeoutMs),
	desc: "Milliseconds before the process is killed, 1..600000 (default 120000); not for background jobs.",
}, {
	name: "background", kind: kindBool,
	desc: "true: start argv as a background job that keeps running after this call (a server, a watcher); the call returns after about a second with its jobId and first output.",
}, {
	name: "action", kind: kindString, min: 1, max: 16, enum: []string{JobList, JobStatus, JobOutput, JobStop},
	desc: "Manage background jobs instead of running argv: list (every job), status, output (its log from offset) or stop (the job named by job).",
}, {
	name: "job", kind: kindString, min: 1, max: MaxJobIDBytes,
	desc: "The jobId a background start returned; for action status, output and stop.",
}, {
	name: "offset", kind: kindInt, min: 0, max: MaxJobOffset,
	desc: "For action output: the byte offset of the job's log to read from (default 0; a result's next reads on).",
}}

var execTool = &tool{
	name:        "process.exec",
	description: execDescription,
	mutates:     true,
	fields:      execFields,
	build: func(v values) any {
		in := ExecInput{TimeoutMs: v["timeoutMs"].(int64)}
		in.Argv, _ = v["argv"].([]string)
		in.Cwd, _ = v["cwd"].(string)
		in.Background, _ = v["background"].(bool)
		in.Action, _ = v["action"].(string)
		in.Job, _ = v["job"].(string)
		in.Offset, _ = v["offset"].(int64)
		if in.Action != "" {
			in.TimeoutMs = 0 // a job's action runs no command
		}
		return in
	},
	check: func(in any) (*ResultError, bool) {
		e, ok := in.(ExecInput)
		if !ok {
			return nil, false
		}
		if e.Action != "" {
			return checkJobAction(e), true
		}
		if len(e.Argv) == 0 {
			return bad("process.exec", "argv", "is missing; give the program to run as an array of strings (or action to manage background jobs)"), true
		}
		if rerr := checkJobStart(e); rerr != nil {
			return rerr, true
		}
		if rerr := checkStrings("process.exec", execFields[0], e.Argv); rerr != nil {
			return rerr, true
		}
		if e.Cwd != "" {
			if rerr := checkPathField("process.exec", execFields[1], e.Cwd, true); rerr != nil {
				return rerr, true
			}
		}
		return checkInt("process.exec", execFields[2], e.TimeoutMs), true
	},
	subject: func(in any) string { return execSubject(in.(ExecInput)) },
	run: func(ctx context.Context, ws workspace.Workspace, in any) (any, error) {
		e := in.(ExecInput)
		if e.Background || e.Action != "" {
			return runJob(ctx, ws, e)
		}
		cwd := e.Cwd
		if cwd == "." {
			cwd = ""
		}
		res, err := ws.Exec(ctx, workspace.ExecRequest{
			Argv:      e.Argv,
			Cwd:       cwd,
			Timeout:   time.Duration(e.TimeoutMs) * time.Millisecond,
			MaxOutput: MaxStreamBytes,
			OnOutput:  outputOf(ctx),
		})
		if err != nil {
			return nil, err
		}
		return fitExec(res, maxOutput(ctx)), nil
	},
}

// fitExec caps each stream at MaxStreamBytes and then, while the serialized
// result is still over limit (escapes can inflate a byte sixfold), halves
// the larger stream; each cut keeps the stream's start and end
// (keepEnds), as the workspace's own cap does. The process ran, so its exit
// code must reach the model even when its output cannot.
func fitExec(r workspace.ExecResult, limit int) workspace.ExecResult {
	r.Stdout, r.StdoutTruncated = keepEnds(r.Stdout, MaxStreamBytes, r.StdoutTruncated)
	r.Stderr, r.StderrTruncated = keepEnds(r.Stderr, MaxStreamBytes, r.StderrTruncated)
	last := -1
	for {
		b, err := model.MarshalCanonical(r)
		if err != nil || len(b) <= limit || len(b) == last {
			return r // fits, or no cut makes it smaller (Execute then refuses it)
		}
		last = len(b)
		if len(r.Stdout) >= len(r.Stderr) {
			r.Stdout, r.StdoutTruncated = keepEnds(r.Stdout, len(r.Stdout)/2, true)
		} else {
			r.Stderr, r.StderrTruncated = keepEnds(r.Stderr, len(r.Stderr)/2, true)
		}
	}
}

// keepEnds keeps at most n bytes of s: its first quarter and its end
// (workspace.JoinEnds).
func keepEnds(s string, n int, truncated bool) (string, bool) {
	if len(s) <= n {
		return s, truncated
	}
	room := max(n-workspace.EndsMarkRoom, 0)
	h := room / 4
	return workspace.JoinEnds(s[:h], s[len(s)-(room-h):], int64(len(s)-room)), true
}

// cut keeps at most n bytes of s, ending on a rune boundary.
func cut(s string, n int, truncated bool) (string, bool) {
	if len(s) <= n {
		return s, truncated
	}
	// (n >= 0 is equivalent on valid UTF-8: s[0] always starts a rune.)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// displayArgv is argv for display, as every front end shows a command
// (argv.Line: quoted as a POSIX shell would need it typed), capped at 4096
// bytes.
func displayArgv(args []string) string {
	const maxSubject = 4096
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(argv.Quote(a))
		if b.Len() > maxSubject {
			s, _ := cut(b.String(), maxSubject, true)
			return s + "…"
		}
	}
	return b.String()
}
