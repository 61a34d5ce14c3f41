package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/tui/transcript"
)

// ctxFor is the transcript's render context for the current frame.
func (m *Model) ctxFor() *transcript.Ctx {
	return &transcript.Ctx{Width: max(m.width, 20), Now: m.now, Spinner: m.spin.View(), Theme: m.th}
}

// bottom returns the lines under the body, and where the input starts in
// them (-1 when hidden).
func (m *Model) bottom() ([]string, int) {
	th, w := m.th, m.width
	var out []string
	rule := th.Faint.Render(strings.Repeat("─", w))
	if m.unseen && !m.vp.Following() {
		tag := " ↓ new below · pgdn · esc follows "
		rule = th.Faint.Render("──") + th.Warn.Render(tag) + th.Faint.Render(strings.Repeat("─", max(w-2-ansi.StringWidth(tag), 0)))
	}
	out = append(out, rule)
	if m.pager != nil || m.picker != nil || m.turns != nil {
		footer := "esc close"
		if m.turns != nil {
			footer = "enter rewind · esc close"
		} else if m.pager != nil {
			footer = m.pager.footer()
		} else if m.picker.startup && m.sess == nil {
			footer = "enter open · esc quit"
		} else {
			footer = "enter open · esc close"
		}
		return append(out, " "+th.Muted.Render(ansi.Truncate(footer, w-1, "…"))), -1
	}
	if m.flash != "" {
		for _, l := range wrapWords(m.flash, max(w-1, 10)) {
			out = append(out, " "+th.Warn.Render(l))
		}
	}
	if q := m.in.search; q != nil {
		found := th.Muted.Render(" (no match)")
		if q.match >= 0 || q.query == "" {
			found = ""
		}
		line := " " + th.Accent.Render("history search: ") + th.Bold.Render(q.query) + found +
			th.Muted.Render(" · ctrl+r older · enter takes it · esc leaves")
		out = append(out, ansi.Truncate(line, w, "…"))
	}
	out = append(out, m.chipsLines(w)...)
	if v := m.in.value(); strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \n") {
		var names, helps []string
		for _, c := range slashCommands {
			if strings.HasPrefix(c.name, v) {
				names = append(names, th.Key.Render(c.name))
				helps = append(helps, th.Key.Render(c.name)+" "+th.Muted.Render(c.help))
			}
		}
		hint := " " + strings.Join(helps, th.Faint.Render("  ·  "))
		if ansi.StringWidth(hint) > w {
			hint = " " + strings.Join(names, th.Faint.Render(" · "))
		}
		if len(names) > 0 {
			out = append(out, ansi.Truncate(hint, w, "…"))
		}
	}
	if m.in.ta.Value() == "?" {
		out = append(out, ansi.Truncate(" "+th.Key.Render("enter")+th.Muted.Render(" opens the help · go on typing for a message that starts with ?"), w, "…"))
	}
	out = append(out, m.completionLines(w)...)
	input := strings.Split(m.in.view(), "\n")
	if m.asking != nil {
		// The box takes what the header, banners and input leave, but one
		// line of the transcript.
		room := m.height - 2 - len(m.banners(w)) - len(out) - len(input) - 1
		out = append(out, strings.Split(approvalView(m.asking, th, w, strings.TrimSpace(m.in.value()) != "", max(room, 1)), "\n")...)
	}
	at := len(out)
	out = append(out, input...)
	if m.asking != nil {
		return out, at // the question's box lists the keys that work now
	}
	m.keys.setState(m.busy(), len(m.tr.Pending())+len(m.outbox) > 0)
	out = append(out, " "+m.helpLine(w-1))
	return out, at
}

// helpLine is the short help fitted to width: every enabled binding with
// its full text if it fits, else with its short text (shortHelp), else
// dropping the least needed bindings first (hintDropOrder), so Enter, the
// cancel or quit key and ctrl+x stay on screen at 80 columns.
func (m *Model) helpLine(width int) string {
	var on []key.Binding
	for _, b := range m.keys.ShortHelp() {
		if b.Enabled() {
			on = append(on, b)
		}
	}
	h := m.help
	h.SetWidth(0)
	if s := h.ShortHelpView(on); ansi.StringWidth(s) <= width {
		return s
	}
	short := make([]key.Binding, len(on))
	for i, b := range on {
		short[i] = b
		if d, ok := shortHelp[b.Help().Desc]; ok {
			short[i].SetHelp(b.Help().Key, d)
		}
	}
	for _, drop := range hintDropOrder {
		if s := h.ShortHelpView(short); ansi.StringWidth(s) <= width {
			return s
		}
		for i, b := range short {
			if b.Help().Key == drop {
				short = append(short[:i], short[i+1:]...)
				break
			}
		}
	}
	// Too narrow for even the essentials: the first that fit.
	for n := len(short); n > 0; n-- {
		if s := h.ShortHelpView(short[:n]); ansi.StringWidth(s) <= width {
			return s
		}
	}
	return ""
}

