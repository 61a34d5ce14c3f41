package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/tui"
)

// isTerminal reports whether r is a terminal (exec --approve ask needs one
// to ask on).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// question is a permission question waiting for a line of stdin.
type question struct {
	req   runtime.PermissionRequest
	reply chan runtime.PermissionAnswer
}

// lineAsker is exec's resolver with --approve ask on a terminal: the
// question goes to the drive loop, which prints it and answers it with
// the next line typed (steering waits while a question is up).
type lineAsker struct{ asks chan question }

func newLineAsker() *lineAsker { return &lineAsker{asks: make(chan question)} }

func (l *lineAsker) Resolve(ctx context.Context, req runtime.PermissionRequest) (runtime.PermissionAnswer, error) {
	q := question{req: req, reply: make(chan runtime.PermissionAnswer, 1)}
	select {
	case l.asks <- q:
	case <-ctx.Done():
		return runtime.PermissionAnswer{}, ctx.Err()
	}
	select {
	case a := <-q.reply:
		return a, nil
	case <-ctx.Done():
		return runtime.PermissionAnswer{}, ctx.Err()
	}
}

// askText is the question as exec prints it: the whole command, quoted.
func askText(req runtime.PermissionRequest) string {
	what := req.Subject
	if req.Tool == "process.exec" {
		var in struct {
			Argv []string `json:"argv"`
		}
		if json.Unmarshal(req.Input, &in) == nil && len(in.Argv) > 0 {
			what = tui.CommandLine(in.Argv)
		}
	}
	verb := "wants to run"
	if req.Tool == "fs.write" {
		verb = "wants to write"
	}
	return fmt.Sprintf("? %s %s %s\n  y allow once · a allow %s for this run · n deny · or type a reason to deny with: ", req.Tool, verb, what, req.Tool)
}

// lineAnswer reads a typed line as the answer to a question: only y/yes
// and a/all allow; n/no denies; any other text denies with it as the
// reason the model gets.
func lineAnswer(line string) runtime.PermissionAnswer {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return runtime.PermissionAnswer{Allow: true, Scope: runtime.ScopeOnce, Note: "approved at the terminal"}
	case "a", "all":
		return runtime.PermissionAnswer{Allow: true, Scope: runtime.ScopeRun, Note: "approved at the terminal for this run"}
	case "n", "no", "":
		return runtime.PermissionAnswer{Scope: runtime.ScopeOnce, Note: "denied at the terminal"}
	}
	reason := strings.TrimSpace(line)
	return runtime.PermissionAnswer{Scope: runtime.ScopeOnce, Note: "denied at the terminal: " + reason, Reason: reason}
}

// execTailLines is how much of a failed command's output exec prints.
const execTailLines = 10

// execOutcome is a process.exec result as exec prints it: ✓ for exit 0;
// for a non-zero exit or a timeout, ✗ with the exit code and the last
// lines of stderr and stdout, so a failed build is not reported as done.
func execOutcome(d event.ToolResult) string {
	var r struct {
		ExitCode int    `json:"exitCode"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
		TimedOut bool   `json:"timedOut"`
	}
	if json.Unmarshal(d.Output, &r) != nil {
		return fmt.Sprintf("  ✓ %d ms\n", d.DurationMs)
	}
	if r.ExitCode == 0 && !r.TimedOut {
		return fmt.Sprintf("  ✓ exit 0 · %d ms\n", d.DurationMs)
	}
	var b strings.Builder
	if r.TimedOut {
		fmt.Fprintf(&b, "  ✗ timed out (exit %d) · %d ms\n", r.ExitCode, d.DurationMs)
	} else {
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
			fmt.Fprintf(&b, "    │ %s\n", short(l, 200))
		}
	}
	return b.String()
}
