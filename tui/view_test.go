package tui

import (
	"encoding/json"
	"fmt"
	"github.com/charmbracelet/colorprofile"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

const fixture = "testdata/session.jsonl"

var widths = []struct{ w, h int }{{80, 30}, {120, 40}}

// eachWidth runs f as a subtest per screen size and compares its screen to
// the golden file of that size.
func eachWidth(t *testing.T, f func(t *testing.T, w, h int) *screen) {
	for _, size := range widths {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			s := f(t, size.w, size.h)
			v := s.view()
			for i, l := range strings.Split(v, "\n") {
				if ansi.StringWidth(l) > size.w {
					t.Errorf("line %d is %d cells wide, over %d: %q", i, ansi.StringWidth(l), size.w, ansi.Strip(l))
				}
			}
			if n := strings.Count(v, "\n") + 1; n != size.h {
				t.Errorf("the view has %d lines, want the terminal's %d", n, size.h)
			}
			golden.RequireEqual(t, v+"\n")
		})
	}
}

// The recorded session, replayed live (one event per batch, as the
// runtime publishes them), then seen from the top after paging up.
func TestViewRecordedSession(t *testing.T) {
	recs := mustLoadLog(t, fixture)
	replay := func(t *testing.T, w, h int) *screen {
		eng := idleEngine()
		s := newScreen(t, eng, Options{}, w, h)
		for _, r := range recs {
			s.send(updateMsg{u: Update{SessionID: sessID, Events: []Record{r}, State: ownerAfter(s.m.state, []Record{r})}})
		}
		return s
	}
	t.Run("bottom", func(t *testing.T) {
		eachWidth(t, func(t *testing.T, w, h int) *screen {
			s := replay(t, w, h)
			s.wantText("⊘ canceled", "Reading everything", "(interrupted)", "MODEL_HTTP_ERROR")
			// The session started the queued turn; the screen only showed it.
			s.wantCalls(`open "" fork=false`)
			if s.m.busy() {
				t.Error("the screen is still busy after the last turn ended")
			}
			return s
		})
	})
	t.Run("top", func(t *testing.T) {
		eachWidth(t, func(t *testing.T, w, h int) *screen {
			s := replay(t, w, h)
			for range 100 {
				s.key("pgup")
			}
			s.wantText("you  Add a --verbose flag to the CLI", "fs.list")
			return s
		})
	})
	// Resuming shows the same screen as watching it live.
	t.Run("resumed", func(t *testing.T) {
		live := replay(t, 120, 40).view()
		eng := idleEngine()
		eng.sess.History = recs
		eng.sess.Occupancy = 0 // as in the log
		if got := newScreen(t, eng, Options{Open: OpenRequest{ID: sessID}}, 120, 40).view(); got != live {
			t.Errorf("a resumed session looks different from the live one:\n%s\n---- live:\n%s", ansi.Strip(got), ansi.Strip(live))
		}
	})
}

func TestViewWelcome(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		s.wantText("Ready.", "harness", "gpt-x", "0/200k tok", "ctx 31%", "enter send", "ctrl+c quit")
		return s
	})
}

func TestViewOpening(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		// Init's Open never answers here: the screen stays on "opening".
		s := &screen{t: t, m: New(t.Context(), idleEngine(), Options{Now: func() time.Time { return base }}), eng: idleEngine()}
		s.send(tea.WindowSizeMsg{Width: w, Height: h})
		s.send(keyMsg("x")) // typing works before the session opens
		s.wantText("Opening the session", "x")
		return s
	})
}

func TestViewBanners(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		eng := idleEngine()
		eng.sess.Demo = true
		eng.sess.ReadOnly = true
		eng.sess.Workspace = "local · read-only"
		eng.sess.Note = "Docker is not available (cannot connect to the Docker daemon): this session is read-only; run scripts/docker.sh to start a daemon"
		s := newScreen(t, eng, Options{}, w, h)
		s.wantText("Demo model", "OPENAI_API_KEY", "read-only")
		return s
	})
}

