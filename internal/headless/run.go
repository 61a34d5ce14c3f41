// Package headless runs a session's turns without a screen, as harness
// exec does: it sends the prompt and the lines read from stdin (steering,
// ">>" queued turns, answers to permission questions), cancels on an
// interrupt, and prints the event stream as text (answers on stdout, tool
// calls and outcomes on stderr) or as the stored JSON lines.
package headless

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/subject"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
)

// Options says where a run reads and prints.
type Options struct {
	JSON       bool      // print the stored JSON lines instead of text
	Stdin      io.Reader // steering lines, ">>" turns and answers
	Stdout     io.Writer
	Stderr     io.Writer
	Interrupts <-chan struct{} // each cancels the running turn
	// Fail prints an error that ends the run before its turn starts; it is
	// called before the session closes, so it comes before the last events.
	Fail func(error)
}

// run is one Run: where it prints and what it has printed.
type run struct {
	Options
	printedSeq int64  // the last event printed
	outFailed  bool   // a write to stdout failed (reported once)
	endedTurn  string // the turn of the last turn.completed seen
}

// Run runs prompt as a turn of sess, then the turns queued with ">>" lines
// (the session starts each when the one before completes), printing the
// events after seq from (what opening the session wrote, then the turns).
// Lines read from stdin are sent to the session — steering, or the next
// turn once the running one is ending — or, when the session's approval
// is ask, answer the question on screen. It closes sess. It returns how
// the last turn ended, or false when no turn started (o.Fail got why).
func Run(ctx context.Context, sess *app.Session, from int64, prompt string, o Options) (runtime.Outcome, bool) {
	a := &run{Options: o, printedSeq: -1}
	stdin, interrupts := o.Stdin, o.Interrupts
	// Everything after from: what opening the session wrote, then the turns.
	if err := sess.Subscribe(ctx, from); err != nil {
		closeSession(ctx, sess)
		o.Fail(err)
		return runtime.Outcome{}, false
	}
	// Questions go from the printer to the drive loop, which asks them.
	// They come only when the session's approval is ask (--approve ask, or
	// saved so); harness exec refuses --approve ask without a terminal.
	asks := make(chan question, 1)
	printed := make(chan struct{})
	stopPrint := make(chan struct{})
	flush := make(chan chan struct{}) // prints what is queued, then answers
	go func() {
		defer close(printed)
		var p printer
		for {
			select {
			case <-sess.Ready():
				a.printEvents(&p, sess.Drain(), asks)
			case done := <-flush:
				a.printEvents(&p, sess.Drain(), nil)
				close(done)
			case <-stopPrint:
				// After the close: what the subscription still held.
				a.printEvents(&p, sess.Drain(), nil)
				return
			}
		}
	}()
	defer func() {
		// Close the session while the printer still runs: what closing
		// stores (the workspace's "disposed" record) is printed too. The
		// workspace is abandoned, not waited for: its removal is the
		// daemon's.
		closeSession(ctx, sess)
		close(stopPrint)
		<-printed
	}()

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64*1024), maxStdinLine)
		for sc.Scan() {
			lines <- sc.Text()
		}
		if errors.Is(sc.Err(), bufio.ErrTooLong) {
			// Said, not swallowed: steering stops here, and why.
			lines <- tooLongLine
		}
		close(lines)
	}()

	if _, err := sess.Send(ctx, prompt); err != nil {
		// A turn whose admission failed has ended with its outcome.
		if out, _ := sess.Wait(context.WithoutCancel(ctx)); out.RunID == "" {
			o.Fail(err)
			return runtime.Outcome{}, false
		}
	}
	out := a.drive(ctx, sess, lines, interrupts, asks)
	done := make(chan struct{})
	flush <- done // the turns' outcome lines come before what follows
	<-done
	if out.TurnID != "" && out.TurnID != a.endedTurn {
		// The store could not record the turn's end (its disk full, its
		// server gone): it is told from the runtime's outcome, on stderr in
		// both modes, so that the end is never silent.
		a.printOutcome(app.Unrecorded(sess.ID(), out.RunID, out))
	}
	fmt.Fprintf(a.Stderr, "harness: session %s (harness resume %s)\n", sess.ID(), sess.ID())
	// The patch the last turn's diff recorded: the workspace is not diffed
	// again (after a failed diff, a second one would fail as slowly).
	if patch, err := sess.Patch(ctx); err == nil && patch != "" {
		fmt.Fprintf(a.Stderr, "harness: the workspace has changes: review them with `harness diff %s`, apply them with `harness apply %s`\n", sess.ID(), sess.ID())
		if left := app.LeftOutLine(workspace.LeftOut(patch)); left != "" {
			fmt.Fprintf(a.Stderr, "harness: warning: %s\n", left)
		}
	}
	return out, true
}

