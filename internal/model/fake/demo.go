package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// DemoNote is what the demo model writes to HARNESS_DEMO.md.
const DemoNote = `# Harness demo

This file was written by the Harness demo model, inside the isolated
workspace: a copy of your project in a container without network.
Nothing reaches your files until you review the diff and apply it.

Configure a real model to do real work: set OPENAI_API_KEY (or
--base-url for a local OpenAI-compatible server) and --model.
`

// demoDelay is the pause between two streamed chunks of the demo model.
const demoDelay = 30 * time.Millisecond

// NewDemo returns the built-in demo model, used when no provider is
// configured. It is deterministic and driven by the conversation, not by a
// step counter, so it works for any number of turns: after each new user
// message it calls fs.list ".", fs.read on the README when the listing shows
// one, fs.write HARNESS_DEMO.md, process.exec ["ls","-la"] and git.diff, one
// tool per request, then answers in Markdown with what happened (tool
// failures included, such as WORKSPACE_ISOLATION_REQUIRED without Docker)
// and how to configure a real provider. Text streams in small deltas about
// 30 ms apart.
func NewDemo() model.Model { return &demo{delay: demoDelay} }

type demo struct {
	delay time.Duration
}

func (d *demo) Name() string { return "demo" }

func (d *demo) Stream(ctx context.Context, req model.Request) (model.Stream, error) {
	step := demoStep(req)
	step.DelayBetweenMs = int(d.delay / time.Millisecond)
	return newStream(ctx, step), nil
}

// demoStep decides the answer to req.
func demoStep(req model.Request) Step {
	start := turnStart(req.Messages)
	if start < 0 {
		return demoText(req, "Hello! I am the Harness demo model. Send me a message and I will show you what the five tools do.", nil)
	}
	seen := observe(req.Messages[start+1:])
	call := func(name, args, intro string) Step {
		tc := model.ToolCall{ID: demoCallID(req), Name: name, Arguments: json.RawMessage(args)}
		return demoText(req, intro, []model.ToolCall{tc})
	}
	if !seen.called("fs.list") {
		return call("fs.list", `{"path":"."}`,
			"I am the Harness **demo model**: no model provider is configured, so I follow a fixed tour of the five tools. First, a look at the workspace.")
	}
	readme := findReadme(seen.results["fs.list"])
	if readme != "" && !seen.called("fs.read") {
		args, _ := json.Marshal(map[string]string{"path": readme})
		return call("fs.read", string(args), fmt.Sprintf("There is a `%s`; let me read it.", readme))
	}
	if !seen.called("fs.write") {
		args, _ := json.Marshal(map[string]string{"path": "HARNESS_DEMO.md", "contents": DemoNote})
		return call("fs.write", string(args), "Now I write a small note, `HARNESS_DEMO.md`, into the workspace copy.")
	}
	if !seen.called("process.exec") {
		return call("process.exec", `{"argv":["ls","-la"]}`, "Next, a command inside the workspace: `ls -la`.")
	}
	if !seen.called("git.diff") {
		return call("git.diff", `{}`, "Finally, the diff you would review before applying anything.")
	}
	return demoText(req, finalAnswer(req.Messages[start], req.Messages[start+1:], seen, readme), nil)
}

// demoText streams text in small deltas, then the tool calls.
func demoText(req model.Request, text string, calls []model.ToolCall) Step {
	out := len(text)
	for _, c := range calls {
		out += len(c.Name) + len(c.Arguments)
	}
	prompt, _ := model.MarshalCanonical(req)
	return Step{
		Content:   text,
		Deltas:    splitDeltas(text),
		ToolCalls: calls,
		Usage: Usage{
			PromptTokens:     ceilDiv(len(prompt), 3),
			CompletionTokens: ceilDiv(out, 3),
			Estimated:        true,
		},
	}
}

func ceilDiv(n, d int) int { return (n + d - 1) / d }

