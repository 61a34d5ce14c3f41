package tui

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/tui/theme"
)

// Tab completes what the draft holds before the cursor: a slash command
// (completeCommand), an @path mention, or a word that looks like a path
// (it has a / or a .). Paths come from the workspace's listing, which the
// engine gives (a command: Update does no I/O). It is fetched at the first
// tab that needs it and kept, and fetched again after each turn, which may
// have changed the files. A tab pressed while it is on its way completes
// when it arrives, if the draft is still the same.

// completer is the completion state of the root model.
type completer struct {
	files    []string // the workspace listing, sorted
	loaded   bool
	err      error // why there is no listing
	fetching bool
	again    bool // a turn ended while fetching: fetch once more

	waiting bool   // a tab waits for the listing
	draft   string // the editor's text when it did

	shown *candidates // the matches of the last tab, listed above the input
}

// candidates are the paths a tab could not choose between.
type candidates struct {
	typed string   // the token they complete, as it now stands
	dir   string   // the directory part they share
	paths []string // whole paths, directories (ending in /) first

	// lines are completionLines' answer for width and th, kept: every
	// frame (a spinner tick, a key) asks again.
	lines []string
	width int
	th    *theme.Theme
}

// maxCandidateLines bounds the list of matches above the input.
const maxCandidateLines = 3

type filesMsg struct {
	sessionID string
	files     []string
	err       error
}

// listFiles fetches the workspace listing for completion.
func (m *Model) listFiles() tea.Cmd {
	if m.sess == nil {
		return nil
	}
	if m.comp.fetching {
		m.comp.again = true
		return nil
	}
	m.comp.fetching = true
	eng, ctx, id := m.eng, m.ctx, m.sess.ID
	return func() tea.Msg {
		files, err := eng.Files(ctx)
		return filesMsg{sessionID: id, files: files, err: err}
	}
}

// refreshFiles fetches the listing again after a turn, once one was used.
func (m *Model) refreshFiles() tea.Cmd {
	if !m.comp.loaded {
		return nil
	}
	return m.listFiles()
}

func (m *Model) onFiles(msg filesMsg) tea.Cmd {
	if m.sess == nil || msg.sessionID != m.sess.ID {
		return nil // the listing of a session no longer open
	}
	c := &m.comp
	c.fetching = false
	c.loaded = msg.err == nil
	c.files, c.err = msg.files, msg.err
	if c.again {
		c.again = false
		return m.listFiles()
	}
	if c.waiting {
		c.waiting = false
		if m.in.ta.Value() == c.draft {
			if tok, ok := m.in.pathToken(); ok {
				m.completePath(tok)
			}
		}
	}
	return nil
}

// complete completes the draft at tab; ok is false when nothing before
// the cursor can be completed.
func (m *Model) complete() (tea.Cmd, bool) {
	m.comp.shown = nil
	if m.completeCommand() {
		return nil, true
	}
	tok, ok := m.in.pathToken()
	if !ok || m.sess == nil {
		return nil, false
	}
	if !m.comp.loaded {
		m.comp.waiting, m.comp.draft = true, m.in.ta.Value()
		return m.listFiles(), true
	}
	m.completePath(tok)
	return nil, true
}

// completePath completes tok from the listing: to the only match (a file
// gets a space after it, a directory its slash so that tab goes on), or
// to what all the matches share, listing them.
func (m *Model) completePath(tok pathToken) {
	c := &m.comp
	if c.err != nil {
		m.flash = "No path completion: " + string(errcode.Of(c.err)) + " " + errcode.Message(c.err)
		return
	}
	paths := pathCandidates(m.knownFiles(), tok.path, tok.mention)
	if len(paths) == 0 {
		m.flash = "Nothing in the workspace matches " + tok.lead + tok.path + "."
		return
	}
	common := paths[0]
	for _, p := range paths[1:] {
		common = commonPrefix(common, p)
	}
	typed := tok.lead + common
	switch {
	case strings.HasPrefix(common, tok.path):
		m.in.insert(common[len(tok.path):])
	case len(common) >= len(tok.path): // matched ignoring case: retyped in the listing's case
		m.in.replaceBeforeCursor(utf8.RuneCountInString(tok.path), common)
	default: // the matches differ in case within what was typed: it stays
		typed = tok.lead + tok.path
	}
	if len(paths) == 1 {
		if !strings.HasSuffix(common, "/") && !m.in.spaceAtCursor() {
			m.in.insert(" ")
		}
		return
	}
	c.shown = &candidates{typed: typed, dir: common[:strings.LastIndex(common, "/")+1], paths: paths}
}

// knownFiles is the workspace listing and the files this session's calls
// wrote since (a turn still running has not refreshed the listing yet).
func (m *Model) knownFiles() []string {
	written := m.tr.Written()
	if len(written) == 0 {
		return m.comp.files
	}
	return append(append([]string(nil), m.comp.files...), written...)
}

// followCompletion keeps the list of matches true as the draft changes
// after a tab: it narrows as the user types and goes when nothing or only
// one path matches (the next tab completes that one).
func (m *Model) followCompletion(k tea.KeyPressMsg) {
	if m.comp.shown == nil || k.String() == "tab" {
		return
	}
	tok, ok := m.in.pathToken()
	if !ok || !m.comp.loaded {
		m.comp.shown = nil
		return
	}
	paths := pathCandidates(m.knownFiles(), tok.path, tok.mention)
	if len(paths) < 2 {
		m.comp.shown = nil
		return
	}
	m.comp.shown = &candidates{typed: tok.lead + tok.path, dir: tok.path[:strings.LastIndex(tok.path, "/")+1], paths: paths}
}

