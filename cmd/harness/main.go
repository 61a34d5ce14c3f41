// Command harness is a terminal coding agent: a model acts through five
// bounded tools on an isolated Docker copy of the project, every event is
// stored in a local SQLite file, and the host tree changes only when the
// developer applies the diff. This package parses flags and wires the
// pieces; it holds no logic of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/doctor"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/gcpolicy"
	"github.com/harness-dev/harness/internal/headless"
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

	cmd, args := splitCommand(args)
	switch cmd {
	case "", "resume", "exec", "sessions", "events", "request", "diff", "apply", "discard", "rewind", "doctor":
	case "help":
		printUsage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "harness: unknown command %q\n\n", cmd)
		printUsage(stderr)
		return exitUsage
	}
	var o options
	fs := newFlagSet(cmd, &o, stderr)
	fs.Usage = func() { printUsage(stderr) }
	pos, err := parseArgs(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if cmd == "" && len(pos) > 0 {
		fmt.Fprintf(stderr, "harness: unexpected argument %q: the TUI takes none (a prompt goes to harness exec)\n\n", pos[0])
		printUsage(stderr)
		return exitUsage
	}
	if o.Fork && o.Resume == "" && cmd == "exec" {
		fmt.Fprintln(stderr, "harness: exec --fork continues an earlier session: pass --resume ID with it")
		return exitUsage
	}
	if cmd == "doctor" {
		if len(pos) > 1 {
			fmt.Fprintln(stderr, "harness: doctor takes at most one session ID")
			return exitUsage
		}
		if !doctor.Run(ctx, o.Options, e, doctor.Scope{Clean: o.Clean, All: o.All, Session: strings.Join(pos, "")}, stdout) {
			return exitFailed
		}
		return exitCompleted
	}
	if cmd == "exec" && o.Approve == "ask" && !headless.IsTerminal(stdin) {
		// Without a terminal nobody can answer: every write and command
		// would be denied while the turn reported success.
		fmt.Fprintln(stderr, "harness: exec --approve ask needs a terminal to ask on, and stdin is not one; use --approve auto (the workspace is an isolated copy), or the TUI")
		return exitUsage
	}
	// Nothing may write to the terminal behind the TUI's back: what the app
	// warns of while the TUI runs goes to the session's banner, then to
	// stderr after.
	warn, held := io.Writer(stderr), (*tuiengine.Held)(nil)
	if cmd == "" || cmd == "resume" {
		held = &tuiengine.Held{}
		warn = held
	}
	a, err := newCLIWarn(ctx, o, e, stdout, stderr, warn)
	if err != nil {
		return (&cli{stderr: stderr}).fail(err)
	}
	defer a.Close()
	switch cmd {
	case "exec":
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "harness: exec takes one PROMPT argument")
			return exitUsage
		}
		// The runtime's own rule for a prompt, checked before anything is
		// opened.
		if err := checkpoint.CheckText("the prompt", pos[0]); err != nil {
			fmt.Fprintln(stderr, "harness: "+errcode.Message(err))
			return exitUsage
		}
		if strings.TrimSpace(pos[0]) == "" {
			fmt.Fprintln(stderr, "harness: the prompt is only whitespace: say what the turn should do")
			return exitUsage
		}
		checked, err := a.CheckStore(ctx)
		if err != nil {
			return a.fail(err)
		}
		return checked(a.fail, runExec(ctx, a, pos[0], stdin, interrupts))
	case "sessions":
		switch {
		case len(pos) == 0:
			return a.listSessions(ctx)
		case pos[0] == "export" && len(pos) == 2:
			return a.exportSession(ctx, pos[1])
		case pos[0] == "import" && len(pos) == 2:
			return a.importSession(ctx, pos[1], stdin)
		default:
			fmt.Fprintln(stderr, "harness: sessions [--json] | sessions export ID | sessions import FILE|-")
			return exitUsage
		}
	case "rewind":
		if len(pos) < 1 || len(pos) > 2 || (a.opts.Undo && len(pos) != 1) {
			fmt.Fprintln(stderr, "harness: rewind takes a session ID and a TURN (its number from 1, or its ID), or --undo")
			return exitUsage
		}
		return a.rewind(ctx, pos)
	case "events", "request", "diff", "apply", "discard":
		if len(pos) != 1 {
			fmt.Fprintf(stderr, "harness: %s takes one session ID\n", cmd)
			return exitUsage
		}
		switch cmd {
		case "events":
			return a.printStoredEvents(ctx, pos[0])
		case "request":
			return a.printRequest(ctx, pos[0])
		case "diff":
			return a.printDiff(ctx, pos[0])
		case "discard":
			return a.discardKept(ctx, pos[0])
		default:
			return a.applyDiff(ctx, pos[0], stdin)
		}
	default: // the TUI, new or resumed
		id := ""
		if cmd == "resume" && len(pos) > 0 {
			id = pos[0]
		}
		checked, err := a.CheckStore(ctx)
		if err != nil {
			return a.fail(err)
		}
		return checked(a.fail, runTUI(ctx, a, held, cmd == "resume", id))
	}
}
