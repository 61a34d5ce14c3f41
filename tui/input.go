package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/harness-dev/harness/tui/theme"
)

// maxInputChars is the runtime's limit on one message (DESIGN §7).
const maxInputChars = 262144

// input is the message editor: a multi-line textarea that is always live,
// with shell-like history recall (↑ on the first line, ↓ on the last).
type input struct {
	ta      textarea.Model
	history []sent // sent messages, oldest first
	// past is how many of history's first entries are the project's other
	// sessions' prompts (setPast), before the open session's own.
	past   int
	recall int    // index into history while recalling, len(history) when not
	draft  string // what was typed before recalling began
	pastes []paste
	// draftPastes are the draft's pastes while recalling.
	draftPastes []paste
	// search is the ctrl+r history search under way, nil when none.
	search *historySearch
}

// sent is a message in the history as it was in the editor: its text with
// the markers of its long pastes, and those pastes.
type sent struct {
	shown  string
	pastes []paste
}

// text is what was sent.
func (h sent) text() string {
	v := h.shown
	for _, p := range h.pastes {
		v = strings.Replace(v, p.marker, p.text, 1)
	}
	return v
}

// historySearch is a ctrl+r search: the query, and the history entry that
// matches it (-1: none), what the editor held before it began.
type historySearch struct {
	query       string
	match       int
	draft       string
	draftPastes []paste
}

// paste is a long paste: the editor holds marker, what is sent holds text.
type paste struct{ marker, text string }

// A paste of at least pasteCollapseLines lines or pasteCollapseChars
// characters is shown collapsed in the editor ("[pasted 200 lines]").
const (
	pasteCollapseLines = 10
	pasteCollapseChars = 2000
)

func newInput(th *theme.Theme) input {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Placeholder = livePlaceholder
	ta.CharLimit = maxInputChars
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 8
	ta.MaxContentHeight = 1 << 20
	ta.SetVirtualCursor(false)
	km := textarea.DefaultKeyMap()
	km.InsertNewline = key.NewBinding(key.WithKeys("ctrl+j", "shift+enter"), key.WithHelp("ctrl+j", "newline"))
	km.LinePrevious = key.NewBinding(key.WithKeys("up"))
	km.LineNext = key.NewBinding(key.WithKeys("down"))
	km.PageUp, km.PageDown = key.Binding{}, key.Binding{} // the transcript scrolls
	ta.KeyMap = km
	in := input{ta: ta}
	in.restyle(th)
	in.ta.Focus()
	return in
}

func (in *input) restyle(th *theme.Theme) {
	st := textarea.DefaultStyles(th.Dark)
	for _, s := range []*textarea.StyleState{&st.Focused, &st.Blurred} {
		s.CursorLine = lipgloss.NewStyle()
		s.Text = lipgloss.NewStyle()
		s.Placeholder = th.Muted
		s.EndOfBuffer = lipgloss.NewStyle()
	}
	// Paused (a question's box has the keys): dimmed, and no cursor.
	st.Blurred.Text, st.Blurred.CursorLine, st.Blurred.Placeholder = th.Faint, th.Faint, th.Faint
	st.Cursor.Blink = false
	in.ta.SetStyles(st)
	accent, faint := th.Accent, th.Faint
	in.ta.SetPromptFunc(2, func(p textarea.PromptInfo) string {
		switch {
		case p.LineNumber != 0:
			return "  "
		case !p.Focused:
			return faint.Render("›") + " "
		}
		return accent.Render("›") + " "
	})
}

// The editor's placeholder, live and paused.
const (
	livePlaceholder   = "Ask anything · / for commands · ? for help"
	pausedPlaceholder = "paused while the question has the keys · tab or typing comes back here"
)

// focus gives the editor the keys; blur pauses it (dimmed, no cursor,
// keys ignored).
func (in *input) focus() {
	in.ta.Placeholder = livePlaceholder
	in.ta.Focus()
}

