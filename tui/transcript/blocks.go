package transcript

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/tui/markdown"
	"github.com/harness-dev/harness/tui/theme"
)

// Ctx is what rendering needs besides the blocks.
type Ctx struct {
	Width   int
	Now     time.Time // for the elapsed time of running calls
	Spinner string    // the current spinner frame
	Theme   *theme.Theme
}

type kind int

const (
	kindUser kind = iota
	kindAssistant
	kindTool
	kindCompact
	kindNotice
	kindTurnEnd
)

// block is one transcript item.
type block interface {
	kind() kind
	// render draws the block at c.Width; selected marks the card the
	// keyboard acts on.
	render(c *Ctx, selected bool) []string
	// live reports whether the block shows the clock or the spinner, so
	// its lines cannot be cached.
	live() bool
	// expandable reports whether the block has more to show when expanded.
	expandable() bool
	toggle()
}

// entry holds a block and its render cache.
type entry struct {
	b   block
	gap bool // a blank line above it
	ver int  // grows when the block changes

	cWidth    int
	cVer      int
	cSelected bool
	cLines    []string
}

func gapBetween(prev, cur kind) bool {
	return !(prev == kindTool && cur == kindTool)
}

// lines returns the block's lines, from the cache when nothing changed.
func (e *entry) lines(c *Ctx, selected bool) []string {
	if e.b.live() {
		return e.withGap(e.b.render(c, selected))
	}
	if e.cLines != nil && e.cWidth == c.Width && e.cVer == e.ver && e.cSelected == selected {
		return e.cLines
	}
	e.cLines = e.withGap(e.b.render(c, selected))
	e.cWidth, e.cVer, e.cSelected = c.Width, e.ver, selected
	return e.cLines
}

func (e *entry) withGap(ls []string) []string {
	if !e.gap {
		return ls
	}
	return append([]string{""}, ls...)
}

// ---- user messages and steering

type userState int

const (
	stateNone userState = iota
	stateQueued
	stateApplied
	stateWithdrawn
)

type userBlock struct {
	text      string
	steering  bool
	fromQueue bool
	state     userState
	expanded  bool
}

// A user message longer than userFold lines shows its first userShown
// until expanded (a pasted log or file would otherwise push the answer
// off the screen); the model gets all of it either way.
const (
	userFold  = 16
	userShown = 10
)

func (*userBlock) kind() kind { return kindUser }
func (*userBlock) live() bool { return false }
func (u *userBlock) expandable() bool {
	return strings.Count(strings.TrimRight(u.text, "\n"), "\n")+1 > userFold || len(u.text) > userFold*80
}
func (u *userBlock) toggle() { u.expanded = !u.expanded }
func (u *userBlock) render(c *Ctx, _ bool) []string {
	th := c.Theme
	const indent = 6
	body := wrapPlain(u.text, c.Width-indent)
	more := 0
	if u.expandable() && !u.expanded && len(body) > userShown {
		// Folded by the same rule that lets ctrl+o unfold it.
		more = len(body) - userShown
		body = body[:userShown]
	}
	out := u.lines(c, body)
	if more > 0 {
		out = append(out, strings.Repeat(" ", indent)+th.Muted.Render("… "+plural(more, "more line")+" · ctrl+o expands"))
	}
	return out
}

func (u *userBlock) lines(c *Ctx, body []string) []string {
	th := c.Theme
	const indent = 6
	var out []string
	switch {
	case u.steering:
		label := " " + th.Steering.Render("you") + th.Muted.Render(" · steering · ")
		switch u.state {
		case stateApplied:
			label += th.ChipApplied.Render("applied ✓")
		case stateWithdrawn:
			label += th.Muted.Render("withdrawn")
		default:
			label += th.ChipQueued.Render("queued")
		}
		out = append(out, label)
		for _, l := range body {
			style := th.Text
			if u.state == stateWithdrawn {
				style = th.Muted.Strikethrough(true)
			}
			out = append(out, strings.Repeat(" ", indent)+style.Render(l))
		}
		return out
	case u.fromQueue:
		out = append(out, " "+th.User.Render("you")+th.Muted.Render(" · from the queue"))
		for _, l := range body {
			out = append(out, strings.Repeat(" ", indent)+th.Text.Render(l))
		}
		return out
	}
	for i, l := range body {
		prefix := strings.Repeat(" ", indent)
		if i == 0 {
			prefix = " " + th.User.Render("you") + "  "
		}
		out = append(out, prefix+th.Text.Render(l))
	}
	return out
}