// closeWait bounds how long closing the session waits for a turn still
// running to end (none is, once drive returned).
const closeWait = 15 * time.Second

// closeSession closes sess, its turn ended first (app.Session.Close).
func closeSession(ctx context.Context, sess *app.Session) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeWait)
	defer cancel()
	_ = sess.Close(cctx)
}

// maxStdinLine bounds one steering line read from stdin; tooLongLine
// stands for a longer one on the lines channel (no line read from stdin
// has NUL bytes around a text like it).
const (
	maxStdinLine = 1 << 20
	tooLongLine  = "\x00harness: line too long\x00"
)

// drive sends stdin lines and interrupts to the session until it is idle,
// and returns how the last turn ended. SIGTERM and SIGHUP (ctx ending)
// cancel the turn like an interrupt does; so does a take-over by another
// process, after which nothing more is sent. A question (asks) is printed
// and the next line typed answers it through the session.
func (a *run) drive(ctx context.Context, sess *app.Session, lines <-chan string, interrupts <-chan struct{}, asks <-chan question) runtime.Outcome {
	stop, lost := ctx.Done(), sess.Lost()
	var pending *question
	answer := func(ans runtime.PermissionAnswer) {
		// A question whose turn ended meanwhile is gone: nothing to do.
		_ = sess.Answer(context.WithoutCancel(ctx), pending.id, ans)
		pending = nil
	}
	// line handles one line read from stdin (ok false: stdin ended).
	line := func(line string, ok bool) {
		if ok && line == tooLongLine {
			fmt.Fprintf(a.Stderr, "harness: %s: a line on stdin is longer than %d bytes; it was not sent, and stdin is read no further\n",
				errcode.RuntimeInvalidInput, maxStdinLine)
			ok = false
		}
		if !ok {
			lines = nil
			if pending != nil { // stdin ended: nobody can answer
				answer(runtime.PermissionAnswer{Scope: runtime.ScopeOnce, Note: "denied: stdin ended"})
			}
			return
		}
		if pending != nil {
			answer(lineAnswer(line))
			return
		}
		if strings.TrimSpace(line) == "" || ctx.Err() != nil || isDone(sess.Lost()) {
			return
		}
		var err error
		if rest, isNext := strings.CutPrefix(line, ">>"); isNext {
			_, err = sess.Queue(ctx, strings.TrimSpace(rest))
		} else {
			_, err = sess.Send(ctx, line)
		}
		if err != nil {
			fmt.Fprintf(a.Stderr, "harness: message not accepted: %s: %s\n", errcode.Of(err), errcode.Message(err))
		}
	}
	for {
		select {
		case q := <-asks:
			// Lines typed before the question was asked are what they
			// were typed as (steering, a queued input), never its answer.
			for drained := false; !drained && lines != nil; {
				select {
				case l, ok := <-lines:
					line(l, ok)
				default:
					drained = true
				}
			}
			pending = &q
			fmt.Fprint(a.Stderr, askText(q))
		case <-sess.Idle():
			out, _ := sess.Wait(context.WithoutCancel(ctx))
			return out
		case <-stop:
			stop = nil
			sess.Cancel()
		case <-lost:
			lost = nil
			sess.Cancel()
		case <-interrupts:
			sess.Cancel()
		case l, ok := <-lines:
			line(l, ok)
		}
	}
}

// outputFailed reports, once, a failed write to stdout: the turn goes on
// (it is stored; harness events prints it), but the user learns that the
// output is incomplete.
func (a *run) outputFailed(_ int, err error) {
	if err != nil && !a.outFailed {
		a.outFailed = true
		fmt.Fprintf(a.Stderr, "harness: writing the output failed (%v); the session is stored whole: harness events prints it\n", err)
	}
}

