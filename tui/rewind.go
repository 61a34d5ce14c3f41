package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/tui/theme"
	"github.com/harness-dev/harness/tui/transcript"
)

// turnPicker is the /rewind list: "undo the last rewind" (when there is
// one), then the session's turns, newest first.
type turnPicker struct {
	rows    []turnRow
	cursor  int
	loading bool
	err     error
}

// turnRow is one choice of the picker.
type turnRow struct {
	undo bool
	turn TurnSummary
}

type (
	turnsMsg struct {
		list []TurnSummary
		undo bool
		err  error
	}
	rewoundMsg struct {
		sess Session
		out  string
		err  error
	}
)

func (m *Model) listTurns() tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		l, undo, err := eng.Turns(ctx)
		return turnsMsg{list: l, undo: undo, err: err}
	}
}

func (m *Model) rewind(turnID string, undo bool) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		s, out, err := eng.Rewind(ctx, turnID, undo)
		return rewoundMsg{sess: s, out: out, err: err}
	}
}

func (p *turnPicker) fill(msg turnsMsg) {
	p.loading, p.err, p.rows = false, msg.err, nil
	if msg.undo {
		p.rows = append(p.rows, turnRow{undo: true})
	}
	for i := len(msg.list) - 1; i >= 0; i-- {
		p.rows = append(p.rows, turnRow{turn: msg.list[i]})
	}
}

// onRewound shows the reopened session, then what the rewind said.
func (m *Model) onRewound(msg rewoundMsg) tea.Cmd {
	var cmd tea.Cmd
	if msg.sess.ID != "" {
		cmd = m.onOpened(openedMsg{req: OpenRequest{ID: msg.sess.ID}, sess: msg.sess})
	} else {
		m.opening = false
	}
	switch {
	case msg.err != nil:
		m.tr.Note(transcript.NoteError, string(errcode.Of(msg.err)), "rewind: "+errcode.Message(msg.err))
	case msg.out != "":
		m.tr.Note(transcript.NoteInfo, "", msg.out)
	}
	return cmd
}

func (m *Model) turnsKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.turns
	switch k.String() {
	case "up", "k":
		p.cursor = max(p.cursor-1, 0)
	case "down", "j":
		p.cursor = max(min(p.cursor+1, len(p.rows)-1), 0)
	case "esc", "q", "ctrl+c":
		m.turns = nil
	case "enter":
		if p.cursor >= len(p.rows) {
			return nil
		}
		r := p.rows[p.cursor]
		if !r.undo && !r.turn.Finished {
			m.flash = fmt.Sprintf("Turn %d did not finish: there is no state at its end to return to.", r.turn.N)
			return nil
		}
		m.turns = nil
		if m.busy() {
			m.flash = "A turn is running: /rewind works between turns (esc cancels it)."
			return nil
		}
		m.opening = true
		return m.rewind(r.turn.ID, r.undo)
	}
	return nil
}

func (p *turnPicker) view(th *theme.Theme, width, height int) string {
	lines := []string{" " + th.Accent.Render("Rewind the session") + th.Muted.Render("  ↑/↓ choose · enter rewind (files and conversation) · esc close"), ""}
	switch {
	case p.loading:
		lines = append(lines, " "+th.Muted.Render("loading…"))
	case p.err != nil:
		lines = append(lines, " "+errLine(th, p.err))
	case len(p.rows) == 0:
		lines = append(lines, " "+th.Muted.Render("No turn yet: nothing to rewind to."))
	}
	room := max(height-len(lines), 1)
	first := 0
	if p.cursor >= room {
		first = p.cursor - room + 1
	}
	for i := first; i < len(p.rows) && len(lines) < height; i++ {
		r := p.rows[i]
		var row string
		if r.undo {
			row = "↶ undo the last rewind"
		} else {
			t := r.turn
			mark := ""
			switch {
			case !t.Finished:
				mark = " (did not finish)"
			case t.Current:
				mark = " (current)"
			case t.Rewound:
				mark = " (rewound)"
			}
			prompt := strings.Join(strings.Fields(t.Prompt), " ")
			row = fmt.Sprintf("%3d  %s  +%d −%d  %s%s", t.N, t.At.Local().Format("15:04"), t.Added, t.Deleted, prompt, mark)
		}
		row = ansi.Truncate(row, width-3, "…")
		if i == p.cursor {
			lines = append(lines, " "+th.Selected.Render("▸ ")+th.Bold.Render(row))
		} else {
			lines = append(lines, "   "+row)
		}
	}
	return strings.Join(lines, "\n")
}