// splitDeltas cuts text at spaces into pieces of about 24 bytes.
func splitDeltas(text string) []string {
	var out []string
	for len(text) > 0 {
		cut := len(text)
		if cut > 24 {
			cut = 24
			if i := strings.IndexByte(text[cut:], ' '); i >= 0 {
				cut += i + 1
			} else {
				cut = len(text)
			}
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	return out
}

// demoCallID derives a call ID from the request, unique per request.
func demoCallID(req model.Request) string {
	if req.RequestID != "" {
		return "call_demo_" + strings.TrimPrefix(req.RequestID, "req-")
	}
	return fmt.Sprintf("call_demo_%d", len(req.Messages))
}

// turnStart returns the index of the user message that starts the current
// task: the last user message not preceded by a tool result (a user message
// right after a tool result is steering inside the same task). -1 if none.
func turnStart(msgs []model.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != model.RoleUser {
			continue
		}
		j := i - 1
		for j >= 0 && msgs[j].Role == model.RoleUser {
			j--
		}
		if j < 0 || msgs[j].Role != model.RoleTool {
			return j + 1
		}
		i = j
	}
	return -1
}

// observation is what happened since the start of the task.
type observation struct {
	calls    map[string]bool         // tool name → called
	results  map[string]string       // tool name → last result content
	failures map[string]errcode.Code // tool name → code of its last failure
	order    []string                // tool names in call order
}

func (o observation) called(name string) bool { return o.calls[name] }

func observe(msgs []model.Message) observation {
	o := observation{calls: map[string]bool{}, results: map[string]string{}, failures: map[string]errcode.Code{}}
	byID := map[string]string{}
	for _, m := range msgs {
		switch m.Role {
		case model.RoleAssistant:
			for _, c := range m.ToolCalls {
				byID[c.ID] = c.Name
				if !o.calls[c.Name] {
					o.order = append(o.order, c.Name)
				}
				o.calls[c.Name] = true
			}
		case model.RoleTool:
			name := byID[m.ToolCallID]
			if name == "" {
				name = m.Name
			}
			o.results[name] = m.Content
			if code := failureCode(m.Content); code != "" {
				o.failures[name] = code
			} else {
				delete(o.failures, name)
			}
		}
	}
	return o
}

// failureCode finds the error code in a tool result: {"error":{"code":…}}
// or {"code":…} in JSON, or a bare code in a short non-JSON text.
func failureCode(content string) errcode.Code {
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(content), &top); err == nil {
		var e struct {
			Code string `json:"code"`
		}
		if raw, ok := top["error"]; ok && json.Unmarshal(raw, &e) == nil && e.Code != "" {
			return errcode.Code(e.Code)
		}
		if raw, ok := top["code"]; ok && json.Unmarshal(raw, &e.Code) == nil && e.Code != "" {
			return errcode.Code(e.Code)
		}
		return ""
	}
	if json.Valid([]byte(content)) || len(content) > 1024 {
		return ""
	}
	for _, c := range errcode.All {
		s := string(c)
		if (strings.HasPrefix(s, "TOOL_") || strings.HasPrefix(s, "WORKSPACE_")) && strings.Contains(content, s) {
			return c
		}
	}
	return ""
}

var readmeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^readme(\.(md|markdown|txt|rst|adoc))?$`) })

// findReadme picks the shallowest README path named in a listing.
func findReadme(listing string) string {
	best := ""
	for _, s := range listingStrings(listing) {
		if !readmeName().MatchString(path.Base(s)) || strings.HasPrefix(s, "/") || strings.Contains(s, "..") {
			continue
		}
		if best == "" || strings.Count(s, "/") < strings.Count(best, "/") ||
			(strings.Count(s, "/") == strings.Count(best, "/") && s < best) {
			best = s
		}
	}
	return best
}

// listingStrings returns the strings inside the arrays of a JSON listing,
// or the whitespace-separated words of a plain one.
func listingStrings(listing string) []string {
	var v any
	if err := json.Unmarshal([]byte(listing), &v); err != nil {
		return strings.Fields(listing)
	}
	var out []string
	var walk func(v any, inArray bool)
	walk = func(v any, inArray bool) {
		switch t := v.(type) {
		case string:
			if inArray {
				out = append(out, t)
			}
		case []any:
			for _, e := range t {
				walk(e, true)
			}
		case map[string]any:
			for _, e := range t {
				walk(e, false)
			}
		}
	}
	walk(v, false)
	return out
}

// finalAnswer explains what the tour did and how to leave the demo.
func finalAnswer(user model.Message, rest []model.Message, seen observation, readme string) string {
	var b strings.Builder
	b.WriteString("**This was the Harness demo model.** No model provider is configured, so a built-in script answered")
	if q := quote(user.Content); q != "" {
		fmt.Fprintf(&b, " your message (%s)", q)
	}
	b.WriteString(" instead of a real model. Here is what it did, inside the workspace:\n\n")
	for _, name := range seen.order {
		if code, ok := seen.failures[name]; ok {
			fmt.Fprintf(&b, "- `%s`: tried to %s — failed with `%s`\n", name, intent(name, readme), code)
			continue
		}
		fmt.Fprintf(&b, "- `%s`: %s\n", name, describe(name, seen, readme))
	}
	if len(seen.failures) > 0 {
		b.WriteString("\nSome steps failed, as shown above.")
		if hasCode(seen.failures, errcode.WorkspaceIsolationRequired) {
			b.WriteString(" `WORKSPACE_ISOLATION_REQUIRED` means writes and commands run only in the Docker workspace; " +
				"start Harness where Docker is available (`--workspace docker`) to see them work.")
		}
		b.WriteString("\n")
	}
	for _, m := range rest {
		if m.Role == model.RoleUser {
			fmt.Fprintf(&b, "\nYou also said %s; the demo model cannot act on it, a real model would.\n", quote(m.Content))
		}
	}
	if hasCode(seen.failures, errcode.WorkspaceIsolationRequired) {
		// Read-only: nothing was written, so there is no patch to apply.
		b.WriteString("\nYour own files are untouched: this session is read-only.\n\n")
	} else {
		b.WriteString("\nYour own files are untouched: everything happened in an isolated copy. " +
			"Review the change with `/diff` and apply it with `/apply`.\n\n")
	}
	b.WriteString("To use a real model:\n\n" +
		"- OpenAI: set `OPENAI_API_KEY` and pick a model with `--model` (or `HARNESS_MODEL`).\n" +
		"- A local OpenAI-compatible server (llama.cpp, vLLM, Ollama): `--base-url http://127.0.0.1:8080/v1 --model NAME` " +
		"(or `OPENAI_BASE_URL`).\n" +
		"- Defaults can live in the config file (provider, model, baseUrl); the key always comes from the environment.\n")
	return b.String()
}

func describe(name string, seen observation, readme string) string {
	res := seen.results[name]
	switch name {
	case "fs.list":
		return fmt.Sprintf("listed the workspace (entries: %d)", len(listingStrings(res)))
	case "fs.read":
		if readme != "" {
			return fmt.Sprintf("read `%s`", readme)
		}
		return "read a file"
	case "fs.write":
		return "wrote `HARNESS_DEMO.md`"
	case "process.exec":
		var r struct {
			ExitCode *int `json:"exitCode"`
		}
		if json.Unmarshal([]byte(res), &r) == nil && r.ExitCode != nil {
			return fmt.Sprintf("ran `ls -la` (exit %d)", *r.ExitCode)
		}
		return "ran `ls -la`"
	case "git.diff":
		n := strings.Count(res, "diff --git")
		if n == 0 {
			return "asked for the diff (empty)"
		}
		return fmt.Sprintf("asked for the diff (files changed: %d)", n)
	}
	return "called"
}

// intent says what a tool call of the tour was for.
func intent(name, readme string) string {
	switch name {
	case "fs.list":
		return "list the workspace"
	case "fs.read":
		return fmt.Sprintf("read `%s`", readme)
	case "fs.write":
		return "write `HARNESS_DEMO.md`"
	case "process.exec":
		return "run `ls -la`"
	case "git.diff":
		return "get the diff"
	}
	return "call it"
}

func hasCode(m map[string]errcode.Code, c errcode.Code) bool {
	for _, v := range m {
		if v == c {
			return true
		}
	}
	return false
}

// quote returns s shortened to one line of at most 80 bytes, in quotes.
func quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return ""
	}
	if len(s) > 80 {
		cut := 77
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return "“" + s + "”"
}
