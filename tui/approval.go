package tui

import (
	"encoding/json"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/argv"
	"github.com/harness-dev/harness/tui/diffview"
	"github.com/harness-dev/harness/tui/theme"
)

const (
	// approvalLines bounds the diff shown in a collapsed approval prompt.
	approvalLines = 12
	// approvalCmdLines bounds the wrapped command shown in a collapsed
	// prompt; ctrl+o shows all of it.
	approvalCmdLines = 3
)

// The answers of an approval prompt, in the order the box lists them: the
// highlight starts on the first, the safe one.
const (
	choiceDeny = iota
	choiceReason
	choiceOnce
	choiceRun
	choiceSession
	numChoices
)

// choiceKeys are the keys that pick each answer.
var choiceKeys = [numChoices]string{choiceDeny: "n", choiceReason: "r", choiceOnce: "y", choiceRun: "a", choiceSession: "s"}

// asking is the state of a question on screen. The input keeps the keys
// until tab on an empty input hands them to the box (answering): a
// keystroke meant for the input never answers, and what is typed stays in
// the input.
type asking struct {
	a         *Approval
	answering bool // the box has the keys (the input is paused)
	choice    int  // the highlighted answer while answering
	moved     bool // the highlight was moved: enter and space act on it
	all       bool // the whole command and diff, not the first lines
	reason    bool // the input is taking a reason to deny with
	off       int  // the first line of the command and diff shown, when they do not fit
	page      int  // how many of those lines the box showed last
	cut       bool // the box showed a window of them: pgup/pgdn move it

	wrapped   []string // the command wrapped at wrapWidth
	wrapWidth int
}

// expandable reports whether ctrl+o has more of the call to show: a
// write's diff or a command (a write that changes nothing has none).
func (q *asking) expandable() bool { return q.a.Diff != "" || q.a.Tool == "process.exec" }

// approvalView is the permission prompt above the input: the call (the
// whole command, quoted as a shell would need it), the diff for a write,
// the answers and the keys. draft says whether the input holds text.
// maxLines bounds the box's height (≤ 0: no bound): when the command and
// diff do not fit, a window of them is shown, at q.off, with the lines it
// holds and pgup/pgdn to move it, so that the answers and the keys never
// leave the screen. It records the window's height in q.page.
func approvalView(q *asking, th *theme.Theme, width int, draft bool, maxLines int) string {
	a := q.a
	inner := max(width-4, 10)
	verb := "wants to run"
	what := a.Subject
	switch a.Tool {
	case "fs.write":
		verb = "wants to write"
	case "process.exec":
		what = execLine(a.Input, a.Subject)
	}
	head := th.Warn.Render("? ") + th.ToolName.Render(a.Tool) + " " + th.Text.Render(verb)
	var sum string
	if a.Diff != "" {
		sum = "  " + diffview.Summary(diffview.StatOf(a.Diff), th)
	}
	var top, body []string // top stays; body is what a window may show part of
	if what != "" && len(what) <= inner*4 && ansi.StringWidth(head+" "+what+sum) <= inner {
		top = append(top, head+" "+th.Bold.Render(what)+sum)
	} else {
		top = append(top, ansi.Truncate(head+sum, inner, "…"))
		if what != "" {
			if q.wrapWidth != inner-2 || q.wrapped == nil {
				// Every frame asks: a 5 KB command is wrapped once a width.
				q.wrapped, q.wrapWidth = wrapWords(what, inner-2), inner-2
			}
			wrapped := q.wrapped
			if q.all || len(wrapped) <= approvalCmdLines+1 {
				// A line saying one more line is hidden takes the room
				// of that line: show it.
				for _, l := range wrapped {
					body = append(body, "  "+th.Bold.Render(l))
				}
			} else {
				// The first lines and the last: the end of a command
				// (where "&& rm -rf …" would be) is never hidden.
				for _, l := range wrapped[:approvalCmdLines-1] {
					body = append(body, "  "+th.Bold.Render(l))
				}
				more := len(wrapped) - approvalCmdLines
				body = append(body, "  "+th.Muted.Render("… "+plural(more, "more line")+" · ctrl+o shows the whole command"))
				body = append(body, "  "+th.Bold.Render(wrapped[len(wrapped)-1]))
			}
		}
	}
	if a.Diff != "" {
		// Collapsed, the head of both sides of a long change: what gets
		// written is never hidden behind what it replaces.
		hunks := diffview.Hunks(a.Diff)
		var shown []string
		if q.all {
			shown = diffview.Lines(hunks, inner-2, th)
		} else {
			ex, _ := diffview.Excerpt(hunks, approvalLines)
			last := -1 // the last line saying what was left out
			for i, l := range ex {
				if strings.HasPrefix(l, "…") {
					last = i
				}
			}
			for i, l := range ex {
				if i == last {
					l += " · ctrl+o shows all"
				}
				shown = append(shown, diffview.Line(l, inner-2, th))
			}
		}
		for _, l := range shown {
			body = append(body, "  "+l)
		}
	}
	if a.Unchanged {
		body = append(body, "  "+th.Muted.Render("(no change: the file already holds these contents)"))
	}
	tail := wrapSegs(answerSegs(q, th), "  ", inner)
	tail = append(tail, wrapSegs(approvalHints(q, th, draft), th.Muted.Render(" · "), inner)...)
	q.page, q.cut = len(body), false
	inside := maxLines - th.Box.GetVerticalFrameSize() // lines the box's content may take
	if maxLines > 0 && len(top)+min(len(body), 2)+len(tail) > inside {
		// A small screen: the answers and keys in their short form, so
		// that they fit with a line or two of the call.
		tail = wrapSegs(compactSegs(q, th, draft), th.Muted.Render(" · "), inner)
	}
	if maxLines > 0 && len(body) > 0 && len(top)+len(body)+len(tail) > inside {
		room := max(inside-len(top)-len(tail)-1, 1) // one line says where the window is
		q.off = min(max(q.off, 0), max(len(body)-room, 0))
		end := min(q.off+room, len(body))
		pos := "  " + th.Muted.Render("lines "+itoa(q.off+1)+"–"+itoa(end)+" of "+itoa(len(body))+" · pgup/pgdn scroll")
		body, q.page, q.cut = append(body[q.off:end:end], pos), room, true
	} else {
		q.off = 0
	}
	lines := append(append(top, body...), tail...)
	return th.Box.Width(width).Render(strings.Join(lines, "\n"))
}