func TestViewOpenFailed(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		eng := idleEngine()
		eng.openErr = errInterrupted
		s := newScreen(t, eng, Options{Open: OpenRequest{ID: "sess-x"}}, w, h)
		s.wantText("RUNTIME_CHECKPOINT_INTERRUPTED", "/fork continues it")
		if s.m.OpenErr() == nil || s.m.SessionID() != "" {
			t.Errorf("OpenErr %v, SessionID %q", s.m.OpenErr(), s.m.SessionID())
		}
		return s
	})
}

// busyScreen is a turn in progress: a running call, steering queued, an
// input queued for the next turn, another waiting locally.
func busyScreen(t *testing.T, w, h int) *screen {
	s := newScreen(t, idleEngine(), Options{}, w, h)
	s.typeText("make the build faster")
	s.key("enter")
	s.events(
		ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
		ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "make the build faster"}),
		ev(3, event.ContextAccounted{RunID: "run-1", OccupancyTokens: 40000, WindowTokens: 128000}),
		ev(4, event.MessageDelta{RunID: "run-1", MessageID: "msg-a", Delta: "Checking the **Makefile**."}),
		ev(5, event.ModelResponse{Usage: model.Usage{PromptTokens: 12000, CompletionTokens: 400, TotalTokens: 12400}}),
		ev(6, event.ToolCall{CallID: "call-1", Tool: "process.exec", Input: json.RawMessage(`{"argv":["go","test","./..."]}`)}),
		ev(7, event.SteeringQueued{RunID: "run-1", MessageID: "msg-s1", Content: "also update the README"}),
		ev(8, event.InputQueued{RunID: "run-1", MessageID: "msg-n1", Content: "then tag a release"}),
	)
	s.m.now = base.Add(2900 * time.Millisecond)
	s.m.outbox = []outgoing{{text: "and write the changelog"}} // with the engine
	return s
}

func TestViewBusy(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := busyScreen(t, w, h)
		s.wantText("you · steering · queued", "running 2.3 s", "[steer · queued]", "[next turn · queued]", "[sending]",
			"3 queued", "12.4k/200k tok", "ctx 31%", "enter steer", "alt+enter queue", "esc cancel", "ctrl+x withdraw")
		return s
	})
}

func TestViewApproval(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := busyScreen(t, w, h)
		diff := "--- a/README.md\n+++ b/README.md\n@@ -1,2 +1,3 @@\n # demo\n-A CLI.\n+A tiny CLI.\n+Run it with --verbose.\n"
		s.send(updateMsg{u: Update{SessionID: sessID, Approval: &Approval{PermissionID: "perm-1", CallID: "call-2", Tool: "fs.write", Subject: "README.md",
			Input: json.RawMessage(`{"path":"README.md","contents":"# demo\nA tiny CLI.\nRun it with --verbose.\n"}`), Diff: diff}}})
		s.wantText("? fs.write wants to write README.md", "+2 −1", "+A tiny CLI.", "y allow once", "a allow fs.write for this turn", "n deny")
		return s
	})
}

// A long command, with the box holding the keys (tab on the empty input,
// the highlight moved once): the whole command quoted, the answers, the
// keys, the input paused.
func TestViewApprovalAnswering(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := busyScreen(t, w, h)
		s.send(updateMsg{u: Update{SessionID: sessID, Approval: &Approval{PermissionID: "perm-1", CallID: "call-2", Tool: "process.exec",
			Input: json.RawMessage(`{"argv":["sh","-c","go test -run 'TestApply|TestDiff' ./cmd/harness/... && go vet ./... && rm -rf /tmp/harness-build-cache"]}`)}}})
		s.key("tab")
		s.key("right")
		s.wantText("? process.exec wants to run", "/tmp/harness-build-cache'", "› r deny with a reason", "←/→ then enter choose", "back to the input")
		return s
	})
}

