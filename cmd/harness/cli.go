package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/inspect"
)

// cli is the app as the command line drives it: the app layer plus the
// command-specific flags and where to print.
type cli struct {
	*app.App
	opts   app.Flags
	stdout io.Writer
	stderr io.Writer
}

// newCLI builds the app, its warnings going to stderr.
func newCLI(ctx context.Context, o app.Flags, e app.Env, stdout, stderr io.Writer) (*cli, error) {
	return newCLIWarn(ctx, o, e, stdout, stderr, stderr)
}

// newCLIWarn is newCLI with the app's warnings going to warn (what the
// TUI holds while it owns the terminal).
func newCLIWarn(ctx context.Context, o app.Flags, e app.Env, stdout, stderr, warn io.Writer) (*cli, error) {
	a, err := app.New(ctx, o.Options, e, warn)
	if err != nil {
		return nil, err
	}
	return &cli{App: a, opts: o, stdout: stdout, stderr: stderr}, nil
}

// fail prints a coded error and returns the exit status for it.
func (a *cli) fail(err error) int {
	if u, ok := err.(*app.UsageError); ok {
		fmt.Fprintln(a.stderr, "harness: "+u.Msg)
		return exitUsage
	}
	return a.failTo(a.stderr, err)
}

// report is the exit status of a command's outcome, a failure printed
// (unless it already was).
func (a *cli) report(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, inspect.ErrReported):
		return exitFailed
	}
	return a.fail(err)
}

// failTo is fail with an explicit stream (stderr is held while the TUI runs).
func (a *cli) failTo(w io.Writer, err error) int {
	fmt.Fprintf(w, "harness: %s: %s\n", errcode.Of(err), errcode.Message(err))
	return exitFailed
}
