package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// answerWithCode is an answer with fenced Go and shell code.
const answerWithCode = "The flag goes in `main.go`:\n\n```go\n// verbose logs more.\nvar verbose = flag.Bool(\"verbose\", false, \"log more\")\n\nfunc main() {\n\tflag.Parse()\n\tif *verbose { log.Println(\"starting\", 42) }\n}\n```\n\nThen run:\n\n```sh\ngo test ./... # all packages\n```\n"

// codeScreen is a turn with highlighted code, a diff card and a command
// still printing.
func codeScreen(t *testing.T, opts Options, w, h int) *screen {
	s := newScreen(t, idleEngine(), opts, w, h)
	s.events(
		ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
		ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "add a --verbose flag"}),
		ev(3, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a", Role: model.RoleAssistant, RequestID: "req-1", Content: answerWithCode}),
		ev(4, event.ToolCall{CallID: "call-1", Tool: "fs.write", Input: json.RawMessage(`{"path":"main.go","contents":"package main\n"}`), RunID: "run-1"}),
		ev(5, event.ToolResult{CallID: "call-1", Tool: "fs.write", OK: true, Output: json.RawMessage(`{"path":"main.go","bytes":13}`), DurationMs: 9,
			Patch: "--- a/main.go\n+++ b/main.go\n@@ -1,2 +1 @@\n package main\n-import \"fmt\"\n", Lines: &event.LineCounts{Deleted: 1}}),
		ev(6, event.ToolCall{CallID: "call-2", Tool: "process.exec", Input: json.RawMessage(`{"argv":["go","test","./..."]}`), RunID: "run-1"}),
		ev(7, event.ToolOutput{CallID: "call-2", Stream: event.StreamStdout, Text: "ok  \tgithub.com/x/parse\t0.01s\n"}),
	)
	s.m.now = base.Add(1500 * time.Millisecond)
	return s
}

// Code blocks are highlighted in true colour and in the 16-colour palette.
func TestViewCodeTrueColour(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := codeScreen(t, Options{}, w, h)
		if v := s.view(); !strings.Contains(v, "48;2;") {
			t.Error("the code has no background of its own in true colour")
		}
		s.wantText("func main() {", "flag.Parse()", "# all packages", "+0 −1")
		return s
	})
}

func TestViewCode16Colours(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := codeScreen(t, Options{Profile: colorprofile.ANSI}, w, h)
		if v := s.view(); strings.Contains(v, "38;2;") || strings.Contains(v, "38;5;") || strings.Contains(v, "48;") {
			t.Errorf("a 16-colour view uses true or 256 colours, or a background:\n%q", v)
		}
		s.wantText("func main() {", "flag.Parse()")
		return s
	})
}

// A light terminal with 16 colours gets the light palette: no bright
// colours, which wash out on white.
func TestViewLight16Colours(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := codeScreen(t, Options{Profile: colorprofile.ANSI}, w, h)
		s.send(tea.BackgroundColorMsg{Color: color.White})
		if s.m.th.Dark {
			t.Fatal("the theme stayed dark on a white background")
		}
		v := s.view()
		for _, bright := range []string{"\x1b[93m", "\x1b[96m", "\x1b[97m", ";93m", ";96m", ";97m"} {
			if strings.Contains(v, bright) {
				t.Errorf("the light view uses a bright colour (%q) that washes out on white", bright)
			}
		}
		return s
	})
}

// asTerminal is what a terminal of profile p receives for view: the
// program downsamples every colour (none at all without colour).
func asTerminal(t *testing.T, view string, p colorprofile.Profile) string {
	t.Helper()
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	if _, err := w.WriteString(view); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Without colour (NO_COLOR, TERM=dumb) the screen is the text and its
// attributes alone: the golden is what the terminal receives.
func TestViewNoColour(t *testing.T) {
	for _, size := range widths {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			s := codeScreen(t, Options{Profile: colorprofile.ASCII}, size.w, size.h)
			got := asTerminal(t, s.view(), colorprofile.ASCII)
			for _, seq := range []string{"38;", "48;", "\x1b[3", "\x1b[9", "\x1b[4"} {
				if strings.Contains(strings.ReplaceAll(got, "\x1b[3m", ""), seq) {
					t.Errorf("the no-colour screen has a colour (%q):\n%q", seq, got)
				}
			}
			if ansi.Strip(got) != s.text() {
				t.Error("the terminal gets other text than the view")
			}
			golden.RequireEqual(t, got+"\n")
		})
	}
}

