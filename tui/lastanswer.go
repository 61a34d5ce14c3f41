package tui

import (
	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// lastAnswer is the newest assistant text of the open session, as the
// events fold it: streamed deltas while it comes (so a canceled answer
// counts as far as it got), the completed content once it is whole. The
// deltas of a summary request are not an answer.
type lastAnswer struct {
	messageID string
	text      strings.Builder
	summaries map[string]bool // summary request IDs
}

func (l *lastAnswer) apply(e event.Event) {
	switch d := e.Data.(type) {
	case event.ContextAccounted:
		if d.SummaryRequest {
			if l.summaries == nil {
				l.summaries = map[string]bool{}
			}
			l.summaries[d.RequestID] = true
		}
	case event.MessageDelta:
		if l.summaries[d.RequestID] || d.Delta == "" {
			return
		}
		if d.MessageID != l.messageID {
			l.messageID = d.MessageID
			l.text.Reset()
		}
		l.text.WriteString(d.Delta)
	case event.MessageCompleted:
		if d.Role == model.RoleAssistant && strings.TrimSpace(d.Content) != "" {
			l.messageID = d.MessageID
			l.text.Reset()
			l.text.WriteString(d.Content)
		}
	}
}

// LastAnswer is the session's newest answer as plain text for the
// terminal's scrollback once the program has left the screen: escape
// sequences and control characters removed, at most its last maxLines
// lines (after a line saying how many came before). "" when the session
// has no answer.
func (m *Model) LastAnswer(maxLines int) string {
	text := strings.TrimSpace(plainText(m.last.text.String()))
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if n := len(lines) - maxLines; maxLines > 0 && n > 0 {
		lines = append([]string{"… " + itoa(n) + " earlier lines"}, lines[n:]...)
	}
	return strings.Join(lines, "\n")
}

// Scrollback is what this process showed of the session (the blocks of
// the turns it ran, not those of the log it opened), rendered as on the
// screen at its width and colours, for the terminal's scrollback once the
// program has left the alternate screen: at most its last maxLines lines
// (after a line saying how many came before). Without any, it is the
// newest answer (LastAnswer). "" when there is neither.
func (m *Model) Scrollback(maxLines int) string {
	if m.sess == nil || m.liveFrom >= m.tr.Len() {
		return m.LastAnswer(maxLines)
	}
	c := m.ctxFor()
	c.Width = max(m.width, 20)
	lines := m.tr.Lines(c, m.liveFrom)
	if n := len(lines) - maxLines; maxLines > 0 && n > 0 {
		lines = append([]string{m.th.Muted.Render("… " + itoa(n) + " earlier lines (harness resume shows them)")}, lines[n:]...)
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n ")
}

// Profile is the terminal's colour profile as the program last knew it:
// what Scrollback's colours are to be written in.
func (m *Model) Profile() colorprofile.Profile { return m.prof }

// plainText is s without escape sequences or control characters other
// than newlines and tabs, its line ends trimmed: what a model wrote cannot
// drive the terminal it is printed on.
func plainText(s string) string {
	s = ansi.Strip(s)
	var b strings.Builder
	for _, r := range strings.ReplaceAll(s, "\r\n", "\n") {
		if r == '\n' || r == '\t' || r >= 0x20 && r != 0x7f && !(r >= 0x80 && r < 0xa0) {
			b.WriteRune(r)
		}
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}