// answerSegs lists the answers: with their keys while the box has them
// (the highlighted one marked), muted and introduced by how to get there
// while the input has the keys.
func answerSegs(q *asking, th *theme.Theme) []string {
	var names [numChoices]string
	names[choiceDeny], names[choiceReason] = "deny", "deny with a reason"
	names[choiceOnce], names[choiceRun] = "allow once", "allow "+q.a.Tool+" for this turn"
	names[choiceSession] = "for this session"
	keys := choiceKeys
	var segs []string
	if !q.answering {
		segs = append(segs, th.Muted.Render("with the input empty, tab, then:"))
	}
	for i, c := range names {
		switch {
		case q.answering && i == q.choice:
			segs = append(segs, th.Selected.Render("› "+keys[i]+" "+c))
		case q.answering:
			segs = append(segs, "  "+th.Key.Render(keys[i])+" "+th.Text.Render(c))
		default:
			segs = append(segs, th.Muted.Render(keys[i]+" "+c))
		}
	}
	return segs
}

// compactSegs are the answers and the keys that work now in few cells,
// for a box on a small screen.
func compactSegs(q *asking, th *theme.Theme, draft bool) []string {
	hint := func(k, what string) string { return th.Key.Render(k) + th.Muted.Render(" "+what) }
	var segs []string
	if q.answering {
		keys := choiceKeys
		names := [numChoices]string{choiceDeny: "deny", choiceReason: "reason", choiceOnce: "once", choiceRun: "turn", choiceSession: "session"}
		for i := range numChoices {
			if i == q.choice {
				segs = append(segs, th.Selected.Render("›"+keys[i]+" "+names[i]))
			} else {
				segs = append(segs, hint(keys[i], names[i]))
			}
		}
		return append(segs, hint("tab", "input"), hint("esc", "deny+stop"))
	}
	if draft {
		return []string{hint("enter", "deny with text"), hint("esc", "deny+stop")}
	}
	return []string{hint("tab", "answer (y/a/s/n/r)"), hint("esc", "deny+stop")}
}

