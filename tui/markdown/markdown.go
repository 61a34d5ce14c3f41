// Package markdown renders the Markdown subset models write — ATX headings,
// paragraphs, emphasis, strong, code spans, links, fenced code blocks,
// bullet and numbered lists, block quotes and rules — into styled terminal
// lines of a given width.
//
// Why not glamour: assistant text streams in and is re-rendered at every
// delta of the one block that is growing, so rendering must cost
// microseconds per paragraph, accept unfinished input (an open fence, an
// unclosed "**") without flicker, and add no margins of its own. This
// renderer is one pass over the lines with no AST; anything it does not
// recognise (HTML, pipe art that is not a table) is shown as written, which
// is what a reader of raw Markdown expects anyway. Fenced code is coloured by its language
// (package syntax), on a background of its own where the palette has one.
// Pipe tables are drawn as tables: columns as wide as their cells (the
// widest narrowed, its cells wrapped, when the table would not fit), the
// header in bold, rules in the faint colour.
package markdown

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/tui/markdown/syntax"
	"github.com/harness-dev/harness/tui/theme"
)

// MinWidth is the narrowest width rendered; narrower requests use it.
const MinWidth = 12

// Render returns src as lines no wider than width cells.
func Render(src string, width int, th *theme.Theme) []string {
	width = max(width, MinWidth)
	r := renderer{th: th, width: width}
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.ReplaceAll(lines[i], "\t", "    ")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			r.flush()
			r.gap = true
		case isFence(trimmed):
			r.flush()
			fence := trimmed[:3]
			lang := ""
			if f := strings.Fields(strings.Trim(strings.TrimLeft(trimmed, fence[:1]), "{}")); len(f) > 0 {
				lang = f[0]
			}
			var code []string
			i++
			for ; i < len(lines); i++ {
				if strings.HasPrefix(strings.TrimSpace(lines[i]), fence) {
					break
				}
				code = append(code, strings.ReplaceAll(lines[i], "\t", "    "))
			}
			r.code(code, lang, i >= len(lines))
		case isRule(trimmed):
			r.flush()
			r.emit(th.Faint.Render(strings.Repeat("─", width)))
		case headingLevel(trimmed) > 0:
			r.flush()
			n := headingLevel(trimmed)
			text := strings.TrimSpace(strings.TrimRight(trimmed[n:], "#"))
			r.wrapped(r.inline(text, &th.Heading), "", "")
		case strings.HasPrefix(trimmed, "|") && i+1 < len(lines) && isDelimiterRow(strings.TrimSpace(lines[i+1])):
			// A table: its header, the delimiter row, then rows while
			// lines start with "|".
			r.flush()
			rows := [][]string{splitRow(trimmed)}
			aligns := delimiterAligns(strings.TrimSpace(lines[i+1]))
			i += 2
			for ; i < len(lines); i++ {
				t := strings.TrimSpace(lines[i])
				if !strings.HasPrefix(t, "|") {
					break
				}
				rows = append(rows, splitRow(t))
			}
			i--
			r.table(rows, aligns)
		case strings.HasPrefix(trimmed, "|"):
			// Other pipe art: shown as written, one row a line.
			r.flush()
			r.emit(ansi.Truncate(trimmed, width, "…"))
		case strings.HasPrefix(trimmed, ">"):
			r.flush()
			text := strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))
			bar := th.Faint.Render("│ ")
			r.wrapped(r.inline(text, &th.Quote), bar, bar)
		default:
			if marker, rest, indent, ok := listItem(line); ok {
				r.flush()
				// Lazy continuation lines join the item.
				for i+1 < len(lines) && continues(lines[i+1]) {
					i++
					rest += " " + strings.TrimSpace(lines[i])
				}
				pad := strings.Repeat(" ", indent)
				first := pad + th.ListMarker.Render(marker) + " "
				hang := pad + strings.Repeat(" ", ansi.StringWidth(marker)+1)
				r.wrapped(r.inline(rest, nil), first, hang)
				continue
			}
			r.para = append(r.para, trimmed)
		}
	}
	r.flush()
	return r.out
}

// Code renders lines of a fenced block of language lang as Render does
// (indented, on the code background, coloured, long lines hard-wrapped),
// without the text around it: a block still streaming in is rendered a
// chunk of lines at a time. open says the fence is not closed yet.
func Code(lines []string, lang string, open bool, width int, th *theme.Theme) []string {
	r := renderer{th: th, width: max(width, MinWidth)}
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(l, "\t", "    ")
	}
	r.code(lines, lang, open)
	return r.out
}

// FenceLang is the language a fence line names ("```go" → "go"), "" when
// it names none.
func FenceLang(trimmed string) string {
	if !isFence(trimmed) {
		return ""
	}
	fence := trimmed[:3]
	if f := strings.Fields(strings.Trim(strings.TrimLeft(trimmed, fence[:1]), "{}")); len(f) > 0 {
		return f[0]
	}
	return ""
}

