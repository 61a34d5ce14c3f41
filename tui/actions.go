package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// key routes a key press: the approval prompt first, then an overlay,
// then the screen's own keys, then the input.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	switch {
	case m.asking != nil:
		return m.approvalKey(k)
	case m.picker != nil:
		return m.pickerKey(k)
	case m.pager != nil:
		return m.pagerKey(k)
	}
	height := m.bodyHeight()
	c := m.ctxFor()
	switch ks {
	case "ctrl+c":
		if m.tr.ActiveRun() != "" {
			if m.canceling {
				return m.quit()
			}
			m.canceling = true
			m.flash = cancelFlash
			return m.cancel()
		}
		if m.in.value() != "" {
			// A draft goes first (kept in the history: ↑ brings it back);
			// the next ctrl+c quits.
			m.in.take()
			m.flash = "Draft cleared (↑ brings it back) · ctrl+c again quits."
			return nil
		}
		return m.quit()
	case "home", "end":
		if m.in.value() != "" {
			break // the input's own line start and end
		}
		if ks == "home" {
			m.vp.Top()
		} else {
			m.vp.Bottom()
			m.unseen = false
		}
		return nil
	case "tab":
		if m.completeCommand() {
			return nil
		}
	case "enter":
		return m.submit(false)
	case "alt+enter":
		return m.submit(true)
	case "pgup":
		m.vp.ScrollUp(m.tr, c, height, max(height-2, 1))
		return nil
	case "pgdown":
		m.vp.ScrollDown(m.tr, c, height, max(height-2, 1))
		if m.vp.Following() {
			m.unseen = false
		}
		return nil
	case "alt+up":
		m.vp.Select(m.tr, c, height, -1)
		return nil
	case "alt+down":
		m.vp.Select(m.tr, c, height, +1)
		return nil
	case "ctrl+o":
		m.vp.Toggle(m.tr, c, height)
		return nil
	case "ctrl+x":
		return m.withdrawLast()
	case "esc":
		switch {
		case m.vp.Selected() >= 0:
			m.vp.Unselect()
		case !m.vp.Following():
			m.vp.Bottom()
			m.unseen = false
		case m.tr.ActiveRun() != "" && !m.canceling:
			// Esc interrupts the running turn, as in the agents people
			// come from; ctrl+c twice quits without waiting.
			m.canceling = true
			m.flash = cancelFlash
			return m.cancel()
		default:
			m.flash = ""
		}
		return nil
	case "?":
		if m.in.value() == "" {
			m.openHelp()
			return nil
		}
	}
	m.flash = ""
	return m.in.update(k)
}

// completeCommand completes a slash command being typed: to the only
// command that matches, or to what all the matches share. It reports
// whether the input was a command to complete.
func (m *Model) completeCommand() bool {
	v := m.in.value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return false
	}
	var match []string
	for _, c := range slashCommands {
		if strings.HasPrefix(c.name, v) {
			match = append(match, c.name)
		}
	}
	switch len(match) {
	case 0:
		return true
	case 1:
		m.in.setValue(match[0] + " ")
		return true
	}
	common := match[0]
	for _, s := range match[1:] {
		for !strings.HasPrefix(s, common) {
			common = common[:len(common)-1]
		}
	}
	m.in.setValue(common)
	return true
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

// submit handles Enter (next=false) and alt+enter (next=true).
func (m *Model) submit(next bool) tea.Cmd {
	text := m.in.value()
	if strings.HasSuffix(text, "\\") && !next {
		m.in.setValue(strings.TrimSuffix(text, "\\") + "\n")
		return nil
	}
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		if !m.busy() && m.sess != nil && m.hasQueuedNext() {
			// The queue waits after a turn that did not complete.
			return m.startQueued()
		}
		return nil
	}
	if cmd, ok, known := m.command(strings.TrimRight(text, " \t\n")); ok {
		if known {
			m.in.take()
		}
		return cmd
	}
	if m.sess == nil {
		m.flash = "No session is open yet."
		return nil
	}
	if m.sess.Lost {
		m.flash = "Another process took this session over: /new starts a session, /sessions opens another."
		return nil
	}
	m.in.take()
	m.vp.Bottom()
	m.unseen = false
	m.outbox = append(m.outbox, outgoing{text: text, next: next})
	if len(m.outbox) > 1 {
		return nil // sent when the one before it is accepted
	}
	return tea.Batch(m.send(m.outbox[0]), m.tick())
}

