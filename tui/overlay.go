package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/tui/diffview"
	"github.com/harness-dev/harness/tui/markdown"
	"github.com/harness-dev/harness/tui/theme"
	"github.com/harness-dev/harness/tui/transcript"
)

// pagerKind says what a pager shows and which keys it answers.
type pagerKind int

const (
	pagerDiff pagerKind = iota
	pagerApply
	pagerHelp
	pagerJobs // /jobs: a digit stops the running job it numbers
)

// pager is a scrollable full-body overlay: /diff, the /apply confirmation
// and the help.
type pager struct {
	kind  pagerKind
	title string
	vp    viewport.Model
	plan  ApplyPlan // pagerApply
}

func newPager(kind pagerKind, title string, lines []string, width, height int) *pager {
	vp := viewport.New(viewport.WithWidth(width), viewport.WithHeight(max(height-1, 1)))
	vp.SetContentLines(lines)
	return &pager{kind: kind, title: title, vp: vp}
}

func (p *pager) resize(width, height int) {
	p.vp.SetWidth(width)
	p.vp.SetHeight(max(height-1, 1))
}

func (p *pager) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	p.vp, cmd = p.vp.Update(msg)
	return cmd
}

func (p *pager) view(th *theme.Theme, width int) string {
	pos := ""
	if total := p.vp.TotalLineCount(); total > p.vp.Height() {
		first := p.vp.YOffset() + 1
		pos = fmt.Sprintf(" · lines %d–%d of %d", first, min(first+p.vp.Height()-1, total), total)
	}
	title := " " + th.Accent.Render(p.title) + th.Muted.Render(pos)
	return ansi.Truncate(title, width, "…") + "\n" + p.vp.View()
}

func (p *pager) footer() string {
	switch {
	case p.kind == pagerApply && p.plan.Conflict == "" && p.plan.Patch != "":
		return "y apply to " + p.plan.Root + " · n/esc cancel · ↑/↓ pgup/pgdn scroll"
	case p.kind == pagerJobs:
		return "1–9 stop that running job · esc close · ↑/↓ pgup/pgdn scroll"
	default:
		return "esc close · ↑/↓ pgup/pgdn scroll"
	}
}

// diffLines colours a patch for a pager, or says there is none.
func diffLines(patch string, width int, th *theme.Theme) []string {
	if strings.TrimSpace(patch) == "" {
		return []string{" " + th.Muted.Render("The workspace has no changes.")}
	}
	st := diffview.StatOf(patch)
	head := " " + th.Muted.Render(fmt.Sprintf("%d file(s) ", st.Files)) + diffview.Summary(st, th)
	lines := []string{head, ""}
	for _, l := range diffview.Lines(patch, width-1, th) {
		lines = append(lines, " "+l)
	}
	return lines
}

// applyLines shows what /apply will do, or why it cannot.
func applyLines(plan ApplyPlan, width int, th *theme.Theme) []string {
	switch {
	case plan.Applied:
		out := []string{" " + th.OK.Render("✓ Already applied:")}
		for _, l := range wrapped("the host tree at "+plan.Root+" already holds these changes; nothing is left to apply.", width-1) {
			out = append(out, " "+th.Text.Render(l))
		}
		return out
	case plan.Conflict != "":
		// The refusal says why in its own words (a changed file, a
		// symbolic link, a file that exists), whole: wrapped, never cut.
		out := []string{" " + th.ErrCode.Render("WORKSPACE_SCOPE") + " " + th.Err.Render("the host tree refused this patch; nothing was applied"), ""}
		for _, l := range wrapped(plan.Conflict, width-1) {
			out = append(out, " "+th.Muted.Render(l))
		}
		return out
	}
	var out []string
	for _, w := range plan.Warnings {
		for _, l := range wrapped("warning: "+w, width-1) {
			out = append(out, " "+th.Err.Render(l))
		}
	}
	if len(out) > 0 {
		out = append(out, "")
	}
	if strings.TrimSpace(plan.Patch) == "" {
		if len(out) > 0 {
			return append(out, " "+th.Muted.Render("Nothing to apply: the patch carries no file."))
		}
		return []string{" " + th.Muted.Render("Nothing to apply: the workspace has no changes.")}
	}
	out = append(out, " "+th.Bold.Render("Apply to "+plan.Root+"?")+th.Muted.Render(" The check passed; these files change:"), "")
	for _, l := range strings.Split(strings.TrimRight(plan.Stat, "\n"), "\n") {
		out = append(out, " "+th.Text.Render(ansi.Truncate(l, width-1, "…")))
	}
	out = append(out, "")
	return append(out, diffLines(plan.Patch, width, th)[2:]...)
}

