package tui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/tui/markdown"
	"github.com/harness-dev/harness/tui/theme"
	"github.com/harness-dev/harness/tui/transcript"
)

// demoBanner is shown while the built-in demo model answers.
const demoBanner = "Demo model: no provider is configured, so a scripted tour answers. For a real model set OPENAI_API_KEY and pass --model (or --base-url for a local OpenAI-compatible server)."

// statusLine is the header: product, session, model, workspace, tokens,
// context occupancy and window ("ctx 31% of 128k"), queue, approval mode. Segments are dropped from the
// least important up until the line fits.
func (m *Model) statusLine(width int) string {
	th := m.th
	sep := th.Faint.Render(" · ")
	type seg struct {
		text string
		prio int // lower survives longer
	}
	segs := []seg{{th.Accent.Render("harness"), 0}}
	ctxAt, ctxLong, ctxShort := -1, "", "" // the context segment, with and without the window
	if m.sess == nil {
		if m.opening {
			segs = append(segs, seg{th.Muted.Render("opening…"), 0})
		}
	} else {
		s := m.sess
		segs = append(segs, seg{th.Text.Render(s.ID), 1})
		mod := s.Model
		if v := m.tr.Model(); v != "" {
			mod = v
		}
		segs = append(segs, seg{th.Text.Render(mod), 1})
		ws := s.Workspace
		if s.ReadOnly {
			segs = append(segs, seg{th.Warn.Render(ws), 3})
		} else {
			segs = append(segs, seg{th.Muted.Render(ws), 5})
		}
		used := m.tr.Usage().TotalTokens
		tok := transcript.Tokens(used)
		if s.Budget > 0 {
			tok += "/" + transcript.Tokens(int(s.Budget))
		}
		style := th.Muted
		if s.Budget > 0 && int64(used)*100 >= s.Budget*90 {
			style = th.Warn
		}
		segs = append(segs, seg{style.Render(tok + " tok"), 1})
		if occ, win := m.tr.Occupancy(); win > 0 {
			pct := occ * 100 / win
			st := th.Muted
			if pct >= 80 {
				st = th.Warn
			}
			ctxShort = st.Render("ctx " + strconv.Itoa(pct) + "%")
			ctxLong = st.Render("ctx " + strconv.Itoa(pct) + "% of " + transcript.Tokens(win))
			ctxAt = len(segs)
			segs = append(segs, seg{ctxLong, 1})
		}
		if n := len(m.tr.Pending()) + len(m.outbox); n > 0 {
			segs = append(segs, seg{th.ChipQueued.Render(strconv.Itoa(n) + " queued"), 1})
		}
		if n := m.jobs.running(); n > 0 {
			segs = append(segs, seg{th.Accent.Render(plural(n, "job") + " running"), 2})
		}
		if s.Approve {
			segs = append(segs, seg{th.Muted.Render("approve: ask"), 4})
		}
	}
	right, short := "", ""
	if m.busy() {
		right = th.Accent.Render(m.spin.View()) + th.Muted.Render(" working")
		short = th.Accent.Render(m.spin.View())
		if m.canceling {
			right, short = th.Warn.Render("canceling…"), th.Warn.Render("⊘")
		}
	}
	// Degrade until it fits: the whole ID, then a short one, then a
	// one-cell busy mark, then the context without its window, then
	// without the workspace (the window back if it fits), then fewer
	// segments.
	longID := ""
	if len(segs) > 1 {
		longID = segs[1].text
	}
	// Among the last segments, the session ID goes first, then the model:
	// tokens and context are what a narrow screen still wants to see.
	for _, try := range []struct {
		shortID, shortRight, shortCtx bool
		limit                         int
		drop                          int // leave out segs[1:1+drop] (ID, model)
	}{
		{false, false, false, 6, 0}, {true, false, false, 6, 0}, {true, true, false, 6, 0}, {true, true, true, 6, 0},
		{true, true, false, 4, 0}, {true, true, true, 4, 0}, {true, true, true, 3, 0}, {true, true, true, 2, 0}, {true, true, true, 1, 0},
		{true, true, true, 1, 1}, {true, true, true, 1, 2}, {true, true, true, 0, 0},
	} {
		if len(segs) > 1 && m.sess != nil {
			segs[1].text = longID
			if id := m.sess.ID; try.shortID && len(id) > 18 {
				segs[1].text = th.Text.Render(id[:5] + "…" + id[len(id)-12:])
			}
		}
		if ctxAt >= 0 {
			segs[ctxAt].text = ctxLong
			if try.shortCtx {
				segs[ctxAt].text = ctxShort
			}
		}
		r := right
		if try.shortRight {
			r = short
		}
		parts := make([]string, 0, len(segs))
		for i, s := range segs {
			if s.prio <= try.limit && (m.sess == nil || i < 1 || i > try.drop) {
				parts = append(parts, s.text)
			}
		}
		line := " " + strings.Join(parts, sep)
		// At least one blank between the segments and the busy mark, and
		// the last column left free.
		if w := ansi.StringWidth(line) + ansi.StringWidth(r) + 1; w <= width && (r == "" || w < width) {
			if r != "" {
				line += strings.Repeat(" ", width-w) + r
			}
			return line
		}
	}
	return ansi.Truncate(" "+segs[0].text, width, "…")
}

