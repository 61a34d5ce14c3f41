// Command harness is a terminal coding agent: a model acts through five
// bounded tools on an isolated Docker copy of the project, every event is
// stored in a local SQLite file, and the host tree changes only when the
// developer applies the diff. This package parses the arguments with the
// flags internal/app defines and wires the pieces; it holds no logic of
// its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/doctor"
	"github.com/harness-dev/harness/internal/gcpolicy"
	"github.com/harness-dev/harness/internal/headless"
	"github.com/harness-dev/harness/internal/inspect"
	"github.com/harness-dev/harness/internal/tuiengine"
	"github.com/harness-dev/harness/internal/version"
)

func main() {
	gcpolicy.Apply()
	os.Exit(run(os.Args[1:], readEnv(), os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, e app.Env, stdin io.Reader, stdout, stderr io.Writer) int {
	// First, before anything is set up: the answer must be instant.
	if len(args) == 1 && version.IsFlag(args[0]) {
		printVersion(stdout)
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	interrupts := make(chan struct{}, 1)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	go func() {
		for range sig {
			select {
			case interrupts <- struct{}{}:
			default:
			}
		}
	}()

	cl, err := app.ParseCommandLine(args, stderr)
	var usage *app.UsageError
	switch {
	case app.IsHelp(err):
		return 0
	case errors.As(err, &usage):
		fmt.Fprintln(stderr, "harness: "+usage.Msg)
		return exitUsage
	case err != nil: // told with the usage
		return exitUsage
	case cl.Cmd == "help":
		app.PrintUsage(stdout)
		return 0
	case cl.Cmd == "doctor":
		if !doctor.Run(ctx, cl.Flags.Options, e, doctor.Scope{Clean: cl.Flags.Clean, All: cl.Flags.All, Session: strings.Join(cl.Pos, "")}, stdout) {
			return exitFailed
		}
		return exitCompleted
	case cl.Cmd == "exec" && cl.Flags.Approve == "ask" && !headless.IsTerminal(stdin):
		// Without a terminal nobody can answer: every write and command
		// would be denied while the turn reported success.
		fmt.Fprintln(stderr, "harness: exec --approve ask needs a terminal to ask on, and stdin is not one; use --approve auto (the workspace is an isolated copy), or the TUI")
		return exitUsage
	}
	// Nothing may write to the terminal behind the TUI's back: what the app
	// warns of while the TUI runs goes to the session's banner, then to
	// stderr after.
	tui := cl.Cmd == "" || cl.Cmd == "resume"
	warn, held := io.Writer(stderr), (*tuiengine.Held)(nil)
	if tui {
		held = &tuiengine.Held{}
		warn = held
	}
	a, err := newCLIWarn(ctx, cl.Flags, e, stdout, stderr, warn)
	if err != nil {
		return (&cli{stderr: stderr}).fail(err)
	}
	defer a.Close()
	if !tui && cl.Cmd != "exec" {
		cmds := &inspect.Commands{App: a.App, Flags: cl.Flags, Stdin: stdin, Stdout: stdout, Stderr: stderr}
		return a.report(cmds.Run(ctx, cl.Cmd, cl.Pos))
	}
	checked, err := a.CheckStore(ctx)
	if err != nil {
		return a.fail(err)
	}
	if cl.Cmd == "exec" {
		return checked(a.fail, runExec(ctx, a, cl.Prompt, stdin, interrupts))
	}
	id := "" // the TUI, new or resumed
	if cl.Cmd == "resume" && len(cl.Pos) > 0 {
		id = cl.Pos[0]
	}
	return checked(a.fail, runTUI(ctx, a, held, cl.Cmd == "resume", id, cl.Prompt))
}

// readEnv reads the process environment, only in main.
func readEnv() app.Env {
	e := app.Env{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	return e
}