type renderer struct {
	th    *theme.Theme
	width int
	out   []string
	para  []string
	gap   bool // a blank source line was seen since the last block
}

// emit adds one line, preceded by a blank line when the source had one.
func (r *renderer) emit(line string) {
	if r.gap && len(r.out) > 0 {
		r.out = append(r.out, "")
	}
	r.gap = false
	r.out = append(r.out, line)
}

func (r *renderer) flush() {
	if len(r.para) == 0 {
		return
	}
	text := strings.Join(r.para, " ")
	r.para = r.para[:0]
	r.wrapped(r.inline(text, nil), "", "")
}

// wrapped word-wraps styled text, prefixing the first line with first and
// the others with hang (both plain or styled, of equal width).
func (r *renderer) wrapped(styled, first, hang string) {
	w := r.width - ansi.StringWidth(first)
	if w < 4 {
		w = 4
	}
	for i, l := range strings.Split(Wrap(styled, w), "\n") {
		prefix := hang
		if i == 0 {
			prefix = first
		}
		r.emit(prefix + strings.TrimRight(l, " "))
	}
}

// code renders a fenced block: indented two cells, on the code
// background, coloured by its language (package syntax; open: the fence
// is not closed yet, the block still streams in), long lines hard-wrapped.
func (r *renderer) code(lines []string, lang string, open bool) {
	w := r.width - 2
	sy := &r.th.Syntax
	if len(lines) == 0 {
		r.emit("  " + sy.Plain.Render(strings.Repeat(" ", w)))
		return
	}
	runs, ok := syntax.Lines(lang, strings.Join(lines, "\n"), open)
	if !ok {
		runs = make([][]syntax.Run, len(lines))
		for i, l := range lines {
			runs[i] = []syntax.Run{{Text: l}}
		}
	}
	sgr := sgrFor(r.th)
	var b strings.Builder
	for _, line := range runs {
		for _, part := range hardwrap(trimRuns(line), w) {
			b.Reset()
			b.WriteString("  ")
			used, open := 0, ""
			put := func(c syntax.Class, text string) {
				if o := sgr[c]; o != open {
					if open != "" {
						b.WriteString(ansi.ResetStyle)
					}
					b.WriteString(o)
					open = o
				}
				b.WriteString(text)
			}
			for _, run := range part {
				put(run.Class, run.Text)
				used += ansi.StringWidth(run.Text)
			}
			if used < w {
				put(syntax.Plain, strings.Repeat(" ", w-used))
			}
			if open != "" {
				b.WriteString(ansi.ResetStyle)
			}
			r.emit(b.String())
		}
	}
}

// sgrFor returns the opening sequence of each class's style: code is
// written run by run, and lipgloss's Render costs microseconds a call.
// The last theme's sequences are kept.
func sgrFor(th *theme.Theme) *[syntax.NumClasses]string {
	sgrCache.Lock()
	defer sgrCache.Unlock()
	if sgrCache.th == th {
		return sgrCache.sgr
	}
	sgr := new([syntax.NumClasses]string)
	for c := range syntax.NumClasses {
		// Only colours and attributes are set on these styles, so
		// Render wraps the text in one opening sequence and a reset.
		open, _, _ := strings.Cut(classStyle(&th.Syntax, syntax.Class(c)).Render("\x00"), "\x00")
		sgr[c] = open
	}
	sgrCache.th, sgrCache.sgr = th, sgr
	return sgr
}

var sgrCache struct {
	sync.Mutex
	th  *theme.Theme // guarded by Mutex
	sgr *[syntax.NumClasses]string
}

// trimRuns drops a line's trailing blanks.
func trimRuns(line []syntax.Run) []syntax.Run {
	for len(line) > 0 {
		last := line[len(line)-1]
		t := strings.TrimRight(last.Text, " ")
		if t != "" {
			if t != last.Text {
				line = append(line[:len(line)-1:len(line)-1], syntax.Run{Class: last.Class, Text: t})
			}
			return line
		}
		line = line[:len(line)-1]
	}
	return line
}

// hardwrap cuts a line of runs into pieces of at most w cells.
func hardwrap(line []syntax.Run, w int) [][]syntax.Run {
	out := [][]syntax.Run{nil}
	used := 0
	for _, run := range line {
		text := run.Text
		for text != "" {
			n := ansi.StringWidth(text)
			if used+n <= w {
				out[len(out)-1] = append(out[len(out)-1], syntax.Run{Class: run.Class, Text: text})
				used += n
				break
			}
			head := ansi.Truncate(text, w-used, "")
			if head == "" && used == 0 {
				head = string([]rune(text)[:1]) // wider than the line: it goes alone
			}
			if head != "" {
				out[len(out)-1] = append(out[len(out)-1], syntax.Run{Class: run.Class, Text: head})
			}
			text = text[len(head):]
			out = append(out, nil)
			used = 0
		}
	}
	return out
}