// banners are the lines under the header: the demo model, a read-only
// workspace, a session that could not open, project files that will stop
// the workspace.
func (m *Model) banners(width int) []string {
	th := m.th
	var out []string
	add := func(style interface{ Render(...string) string }, mark, text string) {
		for i, l := range strings.Split(markdown.WrapPlain(text, max(width-4, 10)), "\n") {
			prefix := "   "
			if i == 0 {
				prefix = " " + mark + " "
			}
			out = append(out, prefix+style.Render(l))
		}
	}
	if m.openErr != nil {
		add(th.ErrBanner, th.Err.Render("✗"), string(errcode.Of(m.openErr))+": "+errcode.Message(m.openErr))
		hint := "/sessions picks another session · /new starts one · ctrl+c quits"
		if m.interrupted != "" {
			hint = "its last turn was interrupted: /fork continues it from the last finished turn in a new session · " + hint
		}
		add(th.Muted, " ", hint)
	}
	if m.sess != nil {
		if m.sess.Demo {
			add(th.Banner, th.Warn.Render("▲"), demoBanner)
		}
		if m.sess.Note != "" {
			add(th.Banner, th.Warn.Render("▲"), m.sess.Note)
		}
		if m.startWarning != "" {
			add(th.Banner, th.Warn.Render("▲"), m.startWarning)
		}
	}
	if len(out) > 0 {
		out = append(out, th.Faint.Render(strings.Repeat("─", width)))
	}
	return out
}

// chipsLine shows what waits to be applied: steering for the next model
// request and inputs for the next turn.
func (m *Model) chipsLines(width int) []string {
	th := m.th
	pend := m.tr.Pending()
	if len(pend) == 0 && len(m.outbox) == 0 {
		return nil
	}
	var parts []string
	for _, p := range pend {
		label := "steer"
		if p.Next {
			label = "next turn"
		}
		parts = append(parts, th.ChipQueued.Render("["+label+" · queued] ")+th.Text.Render(chipText(p.Text)))
	}
	for _, o := range m.outbox {
		parts = append(parts, th.ChipQueued.Render("[sending] ")+th.Text.Render(chipText(o.text)))
	}
	hint := th.Muted.Render("  ctrl+x withdraws the last")
	line := " " + strings.Join(parts, th.Faint.Render("  "))
	if ansi.StringWidth(line)+ansi.StringWidth(hint) <= width {
		return []string{line + hint}
	}
	// One chip a line, the newest last, at most maxChipLines.
	var out []string
	if len(parts) > maxChipLines {
		out = append(out, " "+th.Muted.Render("… "+itoa(len(parts)-maxChipLines+1)+" more"))
		parts = parts[len(parts)-maxChipLines+1:]
	}
	for i, p := range parts {
		l := " " + p
		if i == len(parts)-1 && ansi.StringWidth(l)+ansi.StringWidth(hint) <= width {
			l += hint
		}
		out = append(out, ansi.Truncate(l, width, "…"))
	}
	return out
}

// maxChipLines bounds the chips shown one a line.
const maxChipLines = 4

func chipText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return ansi.Truncate(s, 40, "…")
}

func errLine(th *theme.Theme, err error) string {
	return th.ErrCode.Render(string(errcode.Of(err))) + " " + th.Err.Render(errcode.Message(err))
}

func itoa(n int) string { return strconv.Itoa(n) }

// plural is "1 line", "2 lines".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return itoa(n) + " " + what + "s"
}
