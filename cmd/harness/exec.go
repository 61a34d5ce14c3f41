package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/app"
	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/runtime"
)

// Exit codes of harness exec (DESIGN §12).
const (
	exitCompleted = 0
	exitFailed    = 1
	exitUsage     = 2
	exitBudget    = 3
	exitCanceled  = 130
)

func exitFor(st runtime.Status) int {
	switch st {
	case runtime.StatusCompleted:
		return exitCompleted
	case runtime.StatusBudgetExceeded:
		return exitBudget
	case runtime.StatusCanceled:
		return exitCanceled
	default:
		return exitFailed
	}
}

// runExec runs one turn headless, then the turns queued with ">>" lines
// (the session starts each when the one before completes). Lines read from
// stdin are sent to the session — steering, or the next turn once the
// running one is ending — or, with --approve ask, answer the question on
// screen.
func runExec(ctx context.Context, a *cli, prompt string, stdin io.Reader, interrupts <-chan struct{}) int {
	from := int64(-1)
	if a.opts.Resume != "" && !a.opts.Fork {
		if s, err := a.Store.Session(ctx, a.opts.Resume); err == nil {
			from = s.LastSeq
		}
	}
	sess, err := a.Open(ctx, app.OpenRequest{ResumeID: a.opts.Resume, Fork: a.opts.Fork})
	if err != nil {
		return a.fail(err)
	}
	if sess.Moved != "" {
		fmt.Fprintln(a.stderr, "harness: "+sess.Moved)
	}
	if sess.Note != "" && !a.opts.JSON {
		fmt.Fprintln(a.stderr, "harness: "+sess.Note)
	}
	if files := sess.Settings().Instructions; len(files) > 0 && !a.opts.JSON {
		fmt.Fprintln(a.stderr, "harness: using "+strings.Join(files, ", ")+" (project instructions; --no-project-instructions leaves them out)")
	}
	// Everything after from: what opening the session wrote, then the turns.
	sub, err := sess.Events(ctx, from)
	if err != nil {
		sess.Close()
		return a.fail(err)
	}
	defer sub.Close()
	// Questions go from the printer to the drive loop, which asks them.
	// They come only when the session's approval is ask (--approve ask, or
	// saved so); main refused --approve ask without a terminal.
	asks := make(chan question, 1)
	printed := make(chan struct{})
	stopPrint := make(chan struct{})
	flush := make(chan chan struct{}) // prints what is queued, then answers
	go func() {
		defer close(printed)
		var p printer
		for {
			select {
			case <-sub.Ready():
				a.printEvents(&p, sub.Drain(), asks)
			case done := <-flush:
				a.printEvents(&p, sub.Drain(), nil)
				close(done)
			case <-stopPrint:
				a.printEvents(&p, sub.Drain(), nil)
				return
			}
		}
	}()
	defer func() {
		// Close the session while the printer still runs: what closing
		// stores (the workspace's "disposed" record) is printed too. The
		// workspace is abandoned, not waited for: its removal is the
		// daemon's.
		sess.Close()
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
			return a.fail(err)
		}
	}
	out := a.drive(ctx, sess, lines, interrupts, asks)
	done := make(chan struct{})
	flush <- done // the turns' outcome lines come before what follows
	<-done
	fmt.Fprintf(a.stderr, "harness: session %s (harness resume %s)\n", sess.ID(), sess.ID())
	if patch, err := sess.Workspace.Diff(ctx); err == nil && patch != "" {
		fmt.Fprintf(a.stderr, "harness: the workspace has changes: review them with `harness diff %s`, apply them with `harness apply %s`\n", sess.ID(), sess.ID())
	}
	return exitFor(out.Status)
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
func (a *cli) drive(ctx context.Context, sess *app.Session, lines <-chan string, interrupts <-chan struct{}, asks <-chan question) runtime.Outcome {
	stop, lost := ctx.Done(), sess.Lost
	var pending *question
	answer := func(ans runtime.PermissionAnswer) {
		// A question whose turn ended meanwhile is gone: nothing to do.
		_ = sess.Answer(context.WithoutCancel(ctx), pending.id, ans)
		pending = nil
	}
	for {
		select {
		case q := <-asks:
			pending = &q
			fmt.Fprint(a.stderr, askText(q))
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
		case line, ok := <-lines:
			if ok && line == tooLongLine {
				fmt.Fprintf(a.stderr, "harness: %s: a line on stdin is longer than %d bytes; it was not sent, and stdin is read no further\n",
					errcode.RuntimeInvalidInput, maxStdinLine)
				ok = false
			}
			if !ok {
				lines = nil
				if pending != nil { // stdin ended: nobody can answer
					answer(runtime.PermissionAnswer{Scope: runtime.ScopeOnce, Note: "denied: stdin ended"})
				}
				continue
			}
			if pending != nil {
				answer(lineAnswer(line))
				continue
			}
			if strings.TrimSpace(line) == "" || ctx.Err() != nil || isDone(sess.Lost) {
				continue
			}
			var err error
			if rest, isNext := strings.CutPrefix(line, ">>"); isNext {
				_, err = sess.Queue(ctx, strings.TrimSpace(rest))
			} else {
				_, err = sess.Send(ctx, line)
			}
			if err != nil {
				fmt.Fprintf(a.stderr, "harness: message not accepted: %s: %s\n", errcode.Of(err), errcode.Message(err))
			}
		}
	}
}