// shortHelp is the short text of a hint whose full text does not fit.
var shortHelp = map[string]string{
	"queue after turn":     "queue",
	"withdraw last queued": "withdraw",
}

// hintDropOrder lists the keys of the hints left out, first to last, while
// the line is too wide; the ones not listed are never left out here.
var hintDropOrder = []string{"ctrl+j", "/", "alt+enter", "?", ""}

func (m *Model) bodyHeight() int {
	bottom, _ := m.bottom()
	return max(m.height-2-len(m.banners(m.width))-len(bottom), 1)
}

// View lays the screen out: header, banners, body (transcript or an
// overlay), then the input area.
func (m *Model) View() tea.View {
	var v tea.View
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion // the wheel scrolls the transcript
	if m.width <= 0 || m.height <= 0 {
		return v
	}
	if m.quitting {
		return v
	}
	th, w := m.th, m.width
	lines := []string{m.statusLine(w), th.Faint.Render(strings.Repeat("─", w))}
	lines = append(lines, m.banners(w)...)
	bottom, inputAt := m.bottom()
	bodyH := max(m.height-len(lines)-len(bottom), 1)
	switch {
	case m.picker != nil:
		lines = append(lines, fit(strings.Split(m.picker.view(th, w, bodyH, m.now), "\n"), bodyH)...)
	case m.turns != nil:
		lines = append(lines, fit(strings.Split(m.turns.view(th, w, bodyH), "\n"), bodyH)...)
	case m.pager != nil:
		m.pager.resize(w, bodyH)
		lines = append(lines, fit(strings.Split(m.pager.view(th, w), "\n"), bodyH)...)
	case m.sess == nil && m.interrupted != "" && m.tr.Len() > 0:
		// An interrupted session: its transcript, read only, above the
		// offer to fork it.
		lines = append(lines, m.vp.Render(m.tr, m.ctxFor(), bodyH)...)
	case m.sess == nil:
		msg := ""
		if m.opening {
			msg = th.Muted.Render("Opening the session… (the workspace is being prepared)")
		}
		lines = append(lines, fit([]string{"", " " + msg}, bodyH)...)
	case m.tr.Len() == m.openNotes:
		// Nothing yet but what opening said (the project's AGENTS.md):
		// the welcome stays, that note under it.
		welcome := m.welcome()
		if m.openNotes > 0 {
			welcome = append(welcome, m.tr.Lines(m.ctxFor(), 0)...)
		}
		lines = append(lines, fit(welcome, bodyH)...)
	default:
		lines = append(lines, m.vp.Render(m.tr, m.ctxFor(), bodyH)...)
	}
	top := len(lines)
	lines = append(lines, bottom...)
	v.SetContent(strings.Join(lines, "\n"))
	if inputAt >= 0 && (m.asking == nil || !m.asking.answering) {
		if c := m.in.cursor(); c != nil {
			c.Y += top + inputAt
			v.Cursor = c
		}
	}
	if m.sess != nil {
		v.WindowTitle = "harness · " + m.sess.ID
	}
	return v
}

func (m *Model) welcome() []string {
	th := m.th
	ctx := " " + th.Muted.Render("ctx: how full the model's context window is (compacted before it overflows).")
	if m.sess != nil && m.sess.ReadOnly {
		// Nothing can be written, so there is never a patch to apply.
		return []string{
			"",
			" " + th.Accent.Render("Ready.") + th.Muted.Render(" Ask about this project: the model can read and list its files."),
			" " + th.Muted.Render("Writes and commands need the Docker workspace. Enter steers a running turn."),
			" " + th.Muted.Render("@path attaches a file · /help lists keys and commands."),
			ctx,
		}
	}
	return []string{
		"",
		" " + th.Accent.Render("Ready.") + th.Muted.Render(" Ask for a change. The model works in an isolated copy of this project;"),
		" " + th.Muted.Render("your files change only when you /apply its patch. Enter steers a running turn."),
		" " + th.Muted.Render("@path attaches a file · !cmd runs a command · /help lists keys and commands."),
		ctx,
	}
}

// fit pads or cuts lines to exactly n.
func fit(lines []string, n int) []string {
	if len(lines) > n {
		return lines[:n]
	}
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines
}
