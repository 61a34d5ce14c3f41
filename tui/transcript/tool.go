package transcript

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/tui/diffview"
	"github.com/harness-dev/harness/tui/theme"
)

type toolStatus int

const (
	statusRunning toolStatus = iota
	statusAwaiting
	statusDone
	statusFailed
	statusCanceled
)

// Body limits of a card: lines shown collapsed, and at most when expanded.
const (
	collapsedLines = 8
	expandedLines  = 400
)

// writeInfo is what an fs.write card needs for its diff.
type writeInfo struct {
	path     string
	contents string
	prior    string // the contents the session last saw
	seen     bool   // prior is known
	listed   bool   // the path appeared in an fs.list (it existed)
	patch    string // computed once, or given exact
	done     bool
	// exact: patch is the change against the workspace file itself (the
	// tool's record, or the approval's preview), not against what the
	// session happened to see.
	exact bool
	// counts is the change's size the tool recorded (tool.result lines),
	// kept also when its patch was too large to record.
	counts *diffview.Stat
}

// setExact replaces the guessed diff with the workspace's own.
func (w *writeInfo) setExact(patch string) {
	w.patch, w.done, w.exact = patch, true, true
}

// record takes the tool's record of the write: its patch and its line
// counts, either of which may be missing (a patch over the tool's bound;
// a log from before counts were recorded, or a file that could not be
// read first). Without either, what the card had stays.
func (w *writeInfo) record(patch string, lines *event.LineCounts) {
	if lines != nil {
		w.counts = &diffview.Stat{Files: 1, Added: lines.Added, Deleted: lines.Deleted}
	}
	switch {
	case patch != "":
		w.setExact(patch)
	case lines != nil && !w.exact:
		// Too large to keep: the counts are exact, the lines are not
		// known (the approval's preview, when there was one, stays).
		w.setExact("")
	}
}

// omitted reports whether the change is known only by its counts.
func (w *writeInfo) omitted() bool {
	return w.exact && w.patch == "" && w.counts != nil && (w.counts.Added > 0 || w.counts.Deleted > 0)
}

// stat is the change's size: the recorded counts, else the diff's.
func (w *writeInfo) stat() diffview.Stat {
	if w.counts != nil {
		return *w.counts
	}
	return diffview.StatOf(w.diff())
}

// guessing reports whether the diff would be against contents the session
// never saw (an empty file): the card then waits for the record.
func (w *writeInfo) guessing() bool { return !w.exact && !w.seen }

func (w *writeInfo) diff() string {
	if !w.done {
		w.patch = diffview.Unified(w.path, w.prior, w.contents, !w.seen)
		w.done = true
	}
	return w.patch
}

type toolCard struct {
	callID     string
	tool       string
	input      json.RawMessage
	subject    string
	start      time.Time
	status     toolStatus
	durationMs int
	output     json.RawMessage
	errCode    string
	errMsg     string
	jobEnd     string // how the job this call started or read ended, once it did (event.JobEndWords)
	policy     string // a policy or permission outcome worth showing
	denied     bool   // the policy or the user denied it (policy says why)
	user       string // event.UserCallKind: a call the user's own message made ("" for the model's)
	expanded   bool
	write      *writeInfo
	// streamed is a running command's output as tool.output events
	// brought it (bounded by the runtime); shown until the result, and
	// kept when the call was canceled.
	streamed    strings.Builder
	streamedCut bool // the runtime stopped recording at its bound
	readLines   int  // a released read's line count (0: its output is whole)
	// spans is the order the output came in: runs of stdout and stderr
	// bytes. Once the result holds all of it, the streamed text goes and
	// the spans alone say how its stdout and stderr interleave.
	spans []outSpan
}

// outSpan is a run of n bytes of one stream of a command's output.
type outSpan struct {
	n      int
	stderr bool
}

// Collapsed, a finished command shows the end of its output: a few lines
// of a success, more of a failure (its end says most), more still of a
// !command (the user asked to see it).
const (
	okTail   = 5
	failTail = collapsedLines
	userTail = 20
)

