package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// key routes a key press: the approval prompt first, then an overlay,
// then the screen's own keys, then the input.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	if ks == "esc" && m.comp.shown != nil {
		m.comp.shown = nil // the list of matches goes first
		return nil
	}
	escAgain := m.escArmed && ks == "esc"
	m.escArmed = false
	if m.in.search != nil && m.picker == nil && m.pager == nil && (m.asking == nil || !m.asking.answering) {
		m.in.searchKey(k)
		m.flash = ""
		return nil
	}
	switch {
	case m.asking != nil:
		return m.approvalKey(k)
	case m.picker != nil:
		return m.pickerKey(k)
	case m.turns != nil:
		return m.turnsKey(k)
	case m.pager != nil:
		return m.pagerKey(k)
	}
	height := m.bodyHeight()
	c := m.ctxFor()
	switch ks {
	case "ctrl+c":
		if m.tr.ActiveRun() != "" {
			if m.canceling {
				return m.quitNow() // asked twice: no more questions
			}
			m.canceling = true
			m.flash = cancelFlash
			return m.cancel()
		}
		if m.in.value() != "" {
			// A draft goes first (kept in the history: ↑ brings it back);
			// the next ctrl+c quits.
			m.in.take()
			m.flash = draftClearedFlash
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
		if cmd, ok := m.complete(); ok {
			return cmd
		}
	case "enter":
		return m.submit(false)
	case "alt+enter":
		return m.submit(true)
	case "pgup", "pgdown":
		m.scrollPage(ks == "pgup")
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
	case "ctrl+u":
		if m.in.ta.Value() != "" {
			m.in.clear()
			m.flash = inputClearedFlash
		}
		return nil
	case "ctrl+r":
		if len(m.in.history) == 0 {
			m.flash = "No messages sent yet to search."
			return nil
		}
		m.in.startSearch()
		return nil
	case "ctrl+g":
		return m.editDraft()
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
			m.escArmed = true
			return m.cancel()
		case m.in.ta.Value() != "":
			m.flash = ""
		case escAgain:
			return m.editLast()
		default:
			m.flash = ""
			m.escArmed = true
		}
		return nil
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

// quit leaves; with background jobs running it first says that leaving
// ends them, and the next ctrl+c or /quit leaves.
func (m *Model) quit() tea.Cmd {
	if n := m.jobs.running(); n > 0 && !m.jobsWarned {
		m.jobsWarned = true
		m.flash = plural(n, "background job") + " running: leaving ends them (a resume does not restart them). ctrl+c or /quit again leaves."
		return nil
	}
	return m.quitNow()
}

// quitNow leaves at once.
func (m *Model) quitNow() tea.Cmd {
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
	if trimmed == "?" {
		// "?" alone opens the help; a message may start with "?".
		m.in.take()
		m.openHelp()
		return nil
	}
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
		if m.opening {
			// Typed ahead of the open (a prompt pressed in at launch):
			// kept in the input, and sent when the session is open.
			m.sendOnOpen = &next
			m.flash = sendOnOpenFlash
			return nil
		}
		m.flash = "No session is open yet."
		return nil
	}
	if m.sess.Lost {
		m.flash = "Another process took this session over: /new starts a session, /sessions opens another."
		return nil
	}
	m.lastSent = sent{shown: m.in.ta.Value(), pastes: m.in.pastes}
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
			// The server's list follows, when it has one.
			m.flash = "Model: " + m.sess.Model + ". /model NAME switches it for the following requests."
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
	case "/rewind":
		switch {
		case m.sess == nil:
			m.flash = "No session is open."
			return nil, true
		case m.busy():
			m.flash = "A turn is running: /rewind works between turns (esc cancels it)."
			return nil, true
		}
		m.turns = &turnPicker{loading: true}
		return m.listTurns(), true
	case "/help":
		m.openHelp()
		return nil, true
	case "/permissions":
		return permissionsCommand.run(m, args), true
	case "/jobs":
		return jobsCommand.run(m, args), true
	case "/quit", "/exit":
		return m.quit(), true
	}
	return nil, false
}

// viewCommand is a slash command on the open session that shows a view
// with no argument and does one thing with "VERB ARG" (/jobs stop ID,
// /permissions revoke TOOL); anything else shows its usage.
type viewCommand struct {
	kind  pagerKind
	title string
	lines func(*Model) []string // the view
	verb  string
	do    func(m *Model, arg string) tea.Cmd
	usage string
}

