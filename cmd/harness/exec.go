package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/headless"
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
	// The prompt goes out at once: the workspace opens alongside the first
	// model request, not before it (Defer). A warm spare container saves
	// the first tool call the container's start; the run leaves the next
	// one (Spare; --no-spare: not).
	sess, err := a.Open(ctx, app.OpenRequest{ResumeID: a.opts.Resume, Fork: a.opts.Fork, Defer: true, Spare: true})
	if err != nil {
		return a.fail(err)
	}
	if sess.Moved != "" {
		fmt.Fprintln(a.stderr, "harness: "+sess.Moved)
	}
	if sess.Note != "" {
		// On stderr in both modes: what the sandbox lacks (a missing
		// toolchain) or cannot do is for the human reading the log too.
		fmt.Fprintln(a.stderr, "harness: "+sess.Note)
	}
	if files := sess.Settings().Instructions; len(files) > 0 && !a.opts.JSON {
		fmt.Fprintln(a.stderr, "harness: using "+strings.Join(files, ", ")+" (project instructions; --no-project-instructions leaves them out)")
	}
	code := exitFailed
	out, ok := headless.Run(ctx, sess, sess.Before(), prompt, headless.Options{
		JSON: a.opts.JSON, Stdin: stdin, Stdout: a.stdout, Stderr: a.stderr,
		Interrupts: interrupts, Fail: func(err error) { code = a.fail(err) },
	})
	if !ok {
		return code
	}
	if sess.WorkspaceErr() != nil && out.Status == runtime.StatusCompleted {
		// The workspace was refused (printed when it was known): the
		// session could not do its work.
		return exitFailed
	}
	return exitFor(out.Status)
}
