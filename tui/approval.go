package tui

import (
	"encoding/json"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/tui/diffview"
	"github.com/harness-dev/harness/tui/theme"
)

// approvalLines bounds the diff shown in an approval prompt.
const approvalLines = 12

// approvalView is the permission prompt above the input: the call, the
// diff for a write, and the keys.
func approvalView(a *Approval, th *theme.Theme, width int) string {
	inner := max(width-4, 10)
	verb := "wants to run"
	what := a.Subject
	switch a.Tool {
	case "fs.write":
		verb = "wants to write"
	case "process.exec":
		what = execLine(a.Input, a.Subject)
	}
	head := th.Warn.Render("? ") + th.ToolName.Render(a.Tool) + " " + th.Text.Render(verb)
	if what != "" {
		head += " " + th.Bold.Render(what)
	}
	if a.Diff != "" {
		head += "  " + diffview.Summary(diffview.StatOf(a.Diff), th)
	}
	lines := []string{ansi.Truncate(head, inner, "…")}
	if a.Diff != "" {
		dl := diffview.Lines(diffview.Hunks(a.Diff), inner-2, th)
		shown := dl
		if len(shown) > approvalLines {
			shown = shown[:approvalLines]
		}
		for _, l := range shown {
			lines = append(lines, "  "+l)
		}
		if more := len(dl) - len(shown); more > 0 {
			lines = append(lines, "  "+th.Muted.Render("… "+itoa(more)+" more lines (/diff shows the workspace after)"))
		}
	}
	keys := th.Key.Render("y") + th.Muted.Render(" allow once · ") +
		th.Key.Render("a") + th.Muted.Render(" allow "+a.Tool+" for this run · ") +
		th.Key.Render("n") + th.Muted.Render(" deny · ") +
		th.Key.Render("ctrl+c") + th.Muted.Render(" cancel turn")
	lines = append(lines, ansi.Truncate(keys, inner, "…"))
	return th.Box.Width(width).Render(strings.Join(lines, "\n"))
}

func execLine(input json.RawMessage, fallback string) string {
	var in struct {
		Argv []string `json:"argv"`
	}
	if json.Unmarshal(input, &in) != nil || len(in.Argv) == 0 {
		return fallback
	}
	return strings.Join(in.Argv, " ")
}
