package app

import (
	"context"
	"slices"
	"time"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/store"
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

// endedJobs records, as a session resumes (or is forked), the end of every
// background job the log of session from shows started and never ended:
// the process that ran it ended without saying (killed, crashed), and its
// container with it (the reaper removes it). job.exited with reason ended,
// one per such job, in the order they started, in the resumed session's
// log (a fork's own: it continues from the session whose jobs ended).
//
// Codes: those of the store's ReadEvents, SESS_INVALID_RECORD,
// RUNTIME_EVENT_APPEND_FAILED.
func (a *App) endedJobs(ctx context.Context, s *Session, from string) error {
	type key struct{ turn, job string }
	var open []event.JobStarted
	after := int64(-1)
	for {
		recs, err := a.Store.ReadEvents(ctx, from, after, store.MaxPage)
		if err != nil {
			return err
		}
		for _, r := range recs {
			after = r.Seq
			if r.Type != string(event.TypeJobStarted) && r.Type != string(event.TypeJobExited) {
				continue
			}
			ev, err := event.Decode(r.Body)
			if err != nil {
				return err
			}
			switch d := ev.Data.(type) {
			case event.JobStarted:
				open = append(open, d)
			case event.JobExited:
				open = slices.DeleteFunc(open, func(o event.JobStarted) bool {
					return key{o.TurnID, o.JobID} == key{d.TurnID, d.JobID}
				})
			}
		}
		if len(recs) < store.MaxPage {
			break
		}
	}
	for _, o := range open {
		ev := workspace.JobEvent{Kind: workspace.JobExited, TurnID: o.TurnID,
			Job: workspace.Job{ID: o.JobID, Argv: o.Argv, State: workspace.JobExited, Reason: event.JobReasonEnded}}
		if err := s.rt.RecordJob(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// StopJob stops background job id of the session's workspace; its end is
// recorded (job.exited, reason stopped). Codes: WORKSPACE_ISOLATION_REQUIRED
// (a workspace without jobs), and those of workspace.Jobs.StopJob.
func (s *Session) StopJob(ctx context.Context, id string) error {
	jw, ok := s.Workspace.(workspace.Jobs)
	if !ok {
		return errcode.New(errcode.WorkspaceIsolationRequired, "this workspace runs no background jobs")
	}
	_, err := jw.StopJob(ctx, id)
	return err
}
