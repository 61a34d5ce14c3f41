package tui

import (
	"context"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/tui/theme"
	"github.com/harness-dev/harness/tui/transcript"
)

// wheelLines is how far one notch of the mouse wheel scrolls.
const wheelLines = 3

// cancelFlash is shown while a cancel is under way.
const cancelFlash = "Canceling the turn… ctrl+c again quits without waiting."

// compactingFlash says that /compact runs while idle; it goes once that
// compaction turn has ended (after).
const compactingFlash = "Compacting the conversation now…"

// Hints true for a while only: dropStaleFlash takes them off once they
// are not.
const (
	inputClearedFlash = "Input cleared (↑ brings it back)."
	draftClearedFlash = "Draft cleared (↑ brings it back) · ctrl+c again quits."
	// compactAskedFlash: /compact during a turn, until the compaction
	// begins or the turn ends.
	compactAskedFlash = "Compaction asked: it runs before the turn's next model request."
)

// dropStaleFlash takes a hint off once it is no longer true: a cleared
// input that holds text again (a paste, say), a compaction asked for
// that has begun or whose turn has ended.
func (m *Model) dropStaleFlash() {
	switch m.flash {
	case inputClearedFlash, draftClearedFlash:
		if m.in.value() != "" {
			m.flash = ""
		}
	case compactAskedFlash:
		if m.tr.ActiveRun() != m.compactFrom || m.tr.Compacting() {
			m.flash = ""
		}
	}
}

// outgoing is a message typed but not yet accepted by the session.
type outgoing struct {
	text string
	next bool // Queue (alt+enter) rather than Send
}

// Options configure a Model.
type Options struct {
	Open OpenRequest // the session to open at start
	Pick bool        // start with the session picker instead
	// Prompt is the first message (harness "PROMPT"): it stands in the
	// input and is sent as soon as the session is open, as an enter
	// pressed while it opens is.
	Prompt string
	Now    func() time.Time // the clock (picker ages); nil: time.Now
	// Profile is the terminal's colour profile until the program reports
	// it (tea.ColorProfileMsg); 0: true colour.
	Profile colorprofile.Profile
}

// Model is the root of the TUI: it routes messages to its components and
// lays them out. It holds no engine state of its own beyond what the event
// stream folds into the transcript and the owner's state Next reports.
type Model struct {
	ctx  context.Context
	eng  Engine
	opts Options

	th   *theme.Theme
	prof colorprofile.Profile // the terminal's colours: 16 get their own palette
	keys keyMap
	help help.Model
	spin spinner.Model
	in   input

	width, height int
	now           time.Time
	ticking       bool

	sess    *Session
	state   State // the session owner's, as the engine last reported it
	opening bool
	// sendOnOpen is an enter (alt+enter: its next is true) pressed while
	// the session was still opening: the input is sent once it is open.
	sendOnOpen *bool
	openErr    error
	// startWarning is what in the project will stop the open session's
	// workspace (StartChecker), shown as a banner; "" for nothing.
	startWarning string
	// interrupted is a session that could not be opened because its last
	// turn was interrupted: /fork continues it in a new session.
	interrupted string
	// interruptedText is the request the interrupted turn was answering:
	// /fork puts it back in the input.
	interruptedText string

	tr      *transcript.Transcript
	vp      *transcript.Viewport
	last    lastAnswer // what stays in the scrollback after quitting
	grants  grants     // what the open session allows for the session (/permissions)
	jobs    jobs       // the open session's background jobs (status line, /jobs)
	lastSeq int64
	unseen  bool // events arrived below a scrolled-up window
	// liveFrom is the first block of what this process showed live (the
	// blocks before it are the log it opened): Scrollback starts there.
	liveFrom int
	// openNotes is how many notes opening a session without a log added
	// (the project's instructions): the welcome stays above them.
	openNotes int

	// outbox holds typed messages in order; its head is with the engine.
	// One at a time, so the session receives them in the order typed; the
	// session alone decides what each becomes.
	outbox    []outgoing
	canceling bool // Cancel was asked

	comp   completer // tab completion of paths
	asking *asking   // the permission question on screen
	pager  *pager
	picker *picker
	turns  *turnPicker // the /rewind list
	flash  string
	// compactFrom is the last run when /compact was asked for: a later
	// one that has ended is that compaction's turn.
	compactFrom string
	quitting    bool
	jobsWarned  bool // quit said that leaving ends the running jobs
	escArmed    bool // the last key was an Esc that did nothing else: a second one edits the last message
	lastSent    sent // the last message sent, as the input held it (Esc Esc)
}

