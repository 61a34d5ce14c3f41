package runtime

import (
	"context"
	"slices"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/workspace"
)

// RecordJob appends job.started or job.exited for a background job of the
// session's workspace (workspace.Jobs.WatchJobs). A job started by a tool
// call is recorded while that call runs, between its tool.call and its
// tool.result (the turn and call come with the event: the runtime puts
// them in the call's context, workspace.WithJobOrigin); its end whenever
// it comes, in a turn or between turns.
//
// Codes: RUNTIME_INVALID_INPUT (an event of no known kind; nothing is
// recorded), RUNTIME_EVENT_APPEND_FAILED.
func (s *Session) RecordJob(ctx context.Context, ev workspace.JobEvent) error {
	var d event.Data
	switch ev.Kind {
	case workspace.JobRunning:
		d = event.JobStarted{SessionID: s.id, TurnID: ev.TurnID, CallID: ev.CallID, JobID: ev.Job.ID,
			Argv: slices.Clone(ev.Job.Argv), Cwd: ev.Job.Cwd}
	case workspace.JobExited:
		tail := ev.Tail
		if len(tail) > event.MaxJobTailBytes {
			tail = tail[len(tail)-event.MaxJobTailBytes:]
		}
		d = event.JobExited{SessionID: s.id, TurnID: ev.TurnID, JobID: ev.Job.ID, Argv: slices.Clone(ev.Job.Argv),
			Reason: ev.Job.Reason, ExitCode: ev.Job.ExitCode, Bytes: int(ev.Job.Bytes), Tail: validTail(tail)}
	default:
		return errcode.Errorf(errcode.RuntimeInvalidInput, "record job %s: no event for %q", ev.Job.ID, ev.Kind)
	}
	_, err := s.append(ctx, d)
	return err
}

// validTail drops the bytes of a UTF-8 sequence a cut split at its start
// and anything else that is not valid UTF-8.
func validTail(s string) string {
	for i := 0; i < 3 && i < len(s) && s[i]&0xC0 == 0x80; i++ {
		s = s[1:]
	}
	return string([]rune(s))
}