// classStyle is the theme's style of a class of code.
func classStyle(sy *theme.Syntax, c syntax.Class) *lipgloss.Style {
	switch c {
	case syntax.Keyword:
		return &sy.Keyword
	case syntax.Type:
		return &sy.Type
	case syntax.Constant:
		return &sy.Constant
	case syntax.Builtin:
		return &sy.Builtin
	case syntax.Function:
		return &sy.Function
	case syntax.String:
		return &sy.String
	case syntax.Number:
		return &sy.Number
	case syntax.Comment:
		return &sy.Comment
	case syntax.Meta:
		return &sy.Meta
	case syntax.Key:
		return &sy.Key
	case syntax.Variable:
		return &sy.Variable
	case syntax.Inserted:
		return &sy.Inserted
	case syntax.Deleted:
		return &sy.Deleted
	case syntax.Hunk:
		return &sy.Hunk
	case syntax.Header:
		return &sy.Header
	}
	return &sy.Plain
}

// inline styles code spans, strong, emphasis and links; base styles the
// plain runs (nil leaves them as they are).
func (r *renderer) inline(s string, base *lipgloss.Style) string {
	var b strings.Builder
	plain := func(t string) {
		if t == "" {
			return
		}
		if base == nil {
			b.WriteString(t)
			return
		}
		b.WriteString(base.Render(t))
	}
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				plain(s[start:i])
				b.WriteString(r.th.Code.Render(s[i+1 : i+1+j]))
				i += j + 2
				start = i
				continue
			}
		case (c == '*' || c == '_') && i+1 < len(s) && s[i+1] == c:
			delim := s[i : i+2]
			if j := strings.Index(s[i+2:], delim); j > 0 && opens(s, i, 2) {
				plain(s[start:i])
				b.WriteString(inherit(r.th.Strong, base).Render(s[i+2 : i+2+j]))
				i += j + 4
				start = i
				continue
			}
		case c == '*' || c == '_':
			if j := strings.IndexByte(s[i+1:], c); j > 0 && opens(s, i, 1) && closes(s, i+1+j, c) {
				plain(s[start:i])
				b.WriteString(inherit(r.th.Emph, base).Render(s[i+1 : i+1+j]))
				i += j + 2
				start = i
				continue
			}
		case c == '[':
			if j := strings.Index(s[i:], "]("); j > 0 {
				if k := strings.IndexByte(s[i+j+2:], ')'); k >= 0 {
					plain(s[start:i])
					b.WriteString(r.th.Link.Render(s[i+1 : i+j]))
					i += j + 2 + k + 1
					start = i
					continue
				}
			}
		}
		i++
	}
	plain(s[start:])
	return b.String()
}

// opens reports whether the delimiter at s[i:i+n] can open emphasis: it is
// followed by a non-space and, for "_", not preceded by a letter (snake_case
// stays as written).
func opens(s string, i, n int) bool {
	if i+n >= len(s) {
		return false
	}
	next, _ := utf8.DecodeRuneInString(s[i+n:])
	if unicode.IsSpace(next) {
		return false
	}
	if s[i] == '_' && i > 0 {
		prev, _ := utf8.DecodeLastRuneInString(s[:i])
		if unicode.IsLetter(prev) || unicode.IsDigit(prev) {
			return false
		}
	}
	return true
}

// closes reports whether the delimiter c at s[j] can close emphasis.
func closes(s string, j int, c byte) bool {
	prev, _ := utf8.DecodeLastRuneInString(s[:j])
	if unicode.IsSpace(prev) {
		return false
	}
	if c == '_' && j+1 < len(s) {
		next, _ := utf8.DecodeRuneInString(s[j+1:])
		if unicode.IsLetter(next) || unicode.IsDigit(next) {
			return false
		}
	}
	return true
}

func isFence(t string) bool { return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") }

func isRule(t string) bool {
	if len(t) < 3 {
		return false
	}
	for _, ch := range []string{"-", "*", "_"} {
		if strings.Trim(strings.ReplaceAll(t, " ", ""), ch) == "" && strings.Count(t, ch) >= 3 {
			return true
		}
	}
	return false
}

func headingLevel(t string) int {
	n := 0
	for n < len(t) && n < 7 && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(t) || t[n] != ' ' {
		return 0
	}
	return n
}

// listItem recognises "- x", "* x", "+ x", "1. x" and "1) x"; indent is the
// nesting in cells (two per level).
func listItem(line string) (marker, rest string, indent int, ok bool) {
	lead := len(line) - len(strings.TrimLeft(line, " "))
	t := line[lead:]
	indent = min(lead/2*2, 8)
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return "•", strings.TrimSpace(t[2:]), indent, true
	}
	n := 0
	for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n > 0 && n+1 < len(t) && (t[n] == '.' || t[n] == ')') && t[n+1] == ' ' {
		return t[:n+1], strings.TrimSpace(t[n+2:]), indent, true
	}
	return "", "", 0, false
}