func TestViewSlashHint(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		s.typeText("/")
		s.wantText("/diff", "/apply", "/sessions", "/new", "/help", "/quit")
		return s
	})
}

const samplePatch = "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,4 @@\n package main\n-import \"fmt\"\n+import (\n+\t\"flag\"\n+)\n"

func TestViewDiff(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		eng := idleEngine()
		eng.patch = samplePatch
		s := newScreen(t, eng, Options{}, w, h)
		s.typeText("/diff")
		s.key("enter")
		s.wantText("Workspace patch", "1 file(s) +3 −1", "+import (", "esc close")
		return s
	})
}

func TestViewApplyConfirm(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		eng := idleEngine()
		eng.plan = ApplyPlan{Root: "/src/app", Patch: samplePatch, Stat: " main.go | 4 +++-\n 1 file changed, 3 insertions(+), 1 deletion(-)\n"}
		s := newScreen(t, eng, Options{}, w, h)
		s.typeText("/apply")
		s.key("enter")
		s.wantText("Apply to /src/app?", "main.go | 4 +++-", "y apply to /src/app")
		return s
	})
}

func TestViewApplyConflict(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		eng := idleEngine()
		eng.plan = ApplyPlan{Root: "/src/app", Patch: samplePatch, Conflict: "error: patch failed: main.go:1\nerror: main.go: patch does not apply\n"}
		s := newScreen(t, eng, Options{}, w, h)
		s.typeText("/apply")
		s.key("enter")
		s.wantText("WORKSPACE_SCOPE", "nothing was applied", "patch does not apply")
		return s
	})
}

func TestViewHelp(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		s.key("?")
		s.wantText("enter opens the help")
		s.key("enter")
		s.wantText("Help", "queue after turn", "withdraw last queued", "expand/collapse", "/apply", "/sessions")
		return s
	})
}

func TestViewPicker(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		eng := idleEngine()
		eng.sessions = []SessionSummary{
			{ID: "sess-0196f0d0-3b1a-7c00-8000-000000000003", Title: "add a --verbose flag to the CLI", Updated: base.Add(-5 * time.Minute), Turns: 3, Tokens: 12400, Status: "completed"},
			{ID: "sess-0196f0d0-3b1a-7c00-8000-000000000002", Title: "fix the flaky test in store/sqlite that fails one run in fifty", Updated: base.Add(-3 * time.Hour), Turns: 12, Tokens: 182000, Status: "interrupted"},
			{ID: "sess-0196f0d0-3b1a-7c00-8000-000000000001", Title: "", Updated: base.Add(-72 * time.Hour), Turns: 0, Tokens: 0, Status: "idle"},
			{ID: "sess-0196f0d0-3b1a-7c00-8000-000000000000", Title: "spent", Updated: base.Add(-96 * time.Hour), Turns: 1, Tokens: 20100, Status: "budget_exceeded"},
		}
		s := newScreen(t, eng, Options{Pick: true}, w, h)
		s.key("down")
		s.wantText("Resume a session", "5m ago", "3h ago", "3d ago", "(untitled)", "interrupted", "over budget", "enter open · esc quit")
		return s
	})
}

// The 16-colour profile (TERM=xterm, the Linux console) gets its own
// palette: basic colours only, the muted hints in the terminal's greys.
func TestView16Colours(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{Profile: colorprofile.ANSI}, w, h)
		s.typeText("make the build faster")
		s.key("enter")
		s.events(
			ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
			ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "make the build faster"}),
			ev(3, event.MessageDelta{RunID: "run-1", MessageID: "msg-a", Delta: "Checking the **Makefile** and `go test`."}),
			ev(4, event.ToolCall{CallID: "call-1", Tool: "process.exec", Input: json.RawMessage(`{"argv":["go","test","./..."]}`)}),
			ev(5, event.ToolOutput{CallID: "call-1", Stream: event.StreamStdout, Text: "ok  \tparse\t0.01s\n"}),
		)
		if v := s.view(); strings.Contains(v, "38;2;") || strings.Contains(v, "38;5;") {
			t.Errorf("a 16-colour view uses true or 256 colours:\n%q", v)
		}
		s.wantText("esc cancel", "│ ok")
		return s
	})
}