// New returns the root model. ctx bounds every engine call it makes.
func New(ctx context.Context, eng Engine, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	prof := opts.Profile
	if prof == 0 {
		prof = colorprofile.TrueColor
	}
	th := theme.NewFor(true, prof)
	m := &Model{
		ctx: ctx, eng: eng, opts: opts, th: th, prof: prof,
		keys: newKeyMap(), help: help.New(),
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot)),
		in:   newInput(th),
		tr:   transcript.New(), vp: transcript.NewViewport(), lastSeq: -1,
	}
	m.restyle(th)
	if opts.Pick {
		m.picker = &picker{loading: true, startup: true}
	} else {
		m.opening = true
		if opts.Prompt != "" {
			m.in.setValue(opts.Prompt)
			m.sendOnOpen, m.flash = new(bool), sendOnOpenFlash
		}
	}
	return m
}

// SessionID is the open session's ID, "" when none opened.
func (m *Model) SessionID() string {
	if m.sess == nil {
		return ""
	}
	return m.sess.ID
}

// OpenErr is why the session could not be opened, if it could not.
func (m *Model) OpenErr() error { return m.openErr }

// Init opens the session (or lists sessions for the picker) and starts
// listening to the engine.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.listen(), tea.RequestBackgroundColor}
	if m.picker != nil {
		cmds = append(cmds, m.listSessions())
	} else {
		cmds = append(cmds, m.open(m.opts.Open))
	}
	return tea.Batch(cmds...)
}

func (m *Model) restyle(th *theme.Theme) {
	m.th = th
	m.in.restyle(th)
	st := help.DefaultStyles(th.Dark)
	st.ShortKey, st.FullKey = th.Key, th.Key
	st.ShortDesc, st.FullDesc = th.Muted, th.Muted
	st.ShortSeparator, st.FullSeparator, st.Ellipsis = th.Faint, th.Faint, th.Faint
	m.help.Styles = st
	m.spin.Style = th.Accent
}

// busy reports whether a turn is active (as the session's owner says),
// or a message is on its way.
func (m *Model) busy() bool {
	return len(m.outbox) > 0 || m.state.Busy()
}