// approvalHints are the keys that work now, by who has them.
func approvalHints(q *asking, th *theme.Theme, draft bool) []string {
	hint := func(k, what string) string { return th.Key.Render(k) + th.Muted.Render(" "+what) }
	var hints []string
	switch {
	case q.answering:
		hints = []string{hint("y/a/s/n/r", "answer"), hint("←/→ then enter", "choose"), hint("tab", "or typing: back to the input"), hint("esc", "deny and stop")}
	case q.reason && !draft:
		hints = []string{th.Warn.Render("type the reason the model gets"), hint("enter", "deny with it"), hint("esc", "deny without one and stop")}
	case draft:
		hints = []string{hint("enter", "deny, telling the model what you typed"), hint("esc", "deny and stop"), hint("tab", "completes the input")}
	default:
		hints = []string{hint("tab", "answer"), hint("esc", "deny and stop")}
	}
	switch {
	case q.all:
		hints = append(hints, hint("ctrl+o/esc", "collapse"))
	case q.expandable():
		hints = append(hints, hint("ctrl+o", "show all"))
	}
	return append(hints, hint("ctrl+c", "cancel turn"))
}

// wrapSegs joins segments with sep into lines of at most width cells,
// breaking only between segments (a segment wider than width is cut).
func wrapSegs(segs []string, sep string, width int) []string {
	out, _ := wrapSegsMax(segs, sep, width, -1)
	return out
}

// wrapSegsMax is wrapSegs stopping before a segment that would start row
// maxRows+1 (no bound when maxRows < 0); n is how many segments the rows
// hold. Each segment is measured once: a row's width is the sum of its
// segments' and separators'.
func wrapSegsMax(segs []string, sep string, width, maxRows int) (out []string, n int) {
	sepW := ansi.StringWidth(sep)
	cur, curW := "", 0
	for _, s := range segs {
		w := ansi.StringWidth(s)
		if cur != "" && curW+sepW+w > width {
			if maxRows >= 0 && len(out)+1 >= maxRows {
				break // s would start a row past maxRows
			}
			out = append(out, cur)
			cur = ""
		}
		if cur == "" {
			cur, curW = s, w
		} else {
			cur, curW = cur+sep+s, curW+sepW+w
		}
		n++
	}
	if cur != "" {
		out = append(out, cur)
	}
	for i, l := range out {
		out[i] = ansi.Truncate(l, width, "…")
	}
	return out, n
}

// execLine is a process.exec call's command as a shell would need it
// typed: every argument that a shell would split or expand is quoted, so
// what the box shows is exactly what runs. The working directory, when
// the call names one, comes first.
func execLine(input json.RawMessage, fallback string) string {
	var in struct {
		Argv       []string `json:"argv"`
		Cwd        string   `json:"cwd"`
		Background bool     `json:"background"`
	}
	if json.Unmarshal(input, &in) != nil || len(in.Argv) == 0 {
		return fallback // a job's action: the subject names it
	}
	line := argv.Line(in.Argv)
	if in.Cwd != "" && in.Cwd != "." {
		line = "(in " + argv.Quote(in.Cwd) + ") " + line
	}
	if in.Background {
		line += " (in the background: it stays running until stopped)"
	}
	return line
}

// wrapWords wraps plain text at spaces into lines of at most width cells;
// a word wider than a line is cut where the line ends. Unlike a
// hyphen-aware wrap it never splits "--flag" or "a-b" at the hyphen.
func wrapWords(s string, width int) []string {
	var out []string
	cur, curW := "", 0
	for _, w := range strings.Split(s, " ") {
		ww := ansi.StringWidth(w) // each word is measured once
		switch {
		case cur == "":
			cur, curW = w, ww
		case curW+1+ww <= width:
			cur, curW = cur+" "+w, curW+1+ww
		default:
			out = append(out, cur)
			cur, curW = w, ww
		}
		for curW > width {
			out = append(out, ansi.Cut(cur, 0, width))
			cur = ansi.Cut(cur, width, curW)
			curW -= width
		}
	}
	return append(out, cur)
}
