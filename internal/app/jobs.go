package app

import (
	"context"
	"time"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/workspace"
)

// watchJobs records the background jobs of s's workspace as they start and
// end (job.started, job.exited) and returns the closer that ends those
// still running when the session closes, so that their ends are recorded
// (reason closed) before the workspace's disposal. A failed record is
// reported as a close warning: the job's process is the workspace's, not
// the record's.
func (a *App) watchJobs(ctx context.Context, s *Session) func() {
	ws, ok := s.Workspace.(*dockerws.Workspace)
	if !ok {
		return func() {}
	}
	sess := s.rt
	ws.WatchJobs(func(ev workspace.JobEvent) {
		if s.LostTo() != "" {
			return // taken over: no longer ours to write
		}
		if err := sess.RecordJob(context.WithoutCancel(ctx), ev); err != nil {
			a.warnClose("record background job "+ev.Job.ID, err)
		}
	})
	return func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		ws.EndJobs(cctx)
	}
}
