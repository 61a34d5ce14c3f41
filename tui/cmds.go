package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// Messages the engine's commands answer with.
type (
	updateMsg struct {
		u   Update
		err error
	}
	openedMsg struct {
		req  OpenRequest
		sess Session
		err  error
	}
	startedMsg struct {
		runID string
		text  string
		err   error
	}
	sentMsg struct { // steering or a queued input
		text string
		next bool
		err  error
	}
	sentAllMsg []sentMsg
	doneMsg    struct { // an intent with nothing to return
		what string
		err  error
	}
	diffMsg struct {
		patch string
		err   error
	}
	planMsg struct {
		plan ApplyPlan
		err  error
	}
	appliedMsg struct {
		out string
		err error
	}
	compactMsg struct {
		focus string
		err   error
	}
	sessionsMsg struct {
		list []SessionSummary
		now  time.Time
		err  error
	}
)

// Commands: each calls the engine once, off the update loop, and returns
// what happened as a message. They capture values, never the model.

// listen is the one pull loop of STYLE 14: it waits for the next batch and
// is re-armed by the update that receives it.
func (m *Model) listen() tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		u, err := eng.Next(ctx)
		return updateMsg{u: u, err: err}
	}
}

func (m *Model) open(req OpenRequest) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		s, err := eng.Open(ctx, req)
		return openedMsg{req: req, sess: s, err: err}
	}
}

func (m *Model) start(text string) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		id, err := eng.Start(ctx, text)
		return startedMsg{runID: id, text: text, err: err}
	}
}

func (m *Model) startQueued() tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		id, err := eng.StartQueued(ctx)
		return startedMsg{runID: id, err: err}
	}
}

func (m *Model) steer(runID, text string) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		_, err := eng.Steer(ctx, runID, text)
		return sentMsg{text: text, err: err}
	}
}

func (m *Model) queueNext(runID, text string) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		_, err := eng.QueueNext(ctx, runID, text)
		return sentMsg{text: text, next: true, err: err}
	}
}

func (m *Model) withdraw(runID, messageID string) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		return doneMsg{what: "withdraw", err: eng.Withdraw(ctx, runID, messageID)}
	}
}

func (m *Model) cancel(runID string) tea.Cmd {
	eng := m.eng
	return func() tea.Msg {
		return doneMsg{what: "cancel", err: eng.Cancel(runID)}
	}
}

func (m *Model) diff() tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		p, err := eng.Diff(ctx)
		return diffMsg{patch: p, err: err}
	}
}

func (m *Model) compact(focus string) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		return compactMsg{focus: focus, err: eng.Compact(ctx, focus)}
	}
}

func (m *Model) checkApply() tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		p, err := eng.CheckApply(ctx)
		return planMsg{plan: p, err: err}
	}
}

func (m *Model) apply(plan ApplyPlan) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		out, err := eng.Apply(ctx, plan)
		return appliedMsg{out: out, err: err}
	}
}

func (m *Model) listSessions() tea.Cmd {
	eng, ctx, now := m.eng, m.ctx, m.opts.Now
	return func() tea.Msg {
		l, err := eng.Sessions(ctx)
		return sessionsMsg{list: l, now: now(), err: err}
	}
}

// sendEarly steers (or queues) the messages typed while the turn was being
// admitted, in the order they were typed.
func (m *Model) sendEarly(runID string, msgs []early) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		out := make(sentAllMsg, 0, len(msgs))
		for _, e := range msgs {
			var err error
			if e.next {
				_, err = eng.QueueNext(ctx, runID, e.text)
			} else {
				_, err = eng.Steer(ctx, runID, e.text)
			}
			out = append(out, sentMsg{text: e.text, next: e.next, err: err})
		}
		return out
	}
}