// addOutput records a tool.output event's text.
func (c *toolCard) addOutput(stderr bool, text string) {
	c.streamed.WriteString(text)
	if n := len(c.spans); n > 0 && c.spans[n-1].stderr == stderr {
		c.spans[n-1].n += len(text)
		return
	}
	c.spans = append(c.spans, outSpan{n: len(text), stderr: stderr})
}

// settle keeps of the live record only what the result lacks: the order
// of stdout and stderr when the result holds every byte, nothing else.
func (c *toolCard) settle() {
	r, ok := c.exec()
	if !ok {
		return
	}
	var out, errs int
	for _, sp := range c.spans {
		if sp.stderr {
			errs += sp.n
		} else {
			out += sp.n
		}
	}
	if c.streamedCut || r.StdoutTruncated || r.StderrTruncated || out != len(r.Stdout) || errs != len(r.Stderr) {
		c.spans = nil
	}
	c.streamed = strings.Builder{}
}

// outLine is a line of a command's output.
type outLine struct {
	text   string
	stderr bool
}

// outputLines is a finished command's output line by line: in the order
// it came when the spans say it, else its stdout then its stderr.
func (c *toolCard) outputLines(r execResult) []outLine {
	var out []outLine
	if len(c.spans) == 0 {
		for _, l := range splitOutput(r.Stdout) {
			out = append(out, outLine{text: l})
		}
		for _, l := range splitOutput(r.Stderr) {
			out = append(out, outLine{text: l, stderr: true})
		}
		return out
	}
	// A line stands where it began; each stream builds its own (the
	// newline ending a stderr line may come after stdout went on).
	so, se := r.Stdout, r.Stderr
	open := [2]int{-1, -1}
	for _, sp := range c.spans {
		var text string
		k := 0
		if sp.stderr {
			text, se, k = se[:sp.n], se[sp.n:], 1
		} else {
			text, so = so[:sp.n], so[sp.n:]
		}
		for text != "" {
			if open[k] < 0 {
				out = append(out, outLine{stderr: sp.stderr})
				open[k] = len(out) - 1
			}
			nl := strings.IndexByte(text, '\n')
			if nl < 0 {
				out[open[k]].text += text
				break
			}
			out[open[k]].text += text[:nl]
			open[k] = -1
			text = text[nl+1:]
		}
	}
	kept := out[:0]
	for i, l := range out {
		if l.text == "" && (i == open[0] || i == open[1]) {
			continue // a stream's last line, empty
		}
		l.text = termLine(l.text)
		kept = append(kept, l)
	}
	return kept
}

// splitOutput is one stream's lines, without the final newline's empty one.
func splitOutput(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return termLines(s)
}

// execBody is a finished command's lines: the end of its output, every
// line of it on stderr in the error colour, and how much there is.
func (c *toolCard) execBody(r execResult, th *theme.Theme, width int) []string {
	lines := c.outputLines(r)
	tail := okTail
	switch {
	case c.expanded:
		tail = expandedLines
	case c.user == event.UserShell:
		tail = userTail
	case r.ExitCode != 0 || r.TimedOut:
		tail = failTail
	}
	shown := lines
	if len(shown) > tail {
		shown = shown[len(shown)-tail:]
	}
	cut := r.StdoutTruncated || r.StderrTruncated
	var out []string
	if len(shown) < len(lines) || cut {
		errs := 0
		for _, l := range lines {
			if l.stderr {
				errs++
			}
		}
		hint := "… " + plural(len(lines), "line")
		if errs > 0 {
			hint += " (" + itoa(errs) + " on stderr)"
		}
		if cut {
			hint += "; its middle was left out: it was longer than the tools keep"
		}
		if !c.expanded && len(shown) < len(lines) {
			hint += " · ctrl+o"
		}
		out = append(out, th.Muted.Render(ansi.Truncate(hint, width, "…")))
	}
	for _, l := range shown {
		style := th.Muted
		if l.stderr {
			style = th.Err
		}
		out = append(out, style.Render(ansi.Truncate(strings.ReplaceAll(l.text, "\t", "    "), width, "…")))
	}
	return out
}