func (in *input) blur() {
	in.ta.Placeholder = pausedPlaceholder
	in.ta.Blur()
}

func (in *input) setWidth(w int) { in.ta.SetWidth(max(w, 10)) }

// value is the text to send: the editor's, with each collapsed paste
// marker replaced by the paste.
func (in *input) value() string {
	v := in.ta.Value()
	for _, p := range in.pastes {
		v = strings.Replace(v, p.marker, p.text, 1)
	}
	return v
}

func (in *input) setValue(s string) {
	in.pastes = nil
	in.ta.SetValue(s)
	in.ta.MoveToEnd()
}

// show puts a history entry in the editor as it was sent: a long paste
// as its marker again.
func (in *input) show(h sent) {
	in.ta.SetValue(h.shown)
	in.ta.MoveToEnd()
	in.pastes = append([]paste(nil), h.pastes...)
}

// clear empties the editor (ctrl+u); what it held goes to the history, so
// ↑ brings it back.
func (in *input) clear() {
	if strings.TrimSpace(in.ta.Value()) != "" {
		in.take()
	}
}

// lastEntry is the newest history entry (zero when none).
func (in *input) lastEntry() sent {
	if len(in.history) == 0 {
		return sent{}
	}
	return in.history[len(in.history)-1]
}

// startSearch begins a ctrl+r search of the history.
func (in *input) startSearch() {
	in.search = &historySearch{match: -1, draft: in.ta.Value(), draftPastes: in.pastes}
}

// searchKey handles a key during a ctrl+r search: typing narrows it,
// ctrl+r goes to an older match, enter takes the match into the editor
// (to edit or send), esc or ctrl+g leaves it with the editor as it was.
func (in *input) searchKey(k tea.KeyPressMsg) {
	q := in.search
	switch ks := k.String(); {
	case ks == "esc" || ks == "ctrl+g" || ks == "ctrl+c":
		in.ta.SetValue(q.draft)
		in.ta.MoveToEnd()
		in.pastes = q.draftPastes
		in.search = nil
		return
	case ks == "enter" || ks == "tab" || ks == "right" || ks == "left":
		in.search = nil // the match stays in the editor
		in.recall = len(in.history)
		return
	case ks == "ctrl+r":
		in.find(q.match - 1)
		return
	case ks == "backspace":
		if r := []rune(q.query); len(r) > 0 {
			q.query = string(r[:len(r)-1])
		}
	case k.Text != "":
		q.query += k.Text
	default:
		return
	}
	in.find(len(in.history) - 1)
}

// find shows the newest history entry at or before i that holds the query.
func (in *input) find(i int) {
	q := in.search
	for ; i >= 0; i-- {
		if q.query == "" || strings.Contains(strings.ToLower(in.history[i].text()), strings.ToLower(q.query)) {
			q.match = i
			in.show(in.history[i])
			return
		}
	}
	if q.query != "" && q.match >= 0 && !strings.Contains(strings.ToLower(in.history[q.match].text()), strings.ToLower(q.query)) {
		q.match = -1
		in.ta.SetValue("")
		in.pastes = nil
	}
}

// seed puts the messages of a resumed session in the history, oldest
// first, before anything typed here (and after the project's other
// sessions' prompts).
func (in *input) seed(msgs []string) {
	h := slices.Clone(in.history[:in.past])
	for _, s := range msgs {
		if IsPrompt(s) && (len(h) == in.past || h[len(h)-1].text() != s) {
			h = append(h, sentText(s))
		}
	}
	in.history = append(h, in.history[in.past:]...)
	in.recall = len(in.history)
}