// Update routes one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer m.dropStaleFlash()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.in.setWidth(m.width - 1)
		m.help.SetWidth(m.width - 2)
		if m.pager != nil {
			m.pager.resize(m.width, m.bodyHeight())
		}
		return m, nil
	case tea.BackgroundColorMsg:
		if dark := msg.IsDark(); dark != m.th.Dark {
			m.restyle(theme.NewFor(dark, m.prof))
			m.tr.Invalidate()
		}
		return m, nil
	case tea.ColorProfileMsg:
		if msg.Profile != m.prof {
			m.prof = msg.Profile
			m.restyle(theme.NewFor(m.th.Dark, m.prof))
			m.tr.Invalidate()
		}
		return m, nil
	case tea.KeyPressMsg:
		cmd := m.key(msg)
		m.followCompletion(msg)
		return m, cmd
	case tea.MouseWheelMsg:
		if m.pager == nil && m.picker == nil && m.turns == nil && m.sess != nil {
			h, c := m.bodyHeight(), m.ctxFor()
			switch msg.Button {
			case tea.MouseWheelUp:
				m.vp.ScrollUp(m.tr, c, h, wheelLines)
			case tea.MouseWheelDown:
				m.vp.ScrollDown(m.tr, c, h, wheelLines)
				if m.vp.Following() {
					m.unseen = false
				}
			}
		} else if m.pager != nil {
			return m, m.pager.update(msg)
		}
		return m, nil
	case tea.PasteMsg:
		if m.pager == nil && m.picker == nil && m.turns == nil {
			if m.asking != nil && m.asking.answering {
				m.focusInput() // a paste is typing: it goes to the input
			}
			return m, m.in.update(msg)
		}
		return m, nil
	case spinner.TickMsg:
		m.now = msg.Time
		if !m.busy() && !m.tr.Live() {
			m.ticking = false
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case updateMsg:
		return m, m.onUpdate(msg)
	case filesMsg:
		return m, m.onFiles(msg)
	case openedMsg:
		return m, m.onOpened(msg)
	case sentMsg:
		return m, m.onSent(msg)
	case withdrawnMsg:
		m.restoreWithdrawn(msg.text)
		return m, nil
	case editorReadyMsg:
		return m, m.runEditor(msg)
	case editedMsg:
		m.onEdited(msg)
		return m, nil
	case doneMsg:
		if msg.err != nil {
			m.tr.Note(transcript.NoteError, string(errcode.Of(msg.err)), msg.what+": "+errcode.Message(msg.err))
			if msg.what == "cancel" {
				m.canceling = false
			}
		}
		return m, nil
	case diffMsg:
		if m.pager != nil && m.pager.kind == pagerDiff {
			if msg.err != nil {
				m.pager.vp.SetContentLines([]string{" " + errLine(m.th, msg.err)})
			} else {
				m.pager.vp.SetContentLines(diffLines(msg.patch, m.width, m.th))
			}
		}
		return m, nil
	case planMsg:
		if m.pager != nil && m.pager.kind == pagerApply {
			if msg.err != nil {
				m.pager.vp.SetContentLines([]string{" " + errLine(m.th, msg.err)})
				return m, nil
			}
			m.pager.plan = msg.plan
			m.pager.vp.SetContentLines(applyLines(msg.plan, m.width, m.th))
		}
		return m, nil
	case modelMsg:
		if msg.err != nil {
			m.tr.Note(transcript.NoteError, string(errcode.Of(msg.err)), "model: "+errcode.Message(msg.err))
			return m, nil
		}
		if msg.name == "" {
			m.tr.Note(transcript.NoteInfo, "", "models the server serves: "+strings.Join(msg.list, ", ")+" (/model NAME switches)")
			return m, nil
		}
		if m.sess != nil {
			m.sess.Model = msg.name
		}
		text := "model: " + msg.name + " answers from the next model request on"
		if msg.note != "" {
			text += " (" + msg.note + ")"
		}
		m.tr.Note(transcript.NoteInfo, "", text)
		return m, nil
	case compactMsg:
		switch {
		case msg.err != nil:
			m.tr.Note(transcript.NoteError, string(errcode.Of(msg.err)), "compact: "+errcode.Message(msg.err))
		case m.busy():
			m.flash = compactAskedFlash
		default:
			// Idle: the session runs a compaction turn now; its events and
			// the note it ends with show what it did.
			if m.tr.LastRun() == m.compactFrom {
				m.flash = compactingFlash // else the compaction turn has already ended
			}
		}
		return m, nil
	case appliedMsg:
		if msg.err != nil {
			m.tr.Note(transcript.NoteError, string(errcode.Of(msg.err)), "apply: "+errcode.Message(msg.err))
		} else if msg.out != "" {
			m.tr.Note(transcript.NoteInfo, "", msg.out)
		}
		return m, nil
	case turnsMsg:
		if m.turns != nil {
			m.turns.fill(msg)
		}
		return m, nil
	case rewoundMsg:
		return m, m.onRewound(msg)
	case startWarningMsg:
		// Like the history, a check the store or the walk could not make
		// leaves the screen as it is: the first tool call says it then.
		if msg.err == nil && m.sess != nil && msg.sessionID == m.sess.ID {
			m.startWarning = msg.warning
		}
		return m, nil
	case promptsMsg:
		// The project's history is a convenience: a store that cannot
		// list it leaves ↑ with the open session's own prompts.
		if msg.err == nil && m.sess != nil && msg.sessionID == m.sess.ID {
			m.in.setPast(msg.prompts)
		}
		return m, nil
	case sessionsMsg:
		if m.picker != nil {
			m.picker.loading = false
			m.picker.list, m.picker.err = msg.list, msg.err
			m.now = msg.now
		}
		return m, nil
	}
	return m, nil
}