// helpLines is the help overlay: every key (bubbles help, all bindings
// enabled whatever the state), the commands, then how input behaves.
func helpLines(m *Model, width int) []string {
	th := m.th
	h := m.help
	h.SetWidth(0)
	keys := newKeyMap()
	keys.Send.SetHelp("enter", "send / steer")
	groups := keys.FullHelp()
	out := []string{""}
	// All columns side by side when they fit, else two by two.
	for i := 0; i < len(groups); {
		n := len(groups) - i
		for n > 1 && lipgloss.Width(h.FullHelpView(groups[i:i+n])) > width-1 {
			n--
		}
		for _, l := range strings.Split(h.FullHelpView(groups[i:i+n]), "\n") {
			out = append(out, " "+l)
		}
		i += n
		if i < len(groups) {
			out = append(out, "")
		}
	}
	out = append(out, "", " "+th.Bold.Render("Commands"))
	const indent = "              " // under the help text, past the names
	for _, c := range slashCommands {
		for i, l := range wrapWords(c.help, max(width-len(indent), 20)) {
			if i == 0 {
				out = append(out, "   "+th.Key.Render(fmt.Sprintf("%-10s", c.name))+" "+th.Muted.Render(l))
			} else {
				out = append(out, indent+th.Muted.Render(l))
			}
		}
	}
	out = append(out, "")
	prose := "Enter sends a new turn when idle and steers the running one when busy: steering is applied at the next model request. " +
		"alt+enter keeps a message for after the turn; ctrl+x withdraws the last one not yet applied. " +
		"A message ending in \\ continues on a new line. Writes and commands run in the isolated workspace; " +
		"/apply copies its patch to your files after a clean check. " +
		"With --approve ask, a question never takes what you type: with the input empty, tab gives its box the keys " +
		"(y allow once, a allow the tool for this turn, s for this session: recorded, kept on resume, listed and revoked by /permissions; n deny, r deny with a reason; ←/→ then enter picks; tab or typing goes back); " +
		"enter with text in the input denies and tells the model that text (a slash command runs instead: /diff to look first); esc collapses an expanded box, else denies and stops the turn; pgup/pgdn scroll a command or diff too long for the box. " +
		"The mouse wheel scrolls the transcript; to select text with the mouse, hold shift while dragging (option in macOS terminals)."
	for _, l := range strings.Split(markdown.WrapPlain(prose, max(width-2, 20)), "\n") {
		out = append(out, " "+th.Muted.Render(l))
	}
	return out
}

// picker is the session list of `harness resume` and /sessions.
type picker struct {
	list    []SessionSummary // every session; shown() is what the search keeps
	query   string           // the search typed after /
	search  bool             // typing goes to the search
	cursor  int
	loading bool
	err     error
	startup bool // no session is open behind it
	current string
}

// shown is the sessions whose title, directory or ID contain the search,
// ignoring case.
func (p *picker) shown() []SessionSummary {
	if p.query == "" {
		return p.list
	}
	q := strings.ToLower(p.query)
	var out []SessionSummary
	for _, s := range p.list {
		if strings.Contains(strings.ToLower(s.Title+"\x00"+s.Dir+"\x00"+s.ID), q) {
			out = append(out, s)
		}
	}
	return out
}

// setQuery changes the search and puts the cursor on the first match.
func (p *picker) setQuery(q string) {
	p.query, p.cursor = q, 0
}

func (p *picker) move(d int) {
	n := len(p.shown())
	if n == 0 {
		return
	}
	p.cursor = min(max(p.cursor+d, 0), n-1)
}