func (m *Model) hasQueuedNext() bool {
	for _, p := range m.tr.Pending() {
		if p.Next {
			return true
		}
	}
	return false
}

// command runs a slash command; ok is false when text is a message. An
// unknown /word is never a message (known is false: the text stays in
// the input to be fixed); a path like /usr/bin/env is.
func (m *Model) command(text string) (cmd tea.Cmd, ok, known bool) {
	if !strings.HasPrefix(text, "/") {
		return nil, false, false
	}
	word := strings.Fields(text)[0]
	if !commandWord(word) {
		return nil, false, false
	}
	cmd, ok = m.runCommand(word, strings.TrimSpace(strings.TrimPrefix(text, word)))
	if !ok {
		m.flash = "Unknown command " + word + " (/help lists them; start the line with a space to send it as a message)."
		return nil, true, false
	}
	return cmd, true, true
}

// commandWord reports whether word has the shape of a slash command:
// one slash, then letters, digits, - or _.
func commandWord(word string) bool {
	if len(word) < 2 || word[0] != '/' {
		return false
	}
	for _, r := range word[1:] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// runCommand runs a known command with the text after it (args); ok is
// false for an unknown one.
func (m *Model) runCommand(word, args string) (tea.Cmd, bool) {
	switch word {
	case "/diff":
		if m.sess == nil {
			m.flash = "No session is open."
			return nil, true
		}
		m.pager = newPager(pagerDiff, "Workspace patch", []string{" " + m.th.Muted.Render("computing…")}, m.width, m.bodyHeight())
		return m.diff(), true
	case "/apply":
		switch {
		case m.sess == nil:
			m.flash = "No session is open."
			return nil, true
		case m.busy():
			m.flash = "A turn is running: /apply works between turns (ctrl+c cancels the turn)."
			return nil, true
		}
		m.pager = newPager(pagerApply, "Apply the workspace patch", []string{" " + m.th.Muted.Render("checking against the host tree…")}, m.width, m.bodyHeight())
		return m.checkApply(), true
	case "/sessions":
		m.picker = &picker{loading: true, current: m.SessionID()}
		return m.listSessions(), true
	case "/new":
		if m.busy() {
			m.flash = "A turn is running: ctrl+c cancels it first."
			return nil, true
		}
		m.opening = true
		return m.open(OpenRequest{}), true
	case "/compact":
		if m.sess == nil {
			m.flash = "No session is open."
			return nil, true
		}
		return m.compact(args), true
	case "/model":
		switch {
		case m.sess == nil:
			m.flash = "No session is open."
			return nil, true
		case args == "":
			m.flash = "Model: " + m.sess.Model + ". /model NAME switches it for the following requests."
			return nil, true
		}
		return m.setModel(args), true
	case "/fork":
		id := m.interrupted
		if id == "" && m.sess != nil {
			id = m.sess.ID
		}
		switch {
		case id == "":
			m.flash = "No session to fork: /sessions picks one."
			return nil, true
		case m.busy():
			m.flash = "A turn is running: ctrl+c cancels it first."
			return nil, true
		}
		m.opening = true
		return m.open(OpenRequest{ID: id, Fork: true}), true
	case "/help":
		m.openHelp()
		return nil, true
	case "/quit", "/exit":
		return m.quit(), true
	}
	return nil, false
}

func (m *Model) openHelp() {
	m.pager = newPager(pagerHelp, "Help", helpLines(m, m.width), m.width, m.bodyHeight())
}

// approvalGrace is how long after an approval prompt appears tab is
// ignored: a tab pressed for the input (completion) must not hand the
// keys to the box the moment it appears.
const approvalGrace = 400 * time.Millisecond

// approvalKey handles a key while a question is up. The input keeps every
// key that edits text; only tab (a deliberate key) gives the box the keys,
// and only there do y, a, n, r and enter answer. esc denies; enter with
// text in the input denies and sends that text to the model as the reason.
func (m *Model) approvalKey(k tea.KeyPressMsg) tea.Cmd {
	q := m.asking
	ks := k.String()
	switch ks {
	case "ctrl+c":
		if m.tr.ActiveRun() != "" {
			m.canceling = true
			m.flash = cancelFlash
			return m.cancel()
		}
		return nil
	case "ctrl+o":
		q.all = !q.all
		return nil
	case "esc":
		return m.answer(Answer{})
	}
	if q.answering {
		switch ks {
		case "tab", "shift+tab":
			q.answering = false
		case "left", "up", "h", "k":
			q.choice = (q.choice + numChoices - 1) % numChoices
		case "right", "down", "l", "j":
			q.choice = (q.choice + 1) % numChoices
		case "y", "Y":
			return m.choose(choiceOnce)
		case "a", "A":
			return m.choose(choiceRun)
		case "n", "N":
			return m.choose(choiceDeny)
		case "r", "R":
			return m.choose(choiceReason)
		case "enter", "space":
			return m.choose(q.choice)
		default:
			// Anything else is typing: it goes to the input.
			if k.Text != "" || ks == "backspace" {
				q.answering = false
				return m.in.update(k)
			}
		}
		return nil
	}
	switch ks {
	case "tab", "shift+tab":
		if m.opts.Now().Sub(m.approvalAt) >= approvalGrace {
			q.answering, q.reason = true, false
		}
		return nil
	case "enter":
		text := strings.TrimSpace(m.in.value())
		if text == "" {
			m.flash = "A question is waiting: tab answers it, esc denies."
			return nil
		}
		m.in.take()
		return m.answer(Answer{Reason: text})
	}
	m.flash = ""
	return m.in.update(k)
}

// choose answers with one of the box's choices; "deny with a reason"
// hands the keys back to the input to take the reason.
func (m *Model) choose(c int) tea.Cmd {
	switch c {
	case choiceOnce:
		return m.answer(Answer{Allow: true})
	case choiceRun:
		return m.answer(Answer{Allow: true, ForRun: true})
	case choiceReason:
		if text := strings.TrimSpace(m.in.value()); text != "" {
			m.in.take()
			return m.answer(Answer{Reason: text})
		}
		m.asking.answering, m.asking.reason = false, true
		return nil
	}
	return m.answer(Answer{})
}

// answer replies to the question on screen and takes it down.
func (m *Model) answer(ans Answer) tea.Cmd {
	a := m.asking.a
	m.asking = nil
	m.flash = ""
	return m.reply(a.PermissionID, ans)
}

func (m *Model) pagerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.pager
	switch k.String() {
	case "esc", "q", "ctrl+c", "n":
		m.pager = nil
		return nil
	case "y", "Y":
		if p.kind == pagerApply && p.plan.Conflict == "" && p.plan.Patch != "" {
			m.pager = nil
			return m.apply(p.plan)
		}
		return nil
	}
	return p.update(k)
}

