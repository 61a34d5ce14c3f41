package workspace

import (
	"context"
	"time"
)

// Jobs is what a workspace that runs background jobs provides besides
// Workspace (found by type assertion: the Docker workspace has it, the
// read-only local one does not). A job is a process started like Exec's,
// as the same user, under the same limits, that goes on running after the
// call returns, until it exits, is stopped, or the workspace closes: it
// never outlives its workspace and is never restarted.
//
// Codes: TOOL_BAD_INPUT, WORKSPACE_PATH, WORKSPACE_NOT_FOUND (no such job,
// or no such cwd), WORKSPACE_SCOPE, WORKSPACE_LIMIT (as many jobs running
// as the workspace allows, or no PID left), WORKSPACE_CONTAINER_FAILED,
// WORKSPACE_DISPOSED, TOOL_CANCELED.
type Jobs interface {
	// StartJob starts req.Argv in the background and returns the job once
	// it has run for req.Wait (or ended before).
	StartJob(ctx context.Context, req JobRequest) (Job, error)
	// ListJobs returns the workspace's jobs, running and ended, oldest
	// first.
	ListJobs() []Job
	// JobOutput returns at most max bytes of what job id printed (stdout
	// and stderr as one log), from offset on: of its log only the last
	// JobLogBytes are kept, so an offset before them starts at the oldest
	// byte kept (Skipped says how many were lost).
	JobOutput(id string, offset int64, max int) (JobOutput, error)
	// StopJob ends job id and its processes (SIGTERM, then SIGKILL after a
	// grace period) and returns it once it has ended; a job already ended
	// is returned as it is.
	StopJob(ctx context.Context, id string) (Job, error)
	// WatchJobs has f called when a job starts (from StartJob's goroutine,
	// before it returns) and when it ends (from the job's own goroutine).
	// f must not block for long; set once, before the first StartJob.
	WatchJobs(f func(JobEvent))
}

// JobLogBytes is how much of a job's log a workspace keeps: its tail.
const JobLogBytes = 256 << 10

// DefaultMaxJobs is how many jobs may run at once in one workspace unless
// the user chose otherwise.
const DefaultMaxJobs = 8

// JobRequest is one background process to start.
type JobRequest struct {
	Argv []string
	Cwd  string        // relative to the workspace root; "" is the root
	Wait time.Duration // how long StartJob waits for its first output
}

// Job states.
const (
	JobRunning = "running"
	JobExited  = "exited"
)

// Why a job ended (Job.Reason).
const (
	JobReasonExited  = "exited"  // its program ended by itself
	JobReasonStopped = "stopped" // StopJob ended it
	JobReasonClosed  = "closed"  // the workspace closed (the session ended)
	JobReasonLost    = "lost"    // the container went away under it
)

// Job is one background job as its workspace knows it.
type Job struct {
	ID    string   `json:"jobId"`
	Argv  []string `json:"argv"`
	Cwd   string   `json:"cwd,omitempty"`
	State string   `json:"state"` // JobRunning or JobExited
	// ExitCode is the program's exit status once it ended (128+N: killed
	// by signal N); nil while running or when it could not be known
	// (closed, lost).
	ExitCode *int   `json:"exitCode,omitempty"`
	Reason   string `json:"reason,omitempty"` // why it ended: a JobReason
	// Started is when it started; Ended when it ended (zero while running).
	Started time.Time `json:"-"`
	Ended   time.Time `json:"-"`
	// Bytes is how much it has printed in all.
	Bytes int64 `json:"bytes"`
}

// JobOutput is a job with a piece of its log.
type JobOutput struct {
	Job
	Offset  int64  `json:"offset"`            // the log offset Output starts at
	Output  string `json:"output"`            // at most the bytes asked for
	Skipped int64  `json:"skipped,omitempty"` // bytes between the offset asked for and Offset, no longer kept
	Next    int64  `json:"next"`              // the offset to read on from
}

// JobEvent is a job starting or ending, for WatchJobs.
type JobEvent struct {
	Kind string // JobRunning (it started) or JobExited (it ended)
	Job  Job
	// Tail is the end of its log when it ended (at most JobTailBytes).
	Tail string
	// TurnID and CallID are the turn and tool call that started it
	// (WithJobOrigin), "" when unknown.
	TurnID, CallID string
}

// JobTailBytes bounds JobEvent.Tail.
const JobTailBytes = 2 << 10

type jobOriginKey struct{}

type jobOrigin struct{ turnID, callID string }

// WithJobOrigin returns a context under which a job started is said to be
// started by tool call callID of turn turnID (JobEvent).
func WithJobOrigin(ctx context.Context, turnID, callID string) context.Context {
	return context.WithValue(ctx, jobOriginKey{}, jobOrigin{turnID, callID})
}

// JobOriginOf returns what WithJobOrigin put in ctx.
func JobOriginOf(ctx context.Context) (turnID, callID string) {
	o, _ := ctx.Value(jobOriginKey{}).(jobOrigin)
	return o.turnID, o.callID
}