// onUpdate folds a batch of events in and reacts to what changed.
func (m *Model) onUpdate(msg updateMsg) tea.Cmd {
	if msg.err != nil {
		return nil // the context ended: the program is quitting
	}
	cmds := []tea.Cmd{m.listen()}
	u := msg.u
	if m.sess != nil && u.SessionID == m.sess.ID {
		if u.State != "" {
			m.state = u.State
		}
		before := m.tr.Version()
		for _, r := range u.Events {
			if r.Seq <= m.lastSeq {
				continue
			}
			m.lastSeq = r.Seq
			m.tr.Apply(r.Event)
			m.last.apply(r.Event)
			m.grants.apply(r.Event)
			m.jobs.apply(r.Event)
			switch d := r.Event.Data.(type) {
			case event.TurnCompleted:
				cmds = append(cmds, m.refreshFiles()) // the turn may have changed the files
			case event.JobStarted, event.JobExited:
				if m.pager != nil && m.pager.kind == pagerJobs {
					// The open /jobs view follows: a job that ended is no
					// longer offered to stop.
					m.pager.vp.SetContentLines(jobLines(m))
				}
				if e, ok := d.(event.JobExited); ok && m.flash == "Stopping "+e.JobID+"…" {
					m.flash = ""
				}
			}
		}
		if d := u.Unrecorded; d != nil && m.tr.ActiveRun() == d.RunID {
			ended := event.Event{Type: event.TypeTurnCompleted, At: time.Now(), Data: *d}
			m.tr.Apply(ended)
			m.last.apply(ended)
		}
		if m.tr.Version() != before && !m.vp.Following() {
			m.unseen = true
		}
		if u.Lost != "" && !m.sess.Lost {
			// Another process took the session over: say so now, and send
			// it nothing more (what waits in the outbox is dropped).
			m.sess.Lost, m.outbox = true, nil
			m.tr.Note(transcript.NoteError, string(errcode.SessOwnershipLost), u.Lost)
		}
		if u.Approval != nil {
			// A question takes the screen: an open pager or picker closes.
			m.asking = &asking{a: u.Approval}
			if u.Approval.Tool == "fs.write" {
				// The card above counts the same change as the question.
				m.tr.PreviewWrite(u.Approval.CallID, u.Approval.Diff)
			}
			m.pager = nil
			if m.picker != nil && !m.picker.startup {
				m.picker = nil
			}
		}
	}
	cmds = append(cmds, m.after())
	return tea.Batch(cmds...)
}

// after reacts to the folded state: a finished turn, the spinner, a
// question already answered.
func (m *Model) after() tea.Cmd {
	if m.tr.ActiveRun() == "" {
		m.canceling = false
		if m.flash == cancelFlash || (m.flash == compactingFlash && m.tr.LastRun() != m.compactFrom) {
			m.flash = ""
		}
	}
	if m.asking != nil && m.tr.Resolved(m.asking.a.PermissionID) {
		m.dropQuestion()
	}
	if m.busy() || m.tr.Live() {
		return m.tick()
	}
	return nil
}

func (m *Model) tick() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return m.spin.Tick
}

func (m *Model) onOpened(msg openedMsg) tea.Cmd {
	m.opening = false
	pressed := m.sendOnOpen
	m.sendOnOpen = nil
	if m.flash == sendOnOpenFlash {
		m.flash = ""
	}
	if msg.err != nil {
		if errcode.Of(msg.err) == errcode.RuntimeCheckpointInterrupted && msg.req.ID != "" && !msg.req.Fork {
			m.interrupted = msg.req.ID
			if m.sess == nil && len(msg.sess.History) > 0 {
				m.showInterrupted(msg.sess.History)
			}
		}
		if m.sess == nil {
			m.openErr = msg.err
		} else {
			text := "could not open the session: " + errcode.Message(msg.err)
			if m.interrupted == msg.req.ID && m.interrupted != "" {
				text += " — /fork continues it from its last finished turn in a new session"
			}
			m.tr.Note(transcript.NoteError, string(errcode.Of(msg.err)), text)
		}
		return nil
	}
	request := ""
	if msg.req.Fork && msg.req.ID == m.interrupted {
		request = m.interruptedText
	}
	m.interrupted, m.interruptedText = "", ""
	s := msg.sess
	m.sess, m.openErr = &s, nil
	m.state = StateIdle // a session opens between turns
	m.tr = transcript.New()
	m.vp.Reset()
	m.last = lastAnswer{}
	m.grants = grants{} // a fork asks again
	m.jobs = jobs{}
	m.lastSeq = -1
	m.outbox, m.canceling, m.unseen = nil, false, false
	m.comp = completer{} // the files of another workspace
	m.dropQuestion()
	var sent []string
	for _, r := range s.Inherited {
		m.tr.Apply(r.Event)
		m.last.apply(r.Event)
	}
	for _, r := range s.History {
		if r.Seq > m.lastSeq {
			m.lastSeq = r.Seq
			m.tr.Apply(r.Event)
			m.last.apply(r.Event)
			m.grants.apply(r.Event)
			m.jobs.apply(r.Event)
			switch d := r.Event.Data.(type) {
			case event.MessageCompleted:
				if d.Role == model.RoleUser {
					sent = append(sent, d.Content)
				}
			case event.SteeringQueued:
				sent = append(sent, d.Content)
			}
		}
	}
	m.in.seed(sent) // ↑ recalls what was sent before the resume
	m.lastSent = m.in.lastEntry()
	// Folded: the transcript holds what the screen shows. The log itself
	// (a long session's is many MiB) is not kept.
	m.sess.History, m.sess.Inherited = nil, nil
	if s.Usage.TotalTokens > m.tr.Usage().TotalTokens {
		m.tr.SetUsage(s.Usage)
	}
	if s.Window > 0 && s.Occupancy > 0 {
		m.tr.SetOccupancy(s.Occupancy, s.Window)
	}
	m.openNotes = 0
	if len(s.Instructions) > 0 {
		if m.tr.Len() == 0 {
			m.openNotes = 1
		}
		m.tr.Note(transcript.NoteInfo, "", "using "+strings.Join(s.Instructions, ", ")+" (project instructions, in the system prompt)")
	}
	m.liveFrom = m.tr.Len()
	if request != "" && strings.TrimSpace(m.in.value()) == "" {
		// The fork continues from the last finished turn: the request
		// the interrupted turn was answering is back in the input.
		m.in.setValue(request)
		m.flash = "The interrupted request is back in the input: enter sends it again."
	}
	m.startWarning = ""
	// In the background: ↑ and ctrl+r reach the project's other sessions,
	// and a banner names what would stop the workspace, once read.
	load := tea.Batch(m.prompts(), m.startCheck())
	if pressed != nil && strings.TrimSpace(m.in.value()) != "" {
		return tea.Batch(load, m.submit(*pressed))
	}
	return load
}