// A running command's output streams into its card, the last lines shown.
func TestViewLiveOutputCard(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		s.events(
			ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
			ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "run the tests"}),
			ev(3, event.ToolCall{CallID: "call-1", Tool: "process.exec", Input: json.RawMessage(`{"argv":["go","test","-v","./parse/..."]}`), RunID: "run-1"}),
		)
		for i := range 12 {
			s.events(ev(4+i, event.ToolOutput{CallID: "call-1", Stream: event.StreamStdout, Offset: i * 40,
				Text: fmt.Sprintf("=== RUN   TestParse/case_%02d\n--- PASS: TestParse/case_%02d (0.00s)\n", i, i)}))
		}
		s.events(ev(20, event.ToolOutput{CallID: "call-1", Stream: event.StreamStderr, Text: "warning: slow test TestParse/case_11\n"}))
		s.m.now = base.Add(4200 * time.Millisecond)
		s.wantText("process.exec  go test -v ./parse/...", "running 3.9 s", "│ --- PASS: TestParse/case_11", "│ warning: slow test")
		if strings.Contains(s.text(), "case_03") {
			t.Error("the collapsed card shows more than its last lines")
		}
		return s
	})
}

// A canceled command keeps what it printed before it was stopped.
func TestViewCanceledCardKeepsItsOutput(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		s.events(
			ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
			ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "build it"}),
			ev(3, event.ToolCall{CallID: "call-1", Tool: "process.exec", Input: json.RawMessage(`{"argv":["make","-j","8"]}`), RunID: "run-1"}),
			ev(4, event.ToolOutput{CallID: "call-1", Stream: event.StreamStdout, Text: "cc -c parse.c\ncc -c lex.c\n"}),
			ev(5, event.ToolOutput{CallID: "call-1", Stream: event.StreamStdout, Offset: 26, Text: "cc -c main.c\n"}),
			ev(6, event.ToolResult{CallID: "call-1", Tool: "process.exec", Error: &event.ToolError{Code: "TOOL_CANCELED", Message: "the command was stopped: the turn was canceled"}, DurationMs: 3100}),
			ev(7, event.TurnCompleted{RunID: "run-1", SessionID: sessID, Status: event.StatusCanceled, ModelRequests: 1, ToolCalls: 1, Usage: u15}),
		)
		s.wantText("⊘ canceled", "│ cc -c parse.c", "│ cc -c main.c", "the command was stopped")
		return s
	})
}

