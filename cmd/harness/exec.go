package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/app"
	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
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

// runExec runs one turn headless, then any turns queued with ">>" lines.
// Steering lines are read from stdin while a turn runs.
func runExec(ctx context.Context, a *cli, prompt string, stdin io.Reader, interrupts <-chan struct{}) int {
	from := int64(-1)
	if a.opts.Resume != "" && !a.opts.Fork {
		if s, err := a.Store.Session(ctx, a.opts.Resume); err == nil {
			from = s.LastSeq
		}
	}
	// Asked only when the session's approval is ask (--approve ask, or
	// saved so); main refused --approve ask without a terminal.
	asker := newLineAsker()
	sess, err := a.Open(ctx, app.OpenRequest{ResumeID: a.opts.Resume, Fork: a.opts.Fork, Resolver: asker})
	if err != nil {
		return a.fail(err)
	}
	defer sess.Close()
	if sess.Moved != "" {
		fmt.Fprintln(a.stderr, "harness: "+sess.Moved)
	}
	if sess.Note != "" && !a.opts.JSON {
		fmt.Fprintln(a.stderr, "harness: "+sess.Note)
	}
	if files := sess.Settings().Instructions; len(files) > 0 && !a.opts.JSON {
		fmt.Fprintln(a.stderr, "harness: using "+strings.Join(files, ", ")+" (project instructions; --no-project-instructions leaves them out)")
	}
	sub := sess.Runtime.Subscribe()
	defer sub.Close()
	// Events appended while the session opened, before the subscription.
	if early, err := a.Store.ReadEvents(ctx, sess.ID(), from, store.MaxPage); err == nil {
		for _, rec := range early {
			if ev, err := event.Decode(rec.Body); err == nil {
				a.printEvents([]runtime.Published{{Seq: rec.Seq, Event: ev, Body: rec.Body}})
				a.printedSeq = rec.Seq
			}
		}
	}
	printed := make(chan struct{})
	stopPrint := make(chan struct{})
	go func() {
		defer close(printed)
		for {
			select {
			case <-sub.Ready():
				a.printEvents(sub.Drain())
			case <-stopPrint:
				a.printEvents(sub.Drain())
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
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	req := runtime.StartRequest{Input: prompt}
	code := exitCompleted
	for {
		runID, err := sess.Start(ctx, req)
		if err != nil && runID == "" {
			return a.fail(err)
		}
		out := a.drive(ctx, sess, runID, lines, interrupts, asker)
		code = exitFor(out.Status)
		if !a.opts.JSON {
			a.printOutcome(out)
		}
		if out.Status != runtime.StatusCompleted || !sess.HasQueued() || ctx.Err() != nil {
			break
		}
		req = runtime.StartRequest{FromQueue: true}
	}
	fmt.Fprintf(a.stderr, "harness: session %s (harness resume %s)\n", sess.ID(), sess.ID())
	if patch, err := sess.Workspace.Diff(ctx); err == nil && patch != "" {
		fmt.Fprintf(a.stderr, "harness: the workspace has changes: review them with `harness diff %s`, apply them with `harness apply %s`\n", sess.ID(), sess.ID())
	}
	return code
}

// drive feeds steering and interrupts to a run until it ends.
// SIGTERM and SIGHUP (ctx ending) cancel the run like an interrupt does.
// With --approve ask (asker set), a question is printed and the next line
// typed answers it.
// A take-over by another process cancels the run at once.
func (a *cli) drive(ctx context.Context, sess *app.Session, runID string, lines <-chan string, interrupts <-chan struct{}, asker *lineAsker) runtime.Outcome {
	rt := sess.Runtime
	done := rt.Done(runID)
	stop, lost := ctx.Done(), sess.Lost
	var asks chan question
	if asker != nil {
		asks = asker.asks
	}
	var pending *question
	for {
		select {
		case q := <-asks:
			pending = &q
			fmt.Fprint(a.stderr, askText(q.req))
		case <-done:
			out, _ := rt.Wait(context.WithoutCancel(ctx), runID)
			return out
		case <-stop:
			stop = nil
			_ = rt.Cancel(runID)
		case <-lost:
			lost = nil
			_ = rt.Cancel(runID)
		case <-interrupts:
			_ = rt.Cancel(runID)
		case line, ok := <-lines:
			if !ok {
				lines = nil
				if pending != nil { // stdin ended: nobody can answer
					pending.reply <- runtime.PermissionAnswer{Scope: runtime.ScopeOnce, Note: "denied: stdin ended"}
					pending = nil
				}
				continue
			}
			if pending != nil {
				pending.reply <- lineAnswer(line)
				pending = nil
				continue
			}
			if strings.TrimSpace(line) == "" {
				continue
			}
			var err error
			if rest, isNext := strings.CutPrefix(line, ">>"); isNext {
				_, err = rt.QueueNext(ctx, runID, strings.TrimSpace(rest))
			} else {
				_, err = rt.Steer(ctx, runID, line)
			}
			if err != nil {
				fmt.Fprintf(a.stderr, "harness: steering not accepted: %s: %s\n", errcode.Of(err), errcode.Message(err))
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
func (a *cli) printEvents(batch []runtime.Published) {
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
	for _, p := range batch {
		if p.Seq <= a.printedSeq {
			continue
		}
		a.printedSeq = p.Seq
		if _, text := p.Event.Data.(event.MessageDelta); !text {
			_ = out.Flush() // what follows may go to stderr: keep the order on a terminal; a failure is kept for the last Flush
		}
		switch d := p.Event.Data.(type) {
		case event.MessageDelta:
			_, _ = out.WriteString(d.Delta) // kept for the last Flush
		case event.MessageCompleted:
			if d.Role == "assistant" && d.Content != "" {
				_ = out.WriteByte('\n') // kept for the last Flush
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
		}
	}
}

func (a *cli) printOutcome(out runtime.Outcome) {
	u := out.Usage
	line := fmt.Sprintf("turn %s: %s · %d model requests · %d tool calls · %d tokens", out.TurnID, out.Status, out.ModelRequests, out.ToolCalls, u.TotalTokens)
	if out.ErrorCode != "" {
		line += fmt.Sprintf(" · %s: %s", out.ErrorCode, out.Message)
	}
	fmt.Fprintln(a.stderr, line)
	if out.Truncated {
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