// sendOnOpenFlash says that an enter pressed while the session opens was
// taken: the input goes once the session is open.
const sendOnOpenFlash = "Sent once the session is open…"

// showInterrupted folds the log of a session that could not be resumed
// (its last turn was interrupted) into the screen, read only, and keeps
// the request that turn was answering for /fork.
func (m *Model) showInterrupted(hist []Record) {
	m.tr = transcript.New()
	m.vp.Reset()
	m.lastSeq = -1
	m.interruptedText = ""
	var input string
	open := false
	requests, calls := 0, 0 // the open turn's, for its end line
	for _, r := range hist {
		m.tr.Apply(r.Event)
		switch d := r.Event.Data.(type) {
		case event.TurnStarted:
			open, input, requests, calls = true, "", 0, 0
		case event.ModelRequest:
			requests++
		case event.ToolCall:
			calls++
		case event.MessageCompleted:
			if d.Role == model.RoleUser && open && input == "" && !strings.HasPrefix(d.Content, event.AttachmentsMarker) {
				input = d.Content
			}
		case event.TurnCompleted:
			open = false
		}
	}
	if open {
		m.interruptedText = input
		// Nothing runs it any more: the screen is not busy, and its
		// cards stop their clocks.
		at := hist[len(hist)-1].Event.At
		m.tr.Apply(event.Event{At: at, Data: event.TurnCompleted{RunID: m.tr.ActiveRun(), SessionID: m.tr.SessionID(), Status: "interrupted",
			ModelRequests: requests, ToolCalls: calls}})
	}
	m.tr.Note(transcript.NoteWarn, string(errcode.RuntimeCheckpointInterrupted), "this session's last turn was interrupted: /fork continues it from its last finished turn in a new session")
}

// onSent takes the outbox head back from the engine and sends the next.
func (m *Model) onSent(msg sentMsg) tea.Cmd {
	if len(m.outbox) > 0 {
		m.outbox = m.outbox[1:]
	}
	var cmds []tea.Cmd
	if msg.sent.Note != "" {
		m.tr.Note(transcript.NoteInfo, "", msg.sent.Note)
	}
	if msg.err != nil {
		m.tr.Note(transcript.NoteError, string(errcode.Of(msg.err)), "not accepted: "+errcode.Message(msg.err))
		if m.in.value() == "" {
			m.in.setValue(msg.text)
		}
	}
	if len(m.outbox) > 0 {
		cmds = append(cmds, m.send(m.outbox[0]))
	}
	return tea.Batch(append(cmds, m.after())...)
}