// shellCommand is what a !command ran: the text after "!", not the
// "sh -c" around it.
func (c *toolCard) shellCommand() string {
	var in struct {
		Argv []string `json:"argv"`
	}
	if json.Unmarshal(c.input, &in) == nil && len(in.Argv) == 3 && in.Argv[0] == "sh" && in.Argv[1] == "-c" {
		return in.Argv[2]
	}
	return c.subject
}

// streamedLines is the streamed output's last lines (all when expanded).
func (c *toolCard) streamedLines(th *theme.Theme, width int) []string {
	text := strings.TrimRight(c.streamed.String(), "\n")
	if !c.expanded {
		// Only the tail is shown: split no more than it needs.
		n, i := 0, len(text)
		for i > 0 && n <= collapsedLines {
			i = strings.LastIndexByte(text[:i], '\n')
			if i < 0 {
				i = 0
				break
			}
			n++
		}
		if i > 0 {
			text = text[i+1:]
		}
	}
	lines := termLines(text)
	keep := collapsedLines
	if c.streamedCut {
		keep-- // room for the note
	}
	if !c.expanded && len(lines) > keep {
		lines = lines[len(lines)-keep:]
	}
	for i, l := range lines {
		lines[i] = th.Muted.Render(ansi.Truncate(strings.ReplaceAll(l, "\t", "    "), width, "…"))
	}
	if c.streamedCut {
		lines = append(lines, th.Muted.Render("(output past 64 KiB is not shown live)"))
	}
	return lines
}

func (*toolCard) kind() kind   { return kindTool }
func (c *toolCard) live() bool { return c.status == statusRunning }

// pending reports whether the call has not finished (running or waiting
// for the user).
func (c *toolCard) pending() bool    { return c.status == statusRunning || c.status == statusAwaiting }
func (c *toolCard) expandable() bool { return true }
func (c *toolCard) toggle()          { c.expanded = !c.expanded }

func (c *toolCard) render(x *Ctx, selected bool) []string {
	th := x.Theme
	head := " " + marker(th, c.expanded, selected) + th.ToolName.Render(c.tool)
	subj := c.subject
	if c.user == event.UserShell {
		// The user's own !command: one card, headed as what they did.
		head = " " + marker(th, c.expanded, selected) + th.User.Render("you") + th.Muted.Render(" · ran")
		subj = strings.ReplaceAll(c.shellCommand(), "\n", "⏎")
	}
	extra := c.extra(x)
	right := c.right(x)
	avail := x.Width - ansi.StringWidth(head) - ansi.StringWidth(right) - 4
	if extra != "" {
		avail -= ansi.StringWidth(extra) + 2
	}
	if avail < 4 {
		subj = ""
	} else if ansi.StringWidth(subj) > avail {
		subj = ansi.Truncate(subj, avail, "…")
	}
	left := head
	if subj != "" {
		left += "  " + th.Text.Render(subj)
	}
	if extra != "" {
		left += "  " + extra
	}
	pad := x.Width - ansi.StringWidth(left) - ansi.StringWidth(right) - 1
	line := left + strings.Repeat(" ", max(pad, 1)) + right
	if ansi.StringWidth(line) > x.Width {
		line = ansi.Truncate(line, x.Width, "")
	}
	out := []string{line}
	gutter := "   " + th.DiffGutter.Render("│") + " "
	inner := x.Width - 5
	if c.policy != "" {
		for _, l := range wrapPlain(c.policy, inner) { // a denial's reason is read whole
			out = append(out, gutter+th.Muted.Render(l))
		}
	}
	if c.status == statusFailed || c.status == statusCanceled {
		msg := c.errMsg
		if msg == "" && c.status == statusCanceled {
			msg = "the turn ended before this call finished"
		}
		style := th.Err
		if c.status == statusCanceled {
			style = th.Canceled
		}
		if msg != "" {
			for _, l := range wrapPlain(msg, inner) {
				out = append(out, gutter+style.Render(l))
			}
		}
	}
	body, styled := c.body(x, inner)
	limit := collapsedLines
	if c.expanded {
		limit = expandedLines
	}
	if _, ok := c.exec(); ok {
		// execBody is already the output's end, bounded by its own tail
		// (a !command's is longer than collapsedLines): cutting its head
		// here would hide the last lines.
		limit = len(body)
	}
	shown := body
	if len(shown) > limit {
		shown = shown[:limit]
	}
	for _, l := range shown {
		if !styled {
			l = th.Muted.Render(ansi.Truncate(strings.ReplaceAll(l, "\t", "    "), inner, "…"))
		}
		out = append(out, gutter+l)
	}
	if more := len(body) - len(shown); more > 0 {
		hint := " · ctrl+o expands"
		if c.expanded {
			hint = ""
		}
		out = append(out, gutter+th.Muted.Render("… "+plural(more, "more line")+hint))
	}
	return out
}