// printEvents writes a batch with one write to stdout (a batch of
// streamed deltas would otherwise cost a system call each).
// A permission.requested event goes to asks; it carries its subject.
func (a *run) printEvents(p *printer, batch []runtime.Published, asks chan<- question) {
	for _, e := range batch {
		switch d := e.Event.Data.(type) {
		case event.PermissionRequested:
			if asks != nil {
				asks <- questionOf(d) // one question at a time: the turn waits for its answer
			}
		case event.TurnCompleted:
			a.endedTurn = d.TurnID
		}
	}
	if a.JSON {
		// The stored bytes, as `harness events` prints them, whole lines in
		// one write.
		var b bytes.Buffer
		for _, p := range batch {
			if p.Seq > a.printedSeq {
				a.printedSeq = p.Seq
				b.Write(p.Body)
				b.WriteByte('\n')
			}
		}
		a.outputFailed(a.Stdout.Write(b.Bytes()))
		return
	}
	out := bufio.NewWriterSize(a.Stdout, 64<<10)
	defer func() { a.outputFailed(0, out.Flush()) }() // a bufio.Writer keeps its first error
	for _, ev := range batch {
		if ev.Seq <= a.printedSeq {
			continue
		}
		a.printedSeq = ev.Seq
		if _, text := ev.Event.Data.(event.MessageDelta); !text {
			_ = out.Flush() // what follows may go to stderr: keep the order on a terminal; a failure is kept for the last Flush
		}
		switch d := ev.Event.Data.(type) {
		case event.ContextAccounted:
			if d.SummaryRequest {
				if p.summaries == nil {
					p.summaries = map[string]bool{}
				}
				p.summaries[d.RequestID] = true
			}
		case event.MessageDelta:
			if p.summaries[d.RequestID] {
				break // a compaction's summary: stderr says it compacted
			}
			_, _ = out.WriteString(d.Delta) // kept for the last Flush
			p.midLine = d.Delta != "" && !strings.HasSuffix(d.Delta, "\n")
		case event.MessageCompleted:
			if d.Role == "assistant" && !p.summaries[d.RequestID] && (d.Content != "" || p.midLine) {
				_ = out.WriteByte('\n') // kept for the last Flush
				p.midLine = false
			}
		case event.ToolCall:
			// As the TUI's card shows it: a path, a command line.
			fmt.Fprintln(a.Stderr, strings.TrimSpace("▸ "+d.Tool+" "+Short(subject.Of(d.Tool, d.Input), callWidth)))
		case event.ToolResult:
			switch {
			case d.Error != nil:
				fmt.Fprintf(a.Stderr, "  ✗ %s: %s\n", d.Error.Code, Short(d.Error.Message, 160))
			case d.Tool == "process.exec":
				p.endOutput(a.Stderr)
				fmt.Fprint(a.Stderr, execOutcome(d, p.live[d.CallID]))
				delete(p.live, d.CallID)
			default:
				fmt.Fprintf(a.Stderr, "  ✓ %d ms\n", d.DurationMs)
			}
		case event.ToolOutput:
			p.output(a.Stderr, d)
		case event.SteeringApplied:
			fmt.Fprintf(a.Stderr, "  (steering applied: %d message(s))\n", len(d.MessageIDs))
		case event.ContextCompacted:
			fmt.Fprintf(a.Stderr, "  (context compacted: %d → %d messages)\n", d.BeforeMessages, d.AfterMessages)
		case event.ModelRetry:
			why := d.Code
			if d.Message != "" {
				why += ": " + d.Message
			}
			fmt.Fprintf(a.Stderr, "  (retrying model request: %s, attempt %d)\n", why, d.Attempt)
		case event.JobStarted, event.JobExited:
			fmt.Fprint(a.Stderr, jobLine(d))
		case event.WorkspaceLifecycle:
			if line := app.LeftOut(d.Skipped); line != "" {
				fmt.Fprintln(a.Stderr, "harness: "+line)
			}
		case event.TurnCompleted:
			if p.midLine { // a canceled answer stops mid-line: the next answer starts on its own
				_ = out.WriteByte('\n')
				_ = out.Flush()
				p.midLine = false
			}
			a.printOutcome(d)
		}
	}
}

