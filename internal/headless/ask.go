package headless

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/harness-dev/harness/internal/argv"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/patchtext"
	"github.com/harness-dev/harness/runtime"
)

// IsTerminal reports whether r is a terminal (exec --approve ask needs one
// to ask on).
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// question is a permission question (a permission.requested event) as
// exec asks it: the next line typed answers it through the session. The
// event carries its subject: the call's input and, for a write, its diff.
type question struct {
	id, tool, subject string
	input             json.RawMessage // the call's input
	patch             string          // the write's diff, as the runtime computed it
}

// questionOf is the question a permission.requested event asks.
func questionOf(d event.PermissionRequested) question {
	return question{id: d.PermissionID, tool: d.Action, subject: d.Subject, input: d.Input, patch: d.Patch}
}

// askLines bounds the diff printed with a write's question.
const askLines = 10

// askText is the question as exec prints it: the whole command, quoted;
// for a write, its +N −M against the workspace file and the head of the
// diff (of both sides, for an overwrite), from the diff the question
// carries.
func askText(q question) string {
	diffText := q.patch
	what := q.subject
	if q.tool == "process.exec" {
		var in struct {
			Argv       []string `json:"argv"`
			Background bool     `json:"background"`
		}
		if json.Unmarshal(q.input, &in) == nil && len(in.Argv) > 0 {
			what = argv.Line(in.Argv)
			if in.Background {
				what += " (in the background: it stays running until stopped)"
			}
		}
	}
	verb := "wants to run"
	if q.tool == "fs.write" {
		verb = "wants to write"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "? %s %s %s", q.tool, verb, what)
	if diffText != "" {
		st := patchtext.StatOf(diffText)
		fmt.Fprintf(&b, "  +%d −%d\n", st.Added, st.Deleted)
		lines, _ := patchtext.Excerpt(patchtext.Hunks(diffText), askLines)
		for _, l := range lines {
			fmt.Fprintf(&b, "  │ %s\n", Short(strings.ReplaceAll(l, "\t", "    "), 200))
		}
	} else {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  y allow once · a allow %s for this turn · s for this session · n deny · or type a reason to deny with: ", q.tool)
	return b.String()
}

// lineAnswer reads a typed line as the answer to a question: only y/yes
// and a/all allow; n/no denies; any other text denies with it as the
// reason the model gets. a/all allows the tool for the rest of the turn,
// s/session for the rest of the session (recorded; later turns and a
// resume are not asked).
func lineAnswer(line string) runtime.PermissionAnswer {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return runtime.PermissionAnswer{Allow: true, Scope: runtime.ScopeOnce, Note: "approved at the terminal"}
	case "a", "all":
		return runtime.PermissionAnswer{Allow: true, Scope: runtime.ScopeRun, Note: "approved at the terminal for this turn"}
	case "s", "session":
		return runtime.PermissionAnswer{Allow: true, Scope: runtime.ScopeSession, Note: "approved at the terminal for this session"}
	case "n", "no", "":
		return runtime.PermissionAnswer{Scope: runtime.ScopeOnce, Note: "denied at the terminal"}
	}
	reason := strings.TrimSpace(line)
	return runtime.PermissionAnswer{Scope: runtime.ScopeOnce, Note: "denied at the terminal: " + reason, Reason: reason}
}

// execTailLines is how much of a command's output exec prints at its end.
const execTailLines = 10

// execOutcome is a process.exec result as exec prints it: ✓ for exit 0,
// with the last lines of stdout and stderr unless its output was shown
// live (shownLive); for a non-zero exit or a timeout, ✗ with the exit
// code and those last lines always, so a failed build is not reported as
// done.
func execOutcome(d event.ToolResult, shownLive bool) string {
	var r struct {
		ExitCode int    `json:"exitCode"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
		TimedOut bool   `json:"timedOut"`
	}
	if json.Unmarshal(d.Output, &r) != nil {
		return fmt.Sprintf("  ✓ %d ms\n", d.DurationMs)
	}
	var b strings.Builder
	switch {
	case r.ExitCode == 0 && !r.TimedOut:
		fmt.Fprintf(&b, "  ✓ exit 0 · %d ms\n", d.DurationMs)
		if shownLive {
			return b.String() // its output is on screen already
		}
	case r.TimedOut:
		fmt.Fprintf(&b, "  ✗ timed out (exit %d) · %d ms\n", r.ExitCode, d.DurationMs)
	default:
		fmt.Fprintf(&b, "  ✗ exit %d · %d ms\n", r.ExitCode, d.DurationMs)
	}
	for _, s := range []struct{ name, text string }{{"stdout", r.Stdout}, {"stderr", r.Stderr}} {
		text := strings.TrimRight(s.text, "\n")
		if text == "" {
			continue
		}
		lines := strings.Split(text, "\n")
		if n := len(lines) - execTailLines; n > 0 {
			fmt.Fprintf(&b, "    %s (last %d of %d lines):\n", s.name, execTailLines, len(lines))
			lines = lines[n:]
		} else {
			fmt.Fprintf(&b, "    %s:\n", s.name)
		}
		for _, l := range lines {
			fmt.Fprintf(&b, "    │ %s\n", Short(l, 200))
		}
	}
	return b.String()
}