// outputFailed reports, once, a failed write to stdout: the turn goes on
// (it is stored; harness events prints it), but the user learns that the
// output is incomplete.
func (a *cli) outputFailed(_ int, err error) {
	if err != nil && !a.outFailed {
		a.outFailed = true
		fmt.Fprintf(a.stderr, "harness: writing the output failed (%v); the session is stored whole: harness events prints it\n", err)
	}
}

// printEvents writes a batch with one write to stdout (a batch of
// streamed deltas would otherwise cost a system call each).
// A permission.requested event goes to asks, with the input of the
// tool.call it is about.
func (a *cli) printEvents(p *printer, batch []runtime.Published, asks chan<- question) {
	for _, e := range batch {
		switch d := e.Event.Data.(type) {
		case event.ToolCall:
			p.callID, p.callInput = d.CallID, d.Input
		case event.PermissionRequested:
			q := question{id: d.PermissionID, tool: d.Action, subject: d.Subject}
			if d.CallID == p.callID {
				q.input = p.callInput
			}
			if asks != nil {
				asks <- q // one question at a time: the turn waits for its answer
			}
		}
	}
	if a.opts.JSON {
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
		a.outputFailed(a.stdout.Write(b.Bytes()))
		return
	}
	out := bufio.NewWriterSize(a.stdout, 64<<10)
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
		case event.MessageDelta:
			_, _ = out.WriteString(d.Delta) // kept for the last Flush
			p.midLine = d.Delta != "" && !strings.HasSuffix(d.Delta, "\n")
		case event.MessageCompleted:
			if d.Role == "assistant" && (d.Content != "" || p.midLine) {
				_ = out.WriteByte('\n') // kept for the last Flush
				p.midLine = false
			}
		case event.ToolCall:
			fmt.Fprintf(a.stderr, "▸ %s %s\n", d.Tool, short(string(d.Input), 100))
		case event.ToolResult:
			switch {
			case d.Error != nil:
				fmt.Fprintf(a.stderr, "  ✗ %s: %s\n", d.Error.Code, short(d.Error.Message, 160))
			case d.Tool == "process.exec":
				fmt.Fprint(a.stderr, execOutcome(d))
			default:
				fmt.Fprintf(a.stderr, "  ✓ %d ms\n", d.DurationMs)
			}
		case event.SteeringApplied:
			fmt.Fprintf(a.stderr, "  (steering applied: %d message(s))\n", len(d.MessageIDs))
		case event.ContextCompacted:
			fmt.Fprintf(a.stderr, "  (context compacted: %d → %d messages)\n", d.BeforeMessages, d.AfterMessages)
		case event.ModelRetry:
			fmt.Fprintf(a.stderr, "  (retrying model request: %s, attempt %d)\n", d.Code, d.Attempt)
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

// printer is what printEvents remembers between batches: the last
// tool.call, which a permission question that follows is about.
type printer struct {
	callID    string
	callInput json.RawMessage
	midLine   bool // streamed text ended without a newline and its message has not completed
}

func (a *cli) printOutcome(d event.TurnCompleted) {
	line := fmt.Sprintf("turn %s: %s · %d model requests · %d tool calls · %d tokens", d.TurnID, d.Status, d.ModelRequests, d.ToolCalls, d.Usage.TotalTokens)
	if d.ErrorCode != "" {
		line += fmt.Sprintf(" · %s: %s", d.ErrorCode, d.Note)
	}
	fmt.Fprintln(a.stderr, line)
	if d.Truncated {
		fmt.Fprintln(a.stderr, "harness: the answer was cut by the output limit (finish reason length): raise --max-tokens (or maxTokens in the config file), or ask it to continue")
	}
}

func short(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
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