// extra is the short fact after the subject: a diffstat, a line count.
func (c *toolCard) extra(x *Ctx) string {
	th := x.Theme
	switch c.tool {
	case "fs.write":
		if c.denied || c.status == statusFailed {
			return "" // nothing was written: no change to count
		}
		if c.write != nil && c.write.guessing() && c.pending() {
			n := strings.Count(c.write.contents, "\n") + boolInt(c.write.contents != "" && !strings.HasSuffix(c.write.contents, "\n"))
			return th.Muted.Render(plural(n, "line"))
		}
		if c.write != nil {
			return diffview.Summary(c.write.stat(), th)
		}
	case "git.diff":
		if p := c.patch(); p != "" {
			st := diffview.StatOf(p)
			return th.Muted.Render(plural(st.Files, "file")) + " " + diffview.Summary(st, th)
		}
		if c.status == statusDone {
			return th.Muted.Render("no changes")
		}
	case "fs.read":
		if c.readLines > 0 {
			return th.Muted.Render(plural(c.readLines, "line")) // released: counted before
		}
		var o struct {
			Content string `json:"content"`
		}
		if c.status == statusDone && json.Unmarshal(c.output, &o) == nil {
			return th.Muted.Render(plural(lineCount(o.Content), "line"))
		}
	case "fs.list":
		var o struct {
			Total int `json:"total"`
		}
		if c.status == statusDone && json.Unmarshal(c.output, &o) == nil {
			return th.Muted.Render(entries(o.Total))
		}
	}
	return ""
}

// lineCount is how many lines text has (a last line without "\n" counts).
func lineCount(text string) int {
	return strings.Count(text, "\n") + boolInt(text != "" && !strings.HasSuffix(text, "\n"))
}

// Older reads keep only the head of what they read: see Transcript.keep.
const (
	releaseOver   = 4 << 10 // outputs up to this size are kept whole
	releasedLines = 10      // the lines a released read keeps
)