// setPast puts the prompts of the project's other sessions (oldest first)
// at the start of the history, in place of those put there before; a
// recall or search under way keeps its entry.
func (in *input) setPast(msgs []string) {
	var h []sent
	for _, s := range msgs {
		if IsPrompt(s) && (len(h) == 0 || h[len(h)-1].text() != s) {
			h = append(h, sentText(s))
		}
	}
	delta := len(h) - in.past
	in.history = append(h, in.history[in.past:]...)
	in.past = len(h)
	in.recall += delta
	if in.search != nil && in.search.match >= 0 {
		in.search.match += delta
	}
}

// take returns the text and clears the editor, remembering the text in the
// history.
func (in *input) take() string {
	v := in.value()
	if strings.TrimSpace(v) != "" && (len(in.history) == 0 || in.history[len(in.history)-1].text() != v) {
		in.history = append(in.history, sent{shown: in.ta.Value(), pastes: in.pastes})
	}
	in.recall = len(in.history)
	in.draft, in.draftPastes = "", nil
	in.pastes = nil
	in.ta.Reset()
	return v
}

// onPaste puts a short paste in the editor as it is, and a long one as a
// marker naming its size, keeping the text for value. Either way the
// message stays within maxInputChars, as the editor's own limit does.
func (in *input) onPaste(msg tea.PasteMsg) tea.Cmd {
	text := strings.ReplaceAll(strings.ReplaceAll(msg.Content, "\r\n", "\n"), "\r", "\n")
	n := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	runes := []rune(text)
	if n < pasteCollapseLines && len(runes) < pasteCollapseChars {
		var cmd tea.Cmd
		in.ta, cmd = in.ta.Update(tea.PasteMsg{Content: text})
		return cmd
	}
	room := maxInputChars - len([]rune(in.value()))
	if room <= 0 {
		return nil
	}
	if len(runes) > room {
		text = string(runes[:room])
		n = strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	}
	marker := "[pasted " + itoa(n) + " lines]"
	if n == 1 {
		marker = "[pasted " + itoa(len([]rune(text))) + " characters]"
	}
	if k := len(in.pastes) + 1; k > 1 {
		marker = strings.TrimSuffix(marker, "]") + " #" + itoa(k) + "]"
	}
	in.pastes = append(in.pastes, paste{marker: marker, text: text})
	var cmd tea.Cmd
	in.ta, cmd = in.ta.Update(tea.PasteMsg{Content: marker})
	return cmd
}

// update handles history keys, then hands everything else to the textarea.
func (in *input) update(msg tea.Msg) tea.Cmd {
	if p, ok := msg.(tea.PasteMsg); ok {
		return in.onPaste(p)
	}
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "up":
			if in.ta.Line() == 0 && in.ta.LineInfo().RowOffset == 0 && len(in.history) > 0 {
				if in.recall == len(in.history) {
					in.draft, in.draftPastes = in.ta.Value(), in.pastes
				}
				if in.recall > 0 {
					in.recall--
					in.show(in.history[in.recall])
				}
				return nil
			}
		case "down":
			if in.recall < len(in.history) && in.ta.Line() == in.ta.LineCount()-1 {
				in.recall++
				if in.recall == len(in.history) {
					in.setValue(in.draft)
					in.pastes, in.draftPastes = in.draftPastes, nil
				} else {
					in.show(in.history[in.recall])
				}
				return nil
			}
		}
	}
	var cmd tea.Cmd
	in.ta, cmd = in.ta.Update(msg)
	return cmd
}

func (in *input) view() string { return strings.TrimRight(in.ta.View(), "\n") }

func (in *input) cursor() *tea.Cursor { return in.ta.Cursor() }

// sentText is a message of a resumed session as the history keeps it: a
// long one is shown as the paste it most likely was.
func sentText(s string) sent {
	n := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
	if n < pasteCollapseLines && len([]rune(s)) < pasteCollapseChars {
		return sent{shown: s}
	}
	marker := "[pasted " + itoa(n) + " lines]"
	if n == 1 {
		marker = "[pasted " + itoa(len([]rune(s))) + " characters]"
	}
	return sent{shown: marker, pastes: []paste{{marker: marker, text: s}}}
}