// printer is what printEvents remembers between batches.
type printer struct {
	midLine   bool            // streamed text ended without a newline and its message has not completed
	summaries map[string]bool // summary request IDs: their text is the compaction's, not an answer
	live      map[string]bool // process.exec calls whose output was shown as it came: true when whole
	outMid    bool            // the live output shown last ended without a newline
	midStream string          // the stream of that unfinished line
	cutStream string          // a stream whose unfinished line the other stream's output ended
}

// output shows a command's live output on stderr as it comes, each line
// under the call as "    │ …" (stdout stays the answer).
func (p *printer) output(w io.Writer, d event.ToolOutput) {
	if d.Text == "" && !d.Truncated {
		return
	}
	if p.live == nil {
		p.live = map[string]bool{}
	}
	if _, seen := p.live[d.CallID]; !seen {
		p.live[d.CallID] = true
	}
	var b strings.Builder
	text := d.Text
	if p.outMid && p.midStream != d.Stream {
		// The other stream's line is unfinished (the sandbox may hold a
		// line's newline): end it here, so that this output starts a
		// line of its own, in the order it came.
		b.WriteString("\n")
		p.outMid, p.cutStream = false, p.midStream
	}
	if p.cutStream == d.Stream {
		text = strings.TrimPrefix(text, "\n") // its line was ended already
		p.cutStream = ""
	}
	for i, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		if !p.outMid || i > 0 {
			b.WriteString("    │ ")
		}
		b.WriteString(strings.ToValidUTF8(strings.TrimRight(line, "\r"), "?"))
		p.outMid = !strings.HasSuffix(line, "\n")
		p.midStream = d.Stream
	}
	if d.Truncated {
		if p.outMid {
			b.WriteString("\n")
			p.outMid = false
		}
		b.WriteString("    │ … (more output than is shown live; its last lines follow at its end)\n")
		p.live[d.CallID] = false // the result's tail shows how it ended
	}
	fmt.Fprint(w, b.String())
}

// endOutput ends a live output that stopped mid-line.
func (p *printer) endOutput(w io.Writer) {
	if p.outMid {
		fmt.Fprintln(w)
		p.outMid = false
	}
	p.cutStream = ""
}

func (a *run) printOutcome(d event.TurnCompleted) {
	line := fmt.Sprintf("turn %s: %s · %s · %s · %s", d.TurnID, d.Status, plural(d.ModelRequests, "model request"), plural(d.ToolCalls, "tool call"), plural(d.Usage.TotalTokens, "token"))
	switch {
	case d.ErrorCode != "":
		line += fmt.Sprintf(" · %s: %s", d.ErrorCode, d.Note)
	case d.Note != "":
		line += " · " + d.Note // what a completed turn says of itself (an empty answer)
	}
	fmt.Fprintln(a.Stderr, line)
	switch errcode.Code(d.ErrorCode) {
	case errcode.RuntimeRoundLimit:
		fmt.Fprintf(a.Stderr, "harness: to go on: harness exec --resume %s \"continue\" (or a higher --max-rounds)\n", d.SessionID)
	case errcode.RuntimeLoopDetected:
		fmt.Fprintf(a.Stderr, "harness: to go on: harness exec --resume %s \"…\" with a message that tells the model what to do differently\n", d.SessionID)
	}
	if d.Truncated {
		fmt.Fprintln(a.Stderr, "harness: the answer was cut (finish reason length: the output limit, or a stream the server ended without saying it was finished): ask it to continue, or raise --max-tokens (or maxTokens in the config file)")
	}
}

// callWidth bounds a call's line: a command line is shown whole up to
// it, far past a terminal's width, so what runs is what is read.
const callWidth = 2000

// plural counts n of what: "1 tool call", "3 tool calls".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Short is s on one line, cut to at most n bytes (on a character
// boundary, so the cut text stays UTF-8) with "…" when cut: how exec and
// the session list print a value.
func Short(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// isDone reports whether c is closed (a nil c never is).
func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
