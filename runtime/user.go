package runtime

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/tools"
)

// maxMentions bounds the files one message attaches.
const maxMentions = 8

// mentionRE finds @path mentions: an @ at the start of the text or after
// white space, then a workspace path: any file name (non-ASCII, "+", "@"),
// up to white space.
var mentionRE = regexp.MustCompile(`(?:^|\s)@(\S+)`)

// mentionProse is what may end a mention but is the sentence's, not the
// path's: "look at @README.md." or "(see @a.go)".
const mentionProse = ".,;:!?)]}\"'"

// Mentions returns the workspace paths a message mentions with @path, in
// order, without repeats, at most maxMentions.
func Mentions(text string) []string {
	var out []string
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		p := strings.TrimRight(m[1], mentionProse)
		if p == "" || p == "." {
			continue
		}
		if !strings.Contains(strings.Join(out, "\x00")+"\x00", p+"\x00") && len(out) < maxMentions {
			out = append(out, p)
		}
	}
	return out
}

// ShellCommand is the command of a "!command" message, ok false for any
// other message.
func ShellCommand(text string) (cmd string, ok bool) {
	rest, ok := strings.CutPrefix(text, "!")
	rest = strings.TrimSpace(rest)
	if !ok || rest == "" || strings.Contains(rest, "\n") {
		return "", false
	}
	return rest, true
}

// userCalls runs what the user's message asks of the workspace before the
// first model request: "!command" runs the command (and the turn ends
// without the model: its output is for the conversation), @path mentions
// read the files (attach; steering's mentions take the same path when the
// steering is applied). Both go through callTool, so the policy, the approvals
// and the tools' refusals (credential files, paths out of the workspace)
// are the model's own; the results go to the conversation as one user
// message starting with event.AttachmentsMarker. It reports whether the
// turn is done.
func (t *turn) userCalls(text, messageID string) (done bool, err error) {
	if cmd, ok := ShellCommand(text); ok {
		args, _ := json.Marshal(map[string]any{"argv": []string{t.userShell(), "-c", cmd}})
		res, err := t.callTool(model.ToolCall{ID: event.UserShellCallID(messageID), Name: "process.exec", Arguments: args}, messageID, false)
		if err != nil {
			return true, err
		}
		body := fmt.Sprintf("%s\nThe user ran `%s` in the workspace:\n%s", event.AttachmentsMarker, cmd, shellOutput(res))
		if err := t.addMessage(model.Message{ID: t.s.rt.cfg.NewID("msg"), Role: model.RoleUser, Content: body}, ""); err != nil {
			return true, err
		}
		t.status = StatusCompleted
		return true, nil
	}
	return false, t.attach(text, messageID)
}

// userShell is the shell a !command runs under: bash where the workspace
// has it (the sandbox image does: `time`, `[[`, brace expansion), else sh.
// Which one ran is recorded in the call's argv.
func (t *turn) userShell() string {
	// Asked of sh, which every image has: an exec of a missing program
	// may be the first command of a workspace still opening, which rides
	// its copy-in (dockerws), and its failure would be the open's.
	res, err := t.s.cfg.Workspace.Exec(t.ctx, workspace.ExecRequest{Argv: []string{"sh", "-c", "command -v bash"}, Timeout: 10 * time.Second})
	if err == nil && res.ExitCode == 0 && strings.TrimSpace(res.Stdout) != "" {
		return "bash"
	}
	return "sh"
}

// attach reads the files text mentions (@path) through callTool, as the
// model's own fs.read calls go, and adds their contents as one user
// message starting with event.AttachmentsMarker. It does nothing for text
// without mentions. The turn's input and each steering message take this
// path (the calls are named after the message, as their request).
func (t *turn) attach(text, messageID string) error {
	paths := Mentions(text)
	if len(paths) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(event.AttachmentsMarker + "\nThe user attached files of the workspace:\n")
	for i, p := range paths {
		args, _ := json.Marshal(map[string]string{"path": p})
		res, err := t.callTool(model.ToolCall{ID: event.UserMentionCallID(messageID, i), Name: "fs.read", Arguments: args}, messageID, false)
		if err != nil {
			return err
		}
		var out struct {
			Content string `json:"content"`
		}
		switch {
		case res.Error != nil:
			fmt.Fprintf(&b, "<file path=%q error=%q/>\n", p, string(res.Error.Code)+": "+res.Error.Message)
		case json.Unmarshal(res.Output, &out) == nil:
			// A closing tag inside the file is escaped, so it cannot end
			// the attachment early.
			content := strings.ReplaceAll(strings.TrimSuffix(out.Content, "\n"), "</file>", `<\/file>`)
			fmt.Fprintf(&b, "<file path=%q>\n%s\n</file>\n", p, content)
		}
	}
	return t.addMessage(model.Message{ID: t.s.rt.cfg.NewID("msg"), Role: model.RoleUser, Content: b.String()}, "")
}

// shellOutput is a !command's result as the conversation keeps it.
func shellOutput(res tools.Result) string {
	if res.Error != nil {
		return fmt.Sprintf("<command-output error=%q/>", string(res.Error.Code)+": "+res.Error.Message)
	}
	var r struct {
		ExitCode int    `json:"exitCode"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
		TimedOut bool   `json:"timedOut"`
	}
	_ = json.Unmarshal(res.Output, &r)
	var b strings.Builder
	fmt.Fprintf(&b, "<command-output exit=\"%d\"", r.ExitCode)
	if r.TimedOut {
		b.WriteString(` timedOut="true"`)
	}
	b.WriteString(">\n")
	b.WriteString(r.Stdout)
	if r.Stderr != "" {
		if r.Stdout != "" && !strings.HasSuffix(r.Stdout, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(r.Stderr)
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("</command-output>")
	return b.String()
}