// release drops all but the head of a read's output (the content stays
// in the session's log): its card keeps its line count and its first
// releasedLines lines, which is what it shows expanded, with a line
// saying the rest was left out. It returns the bytes freed.
func (c *toolCard) release() int {
	if c.tool != "fs.read" || c.status != statusDone || c.readLines > 0 {
		return 0
	}
	var o struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if json.Unmarshal(c.output, &o) != nil {
		return 0
	}
	before := len(c.output)
	c.readLines = max(lineCount(o.Content), 1)
	head := o.Content
	for i, n := 0, 0; i < len(head); i++ {
		if head[i] == '\n' {
			if n++; n == releasedLines {
				head = head[:i+1]
				break
			}
		}
	}
	out, err := json.Marshal(map[string]string{"path": o.Path, "content": strings.Clone(head)})
	if err != nil {
		return 0
	}
	c.output = out
	return before - len(out)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// right is the status at the right edge of the header.
func (c *toolCard) right(x *Ctx) string {
	th := x.Theme
	dur := Duration(time.Duration(c.durationMs) * time.Millisecond)
	switch c.status {
	case statusRunning:
		el := ""
		if !x.Now.IsZero() && !c.start.IsZero() && x.Now.After(c.start) {
			el = " " + Duration(x.Now.Sub(c.start).Truncate(100*time.Millisecond))
		}
		return th.Accent.Render(x.Spinner) + th.Muted.Render(" running"+el)
	case statusAwaiting:
		return th.Warn.Render("? awaiting approval")
	case statusCanceled:
		return th.Canceled.Render("⊘ canceled")
	case statusFailed:
		code := c.errCode
		if code == "" {
			code = "failed"
		}
		return th.Err.Render("✗ "+code) + th.Muted.Render(" · "+dur)
	}
	if r, ok := c.exec(); ok && r.JobID != "" {
		// A background job's start, status, output or stop: which job,
		// and where it stands (its end, once the log says it ended).
		what := r.JobID + " " + r.State
		switch {
		case c.jobEnd != "":
			what = r.JobID + " ended (" + c.jobEnd + ")"
		case r.State != "running":
			what = r.JobID + " ended (" + event.JobEndWords(r.Reason)
			if r.ExitCode != 0 {
				what += ", exit " + strconv.Itoa(r.ExitCode)
			}
			what += ")"
		}
		return th.Accent.Render("⟳ ") + th.Muted.Render(what+" · "+dur)
	}
	if r, ok := c.exec(); ok && (r.ExitCode != 0 || r.TimedOut) {
		what := "exit " + strconv.Itoa(r.ExitCode)
		if r.TimedOut {
			what = "timed out"
		}
		return th.Warn.Render("✗ "+what) + th.Muted.Render(" · "+dur)
	}
	return th.OK.Render("✓") + th.Muted.Render(" "+dur)
}

type execResult struct {
	// A background job's result (process.exec with background or an
	// action on a job) names it; its log piece is shown as stdout.
	JobID  string `json:"jobId"`
	State  string `json:"state"`
	Reason string `json:"reason"`
	Output string `json:"output"`

	ExitCode        int    `json:"exitCode"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	TimedOut        bool   `json:"timedOut"`
	StdoutTruncated bool   `json:"stdoutTruncated"`
	StderrTruncated bool   `json:"stderrTruncated"`
}

func (c *toolCard) exec() (execResult, bool) {
	var r execResult
	if c.tool != "process.exec" || c.status != statusDone || json.Unmarshal(c.output, &r) != nil {
		return r, false
	}
	if r.JobID != "" {
		r.Stdout = r.Output
	}
	return r, true
}

func (c *toolCard) patch() string {
	var o struct {
		Patch string `json:"patch"`
	}
	if json.Unmarshal(c.output, &o) != nil {
		return ""
	}
	return o.Patch
}

// body is the card's content lines; styled reports whether they are
// already coloured (diffs) rather than plain text to dim and cut.
func (c *toolCard) body(x *Ctx, width int) ([]string, bool) {
	th := x.Theme
	switch c.tool {
	case "fs.write":
		if c.write == nil || c.status == statusFailed || (c.write.guessing() && c.pending()) {
			return nil, false
		}
		if c.write.omitted() {
			return []string{th.Muted.Render("(the change is too large to show here: /diff shows the workspace patch)")}, true
		}
		lines := diffview.Lines(diffview.Hunks(c.write.diff()), width, th)
		if c.write.guessing() && c.write.listed {
			lines = append([]string{th.Muted.Render("(its earlier contents were not read in this session: the whole file is shown)")}, lines...)
		}
		return lines, true
	case "git.diff":
		return diffview.Lines(c.patch(), width, th), true
	}
	if c.status != statusDone {
		if c.streamed.Len() > 0 {
			return c.streamedLines(th, width), true
		}
		return nil, false
	}
	if r, ok := c.exec(); ok {
		return c.execBody(r, th, width), true
	}
	if !c.expanded {
		return nil, false
	}
	switch c.tool {
	case "fs.read":
		var o struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(c.output, &o) == nil {
			lines := termLines(strings.TrimRight(o.Content, "\n"))
			if n := c.readLines - len(lines); c.readLines > 0 && n > 0 {
				lines = append(lines, "… "+plural(n, "more line")+" (an older read keeps its first "+itoa(releasedLines)+"; harness events has them all)")
			}
			return lines, false
		}
	case "fs.list":
		var o struct {
			Entries   []string `json:"entries"`
			Truncated bool     `json:"truncated"`
		}
		if json.Unmarshal(c.output, &o) == nil {
			if o.Truncated {
				return append(o.Entries, "(truncated)"), false
			}
			return o.Entries, false
		}
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, c.output, "", "  ") != nil {
		return []string{string(c.output)}, false
	}
	return strings.Split(pretty.String(), "\n"), false
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return strconv.Itoa(n) + " entries"
}