// completionLines lists the matches of the last tab above the input: how
// many, then their names after the directory they share, a few lines at
// most.
func (m *Model) completionLines(width int) []string {
	c := m.comp.shown
	if c == nil {
		return nil
	}
	th := m.th
	if c.lines != nil && c.width == width && c.th == th {
		return c.lines
	}
	head := " " + th.Muted.Render(itoa(len(c.paths))+" paths match ") + th.Bold.Render(c.typed) + th.Muted.Render(" · type more, then tab")
	// Three rows hold far fewer than maxShownCandidates names: only those
	// are styled.
	segs := make([]string, min(len(c.paths), maxShownCandidates))
	for i, p := range c.paths[:len(segs)] {
		name := strings.TrimPrefix(p, c.dir)
		if strings.HasSuffix(name, "/") {
			segs[i] = th.Accent.Render(name)
		} else {
			segs[i] = th.Text.Render(name)
		}
	}
	inner := max(width-3, 10)
	rows, n := wrapSegsMax(segs, "  ", inner, maxCandidateLines)
	if n < len(c.paths) {
		// As many as fit in the rows but one, then how many are left out.
		rows, n = wrapSegsMax(segs, "  ", inner, maxCandidateLines-1)
		rows = append(rows, th.Muted.Render("… "+itoa(len(c.paths)-n)+" more"))
	}
	out := []string{ansi.Truncate(head, width, "…")}
	for _, r := range rows {
		out = append(out, "   "+r)
	}
	c.lines, c.width, c.th = out, width, th
	return out
}

// maxShownCandidates bounds the names completionLines styles and wraps.
const maxShownCandidates = 200

// pathToken is a path being typed, the word before the cursor.
type pathToken struct {
	lead    string // "@" for a mention, "./" when typed so, else ""
	path    string // the path typed so far
	mention bool
}

// pathToken is the word before the cursor when it is an @path mention or
// looks like a workspace path (it has a / or a ., and is neither absolute
// nor above the root).
func (in *input) pathToken() (pathToken, bool) {
	word := in.wordBeforeCursor()
	switch {
	case strings.HasPrefix(word, "@"):
		return pathToken{lead: "@", path: word[1:], mention: true}, true
	case word == "", strings.HasPrefix(word, "/"), strings.HasPrefix(word, ".."), !strings.ContainsAny(word, "/."):
		return pathToken{}, false
	case strings.HasPrefix(word, "./"):
		return pathToken{lead: "./", path: word[2:]}, true
	}
	return pathToken{path: word}, true
}

// wordBeforeCursor is the text between the last white space before the
// cursor and the cursor, on the cursor's line.
func (in *input) wordBeforeCursor() string {
	rows := strings.Split(in.ta.Value(), "\n")
	row := in.ta.Line()
	if row < 0 || row >= len(rows) {
		return ""
	}
	line := []rune(rows[row])
	before := line[:min(max(in.ta.Column(), 0), len(line))]
	i := len(before) - 1
	for i >= 0 && !unicode.IsSpace(before[i]) {
		i--
	}
	return string(before[i+1:])
}

// spaceAtCursor reports whether white space (or the end of the line) follows
// the cursor.
func (in *input) spaceAtCursor() bool {
	rows := strings.Split(in.ta.Value(), "\n")
	row, col := in.ta.Line(), in.ta.Column()
	if row < 0 || row >= len(rows) {
		return false
	}
	line := []rune(rows[row])
	return col < len(line) && unicode.IsSpace(line[col])
}

// insert types s at the cursor.
func (in *input) insert(s string) {
	if s != "" {
		in.ta.InsertString(s)
	}
}

// replaceBeforeCursor replaces the n characters before the cursor with s.
func (in *input) replaceBeforeCursor(n int, s string) {
	for range n {
		in.ta, _ = in.ta.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	in.insert(s)
}

// pathCandidates are the completions of prefix among files: each file that
// starts with it, cut after the path segment being typed (a directory
// keeps its slash), directories first, then sorted, without repeats. When none matches exactly,
// case is ignored. A mention completes only to paths a mention can name.
func pathCandidates(files []string, prefix string, mention bool) []string {
	collect := func(match func(string) bool) []string {
		seen := map[string]bool{}
		var out []string
		for _, f := range files {
			if len(f) < len(prefix) || !match(f) || mention && !mentionable(f) {
				continue
			}
			c := f
			if i := strings.IndexByte(f[len(prefix):], '/'); i >= 0 {
				c = f[:len(prefix)+i+1]
			}
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
		return out
	}
	out := collect(func(f string) bool { return strings.HasPrefix(f, prefix) })
	if len(out) == 0 {
		out = collect(func(f string) bool { return strings.EqualFold(f[:len(prefix)], prefix) })
	}
	sort.Slice(out, func(i, j int) bool {
		if di, dj := strings.HasSuffix(out[i], "/"), strings.HasSuffix(out[j], "/"); di != dj {
			return di
		}
		return out[i] < out[j]
	})
	return out
}

// mentionable reports whether an @mention can name path: the runtime reads
// a mention up to white space, less the prose punctuation that may end it
// (runtime.Mentions).
func mentionable(path string) bool {
	return path != "" && !strings.ContainsFunc(path, unicode.IsSpace) && strings.TrimRight(path, ".,;:!?)]}\"'") == path
}

// commonPrefix is the longest prefix of a and b that ends on a character
// boundary.
func commonPrefix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && !utf8.ValidString(a[:n]) {
		n--
	}
	return a[:n]
}