// run runs c with args, the text after its word.
func (c viewCommand) run(m *Model, args string) tea.Cmd {
	if m.sess == nil {
		m.flash = "No session is open."
		return nil
	}
	fields := strings.Fields(args)
	switch {
	case len(fields) == 0:
		m.pager = newPager(c.kind, c.title, c.lines(m), m.width, m.bodyHeight())
		return nil
	case len(fields) == 2 && fields[0] == c.verb:
		return c.do(m, fields[1])
	}
	m.flash = c.usage
	return nil
}

func (m *Model) openHelp() {
	m.pager = newPager(pagerHelp, "Help", helpLines(m, m.width), m.width, m.bodyHeight())
}

// questionFlash says how to answer the question on screen.
const questionFlash = "A question is waiting: with the input empty, tab gives it the keys (y, a, s, n or r); esc denies and stops the turn."

// approvalKey handles a key while a question is up. A keystroke meant for
// the input never answers: the input keeps every key that edits text, and
// tab with a draft completes it. Only tab on an empty input gives the box
// the keys (boxKey), and the input then shows that it is paused. Esc
// collapses an expanded box, else denies and stops the turn; enter with
// text in the input denies and sends that text to the model as the reason.
func (m *Model) approvalKey(k tea.KeyPressMsg) tea.Cmd {
	q := m.asking
	ks := k.String()
	if m.pager != nil && !q.answering {
		// A view opened while the question waits (/diff to look before
		// answering) is on top: esc closes it, never the question, and
		// the scroll keys are its own.
		switch ks {
		case "esc":
			m.pager = nil
			return nil
		case "pgup", "pgdown", "up", "down", "home", "end":
			return m.pagerKey(k)
		}
	}
	switch ks {
	case "ctrl+c":
		if m.tr.ActiveRun() != "" {
			m.canceling = true
			m.flash = cancelFlash
			return m.cancel()
		}
		return nil
	case "ctrl+o":
		if q.expandable() {
			q.all, q.off = !q.all, 0
		}
		return nil
	case "pgup", "pgdown":
		if !q.cut {
			m.scrollPage(ks == "pgup") // the box shows all of it: the transcript scrolls
			return nil
		}
		if ks == "pgup" {
			q.off = max(q.off-max(q.page-1, 1), 0)
		} else {
			q.off += max(q.page-1, 1) // the view keeps it in range
		}
		return nil
	case "esc":
		if q.all {
			// An expanded box collapses first, as Esc closes every
			// other view before it acts.
			q.all, q.off = false, 0
			return nil
		}
		// One key stops everything: the call is denied and the turn
		// stops.
		if m.tr.ActiveRun() == "" {
			return m.answer(Answer{})
		}
		id := q.a.PermissionID
		m.dropQuestion()
		m.canceling = true
		m.flash = cancelFlash
		return m.denyAndCancel(id)
	}
	if q.answering {
		return m.boxKey(q, k)
	}
	switch ks {
	case "tab", "shift+tab":
		if m.in.value() != "" {
			// Meant for the draft: it completes there, and never hands the
			// keys to the box.
			if cmd, ok := m.complete(); ok {
				return cmd
			}
			m.flash = "Tab answers only with the input empty: enter denies with what you typed, esc denies and stops the turn."
			return nil
		}
		m.focusBox()
		return nil
	case "enter":
		text := strings.TrimSpace(m.in.value())
		if text == "" {
			m.flash = questionFlash
			if q.reason {
				m.flash = "Type the reason the model gets, then enter; esc denies without one and stops the turn."
			}
			return nil
		}
		if cmd, ok, known := m.command(text); ok {
			// A slash command (/diff before answering), not a reason: it
			// runs, or is refused, as at any time; the question waits.
			if known {
				m.in.take()
			}
			return cmd
		}
		if allowKey(text) {
			// "y" then enter: meant as an answer, not as the reason of a
			// denial. Typing never answers; say how to, and keep it.
			m.flash = "Typing never answers a question: clear the input, then tab and " + strings.ToLower(text[:1]) +
				"; enter with a message denies and gives the model your words."
			return nil
		}
		m.in.take()
		if t := strings.ToLower(text); t == "n" || t == "no" {
			return m.answer(Answer{}) // a plain no: no reason to pass on
		}
		return m.answer(Answer{Reason: text})
	}
	m.flash = ""
	return m.in.update(k)
}

// allowKey reports whether text, typed in the input while a question
// waits, is one of the box's allowing keys (y, a, s; "yes"): the user
// meant to allow, and a denial with it as the reason would surprise.
func allowKey(text string) bool {
	switch strings.ToLower(text) {
	case "y", "yes", "a", "s":
		return true
	}
	return false
}

