package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/harness-dev/harness/internal/argv"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/tui/transcript"
)

// jobs are the open session's background jobs, folded from its log
// (job.started, job.exited): the status line counts those running, /jobs
// shows them all.
type jobs struct{ list []jobRow }

type jobRow struct {
	id, turn, command string
	started, ended    time.Time
	how, tail         string // once ended: the reason and exit code, the last lines
}

func (j *jobs) apply(ev event.Event) {
	switch d := ev.Data.(type) {
	case event.JobStarted:
		j.list = append(j.list, jobRow{id: d.JobID, turn: d.TurnID, command: argv.Line(d.Argv), started: ev.At})
	case event.JobExited:
		for i := range j.list {
			r := &j.list[i]
			if r.id == d.JobID && r.turn == d.TurnID && r.ended.IsZero() {
				r.ended, r.how, r.tail = ev.At, event.JobEndWords(d.Reason), d.Tail
				if d.ExitCode != nil {
					r.how += ", exit " + itoa(*d.ExitCode)
				}
			}
		}
	}
}

// running counts the jobs that have not ended.
func (j *jobs) running() int {
	n := 0
	for _, r := range j.list {
		if r.ended.IsZero() {
			n++
		}
	}
	return n
}

// stoppable lists the running jobs the /jobs view numbers, as it shows
// them (the newest first), at most nine: the digit keys stop them.
func (j *jobs) stoppable() []string {
	var out []string
	for i := len(j.list) - 1; i >= 0 && len(out) < 9; i-- {
		if j.list[i].ended.IsZero() {
			out = append(out, j.list[i].id)
		}
	}
	return out
}

// stopKey is a digit pressed in the /jobs view: it stops the running job
// that digit numbers.
func (m *Model) stopKey(key string) tea.Cmd {
	ids := m.jobs.stoppable()
	n := int(key[0] - '1')
	if len(key) != 1 || key[0] < '1' || key[0] > '9' || n >= len(ids) {
		return nil
	}
	m.pager = nil
	return jobsCommand.run(m, "stop "+ids[n])
}

// jobsCommand is /jobs: with no argument, the view of the session's jobs;
// "stop ID" stops one (its end is recorded; the view follows the log).
var jobsCommand = viewCommand{
	kind: pagerJobs, title: "Background jobs", lines: jobLines,
	verb: "stop", do: (*Model).stopJob,
	usage: "/jobs shows the background jobs; /jobs stop ID stops one.",
}

// stopJob stops the running job id.
func (m *Model) stopJob(id string) tea.Cmd {
	for _, r := range m.jobs.list {
		if r.id == id && r.ended.IsZero() {
			m.flash = "Stopping " + id + "…"
			eng, ctx := m.eng, m.ctx
			return func() tea.Msg { return doneMsg{what: "stop " + id, err: eng.StopJob(ctx, id)} }
		}
	}
	m.flash = "No running job " + id + "."
	return nil
}

// jobLines is the /jobs view: per job its ID, command, age and state, and
// the last lines of one that ended.
func jobLines(m *Model) []string {
	th := m.th
	now := m.opts.Now()
	out := []string{""}
	if len(m.jobs.list) == 0 {
		return append(out, " "+th.Text.Render("No background jobs: process.exec with background true starts one."))
	}
	for i := len(m.jobs.list) - 1; i >= 0; i-- { // the newest first
		r := m.jobs.list[i]
		state := th.Accent.Render("running " + transcript.Duration(now.Sub(r.started)))
		if !r.ended.IsZero() {
			state = th.Muted.Render("ended (" + r.how + ") after " + transcript.Duration(r.ended.Sub(r.started)))
		}
		key := "   "
		if n := slices.Index(m.jobs.stoppable(), r.id); n >= 0 {
			key = th.Key.Render(fmt.Sprintf("%d", n+1)) + "  "
		}
		out = append(out, " "+key+th.Key.Render(r.id)+"  "+th.Text.Render(r.command)+"  "+state)
		if r.ended.IsZero() {
			out = append(out, "      "+th.Muted.Render("/jobs stop "+r.id))
		}
		lines := strings.Split(strings.TrimRight(r.tail, "\n"), "\n")
		for _, l := range lines[max(len(lines)-3, 0):] {
			if l != "" {
				out = append(out, "   "+th.Faint.Render("│ "+l))
			}
		}
	}
	return append(out, "", " "+th.Muted.Render("Jobs end with the session and are never restarted; esc closes."))
}