// continues reports whether a line continues the list item above it.
func continues(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" || isFence(t) || headingLevel(t) > 0 || strings.HasPrefix(t, ">") || isRule(t) {
		return false
	}
	_, _, _, item := listItem(line)
	return !item
}

func inherit(s lipgloss.Style, base *lipgloss.Style) lipgloss.Style {
	if base == nil {
		return s
	}
	return s.Inherit(*base)
}

// isDelimiterRow recognises a table's second line: "| --- | :-: |".
func isDelimiterRow(t string) bool {
	if !strings.Contains(t, "-") || !strings.Contains(t, "|") {
		return false
	}
	for _, cell := range splitRow(t) {
		c := strings.TrimSpace(cell)
		if c == "" || strings.Trim(c, ":-") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return true
}

// Column alignments of a table.
const (
	alignLeft = iota
	alignCenter
	alignRight
)

func delimiterAligns(t string) []int {
	cells := splitRow(t)
	out := make([]int, len(cells))
	for i, c := range cells {
		c = strings.TrimSpace(c)
		switch {
		case strings.HasPrefix(c, ":") && strings.HasSuffix(c, ":"):
			out[i] = alignCenter
		case strings.HasSuffix(c, ":"):
			out[i] = alignRight
		}
	}
	return out
}

// splitRow splits "| a | b |" into its cells ("\|" stays in its cell).
func splitRow(t string) []string {
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, "\\|") {
		t = t[:len(t)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			cur.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(t[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// table draws rows (the first is the header) in columns that fit the
// width: a column is as wide as its widest cell, and while the table is
// too wide the widest column gives up a cell; a cell wider than its
// column wraps onto more lines of its row, so that nothing is cut (only
// a table too wide for columns of three cells each is cut at the width).
func (r *renderer) table(rows [][]string, aligns []int) {
	cols := len(rows[0])
	styled := make([][]string, len(rows))
	widths := make([]int, cols)
	for i, row := range rows {
		styled[i] = make([]string, cols)
		for j := range cols {
			cell := ""
			if j < len(row) {
				cell = row[j]
			}
			base := (*lipgloss.Style)(nil)
			if i == 0 {
				base = &r.th.Bold
			}
			styled[i][j] = r.inline(cell, base)
			widths[j] = max(widths[j], ansi.StringWidth(styled[i][j]), 1)
		}
	}
	sep := r.th.Faint.Render(" │ ")
	room := r.width - 3*(cols-1)
	for total := sum(widths); total > room; total-- {
		k := 0
		for j, w := range widths {
			if w > widths[k] {
				k = j
			}
		}
		if widths[k] <= 3 {
			break // as narrow as a column gets: the line is cut below
		}
		widths[k]--
	}
	for i, row := range styled {
		// The row's cells as lines of their column's width.
		cells := make([][]string, cols)
		height := 1
		for j, cell := range row {
			if ansi.StringWidth(cell) > widths[j] {
				cells[j] = strings.Split(Wrap(cell, widths[j]), "\n")
			} else {
				cells[j] = []string{cell}
			}
			height = max(height, len(cells[j]))
		}
		for k := range height {
			var b strings.Builder
			for j := range cols {
				if j > 0 {
					b.WriteString(sep)
				}
				cell := ""
				if k < len(cells[j]) {
					cell = cells[j][k]
				}
				if ansi.StringWidth(cell) > widths[j] {
					cell = ansi.Truncate(cell, widths[j], "") // a wrapped line's trailing blank
				}
				pad := widths[j] - ansi.StringWidth(cell)
				a := alignLeft
				if j < len(aligns) {
					a = aligns[j]
				}
				switch {
				case j == cols-1 && a == alignLeft:
					b.WriteString(cell) // no trailing blanks
				case a == alignRight:
					b.WriteString(strings.Repeat(" ", pad) + cell)
				case a == alignCenter:
					b.WriteString(strings.Repeat(" ", pad/2) + cell + strings.Repeat(" ", pad-pad/2))
				default:
					b.WriteString(cell + strings.Repeat(" ", pad))
				}
			}
			r.emit(ansi.Truncate(strings.TrimRight(b.String(), " "), r.width, "…"))
		}
		if i == 0 {
			parts := make([]string, cols)
			for j, w := range widths {
				parts[j] = strings.Repeat("─", w)
			}
			r.emit(ansi.Truncate(r.th.Faint.Render(strings.Join(parts, "─┼─")), r.width, ""))
		}
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
