package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/harness-dev/harness/internal/app"
)

// options are the common flags of every command (DESIGN §12), which the
// app layer takes, plus the command-specific ones. Flags win over the
// environment, which wins over the config file.
type options struct {
	app.Options

	// Command-specific.
	JSON   bool
	Resume string
	Fork   bool
	Yes    bool
	// AllowMassDelete lets apply --yes apply a patch that deletes most of
	// the project.
	AllowMassDelete bool
	Here            bool
	Clean           bool
	All             bool
	// rewind --undo, apply --reverse
	Undo    bool
	Reverse bool
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

func newFlagSet(name string, o *options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.DB, "db", "", "session store: a SQLite file path or a postgres:// URL (env HARNESS_DB)")
	fs.StringVar(&o.Model, "model", "", "model name (env HARNESS_MODEL)")
	fs.StringVar(&o.BaseURL, "base-url", "", "OpenAI-compatible base URL (env OPENAI_BASE_URL)")
	fs.StringVar(&o.FakeModel, "fake-model", "", "run a scripted model from a JSON file instead of a provider")
	fs.StringVar(&o.Image, "image", "", "Docker image for the workspace (default harness-sandbox)")
	fs.StringVar(&o.Workspace, "workspace", "", "workspace backend: docker (writes and commands, isolated) or local (read-only)")
	fs.StringVar(&o.Approve, "approve", "", "approval of mutating tools: auto or ask")
	fs.Int64Var(&o.BudgetTokens, "budget-tokens", 0, "cumulative model-token budget of the session (0: none)")
	fs.IntVar(&o.ContextWindow, "context-window", 0, "context window in tokens (default 128000)")
	fs.IntVar(&o.CompactAt, "compact-at", 0, "compact the context at this percentage of the window (default 80)")
	fs.IntVar(&o.CompactTail, "compact-tail", 0, "messages kept word for word after a compaction (default 12)")
	fs.IntVar(&o.MaxTokens, "max-tokens", 0, "output tokens per model request, also reserved in the window (default min(8192, window/8); config maxTokens)")
	fs.IntVar(&o.MaxRounds, "max-rounds", 0, "most model rounds in one turn; the turn then ends with RUNTIME_ROUND_LIMIT and a follow-up goes on (default 200)")
	fs.DurationVar(&o.ProviderTimeout, "provider-timeout", 0, "how long to wait for the provider's first byte, and for each silence of a stream (default 2m)")
	fs.BoolVar(&o.NoProjectInstructions, "no-project-instructions", false, "do not read AGENTS.md (or CLAUDE.md) into the system prompt")
	fs.IntVar(&o.MaxFiles, "max-files", 0, "most text files copied into the workspace (default 20000)")
	fs.Int64Var(&o.MaxFileBytes, "max-file-bytes", 0, "largest file copied into the workspace; larger ones are skipped and reported (default 2 MiB)")
	fs.Int64Var(&o.MaxTotalBytes, "max-total-bytes", 0, "most bytes copied into the workspace in all (default 128 MiB)")
	fs.Int64Var(&o.MaxWorkspaceBytes, "max-workspace-bytes", 0, "disk quota of the workspace, and of its $HOME apart: writes beyond it fail in the container (default 2 GiB; held in memory)")
	fs.Int64Var(&o.MaxCacheBytes, "max-cache-bytes", 0, "bound of the project's build cache volume (Go, npm and pip caches); a fuller one is emptied when a session opens (default 4 GiB)")
	fs.IntVar(&o.MaxJobs, "max-jobs", 0, "most background jobs (process.exec with background) running at once in a session (default 8)")
	fs.BoolVar(&o.NoSpare, "no-spare", false, "exec: neither claim nor leave a warm spare container (env HARNESS_SPARE=0)")
	fs.Var((*stringList)(&o.Exclude), "exclude", "leave paths matching this gitignore-style pattern out of the workspace: not copied into Docker, not read or listed by --workspace local (repeatable)")
	fs.StringVar(&o.Config, "config", "", "config file (default $XDG_CONFIG_HOME/harness/config.json)")
	// --json is accepted by every command, as the usage says of these
	// flags: exec and sessions print JSON lines with it; the others print
	// what they always print (events, export and request print JSON).
	jsonUsage := "exec: print every event envelope as one JSON line; sessions: print sessions as JSON lines"
	if name == "sessions" {
		jsonUsage = "print sessions as JSON lines"
	}
	fs.BoolVar(&o.JSON, "json", false, jsonUsage)
	switch name {
	case "exec":
		fs.StringVar(&o.Resume, "resume", "", "continue session ID with a follow-up turn")
		fs.BoolVar(&o.Fork, "fork", false, "with --resume: continue an interrupted session in a new session from its last finished turn")
	case "sessions":
		fs.BoolVar(&o.Here, "here", false, "only the sessions of this directory's project (the nearest directory holding .git upward)")
		fs.BoolVar(&o.All, "all", false, fmt.Sprintf("every session, not only the %d most recently updated", sessionsShown))
	case "resume":
		fs.BoolVar(&o.Fork, "fork", false, "start a new session from the last finished turn of an interrupted one")
	case "apply":
		fs.BoolVar(&o.Yes, "yes", false, "apply without asking")
		fs.BoolVar(&o.Reverse, "reverse", false, "revert on the host the last patch applied from this session (as recorded)")
		fs.BoolVar(&o.AllowMassDelete, "allow-mass-delete", false, "with --yes: apply a patch that deletes most of the project's files (refused otherwise)")
	case "doctor":
		fs.BoolVar(&o.Clean, "clean", false, "also remove this project's build cache (its Docker volume harness-cache-…)")
	case "rewind":
		fs.BoolVar(&o.Undo, "undo", false, "return to where the session was before its last rewind")
	}
	fs.BoolVar(&o.TakeOver, "take-over", false, "take a session over from another live process")
	fs.StringVar(&o.HostID, "host-id", "", "this machine's name in session leases, unique among machines sharing a store (env HARNESS_HOST_ID; default host name/machine ID)")
	return fs
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// splitCommand takes the command word out of args: the first argument
// that is neither a flag nor the value of one of the common flags, so
// that `harness --db F resume ID` resumes as `harness resume ID --db F`
// does. Without one the command is "" (the TUI, new session).
func splitCommand(args []string) (string, []string) {
	common := newFlagSet("", &options{}, io.Discard)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return "", args
		case len(a) > 1 && a[0] == '-':
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if f := common.Lookup(name); f != nil && !hasValue {
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
					i++ // its value
				}
			}
		default:
			return a, append(args[:i:i], args[i+1:]...)
		}
	}
	return "", args
}

