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
	sentMsg struct { // the outbox head, accepted (or not) by the engine
		sent Sent
		text string
		err  error
	}
	doneMsg struct { // an intent with nothing to return
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
	// withdrawnMsg: a pending message was taken back; its text, to edit.
	withdrawnMsg struct{ text string }
	compactMsg   struct {
		focus string
		err   error
	}
	modelMsg struct {
		name, note string
		list       []string // /model without a name: the server's list
		err        error
	}
	// promptsMsg: the prompts of the project's other sessions, listed
	// for the session sessionID.
	promptsMsg struct {
		sessionID string
		prompts   []string
		err       error
	}
	// startWarningMsg: StartChecker's warning for the session sessionID.
	startWarningMsg struct {
		sessionID string
		warning   string
		err       error
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

// prompts loads the project's input history, when the engine keeps one.
func (m *Model) prompts() tea.Cmd {
	ph, ok := m.eng.(PromptHistory)
	if !ok {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		id, list, err := ph.Prompts(ctx)
		return promptsMsg{sessionID: id, prompts: list, err: err}
	}
}

// startCheck asks what in the project will stop the workspace, when the
// engine can say.
func (m *Model) startCheck() tea.Cmd {
	sc, ok := m.eng.(StartChecker)
	if !ok {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		id, warning, err := sc.StartWarning(ctx)
		return startWarningMsg{sessionID: id, warning: warning, err: err}
	}
}

// send hands one typed message to the engine: Send, or Queue for
// alt+enter.
func (m *Model) send(o outgoing) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		var sent Sent
		var err error
		if o.next {
			sent, err = eng.Queue(ctx, o.text)
		} else {
			sent, err = eng.Send(ctx, o.text)
		}
		return sentMsg{sent: sent, text: o.text, err: err}
	}
}

func (m *Model) startQueued() tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		_, err := eng.StartQueued(ctx)
		return doneMsg{what: "start the queued turn", err: err}
	}
}

// withdraw takes back the pending message messageID, whose text is text.
func (m *Model) withdraw(messageID, text string) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		if err := eng.Withdraw(ctx, messageID); err != nil {
			return doneMsg{what: "withdraw", err: err}
		}
		return withdrawnMsg{text: text}
	}
}

func (m *Model) cancel() tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		return doneMsg{what: "cancel", err: eng.Cancel(ctx)}
	}
}

// reply gives the engine the answer to the question permissionID.
func (m *Model) reply(permissionID string, a Answer) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		return doneMsg{what: "answer", err: eng.Answer(ctx, permissionID, a)}
	}
}

// denyAndCancel denies the question permissionID, then cancels the turn
// (in that order: the denial is the call's answer, not the cancel's).
func (m *Model) denyAndCancel(permissionID string) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		if err := eng.Answer(ctx, permissionID, Answer{}); err != nil {
			return doneMsg{what: "answer", err: err}
		}
		return doneMsg{what: "cancel", err: eng.Cancel(ctx)}
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
	m.compactFrom = m.tr.LastRun()
	return func() tea.Msg {
		return compactMsg{focus: focus, err: eng.Compact(ctx, focus)}
	}
}

func (m *Model) setModel(name string) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		if name == "" {
			list, err := eng.Models(ctx)
			return modelMsg{list: list, err: err}
		}
		note, err := eng.SetModel(ctx, name)
		return modelMsg{name: name, note: note, err: err}
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
