// Package theme holds the colours and text styles every TUI component
// shares, for a dark or a light terminal background. Components take a
// *Theme and never build colours of their own, so a background change
// (tea.BackgroundColorMsg) restyles everything at once.
//
// Body text has no colour of its own: it is the terminal's default
// foreground, readable on whatever background the terminal has, also when
// the terminal does not answer the background query (the theme then
// assumes dark). Colour is kept for what needs it: labels, states, diffs,
// code.
//
// Code in fenced blocks is coloured by Syntax, one style per class of
// package markdown/syntax, from palettes chosen per colour profile rather
// than downsampled: true colour and 256 colours on a background of their
// own (so the colours are read against a known background, whatever the
// terminal's), 16 colours on the terminal's background with the basic
// colours each background reads well (after vim's defaults for dark and
// light), and no colour at all on a terminal without colour.
package theme

import (
	"image/color"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// Theme is a set of styles. The zero value is not usable; call New.
type Theme struct {
	Dark bool

	Text   lipgloss.Style // plain body text
	Muted  lipgloss.Style // secondary text: labels, durations, hints
	Faint  lipgloss.Style // rules and separators
	Accent lipgloss.Style // the product colour: header, prompt
	Bold   lipgloss.Style

	User      lipgloss.Style // the "you" label
	Steering  lipgloss.Style // the steering label
	ToolName  lipgloss.Style // tool names on cards
	Selected  lipgloss.Style // the selected card's marker
	OK        lipgloss.Style // ✓ and applied chips
	Warn      lipgloss.Style // queued chips, awaiting approval, non-zero exits
	Err       lipgloss.Style // failures and error codes
	ErrCode   lipgloss.Style // an error code in a failure line
	Canceled  lipgloss.Style // canceled turns and calls
	Banner    lipgloss.Style // the demo / read-only banners
	ErrBanner lipgloss.Style // a fatal banner (session could not open)

	// Diffs.
	DiffAdd    lipgloss.Style
	DiffDel    lipgloss.Style
	DiffHunk   lipgloss.Style
	DiffFile   lipgloss.Style
	DiffGutter lipgloss.Style

	// Markdown.
	Heading    lipgloss.Style
	Strong     lipgloss.Style
	Emph       lipgloss.Style
	Code       lipgloss.Style // inline code span
	CodeBlock  lipgloss.Style // lines of a fenced block (its plain text and padding)
	Quote      lipgloss.Style
	Link       lipgloss.Style
	ListMarker lipgloss.Style

	// Code in fenced blocks, by class of syntax.
	Syntax Syntax

	// Chips and boxes.
	ChipQueued  lipgloss.Style
	ChipApplied lipgloss.Style
	Box         lipgloss.Style // the approval and confirm boxes
	Key         lipgloss.Style // a key name in prompts
}

// Syntax is one style per class of code (markdown/syntax.Class); each
// carries the code block's background, if it has one, so a line keeps it
// from run to run.
type Syntax struct {
	Plain, Keyword, Type, Constant, Builtin, Function, String, Number, Comment, Meta, Key, Variable,
	Inserted, Deleted, Hunk, Header lipgloss.Style
}

// palette is one background's colours.
type palette struct {
	text, muted, faint, accent, user, steer, tool, ok, warn, err, add, del, hunk, code, heading, link color.Color
}

var dark = palette{
	text:    nil, // the terminal's own foreground
	muted:   lipgloss.Color("#8B93A7"),
	faint:   lipgloss.Color("#4C566A"),
	accent:  lipgloss.Color("#B48EFF"),
	user:    lipgloss.Color("#7FD1FF"),
	steer:   lipgloss.Color("#FFB86C"),
	tool:    lipgloss.Color("#A3BE8C"),
	ok:      lipgloss.Color("#50FA7B"),
	warn:    lipgloss.Color("#F1FA8C"),
	err:     lipgloss.Color("#FF6E6E"),
	add:     lipgloss.Color("#7EE787"),
	del:     lipgloss.Color("#FF7B72"),
	hunk:    lipgloss.Color("#79C0FF"),
	code:    lipgloss.Color("#FFA657"),
	heading: lipgloss.Color("#D2A8FF"),
	link:    lipgloss.Color("#58A6FF"),
}

var light = palette{
	text:    nil,
	muted:   lipgloss.Color("#57606A"),
	faint:   lipgloss.Color("#AFB8C1"),
	accent:  lipgloss.Color("#8250DF"),
	user:    lipgloss.Color("#0969DA"),
	steer:   lipgloss.Color("#BC4C00"),
	tool:    lipgloss.Color("#1A7F37"),
	ok:      lipgloss.Color("#1A7F37"),
	warn:    lipgloss.Color("#9A6700"),
	err:     lipgloss.Color("#CF222E"),
	add:     lipgloss.Color("#116329"),
	del:     lipgloss.Color("#A40E26"),
	hunk:    lipgloss.Color("#0550AE"),
	code:    lipgloss.Color("#953800"),
	heading: lipgloss.Color("#8250DF"),
	link:    lipgloss.Color("#0969DA"),
}

// The 16-colour palettes, chosen rather than downsampled: a downsampled
// grey becomes dark blue or black on many 16-colour terminals (the Linux
// console, TERM=xterm over SSH), where the hints could not be read. Only
// the eight basic colours and their bright forms are used, the muted text
// in the terminal's own foreground on a dark background (a fixed white
// would vanish on a light terminal that did not say it is light) and in
// grey on a light one.
var dark16 = palette{
	text: nil, muted: nil, faint: lipgloss.BrightBlack, accent: lipgloss.BrightMagenta,
	user: lipgloss.BrightCyan, steer: lipgloss.BrightYellow, tool: lipgloss.BrightGreen, ok: lipgloss.BrightGreen,
	warn: lipgloss.BrightYellow, err: lipgloss.BrightRed, add: lipgloss.BrightGreen, del: lipgloss.BrightRed,
	hunk: lipgloss.BrightCyan, code: lipgloss.BrightYellow, heading: lipgloss.BrightMagenta, link: lipgloss.BrightBlue,
}

var light16 = palette{
	text: nil, muted: lipgloss.BrightBlack, faint: lipgloss.BrightBlack, accent: lipgloss.Magenta,
	user: lipgloss.Blue, steer: lipgloss.Red, tool: lipgloss.Green, ok: lipgloss.Green,
	warn: lipgloss.Red, err: lipgloss.Red, add: lipgloss.Green, del: lipgloss.Red,
	hunk: lipgloss.Blue, code: lipgloss.Magenta, heading: lipgloss.Magenta, link: lipgloss.Blue,
}

// New returns the theme for a dark (true) or light background, in true
// colour (a 256-colour terminal gets it downsampled, which reads well).
func New(isDark bool) *Theme { return NewFor(isDark, colorprofile.TrueColor) }

// NewFor returns the theme for a background and the terminal's colour
// profile: the 16-colour palettes for ANSI; with no colour at all (ASCII,
// NoTTY) the renderer drops every colour and the attributes (bold, italic,
// strike-through, reverse for the selected choice) carry the meaning.
func NewFor(isDark bool, prof colorprofile.Profile) *Theme {
	p := light
	switch {
	case prof == colorprofile.ANSI && isDark:
		p = dark16
	case prof == colorprofile.ANSI:
		p = light16
	case isDark:
		p = dark
	}
	sy := syntaxFor(isDark, prof)
	s := lipgloss.NewStyle
	return &Theme{
		Dark:      isDark,
		Text:      s().Foreground(p.text),
		Muted:     s().Foreground(p.muted),
		Faint:     s().Foreground(p.faint),
		Accent:    s().Foreground(p.accent).Bold(true),
		Bold:      s().Bold(true),
		User:      s().Foreground(p.user).Bold(true),
		Steering:  s().Foreground(p.steer).Bold(true),
		ToolName:  s().Foreground(p.tool).Bold(true),
		Selected:  s().Foreground(p.accent).Bold(true).Underline(prof <= colorprofile.ASCII),
		OK:        s().Foreground(p.ok),
		Warn:      s().Foreground(p.warn),
		Err:       s().Foreground(p.err),
		ErrCode:   s().Foreground(p.err).Bold(true),
		Canceled:  s().Foreground(p.muted).Italic(true),
		Banner:    s().Foreground(p.warn).Bold(true),
		ErrBanner: s().Foreground(p.err).Bold(true),

		DiffAdd:    s().Foreground(p.add),
		DiffDel:    s().Foreground(p.del),
		DiffHunk:   s().Foreground(p.hunk),
		DiffFile:   s().Foreground(p.text).Bold(true),
		DiffGutter: s().Foreground(p.faint),

		Heading:    s().Foreground(p.heading).Bold(true),
		Strong:     s().Bold(true),
		Emph:       s().Italic(true),
		Code:       s().Foreground(p.code),
		CodeBlock:  sy.Plain,
		Syntax:     sy,
		Quote:      s().Foreground(p.muted).Italic(true),
		Link:       s().Foreground(p.link),
		ListMarker: s().Foreground(p.accent),

		ChipQueued:  s().Foreground(p.warn),
		ChipApplied: s().Foreground(p.ok),
		Box:         s().Border(lipgloss.RoundedBorder()).BorderForeground(p.accent).Padding(0, 1),
		Key:         s().Foreground(p.accent).Bold(true),
	}
}

// codePalette is the colours of code, by class.
type codePalette struct {
	bg, fg                                                                           color.Color // nil: the terminal's
	keyword, typ, constant, builtin, function, str, number, comment, meta, key, vari color.Color
	ins, del, hunk                                                                   color.Color
	italic                                                                           bool // comments in italic
}

var (
	codeDark = codePalette{
		bg: lipgloss.Color("#1E2430"), fg: lipgloss.Color("#D8DEE9"),
		keyword: lipgloss.Color("#C792EA"), typ: lipgloss.Color("#FFCB6B"), constant: lipgloss.Color("#F78C6C"),
		builtin: lipgloss.Color("#89DDFF"), function: lipgloss.Color("#82AAFF"), str: lipgloss.Color("#C3E88D"),
		number: lipgloss.Color("#F78C6C"), comment: lipgloss.Color("#8B93A7"), meta: lipgloss.Color("#FF9CAC"),
		key: lipgloss.Color("#7FD1FF"), vari: lipgloss.Color("#F07178"),
		ins: lipgloss.Color("#7EE787"), del: lipgloss.Color("#FF7B72"), hunk: lipgloss.Color("#79C0FF"), italic: true,
	}
	codeLight = codePalette{
		bg: lipgloss.Color("#F0F2F5"), fg: lipgloss.Color("#24292F"),
		keyword: lipgloss.Color("#CF222E"), typ: lipgloss.Color("#953800"), constant: lipgloss.Color("#0550AE"),
		builtin: lipgloss.Color("#6639BA"), function: lipgloss.Color("#8250DF"), str: lipgloss.Color("#0A3069"),
		number: lipgloss.Color("#0550AE"), comment: lipgloss.Color("#6E7781"), meta: lipgloss.Color("#116329"),
		key: lipgloss.Color("#0550AE"), vari: lipgloss.Color("#953800"),
		ins: lipgloss.Color("#116329"), del: lipgloss.Color("#A40E26"), hunk: lipgloss.Color("#0550AE"), italic: true,
	}
	// 256 colours: xterm's palette indices, so no terminal maps them.
	code256Dark = codePalette{
		bg: lipgloss.Color("235"), fg: lipgloss.Color("253"),
		keyword: lipgloss.Color("176"), typ: lipgloss.Color("221"), constant: lipgloss.Color("209"),
		builtin: lipgloss.Color("117"), function: lipgloss.Color("111"), str: lipgloss.Color("150"),
		number: lipgloss.Color("209"), comment: lipgloss.Color("245"), meta: lipgloss.Color("211"),
		key: lipgloss.Color("81"), vari: lipgloss.Color("204"),
		ins: lipgloss.Color("114"), del: lipgloss.Color("203"), hunk: lipgloss.Color("75"), italic: true,
	}
	code256Light = codePalette{
		bg: lipgloss.Color("255"), fg: lipgloss.Color("235"),
		keyword: lipgloss.Color("160"), typ: lipgloss.Color("130"), constant: lipgloss.Color("25"),
		builtin: lipgloss.Color("91"), function: lipgloss.Color("91"), str: lipgloss.Color("22"),
		number: lipgloss.Color("25"), comment: lipgloss.Color("243"), meta: lipgloss.Color("28"),
		key: lipgloss.Color("25"), vari: lipgloss.Color("130"),
		ins: lipgloss.Color("28"), del: lipgloss.Color("124"), hunk: lipgloss.Color("25"), italic: true,
	}
	// 16 colours, on the terminal's background: the bright colours on a
	// dark one, the dark ones (never yellow or cyan) on a light one.
	code16Dark = codePalette{
		keyword: lipgloss.BrightYellow, typ: lipgloss.BrightGreen, constant: lipgloss.BrightMagenta,
		builtin: lipgloss.BrightBlue, function: lipgloss.BrightBlue, str: lipgloss.BrightMagenta,
		number: lipgloss.BrightMagenta, comment: lipgloss.BrightCyan, meta: lipgloss.BrightRed,
		key: lipgloss.BrightBlue, vari: lipgloss.BrightCyan,
		ins: lipgloss.BrightGreen, del: lipgloss.BrightRed, hunk: lipgloss.BrightCyan,
	}
	code16Light = codePalette{
		keyword: lipgloss.Blue, typ: lipgloss.Green, constant: lipgloss.Red,
		builtin: lipgloss.Magenta, function: lipgloss.Magenta, str: lipgloss.Red,
		number: lipgloss.Red, comment: lipgloss.BrightBlack, meta: lipgloss.Magenta,
		key: lipgloss.Blue, vari: lipgloss.Red,
		ins: lipgloss.Green, del: lipgloss.Red, hunk: lipgloss.Blue,
	}
)

// syntaxFor picks the code palette for a background and profile; with no
// colour every class is plain.
func syntaxFor(isDark bool, prof colorprofile.Profile) Syntax {
	var p codePalette
	switch {
	case prof <= colorprofile.ASCII && prof != colorprofile.Unknown:
		return Syntax{}
	case prof == colorprofile.ANSI && isDark:
		p = code16Dark
	case prof == colorprofile.ANSI:
		p = code16Light
	case prof == colorprofile.ANSI256 && isDark:
		p = code256Dark
	case prof == colorprofile.ANSI256:
		p = code256Light
	case isDark:
		p = codeDark
	default:
		p = codeLight
	}
	base := lipgloss.NewStyle()
	if p.bg != nil {
		base = base.Background(p.bg)
	}
	fg := func(c color.Color) lipgloss.Style {
		if c == nil {
			c = p.fg
		}
		if c == nil {
			return base
		}
		return base.Foreground(c)
	}
	return Syntax{
		Plain: fg(nil), Keyword: fg(p.keyword).Bold(prof == colorprofile.ANSI && !isDark), Type: fg(p.typ),
		Constant: fg(p.constant), Builtin: fg(p.builtin), Function: fg(p.function), String: fg(p.str),
		Number: fg(p.number), Comment: fg(p.comment).Italic(p.italic), Meta: fg(p.meta), Key: fg(p.key),
		Variable: fg(p.vari), Inserted: fg(p.ins), Deleted: fg(p.del), Hunk: fg(p.hunk), Header: fg(nil).Bold(true),
	}
}