// boxKey handles a key while the question's box has the keys: y, a, n and
// r answer; the arrows move the highlight, which starts on "deny", and
// only once it was moved do enter and space act on it; tab, or any other
// key that types, gives the keys back to the input (and types there).
func (m *Model) boxKey(q *asking, k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	switch ks {
	case "tab", "shift+tab":
		m.focusInput()
		return nil
	case "left", "up":
		q.choice, q.moved = max(q.choice-1, 0), true
		return nil
	case "right", "down":
		q.choice, q.moved = min(q.choice+1, numChoices-1), true
		return nil
	case "y", "Y":
		return m.choose(choiceOnce)
	case "a", "A":
		return m.choose(choiceRun)
	case "s", "S":
		return m.choose(choiceSession)
	case "n", "N":
		return m.choose(choiceDeny)
	case "r", "R":
		return m.choose(choiceReason)
	case "enter":
		if q.moved {
			return m.choose(q.choice)
		}
		m.flash = "Choose with ←/→ first, or press y, a, s, n or r."
		return nil
	case "space":
		if q.moved {
			return m.choose(q.choice)
		}
	}
	if k.Text == "" && ks != "backspace" {
		return nil
	}
	// Typing: the keys go back to the input, with this one.
	m.focusInput()
	m.flash = ""
	return m.in.update(k)
}

// focusBox gives the question's box the keys, the highlight on "deny";
// the input is paused (dimmed, no cursor).
func (m *Model) focusBox() {
	q := m.asking
	q.answering, q.reason, q.choice, q.moved = true, false, choiceDeny, false
	m.in.blur()
	m.flash = ""
}

// focusInput gives the keys back to the input.
func (m *Model) focusInput() {
	if m.asking != nil {
		m.asking.answering = false
	}
	m.in.focus()
}

// dropQuestion takes the question down; the input has the keys again.
func (m *Model) dropQuestion() {
	m.asking = nil
	m.in.focus()
}

// choose answers with one of the box's choices; "deny with a reason"
// hands the keys back to the input to take the reason.
func (m *Model) choose(c int) tea.Cmd {
	switch c {
	case choiceOnce:
		return m.answer(Answer{Allow: true})
	case choiceRun:
		return m.answer(Answer{Allow: true, ForRun: true})
	case choiceSession:
		return m.answer(Answer{Allow: true, ForSession: true})
	case choiceReason:
		if text := strings.TrimSpace(m.in.value()); text != "" {
			m.in.take()
			return m.answer(Answer{Reason: text})
		}
		m.focusInput()
		m.asking.reason = true
		m.in.ta.Placeholder = "the reason to deny with: the model reads it"
		return nil
	}
	return m.answer(Answer{})
}

// answer replies to the question on screen and takes it down.
func (m *Model) answer(ans Answer) tea.Cmd {
	a := m.asking.a
	m.dropQuestion()
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
	case "1", "2", "3", "4", "5", "6", "7", "8", "9":
		if p.kind == pagerJobs {
			return m.stopKey(k.String())
		}
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
		text := m.outbox[n-1].text
		m.outbox = m.outbox[:n-1]
		m.restoreWithdrawn(text)
		return nil
	}
	pend := m.tr.Pending()
	if len(pend) == 0 {
		return nil
	}
	last := pend[len(pend)-1]
	return m.withdraw(last.MessageID, last.Text)
}

// scrollPage scrolls the transcript a page up or down; at the bottom it
// follows again, and what was new below has been seen.
func (m *Model) scrollPage(up bool) {
	height := m.bodyHeight()
	if up {
		m.vp.ScrollUp(m.tr, m.ctxFor(), height, max(height-2, 1))
		return
	}
	m.vp.ScrollDown(m.tr, m.ctxFor(), height, max(height-2, 1))
	if m.vp.Following() {
		m.unseen = false
	}
}

// editLast is Esc Esc on an empty input: the last message sent comes back
// to edit, withdrawn when it is still waiting (steering or queued), as a
// new message otherwise.
func (m *Model) editLast() tea.Cmd {
	if len(m.outbox) > 1 || len(m.tr.Pending()) > 0 {
		return m.withdrawLast()
	}
	if m.lastSent.shown == "" {
		return nil
	}
	m.in.show(m.lastSent)
	m.flash = "Your last message is back in the input: enter sends it as a new message."
	return nil
}

// restoreWithdrawn puts a withdrawn message's text back in the input to
// edit, when the input is empty (a draft is never overwritten).
func (m *Model) restoreWithdrawn(text string) {
	if strings.TrimSpace(m.in.value()) == "" {
		m.in.setValue(text)
		m.flash = "Withdrawn: it is back in the input to edit and send again."
		return
	}
	m.flash = "Withdrawn (the input holds a draft, so the text is not put back: ↑ finds it in the history)."
}
