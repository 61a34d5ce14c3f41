package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
)

// The command line's flags, defined here beside the configuration they
// fill (Options, Resolve): cmd/harness parses the process's arguments
// with them and only wires what they say.

// Flags are the command line's flags: the common ones of every command
// (Options, which the app takes) and those of one command.
type Flags struct {
	Options

	JSON   bool   // exec, sessions: JSON lines
	Resume string // exec: the session a follow-up continues
	Fork   bool   // exec, resume: a new session from the last finished turn
	Yes    bool   // apply: without asking
	// AllowMassDelete lets apply --yes apply a patch that deletes most of
	// the project.
	AllowMassDelete bool
	Here            bool // sessions: of this directory's project
	Clean           bool // doctor: remove the project's build cache too
	All             bool // sessions: every one
	Undo            bool // rewind --undo
	Reverse         bool // apply --reverse
}

// SessionsShown is how many sessions `harness sessions` lists without
// --all: the listing then reads that many rows whatever the store holds.
const SessionsShown = 100

// NewFlagSet defines the flags of command name (DESIGN §12) on a new
// flag set writing its messages to out: the common flags, which fill
// o.Options, and those of the command. Flags win over the environment,
// which wins over the config file (Resolve).
func NewFlagSet(name string, o *Flags, out io.Writer) *flag.FlagSet {
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
		fs.BoolVar(&o.All, "all", false, fmt.Sprintf("every session, not only the %d most recently updated", SessionsShown))
	case "resume":
		fs.BoolVar(&o.Fork, "fork", false, "start a new session from the last finished turn of an interrupted one")
	case "apply":
		fs.BoolVar(&o.Yes, "yes", false, "apply without asking")
		fs.BoolVar(&o.Reverse, "reverse", false, "revert on the host the last patch applied from this session (as recorded)")
		fs.BoolVar(&o.AllowMassDelete, "allow-mass-delete", false, "with --yes: apply a patch that deletes most of the project's files (refused otherwise)")
	case "doctor":
		fs.BoolVar(&o.Clean, "clean", false, "also remove this project's build cache (its Docker volume harness-cache-…)")
		fs.BoolVar(&o.All, "all", false, "list every project's build caches and kept workspaces, not only this project's and the named session's")
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

// CommandLine is what the process's arguments ask for.
type CommandLine struct {
	// Cmd is the command word: "" is the TUI on a new session, "help"
	// the usage.
	Cmd string
	// Prompt is the first message: exec's PROMPT, or the TUI's when its
	// one argument is no command (harness "fix the bug").
	Prompt string
	Pos    []string // the command's other arguments
	Flags  Flags
}

// commands are the command words; any other first argument is the TUI's
// first prompt.
var commands = []string{"resume", "exec", "sessions", "events", "request", "diff", "apply", "discard", "rewind", "doctor", "help"}

// ParseCommandLine parses args (the process's, without its name). A
// wrong flag is told on out with the usage and returned; --help prints
// the usage and returns flag.ErrHelp; a misused command or prompt is a
// *UsageError.
func ParseCommandLine(args []string, out io.Writer) (CommandLine, error) {
	var cl CommandLine
	cl.Cmd, args = SplitCommand(args)
	if cl.Cmd != "" && !slices.Contains(commands, cl.Cmd) {
		// harness "fix the bug": the TUI with its first message, as
		// other coding agents take it.
		cl.Cmd, cl.Prompt = "", cl.Cmd
	}
	fs := NewFlagSet(cl.Cmd, &cl.Flags, out)
	fs.Usage = func() { PrintUsage(out) }
	pos, err := ParseArgs(fs, args)
	if err != nil {
		return cl, err
	}
	cl.Pos = pos
	switch cl.Cmd {
	case "":
		if cl.Prompt == "" && len(pos) > 0 { // after --
			cl.Prompt, pos = pos[0], pos[1:]
		}
		if len(pos) > 0 {
			return cl, usageErr("unexpected argument %q: the TUI takes one PROMPT, its first message: quote it (harness \"fix the bug\")", pos[0])
		}
		cl.Pos = nil
		if cl.Prompt == "" {
			return cl, nil
		}
	case "exec":
		if cl.Flags.Fork && cl.Flags.Resume == "" {
			return cl, usageErr("exec --fork continues an earlier session: pass --resume ID with it")
		}
		if len(pos) != 1 {
			return cl, usageErr("exec takes one PROMPT argument")
		}
		cl.Prompt, cl.Pos = pos[0], nil
	case "doctor":
		if len(pos) > 1 {
			return cl, usageErr("doctor takes at most one session ID")
		}
		return cl, nil
	default:
		return cl, nil
	}
	return cl, CheckPrompt(cl.Prompt)
}

// CheckPrompt applies the runtime's own rule for a prompt before anything
// is opened, and refuses one of whitespace only: a *UsageError.
func CheckPrompt(p string) error {
	if err := checkpoint.CheckText("the prompt", p); err != nil {
		return usageErr("%s", errcode.Message(err))
	}
	if strings.TrimSpace(p) == "" {
		return usageErr("the prompt is only whitespace: say what the turn should do")
	}
	return nil
}

// IsHelp reports whether err is ParseCommandLine's answer to --help.
func IsHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }

// SplitCommand takes the command word out of args: the first argument
// that is neither a flag nor the value of one of the common flags, so
// that `harness --db F resume ID` resumes as `harness resume ID --db F`
// does. Without one the command is "" (the TUI, new session).
func SplitCommand(args []string) (string, []string) {
	common := NewFlagSet("", &Flags{}, io.Discard)
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

// ParseArgs parses flags before and after positional arguments.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
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
  harness [flags] [PROMPT]              the TUI, new session on the current directory (PROMPT: its first message)
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
  harness doctor [ID] [--clean] [--all] check Docker, the sandbox image and the project's toolchains in it,
                                        the provider and the store (--clean: remove this project's build cache;
                                        lists this project's and session ID's caches and kept work, --all: all)
  harness --version                     the version, commit and Go toolchain of this binary

Exit codes of exec: 0 completed, 1 failed, 2 usage, 3 budget exceeded, 130 canceled.

Flags (accepted by every command, before or after its arguments):
`

// PrintUsage writes the command line's usage: the commands, then every
// flag.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, usageText)
	printFlags(w, NewFlagSet("exec", &Flags{}, w))
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