// The blocks of the user's own calls: "attached" wrapped with a failed
// mention's code, and a !command's output once with its exit code.
func TestViewAttachedAndRan(t *testing.T) {
	paths := []string{"internal/service/handlers/authentication_middleware.go", "internal/service/handlers/authorization_policies.go", "docs/adr/0007-sessions.md"}
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		evs := []event.Event{
			ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
			ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "compare @" + strings.Join(paths, " @") + " @gone.md"}),
		}
		for i, p := range append(paths, "gone.md") {
			id := fmt.Sprintf("call-a%d", i)
			in, _ := json.Marshal(map[string]string{"path": p})
			evs = append(evs, ev(3+2*i, event.ToolCall{CallID: id, Tool: "fs.read", Input: in, ModelCallID: fmt.Sprintf("user-msg-u-at%d", i), RequestID: "msg-u", RunID: "run-1"}))
			res := event.ToolResult{CallID: id, Tool: "fs.read", OK: true, Output: json.RawMessage(`{"path":"x","content":"x\n","size":2}`), DurationMs: 2}
			if p == "gone.md" {
				res = event.ToolResult{CallID: id, Tool: "fs.read", Error: &event.ToolError{Code: "WORKSPACE_NOT_FOUND", Message: "gone.md: no such file"}, DurationMs: 1}
			}
			evs = append(evs, ev(4+2*i, res))
		}
		evs = append(evs,
			ev(20, event.MessageCompleted{RunID: "run-1", MessageID: "msg-att", Role: model.RoleUser, Content: event.AttachmentsMarker + "\nThe user attached files of the workspace:\n"}),
			ev(21, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a", Role: model.RoleAssistant, RequestID: "req-1", Content: "They agree."}),
			ev(22, event.TurnCompleted{RunID: "run-1", SessionID: sessID, Status: event.StatusCompleted, ModelRequests: 1, ToolCalls: 4, Usage: u15}),
			ev(23, event.TurnStarted{RunID: "run-2", SessionID: sessID, InputMessageID: "msg-u2"}),
			ev(24, event.MessageCompleted{RunID: "run-2", MessageID: "msg-u2", Role: model.RoleUser, Content: "!ls -la docs"}),
			ev(25, event.ToolCall{CallID: "call-s", Tool: "process.exec", Input: json.RawMessage(`{"argv":["sh","-c","ls -la docs"]}`), ModelCallID: "user-msg-u2-shell", RequestID: "msg-u2", RunID: "run-2"}),
			ev(26, event.ToolResult{CallID: "call-s", Tool: "process.exec", OK: true, DurationMs: 14,
				Output: json.RawMessage(`{"exitCode":1,"stdout":"adr\nREADME.md\n","stderr":"ls: docs/tmp: Permission denied\n"}`)}),
			ev(27, event.MessageCompleted{RunID: "run-2", MessageID: "msg-att2", Role: model.RoleUser, Content: event.AttachmentsMarker + "\nThe user ran `ls -la docs` in the workspace:\n"}),
			ev(28, event.TurnCompleted{RunID: "run-2", SessionID: sessID, Status: event.StatusCompleted, ToolCalls: 1, Usage: u15}),
		)
		s.events(evs...)
		text := strings.Join(strings.Fields(s.text()), " ")
		for _, p := range paths {
			if !strings.Contains(text, "@"+p) {
				t.Errorf("the attached block lacks @%s", p)
			}
		}
		s.wantText("(WORKSPACE_NOT_FOUND)", "you · ran  ls -la docs ", "✗ exit 1 · 14 ms", "Permission denied")
		if strings.Contains(s.text(), "process.exec") {
			t.Error("a !command shows a process.exec card beside its own")
		}
		if n := strings.Count(s.text(), "README.md"); n != 1 {
			t.Errorf("the command's output is shown %d times, want once", n)
		}
		return s
	})
}

// A successful command keeps the end of its output, its stderr where it
// came, and says how much there is and how to see it.
func TestViewCommandTail(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		s.events(
			ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
			ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "run the tests"}),
			ev(3, event.ToolCall{CallID: "call-1", Tool: "process.exec", Input: json.RawMessage(`{"argv":["go","test","./..."]}`), RunID: "run-1"}),
		)
		var stdout, stderr strings.Builder
		for i := range 12 {
			line := fmt.Sprintf("ok  \tgithub.com/x/pkg%02d\t0.0%ds\n", i, i%10)
			stream := event.StreamStdout
			if i == 9 {
				line, stream = "go: downloading golang.org/x/text v0.14.0\n", event.StreamStderr
				stderr.WriteString(line)
			} else {
				stdout.WriteString(line)
			}
			s.events(ev(4+i, event.ToolOutput{CallID: "call-1", Stream: stream, Text: line}))
		}
		out, _ := json.Marshal(map[string]any{"exitCode": 0, "stdout": stdout.String(), "stderr": stderr.String()})
		s.events(
			ev(20, event.ToolResult{CallID: "call-1", Tool: "process.exec", OK: true, Output: out, DurationMs: 3338}),
			ev(21, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a", Role: model.RoleAssistant, RequestID: "req-2", Content: "All pass."}),
			ev(22, event.TurnCompleted{RunID: "run-1", SessionID: sessID, Status: event.StatusCompleted, ModelRequests: 2, ToolCalls: 1, Usage: u15}),
		)
		s.wantText("… 12 lines (1 on stderr) · ctrl+o", "│ go: downloading golang.org/x/text", "│ ok      github.com/x/pkg11", "✓ 3.3 s")
		if strings.Contains(s.text(), "pkg06") {
			t.Error("the card shows more than its tail")
		}
		return s
	})
}
