package tui

import (
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
	history []string // sent messages, oldest first
	recall  int      // index into history while recalling, len(history) when not
	draft   string   // what was typed before recalling began
}

func newInput(th *theme.Theme) input {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Placeholder = "Ask anything · / for commands · ? for help"
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
	st.Cursor.Blink = false
	in.ta.SetStyles(st)
	accent := th.Accent
	in.ta.SetPromptFunc(2, func(p textarea.PromptInfo) string {
		if p.LineNumber == 0 {
			return accent.Render("›") + " "
		}
		return "  "
	})
}

func (in *input) setWidth(w int) { in.ta.SetWidth(max(w, 10)) }

func (in *input) value() string { return in.ta.Value() }

func (in *input) setValue(s string) {
	in.ta.SetValue(s)
	in.ta.MoveToEnd()
}

// seed puts the messages of a resumed session in the history, oldest
// first, before anything typed here.
func (in *input) seed(sent []string) {
	var h []string
	for _, s := range sent {
		if strings.TrimSpace(s) != "" && (len(h) == 0 || h[len(h)-1] != s) {
			h = append(h, s)
		}
	}
	in.history = append(h, in.history...)
	in.recall = len(in.history)
}

// take returns the text and clears the editor, remembering the text in the
// history.
func (in *input) take() string {
	v := in.ta.Value()
	if strings.TrimSpace(v) != "" && (len(in.history) == 0 || in.history[len(in.history)-1] != v) {
		in.history = append(in.history, v)
	}
	in.recall = len(in.history)
	in.draft = ""
	in.ta.Reset()
	return v
}

// update handles history keys, then hands everything else to the textarea.
func (in *input) update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "up":
			if in.ta.Line() == 0 && in.ta.LineInfo().RowOffset == 0 && len(in.history) > 0 {
				if in.recall == len(in.history) {
					in.draft = in.ta.Value()
				}
				if in.recall > 0 {
					in.recall--
					in.setValue(in.history[in.recall])
				}
				return nil
			}
		case "down":
			if in.recall < len(in.history) && in.ta.Line() == in.ta.LineCount()-1 {
				in.recall++
				if in.recall == len(in.history) {
					in.setValue(in.draft)
				} else {
					in.setValue(in.history[in.recall])
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