func (p *picker) selected() (SessionSummary, bool) {
	list := p.shown()
	if p.cursor < 0 || p.cursor >= len(list) {
		return SessionSummary{}, false
	}
	return list[p.cursor], true
}

func (p *picker) view(th *theme.Theme, width, height int, now time.Time) string {
	lines := []string{" " + th.Accent.Render("Resume a session") + th.Muted.Render("  ↑/↓ choose · enter open · / search · esc "+map[bool]string{true: "quit", false: "close"}[p.startup]), ""}
	if p.search || p.query != "" {
		lines[1] = " " + th.Bold.Render("/ "+p.query) + th.Muted.Render(map[bool]string{true: "▏", false: ""}[p.search])
	}
	list := p.shown()
	switch {
	case p.loading:
		lines = append(lines, " "+th.Muted.Render("loading…"))
	case p.err != nil:
		lines = append(lines, " "+errLine(th, p.err))
	case len(p.list) == 0:
		lines = append(lines, " "+th.Muted.Render("No sessions yet: run harness to start one."))
	case len(list) == 0:
		lines = append(lines, " "+th.Muted.Render("No session matches the search."))
	}
	tw, long := pickerColumns(width)
	header := fmt.Sprintf("   %-*s %-*s %9s %7s %8s  %-12s %s", tw, "TITLE", dirColumn, "DIRECTORY", "UPDATED", "TURNS", "TOKENS", "STATUS", "ID")
	if len(list) > 0 {
		lines = append(lines, th.Muted.Render(ansi.Truncate(header, width, "")))
	}
	// Keep the cursor in view.
	room := max(height-len(lines), 1)
	first := 0
	if p.cursor >= room {
		first = p.cursor - room + 1
	}
	for i := first; i < len(list) && len(lines) < height; i++ {
		s := list[i]
		title := s.Title
		if title == "" {
			title = "(untitled)"
		}
		if s.ID == p.current {
			title = "• " + title
		}
		title = ansi.Truncate(strings.ReplaceAll(title, "\n", " "), tw, "…")
		id := s.ID
		if !long && len(id) > 18 {
			id = id[:5] + "…" + id[len(id)-12:]
		}
		status := s.Status
		if status == "budget_exceeded" {
			status = "over budget" // the column's 12 cells
		}
		row := fmt.Sprintf("%-*s %-*s %9s %7d %8s  %-12s %s", tw, title, dirColumn, shortDir(s.Dir), age(now, s.Updated), s.Turns, transcript.Tokens(int(s.Tokens)), status, id)
		row = ansi.Truncate(row, width-3, "…")
		if i == p.cursor {
			lines = append(lines, " "+th.Selected.Render("▸ ")+th.Bold.Render(row))
		} else {
			lines = append(lines, "   "+statusStyle(th, s.Status).Render(row))
		}
	}
	return strings.Join(lines, "\n")
}

// dirColumn is the width of the picker's directory column.
const dirColumn = 20

// shortDir fits a directory in dirColumn, keeping its end.
func shortDir(dir string) string {
	r := []rune(dir)
	if len(r) <= dirColumn {
		return dir
	}
	return "…" + string(r[len(r)-dirColumn+1:])
}

// pickerColumns sizes the title column and says whether whole IDs fit.
func pickerColumns(width int) (title int, longIDs bool) {
	const fixed = 3 + 1 + dirColumn + 1 + 9 + 1 + 7 + 1 + 8 + 2 + 12 + 1 // margins, directory, updated, turns, tokens, status
	if width-fixed-41 >= 24 {
		return min(width-fixed-41, 60), true
	}
	return max(width-fixed-18, 12), false
}

func statusStyle(th *theme.Theme, status string) interface{ Render(...string) string } {
	switch status {
	case "failed", "budget_exceeded", "interrupted":
		return th.Warn
	case "running":
		return th.Accent
	}
	return th.Text
}

// age says how long ago t was: "just now", "5m ago", "3h ago", "2d ago".
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}

// wrapped splits text into its lines, each wrapped at width (words kept
// whole where they fit, a longer one broken).
func wrapped(text string, width int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		out = append(out, strings.Split(ansi.Wrap(l, max(width, 10), ""), "\n")...)
	}
	return out
}
