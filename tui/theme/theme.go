// Package theme holds the colours and text styles every TUI component
// shares, for a dark or a light terminal background. Components take a
// *Theme and never build colours of their own, so a background change
// (tea.BackgroundColorMsg) restyles everything at once.
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
	CodeBlock  lipgloss.Style // lines of a fenced block
	Quote      lipgloss.Style
	Link       lipgloss.Style
	ListMarker lipgloss.Style

	// Chips and boxes.
	ChipQueued  lipgloss.Style
	ChipApplied lipgloss.Style
	Box         lipgloss.Style // the approval and confirm boxes
	Key         lipgloss.Style // a key name in prompts
}

// palette is one background's colours.
type palette struct {
	text, muted, faint, accent, user, steer, tool, ok, warn, err, add, del, hunk, code, codeBg, heading, link color.Color
}

var dark = palette{
	text:    lipgloss.Color("#D8DEE9"),
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
	codeBg:  lipgloss.Color("#1E2430"),
	heading: lipgloss.Color("#D2A8FF"),
	link:    lipgloss.Color("#58A6FF"),
}

var light = palette{
	text:    lipgloss.Color("#24292F"),
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
	codeBg:  lipgloss.Color("#F0F2F5"),
	heading: lipgloss.Color("#8250DF"),
	link:    lipgloss.Color("#0969DA"),
}

// The 16-colour palettes, chosen rather than downsampled: a downsampled
// grey becomes dark blue or black on many 16-colour terminals (the Linux
// console, TERM=xterm over SSH), where the hints could not be read. Only
// the eight basic colours and their bright forms are used, the muted and
// faint text in the greys every terminal shows against its own background.
var dark16 = palette{
	text: lipgloss.White, muted: lipgloss.White, faint: lipgloss.BrightBlack, accent: lipgloss.BrightMagenta,
	user: lipgloss.BrightCyan, steer: lipgloss.BrightYellow, tool: lipgloss.BrightGreen, ok: lipgloss.BrightGreen,
	warn: lipgloss.BrightYellow, err: lipgloss.BrightRed, add: lipgloss.BrightGreen, del: lipgloss.BrightRed,
	hunk: lipgloss.BrightCyan, code: lipgloss.BrightYellow, codeBg: nil, heading: lipgloss.BrightMagenta, link: lipgloss.BrightBlue,
}

var light16 = palette{
	text: lipgloss.Black, muted: lipgloss.BrightBlack, faint: lipgloss.BrightBlack, accent: lipgloss.Magenta,
	user: lipgloss.Blue, steer: lipgloss.Red, tool: lipgloss.Green, ok: lipgloss.Green,
	warn: lipgloss.Red, err: lipgloss.Red, add: lipgloss.Green, del: lipgloss.Red,
	hunk: lipgloss.Blue, code: lipgloss.Magenta, codeBg: nil, heading: lipgloss.Magenta, link: lipgloss.Blue,
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
		CodeBlock:  codeBlock(p),
		Quote:      s().Foreground(p.muted).Italic(true),
		Link:       s().Foreground(p.link),
		ListMarker: s().Foreground(p.accent),

		ChipQueued:  s().Foreground(p.warn),
		ChipApplied: s().Foreground(p.ok),
		Box:         s().Border(lipgloss.RoundedBorder()).BorderForeground(p.accent).Padding(0, 1),
		Key:         s().Foreground(p.accent).Bold(true),
	}
}

func codeBlock(p palette) lipgloss.Style {
	st := lipgloss.NewStyle().Foreground(p.text)
	if p.codeBg != nil {
		st = st.Background(p.codeBg)
	}
	return st
}