// wrapPlain wraps unstyled text (keeping its line breaks) to width cells.
func wrapPlain(s string, width int) []string {
	width = max(width, 8)
	s = strings.ReplaceAll(strings.TrimRight(s, "\n"), "\t", "    ")
	var out []string
	for _, para := range strings.Split(s, "\n") {
		if ansi.StringWidth(para) <= width {
			out = append(out, para)
			continue
		}
		out = append(out, strings.Split(markdown.WrapPlain(para, width), "\n")...)
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// ---- assistant text

type assistantBlock struct {
	text        *strings.Builder
	next        int // the next expected delta sequence
	streaming   bool
	interrupted bool
	reasoning   string // what a reasoning model thought first: a collapsed "thinking" block
	expanded    bool

	// While streaming, the text up to its last finished paragraph is
	// rendered once per width and kept; each delta re-renders only the
	// paragraph still growing, and of a fenced block still open only its
	// last chunk of lines (stream).
	stream *streamCache
}

// streamCache is what a streaming answer keeps between deltas, so that a
// delta costs what arrived, not the answer's length: how far its text was
// scanned (for the last paragraph boundary and an open fence), the lines
// of its finished paragraphs, and the lines of the finished chunks of a
// fenced block still open. Lines are kept with the block's one-cell
// indent.
type streamCache struct {
	scanned int  // bytes scanned: whole lines only
	fenced  bool // a fence is open at scanned
	fenceAt int  // the open fence's line start
	bodyAt  int  // the first byte after the open fence's line
	lang    string
	cut     int // the end of the last blank line outside a fence

	width       int
	stableLen   int
	stableLines []string

	codeFence int      // the fence codeLines belong to (its fenceAt), -1 none
	codeFrom  int      // the first byte of the code not in codeLines
	codeLines []string // the finished chunks of the open block
}

// codeChunk is how many lines of an open fenced block are rendered
// together: a delta re-renders at most this many (and the line growing).
// A chunk is lexed on its own, so a construct spanning chunks (a long
// comment) may be coloured wrongly until the answer is complete, when the
// whole text is rendered again.
const codeChunk = 16

// scan advances over the whole lines of text not scanned yet.
func (sc *streamCache) scan(text string) {
	for sc.scanned < len(text) {
		end := strings.IndexByte(text[sc.scanned:], '\n')
		if end < 0 {
			return
		}
		start := sc.scanned
		line := strings.TrimSpace(text[start : start+end])
		sc.scanned = start + end + 1
		switch {
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			sc.fenced = !sc.fenced
			if sc.fenced {
				sc.fenceAt, sc.bodyAt, sc.lang = start, sc.scanned, markdown.FenceLang(line)
			} else {
				sc.cut = sc.scanned // a closed block is finished Markdown
			}
		case line == "" && !sc.fenced:
			sc.cut = sc.scanned
		}
	}
}

func (*assistantBlock) kind() kind         { return kindAssistant }
func (*assistantBlock) live() bool         { return false }
func (a *assistantBlock) expandable() bool { return a.reasoning != "" }
func (a *assistantBlock) toggle()          { a.expanded = !a.expanded }
func (a *assistantBlock) render(c *Ctx, selected bool) []string {
	th := c.Theme
	w := c.Width - 2
	var md []string // indented already
	if a.streaming {
		md = a.streamed(a.text.String(), w, c)
	} else {
		a.stream = nil
		if a.text.Len() > 0 {
			md = indent(markdown.Render(a.text.String(), w, th))
		}
	}
	out := make([]string, 0, len(md)+2)
	if a.reasoning != "" {
		out = append(out, a.thinking(c, selected)...)
	}
	out = append(out, md...)
	if a.streaming {
		if len(out) == 0 {
			out = append(out, " ")
		}
		out[len(out)-1] += th.Accent.Render("▍")
	}
	if a.interrupted {
		out = append(out, " "+th.Canceled.Render("(interrupted)"))
	}
	return out
}

// thinking renders the reasoning: one line while collapsed, the whole text
// behind a gutter when expanded.
func (a *assistantBlock) thinking(c *Ctx, selected bool) []string {
	th := c.Theme
	words := len(strings.Fields(a.reasoning))
	head := " " + marker(th, a.expanded, selected) + th.Muted.Render("thinking · "+plural(words, "word"))
	if !a.expanded {
		head += th.Faint.Render(" (ctrl+o shows it)")
		return []string{ansi.Truncate(head, c.Width, "…")}
	}
	out := []string{ansi.Truncate(head, c.Width, "…")}
	gutter := "   " + th.DiffGutter.Render("│") + " "
	for _, l := range wrapPlain(a.reasoning, c.Width-5) {
		out = append(out, gutter+th.Muted.Render(l))
	}
	return out
}

// indent gives rendered lines the block's one-cell indent.
func indent(lines []string) []string {
	for i, l := range lines {
		lines[i] = " " + l
	}
	return lines
}

// streamed renders growing text (indented): the finished paragraphs from
// the cache, the last one afresh; of a fenced block still open at the end,
// the finished chunks from the cache and only the last chunk afresh.
func (a *assistantBlock) streamed(text string, w int, c *Ctx) []string {
	sc := a.stream
	if sc == nil || len(text) < sc.scanned {
		sc = &streamCache{codeFence: -1, stableLen: -1}
		a.stream = sc
	}
	sc.scan(text)
	if w != sc.width {
		sc.width, sc.stableLen, sc.codeFence = w, -1, -1
	}
	cut := sc.cut
	if cut != sc.stableLen {
		sc.stableLen = cut
		sc.stableLines = []string{}
		if cut > 0 {
			sc.stableLines = indent(markdown.Render(text[:cut], w, c.Theme))
		}
	}
	var tail []string
	if sc.fenced && sc.fenceAt >= cut && !closing(text[sc.scanned:]) {
		tail = a.openCode(text, w, c)
	} else {
		sc.codeFence, sc.codeLines = -1, nil // a block closed: its chunks go
		tail = indent(markdown.Render(text[cut:], w, c.Theme))
	}
	out := make([]string, 0, len(sc.stableLines)+len(tail)+1)
	out = append(out, sc.stableLines...)
	if len(out) > 0 && len(tail) > 0 {
		out = append(out, " ")
	}
	return append(out, tail...)
}

// closing reports whether a line still growing is a fence (it closes the
// open block).
func closing(partial string) bool {
	t := strings.TrimSpace(partial)
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// openCode renders the text after the last paragraph boundary when it
// ends in a fenced block still open: what comes before the fence, the
// block's finished chunks (rendered once), then its last lines.
func (a *assistantBlock) openCode(text string, w int, c *Ctx) []string {
	sc := a.stream
	if sc.codeFence != sc.fenceAt {
		sc.codeFence, sc.codeFrom, sc.codeLines = sc.fenceAt, sc.bodyAt, nil
	}
	// Whole chunks of finished lines join the cache.
	for {
		end, n := sc.codeFrom, 0
		for n < codeChunk && end < sc.scanned {
			i := strings.IndexByte(text[end:sc.scanned], '\n')
			if i < 0 {
				break
			}
			end += i + 1
			n++
		}
		if n < codeChunk {
			break
		}
		lines := strings.Split(text[sc.codeFrom:end-1], "\n")
		sc.codeLines = append(sc.codeLines, indent(markdown.Code(lines, sc.lang, true, w, c.Theme))...)
		sc.codeFrom = end
	}
	var out []string
	if sc.fenceAt > sc.cut {
		out = indent(markdown.Render(text[sc.cut:sc.fenceAt], w, c.Theme))
	}
	out = append(out, sc.codeLines...)
	return append(out, indent(markdown.Code(strings.Split(text[sc.codeFrom:], "\n"), sc.lang, true, w, c.Theme))...)
}

// ---- notices

// NoteLevel is a notice's severity.
type NoteLevel int

// Notice levels.
const (
	NoteInfo NoteLevel = iota
	NoteWarn
	NoteError
)

type notice struct {
	level NoteLevel
	code  string
	text  string
}

func (*notice) kind() kind       { return kindNotice }
func (*notice) live() bool       { return false }
func (*notice) expandable() bool { return false }
func (*notice) toggle()          {}
func (n *notice) render(c *Ctx, _ bool) []string {
	th := c.Theme
	mark, style := th.Muted.Render("·"), th.Muted
	switch n.level {
	case NoteWarn:
		mark, style = th.Warn.Render("!"), th.Warn
	case NoteError:
		mark, style = th.Err.Render("✗"), th.Err
	}
	head := " " + mark + " "
	text := n.text
	if n.code != "" {
		head += th.ErrCode.Render(n.code) + " "
	}
	avail := c.Width - ansi.StringWidth(head)
	lines := wrapPlain(text, c.Width-3)
	out := make([]string, 0, len(lines))
	if len(lines) > 0 && ansi.StringWidth(lines[0]) <= avail {
		out = append(out, head+style.Render(lines[0]))
		lines = lines[1:]
	} else {
		out = append(out, strings.TrimRight(head, " "))
	}
	for _, l := range lines {
		out = append(out, "   "+style.Render(l))
	}
	return out
}

// ---- turn endings

type turnEnd struct {
	status    string
	code      string
	note      string
	truncated bool // the last answer was cut by the output limit
	requests  int
	tools     int
	tokens    int
	dur       time.Duration
}

func (*turnEnd) kind() kind       { return kindTurnEnd }
func (*turnEnd) live() bool       { return false }
func (*turnEnd) expandable() bool { return false }
func (*turnEnd) toggle()          {}
func (e *turnEnd) render(c *Ctx, _ bool) []string {
	th := c.Theme
	var head string
	switch e.status {
	case event.StatusCompleted:
		head = th.OK.Render("✓ completed")
	case event.StatusCanceled:
		head = th.Canceled.Render("⊘ canceled")
	case event.StatusBudgetExceeded:
		head = th.Err.Render("✗ budget exceeded")
	default:
		head = th.Err.Render("✗ " + e.status)
	}
	if e.code != "" {
		head += th.Muted.Render(" · ") + th.ErrCode.Render(e.code)
	}
	dur := ""
	if e.dur > 0 {
		dur = Duration(e.dur)
	}
	long := []string{plural(e.requests, "model request"), plural(e.tools, "tool call"), Tokens(e.tokens) + " tokens", dur}
	short := []string{plural(e.requests, "request"), plural(e.tools, "call"), Tokens(e.tokens) + " tok", dur}
	var line string
	for _, facts := range [][]string{long, short, short[2:]} {
		line = th.Faint.Render(" ─ ") + head + th.Muted.Render(" · "+strings.Join(nonEmpty(facts), " · ")) + " "
		if ansi.StringWidth(line) < c.Width {
			break
		}
	}
	if w := ansi.StringWidth(line); w < c.Width {
		line += th.Faint.Render(strings.Repeat("─", c.Width-w))
	} else {
		line = ansi.Truncate(line, c.Width, "…")
	}
	out := []string{line}
	if e.note != "" {
		// A completed turn's note informs (a compaction turn says what it
		// did); any other explains why the turn stopped.
		style := th.Err
		if e.status == event.StatusCompleted {
			style = th.Muted
		}
		for _, l := range wrapPlain(e.note, c.Width-3) {
			out = append(out, "   "+style.Render(l))
		}
	}
	if e.truncated {
		for _, l := range wrapPlain("answer cut by the output limit: raise --max-tokens or ask to continue", c.Width-5) {
			out = append(out, "   "+th.Warn.Render(l))
		}
	}
	return out
}

// ---- compaction markers

type compactBlock struct {
	done       bool
	failed     bool
	expanded   bool
	summary    string
	beforeMsgs int
	afterMsgs  int
	before     int
	after      int
}

func (*compactBlock) kind() kind         { return kindCompact }
func (b *compactBlock) live() bool       { return !b.done }
func (b *compactBlock) expandable() bool { return b.done && b.summary != "" }
func (b *compactBlock) toggle()          { b.expanded = !b.expanded }
func (b *compactBlock) render(c *Ctx, selected bool) []string {
	th := c.Theme
	mark := marker(th, b.expanded, selected)
	switch {
	case !b.done:
		return []string{" " + mark + th.Accent.Render("compacting the context") + th.Muted.Render(" ("+Tokens(b.before)+" tokens) "+c.Spinner)}
	case b.failed:
		return []string{" " + mark + th.Err.Render("compaction did not finish")}
	}
	head := " " + mark + th.Accent.Render("context compacted") +
		th.Muted.Render(fmt.Sprintf(" · %d → %d messages · %s → %s tokens", b.beforeMsgs, b.afterMsgs, Tokens(b.before), Tokens(b.after)))
	out := []string{ansi.Truncate(head, c.Width, "…")}
	gutter := "   " + th.DiffGutter.Render("│") + " "
	if !b.expanded {
		out = append(out, gutter+th.Muted.Render(ansi.Truncate("the originals stay above; the model now sees a summary (ctrl+o shows it)", c.Width-5, "…")))
		return out
	}
	for _, l := range markdown.Render(b.summary, c.Width-5, th) {
		out = append(out, gutter+l)
	}
	return out
}

func marker(th *theme.Theme, expanded, selected bool) string {
	m := "▸ "
	if expanded {
		m = "▾ "
	}
	if selected {
		m = "▶ "
		if expanded {
			m = "▼ "
		}
		return th.Selected.Render(m)
	}
	return th.Muted.Render(m)
}

// ---- formatting helpers shared with the status line

// Tokens formats a token count: 950, 12.4k, 1.2M.
func Tokens(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 100_000:
		return trimZero(strconv.FormatFloat(float64(n)/1000, 'f', 1, 64)) + "k"
	case n < 1_000_000:
		return strconv.Itoa(n/1000) + "k"
	default:
		return trimZero(strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64)) + "M"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// Duration formats an elapsed time: 850 ms, 4.1 s, 2m03s.
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.Itoa(int(d.Milliseconds())) + " ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	default:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func itoa(n int) string { return strconv.Itoa(n) }

func nonEmpty(list []string) []string {
	out := list[:0:0]
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// attachBlock is a user message the runtime composed from what the user's
// own message asked of the workspace (event.AttachmentsMarker): the files
// of @path mentions (a !command's output is its card's). It is drawn from
// the calls that message made (their tool.call and tool.result events),
// not from the message's text.
type attachBlock struct{ calls []*toolCard }

func (*attachBlock) kind() kind       { return kindUser }
func (*attachBlock) live() bool       { return false }
func (*attachBlock) expandable() bool { return false }
func (*attachBlock) toggle()          {}
func (a *attachBlock) render(c *Ctx, _ bool) []string {
	th := c.Theme
	const indent = 6
	var ok, failed []string
	for _, call := range a.calls {
		name := "@" + call.subject
		switch {
		case call.status == statusFailed || call.status == statusCanceled:
			code := call.errCode
			if code == "" {
				code = "canceled"
			}
			failed = append(failed, th.Err.Render(name+" ("+code+")"))
		default:
			ok = append(ok, th.Accent.Render(name))
		}
	}
	if len(ok)+len(failed) == 0 {
		return []string{strings.Repeat(" ", indent) + th.Muted.Render("attached files")}
	}
	// Wrapped with a hanging indent: every mention stays on screen. What
	// could not be read is said apart: it was not attached.
	var text string
	if len(ok) > 0 {
		text = th.Muted.Render("attached ") + strings.Join(ok, th.Muted.Render(", "))
	}
	if len(failed) > 0 {
		if text != "" {
			text += th.Muted.Render(" · ")
		}
		text += th.Muted.Render("not attached: ") + strings.Join(failed, th.Muted.Render(", "))
	}
	lines := strings.Split(markdown.Wrap(text, max(c.Width-indent, 8)), "\n")
	for i, l := range lines {
		lines[i] = strings.Repeat(" ", indent) + strings.TrimRight(l, " ")
	}
	return lines
}