// Flags and hyphenated words in messages wrap whole: a line breaks at a
// space, never inside "--max-workspace-bytes".
func TestViewWrapKeepsFlags(t *testing.T) {
	flags := []string{"--approve", "--max-tokens", "--budget-tokens", "--max-workspace-bytes", "--read-only", "--model", "--json", "--no-color", "read-only", "--resume-interrupted-session"}
	var b strings.Builder
	for i := range 3 {
		for _, f := range flags {
			fmt.Fprintf(&b, "%s x%d ", f, i)
		}
	}
	text := strings.TrimSpace(b.String())
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		s.events(
			ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
			ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "try " + text}),
			ev(3, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a", Role: model.RoleAssistant, Content: "Use " + text}),
			ev(4, event.TurnCompleted{RunID: "run-1", SessionID: sessID, Status: event.StatusCompleted, ModelRequests: 1}),
		)
		var joined []string
		for _, l := range strings.Split(s.text(), "\n") {
			l = strings.TrimSpace(l)
			joined = append(joined, l)
			if strings.HasSuffix(l, "-") || strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") {
				t.Errorf("a hyphenated word is split at a line end: %q", l)
			}
		}
		for _, f := range flags {
			if n := strings.Count(" "+strings.Join(joined, " "), " "+f+" x"); n != 6 {
				t.Errorf("%q appears whole %d times, want 6 (3 in each message)", f, n)
			}
		}
		return s
	})
}

// At 80 columns, with a long queued chip (no room for its own ctrl+x hint)
// and a denial whose reason is longer than a line, the help line still
// holds the keys that work now, ctrl+x among them, and the card shows the
// whole reason.
func TestViewHintsFit(t *testing.T) {
	reason := "the user said: do not touch the lock file, regenerate it with the package manager instead of editing"
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := busyScreen(t, w, h)
		s.events(
			ev(9, event.SteeringQueued{RunID: "run-1", MessageID: "msg-s2", Content: "and please also rename the configuration loader everywhere"}),
			ev(10, event.ToolCall{CallID: "call-2", Tool: "fs.write", Input: json.RawMessage(`{"path":"go.sum","contents":"x"}`)}),
			ev(11, event.PermissionRequested{PermissionID: "perm-1", CallID: "call-2", Action: "fs.write", Scope: "once"}),
			ev(12, event.PermissionResolved{PermissionID: "perm-1", CallID: "call-2", Action: "fs.write", Scope: "once", Decision: "deny", Note: reason}),
		)
		lines := strings.Split(s.text(), "\n")
		help := lines[len(lines)-1]
		for _, want := range []string{"enter steer", "esc cancel", "ctrl+x withdraw", "? help"} {
			if !strings.Contains(help, want) {
				t.Errorf("the help line %q lacks %q", help, want)
			}
		}
		var note []string
		for _, l := range lines {
			if i := strings.Index(l, "│ "); i >= 0 {
				note = append(note, strings.TrimSpace(l[i+len("│ "):]))
			}
		}
		if !strings.Contains(strings.Join(note, " "), "denied: "+reason) {
			t.Errorf("the card does not show the whole reason; its lines: %q", note)
		}
		return s
	})
}

// pasted200 is a paste of 200 lines, the kind that would fill the input.
func pasted200() string {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "panic line %03d: goroutine %d [running]\n", i, i)
	}
	return b.String()
}

// A long paste shows as one marker in the input, between what was typed.
func TestViewPasteCollapsed(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		s.typeText("why does this crash? ")
		s.send(tea.PasteMsg{Content: pasted200()})
		s.typeText(" thanks")
		s.wantText("› why does this crash? [pasted 200 lines] thanks")
		if strings.Contains(s.text(), "panic line") {
			t.Error("the pasted lines are shown in the input")
		}
		return s
	})
}
