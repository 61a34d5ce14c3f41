package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
)

// Background jobs, within process.exec: {"argv": [...], "background": true}
// starts one; {"action": "list"}, {"action": "status"|"output"|"stop",
// "job": ID} and, for output, "offset" manage them. The workspace runs
// them (workspace.Jobs); this file only checks the settings and shapes the
// results.

// The actions on background jobs.
const (
	JobList   = "list"
	JobStatus = "status"
	JobOutput = "output"
	JobStop   = "stop"
)

// Bounds of the job settings.
const (
	// MaxJobIDBytes bounds job.
	MaxJobIDBytes = 64
	// MaxJobOffset bounds offset (2^53: exact in every JSON reader).
	MaxJobOffset = 1 << 53
	// MaxJobReadBytes is the most of a job's log one call returns.
	MaxJobReadBytes = 32 << 10
	// JobStatusBytes is how much of its log's end status and stop show.
	JobStatusBytes = 2 << 10
)

// JobStartWait is how long a background start waits for the job's first
// output before it returns (less when the job ends before).
var JobStartWait = time.Second

const jobsDescription = `Background jobs: with background true, argv starts as a job that keeps running after the call ` +
	`(a dev server, a watcher), as the same user, under the same limits, with no network (a server on 127.0.0.1 is reachable from ` +
	`later commands); the call returns after about a second with {jobId, state, output, next, ...}. ` +
	`Then {"action":"list"} lists the jobs; {"action":"status","job":ID} shows one and its last lines; ` +
	`{"action":"output","job":ID,"offset":N} returns its log (stdout and stderr together, at most 32 KiB per call) from byte N, ` +
	`next being where to read on (only the last 256 KiB of a log are kept: skipped says how much was lost); ` +
	`{"action":"stop","job":ID} ends it and its processes (SIGTERM, SIGKILL after 3 s). ` +
	`A job that ends by itself says so (state exited, exitCode, reason); jobs end with the session and are never restarted; ` +
	`at most a few run at once (WORKSPACE_LIMIT beyond).`

// execSubject is a call's subject: the command, marked when it stays
// running, or the action on a job.
func execSubject(e ExecInput) string {
	switch {
	case e.Action == JobList:
		return "jobs: list"
	case e.Action != "":
		return "job " + e.Job + ": " + e.Action
	case e.Background:
		return displayArgv(e.Argv) + " (in the background: it stays running until stopped)"
	}
	return displayArgv(e.Argv)
}

// checkJobStart checks the settings of a call that runs argv: job and
// offset belong to an action.
func checkJobStart(e ExecInput) *ResultError {
	switch {
	case e.Job != "":
		return bad("process.exec", "job", "needs action (status, output or stop); it does not go with argv")
	case e.Offset != 0:
		return bad("process.exec", "offset", "is for action output only")
	}
	return nil
}

// checkJobAction checks a call that manages jobs: no command, the job
// named where the action needs one.
func checkJobAction(e ExecInput) *ResultError {
	const tool = "process.exec"
	if rerr := checkString(tool, execFields[4], e.Action); rerr != nil {
		return rerr
	}
	switch {
	case len(e.Argv) > 0:
		return bad(tool, "action", "does not go with argv: a call either runs argv or manages jobs")
	case e.Background:
		return bad(tool, "background", "does not go with action: background starts argv as a job")
	case e.Cwd != "":
		return bad(tool, "cwd", "does not go with action")
	case e.TimeoutMs != 0:
		return bad(tool, "timeoutMs", "does not go with action")
	case e.Action == JobList && e.Job != "":
		return bad(tool, "job", "does not go with action list")
	case e.Action != JobList && e.Job == "":
		return bad(tool, "job", "is missing; action %s needs the jobId a background start returned", e.Action)
	case e.Action != JobOutput && e.Offset != 0:
		return bad(tool, "offset", "is for action output only")
	}
	if e.Job != "" {
		if rerr := checkString(tool, execFields[5], e.Job); rerr != nil {
			return rerr
		}
	}
	return checkInt(tool, execFields[6], e.Offset)
}

// jobResult is what a call on one job returns: the job, a piece of its
// log, and what to do next.
type jobResult struct {
	workspace.JobOutput
	Note string `json:"note,omitempty"`
}

// jobList is what action list returns.
type jobList struct {
	Jobs []workspace.Job `json:"jobs"`
}

func runJob(ctx context.Context, ws workspace.Workspace, e ExecInput) (any, error) {
	jw, ok := ws.(workspace.Jobs)
	if !ok {
		return nil, toolError(errcode.WorkspaceIsolationRequired, "process.exec: this workspace runs no background jobs")
	}
	limit := maxOutput(ctx)
	switch e.Action {
	case "":
		cwd := e.Cwd
		if cwd == "." {
			cwd = ""
		}
		j, err := jw.StartJob(ctx, workspace.JobRequest{Argv: e.Argv, Cwd: cwd, Wait: JobStartWait})
		if err != nil {
			return nil, err
		}
		note := fmt.Sprintf(`running in the background; read on with {"action":"output","job":%q,"offset":NEXT}, end it with {"action":"stop","job":%q}`, j.ID, j.ID)
		return readJob(jw, j.ID, 0, MaxJobReadBytes, limit, func(o workspace.JobOutput) string {
			if o.State == workspace.JobRunning {
				return note
			}
			return "the job has already ended"
		})
	case JobList:
		return jobList{Jobs: jw.ListJobs()}, nil
	case JobOutput:
		return readJob(jw, e.Job, e.Offset, MaxJobReadBytes, limit, nil)
	case JobStatus:
		return readTail(jw, e.Job, limit)
	case JobStop:
		if _, err := jw.StopJob(ctx, e.Job); err != nil {
			return nil, err
		}
		return readTail(jw, e.Job, limit)
	}
	return nil, toolError(errcode.ToolBadInput, "process.exec: unknown action %q", e.Action)
}

// readTail is a job with the end of its log.
func readTail(jw workspace.Jobs, id string, limit int) (any, error) {
	o, err := jw.JobOutput(id, 0, 0)
	if err != nil {
		return nil, err
	}
	return readJob(jw, id, max(o.Bytes-JobStatusBytes, 0), JobStatusBytes, limit, nil)
}

// readJob reads at most n bytes of a job's log from offset, fewer while the
// result would pass limit once serialized.
func readJob(jw workspace.Jobs, id string, offset int64, n, limit int, note func(workspace.JobOutput) string) (any, error) {
	for {
		o, err := jw.JobOutput(id, offset, n)
		if err != nil {
			return nil, err
		}
		r := jobResult{JobOutput: o}
		if note != nil {
			r.Note = note(o)
		}
		b, err := model.MarshalCanonical(r)
		if err != nil || len(b) <= limit || n == 0 {
			return r, nil
		}
		n /= 2
	}
}