func (m *Model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	if p.search {
		switch ks := k.String(); {
		case ks == "esc":
			p.search = false
			p.setQuery("")
			return nil
		case ks == "backspace":
			if r := []rune(p.query); len(r) > 0 {
				p.setQuery(string(r[:len(r)-1]))
			}
			return nil
		case ks == "up" || ks == "down" || ks == "enter" || ks == "pgup" || ks == "pgdown" || ks == "ctrl+c":
		case k.Text != "":
			p.setQuery(p.query + k.Text)
			return nil
		default:
			return nil
		}
	}
	switch k.String() {
	case "/":
		p.search = true
		return nil
	case "up", "k":
		p.move(-1)
	case "down", "j":
		p.move(+1)
	case "pgup":
		p.move(-10)
	case "pgdown":
		p.move(+10)
	case "esc", "q", "ctrl+c":
		if p.startup && m.sess == nil {
			return m.quit()
		}
		m.picker = nil
	case "enter":
		s, ok := p.selected()
		if !ok {
			return nil
		}
		if m.busy() {
			m.flash = "A turn is running: ctrl+c cancels it first."
			m.picker = nil
			return nil
		}
		m.picker = nil
		if s.ID == m.SessionID() {
			return nil
		}
		m.opening = true
		return m.open(OpenRequest{ID: s.ID})
	}
	return nil
}

func (m *Model) withdrawLast() tea.Cmd {
	if n := len(m.outbox); n > 1 {
		// Not yet with the engine: dropped here.
		m.outbox = m.outbox[:n-1]
		return nil
	}
	pend := m.tr.Pending()
	if len(pend) == 0 {
		return nil
	}
	return m.withdraw(pend[len(pend)-1].MessageID)
}