// parseArgs parses flags before and after positional arguments.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

const usageText = `harness — a terminal coding agent whose writes and commands run in an isolated Docker copy of your project.

Usage:
  harness [flags]                       the TUI, new session on the current directory
  harness resume [ID] [--fork]          the TUI on an existing session (no ID: pick one)
  harness exec [--resume ID [--fork]] [--json] PROMPT
                                        one turn headless; stdin lines steer it (">>" queues for the next turn)
  harness sessions [--json] [--here] [--all]  the newest sessions (--here: of this directory's project; --all: every one)
  harness sessions export ID            a session as JSON lines (header, then its events)
  harness sessions import FILE|-        store an export in --db (e.g. SQLite → Postgres)
  harness events ID                     the stored events as JSON lines
  harness request ID                    the next model request rebuilt from the latest checkpoint
  harness diff ID                       the workspace patch of a session
  harness apply ID [--yes]              apply that patch to the host tree after a clean check
                                        (a turn whose diff failed: diff, apply and resume recover its
                                        kept container's work, with larger --max-total-bytes, or
                                        --max-file-bytes/--exclude leaving generated files out)
  harness apply ID --reverse [--yes]    revert on the host the last patch applied from the session
  harness discard ID                    give up the kept work of a turn whose diff failed
  harness rewind ID [TURN | --undo]     back to the end of turn TURN (its number from 1, or its ID):
                                        files and conversation; --undo: to before the last rewind;
                                        no TURN: list the turns
  harness doctor [--clean]              check Docker, the sandbox image and the project's toolchains in it,
                                        the provider and the store (--clean: remove this project's build cache)
  harness --version                     the version, commit and Go toolchain of this binary

Exit codes of exec: 0 completed, 1 failed, 2 usage, 3 budget exceeded, 130 canceled.

Flags (accepted by every command, before or after its arguments):
`

func printUsage(w io.Writer) {
	fmt.Fprint(w, usageText)
	var o options
	printFlags(w, newFlagSet("exec", &o, w))
}

// printFlags lists fs's flags as flag.PrintDefaults does, but spelled
// --flag, as the README and every message write them (the flag package
// takes both).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		b.WriteString("  --" + f.Name)
		if arg != "" {
			b.WriteString(" " + arg)
		}
		b.WriteString("\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t"))
		switch f.DefValue {
		case "", "0", "false", "0s", "[]":
		default:
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteString("\n")
	})
	fmt.Fprint(w, b.String())
}
