package tui

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/tui/diffview"
)

// startTurn types text, presses enter and delivers the turn's admission.
func startTurn(s *screen, run, text string) {
	s.typeText(text)
	s.key("enter")
	s.events(
		ev(1, event.TurnStarted{RunID: run, SessionID: sessID, InputMessageID: "msg-u-" + run}),
		ev(2, event.MessageCompleted{RunID: run, MessageID: "msg-u-" + run, Role: model.RoleUser, Content: text}),
	)
}

func endTurn(s *screen, run, status string) {
	s.events(ev(50, event.TurnCompleted{RunID: run, SessionID: sessID, Status: status, Usage: u15}))
}

// Enter sends and alt+enter queues, idle or busy alike: the session
// decides what each message becomes.
func TestEnterSendsAndAltEnterQueues(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	s.resetCalls()
	startTurn(s, "run-1", "add a flag")
	if v := s.m.in.value(); v != "" {
		t.Errorf("input after sending = %q, want empty", v)
	}
	s.typeText("also the README")
	s.key("enter")
	s.typeText("then a release")
	s.key("alt+enter")
	s.wantCalls(`send "add a flag"`, `send "also the README"`, `queue "then a release"`)

	// The steering goes queued → applied on screen.
	s.events(ev(3, event.SteeringQueued{RunID: "run-1", MessageID: "msg-s1", Content: "also the README"}))
	s.wantText("you · steering · queued", "[steer · queued] also the README")
	s.events(ev(4, event.SteeringApplied{RunID: "run-1", MessageIDs: []string{"msg-s1"}}))
	s.wantText("you · steering · applied ✓")
	if strings.Contains(s.text(), "[steer · queued]") {
		t.Error("an applied steering message is still shown as a queued chip")
	}
}

func TestHistoryRecall(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "first")
	endTurn(s, "run-1", event.StatusCompleted)
	startTurn(s, "run-2", "second")
	endTurn(s, "run-2", event.StatusCompleted)
	s.typeText("draft")
	s.key("up")
	if v := s.m.in.value(); v != "second" {
		t.Fatalf("↑ recalled %q, want second", v)
	}
	s.key("up")
	if v := s.m.in.value(); v != "first" {
		t.Fatalf("↑↑ recalled %q, want first", v)
	}
	s.key("down")
	s.key("down")
	if v := s.m.in.value(); v != "draft" {
		t.Fatalf("↓↓ came back to %q, want the draft", v)
	}
}

func TestMultilineInput(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	s.resetCalls()
	s.typeText(`line one\`)
	s.key("enter") // a trailing backslash continues
	s.typeText("line two")
	s.key("ctrl+j")
	s.typeText("line three")
	if v := s.m.in.value(); v != "line one\nline two\nline three" {
		t.Fatalf("input = %q", v)
	}
	s.key("enter")
	s.wantCalls(`send "line one\nline two\nline three"`)
}

func TestCtrlCCancelsThenQuits(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	s.resetCalls()
	s.key("ctrl+c")
	s.wantCalls("cancel")
	if s.quit {
		t.Fatal("ctrl+c on a busy screen quit")
	}
	s.wantText("Canceling the turn")
	endTurn(s, "run-1", event.StatusCanceled)
	s.wantText("⊘ canceled")
	s.key("ctrl+c")
	if !s.quit {
		t.Fatal("ctrl+c on an idle screen did not quit")
	}
}

func TestSecondCtrlCWhileCancelingQuits(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	s.key("ctrl+c")
	s.key("ctrl+c")
	if !s.quit {
		t.Fatal("a second ctrl+c while canceling did not quit")
	}
}

func TestWithdrawLastQueued(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	s.events(
		ev(3, event.SteeringQueued{RunID: "run-1", MessageID: "msg-s1", Content: "steer one"}),
		ev(4, event.InputQueued{RunID: "run-1", MessageID: "msg-n1", Content: "next one"}),
	)
	s.resetCalls()
	s.key("ctrl+x")
	s.wantCalls("withdraw msg-n1")
	// The withdrawn text is back in the input, to edit and send again.
	if got := s.m.in.value(); got != "next one" {
		t.Errorf("input %q after withdrawing, want the withdrawn text", got)
	}
	s.events(ev(5, event.InputWithdrawn{RunID: "run-1", MessageID: "msg-n1"}))
	s.key("ctrl+x")
	s.events(ev(6, event.InputWithdrawn{RunID: "run-1", MessageID: "msg-s1"}))
	s.wantCalls("withdraw msg-n1", "withdraw msg-s1")
	if got := s.m.in.value(); got != "next one" {
		t.Errorf("input %q: a draft was overwritten by a withdrawn text", got)
	}
	s.wantText("you · steering · withdrawn")
	if strings.Contains(s.text(), "queued]") || strings.Contains(s.text(), "queued ·") {
		t.Errorf("withdrawn messages still shown as chips:\n%s", s.text())
	}
}

// A message the session does not accept goes back to the input, with its
// code.
func TestRefusedMessageReturnsToInput(t *testing.T) {
	eng := idleEngine()
	s := newScreen(t, eng, Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	eng.sendErr = errQueueFull
	s.typeText("one more thing")
	s.key("enter")
	s.wantText("RUNTIME_INVALID_INPUT", "the queue is full")
	if v := s.m.in.value(); v != "one more thing" {
		t.Errorf("input after a refusal = %q", v)
	}
}

// The session starts the queued turn itself: the screen only shows it.
func TestQueuedInputStartsAfterACompletedTurn(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	s.events(ev(3, event.InputQueued{RunID: "run-1", MessageID: "msg-n1", Content: "next one"}))
	s.resetCalls()
	endTurn(s, "run-1", event.StatusCompleted)
	s.wantCalls()
	s.events(
		ev(51, event.TurnStarted{RunID: "run-2", SessionID: sessID, InputMessageID: "msg-n1"}),
		ev(52, event.MessageCompleted{RunID: "run-2", MessageID: "msg-n1", Role: model.RoleUser, Content: "next one"}),
	)
	if !s.m.busy() {
		t.Error("not busy while the queued turn runs")
	}
	if strings.Contains(s.text(), "[next turn · queued]") {
		t.Errorf("the started input is still a chip:\n%s", s.text())
	}
}

func TestQueuedInputWaitsAfterACanceledTurn(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	s.events(ev(3, event.InputQueued{RunID: "run-1", MessageID: "msg-n1", Content: "next one"}))
	s.resetCalls()
	endTurn(s, "run-1", event.StatusCanceled)
	s.wantCalls()
	s.wantText("[next turn · queued] next one")
	s.key("enter") // an empty enter sends it
	s.wantCalls("start-queued")
}

// askExec puts a process.exec question on screen during a running turn.
func askExec(s *screen) { ask(s, "process.exec") }

// ask puts a question about tool (process.exec or fs.write) on screen.
func ask(s *screen, tool string) {
	a := &Approval{PermissionID: "perm-1", Tool: tool, Input: json.RawMessage(`{"argv":["make","test"]}`)}
	if tool == "fs.write" {
		a.Subject, a.Input = "a.txt", json.RawMessage(`{"path":"a.txt","contents":"x\n"}`)
		a.Diff = "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n"
	}
	s.send(updateMsg{u: Update{SessionID: sessID, Approval: a}})
}

// An approval is answered only from the box, which gets the keys with tab
// on an empty input: y, a, s, n and r answer; the highlight starts on deny,
// and enter or space act on it only once the arrows moved it; any other
// key that types goes back to the input.
func TestApprovalAnswers(t *testing.T) {
	const pending = "pending" // no answer yet: what the case checks next
	for _, c := range []struct {
		name  string
		keys  []string
		want  any // an Answer, or pending
		input string
	}{
		{"y", []string{"y"}, Answer{Allow: true}, ""},
		{"a", []string{"a"}, Answer{Allow: true, ForRun: true}, ""},
		{"n", []string{"n"}, Answer{}, ""},
		{"esc", []string{"esc"}, Answer{}, ""},
		{"enter before moving answers nothing", []string{"enter"}, pending, ""},
		{"space before moving types", []string{"space"}, pending, " "},
		{"a letter types", []string{"x", "y"}, pending, "xy"},
		{"tab gives the keys back", []string{"tab", "y"}, pending, "y"},
		{"left enter denies", []string{"left", "enter"}, Answer{}, ""},
		{"right right enter allows once", []string{"right", "right", "enter"}, Answer{Allow: true}, ""},
		{"down down down space allows for the run", []string{"down", "down", "down", "space"}, Answer{Allow: true, ForRun: true}, ""},
		{"s allows for the session", []string{"s"}, Answer{Allow: true, ForSession: true}, ""},
		{"four downs and enter allow for the session", []string{"down", "down", "down", "down", "enter"}, Answer{Allow: true, ForSession: true}, ""},
		{"right enter asks for a reason", []string{"right", "enter"}, pending, ""},
		{"r asks for a reason", []string{"r"}, pending, ""},
	} {
		for _, tool := range []string{"process.exec", "fs.write"} {
			t.Run(tool+"/"+c.name, func(t *testing.T) {
				eng := idleEngine()
				var got []Answer
				eng.answered = &got
				s := newScreen(t, eng, Options{}, 100, 30)
				startTurn(s, "run-1", "go")
				s.resetCalls()
				ask(s, tool)
				s.wantText(map[string]string{"process.exec": "? process.exec wants to run make test", "fs.write": "? fs.write wants to write a.txt  +1 −0"}[tool], "tab answer")
				s.key("tab")
				s.wantText("› n deny", "y/a/s/n/r answer", "back to the input")
				if s.m.in.ta.Focused() || s.m.View().Cursor != nil {
					t.Error("the input still looks live while the box has the keys")
				}
				for _, k := range c.keys {
					s.key(k)
				}
				if c.want == pending {
					if len(got) != 0 {
						t.Fatalf("answered: %+v", got)
					}
					if v := s.m.in.value(); v != c.input {
						t.Fatalf("input = %q, want %q", v, c.input)
					}
					if strings.HasSuffix(c.name, "reason") {
						s.wantText("type the reason the model gets")
						s.key("enter") // no reason yet: nothing is answered
						if len(got) != 0 {
							t.Fatalf("an empty reason answered: %+v", got)
						}
						s.typeText("use go test")
						s.key("enter")
						if want := (Answer{Reason: "use go test"}); len(got) != 1 || got[0] != want {
							t.Fatalf("replies = %+v, want [%+v]", got, want)
						}
					}
					return
				}
				if len(got) != 1 || got[0] != c.want {
					t.Fatalf("replies = %+v, want [%+v]", got, c.want)
				}
				if s.m.asking != nil || strings.Contains(s.text(), "wants to ") {
					t.Error("the prompt stayed after the answer")
				}
				if s.m.in.value() != "" || !s.m.in.ta.Focused() {
					t.Errorf("after the answer the input holds %q (focused %v)", s.m.in.value(), s.m.in.ta.Focused())
				}
			})
		}
	}
}

// The audit's report: "look at @src/main", tab (meant to complete), then
// " and README" approved the command and ate the space. A tab with a draft
// is the draft's: the box never gets the keys, so neither the space, nor
// enter, nor any letter answers, and enter denies with the whole text.
func TestTabWithADraftNeverApproves(t *testing.T) {
	for _, keys := range [][]string{
		{"tab", " and README"},
		{"tab", "tab", " ", "enter"},
		{"shift+tab", "y", "a"},
	} {
		t.Run(strings.Join(keys, ","), func(t *testing.T) {
			eng := idleEngine()
			var got []Answer
			eng.answered = &got
			// Time passes as a user types: no grace period can save this.
			now := base
			clock := func() time.Time { now = now.Add(time.Second); return now }
			s := newScreen(t, eng, Options{Now: clock}, 100, 30)
			startTurn(s, "run-1", "go")
			askExec(s)
			s.typeText("look at @src/main")
			typed := "look at @src/main"
			for _, k := range keys {
				switch k {
				case "tab", "enter":
					s.key(k)
				case "shift+tab":
					s.send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
				default:
					s.typeText(k)
					typed += k
				}
				if s.m.asking != nil && s.m.asking.answering {
					t.Fatalf("%q gave the box the keys with a draft in the input", k)
				}
			}
			if len(got) != 0 && (len(got) != 1 || got[0].Allow) {
				t.Fatalf("replies = %+v, want none or a denial", got)
			}
			if len(got) == 0 {
				if v := s.m.in.value(); v != typed {
					t.Fatalf("the input holds %q, want %q", v, typed)
				}
				s.key("enter")
			}
			if want := (Answer{Reason: strings.TrimSpace(typed)}); len(got) != 1 || got[0] != want {
				t.Fatalf("replies = %+v, want [%+v]", got, want)
			}
		})
	}
}

// The report: typing "wait, any ideas?" while a command waits for
// approval approved it for the whole run (the "a") and ate the "wa". Now
// every key goes to the input, nothing is answered, and enter denies with
// the typed text as the reason the model gets.
func TestTypingDuringApprovalNeverApproves(t *testing.T) {
	for _, tool := range []string{"process.exec", "fs.write"} {
		t.Run(tool, func(t *testing.T) {
			now := time.Unix(1_800_000_000, 0)
			eng := idleEngine()
			var got []Answer
			eng.answered = &got
			s := newScreen(t, eng, Options{Now: func() time.Time { return now }}, 100, 30)
			startTurn(s, "run-1", "go")
			s.send(updateMsg{u: Update{SessionID: sessID, Approval: &Approval{PermissionID: "perm-1", Tool: tool, Subject: "a.txt",
				Input: json.RawMessage(`{"argv":["rm","-rf","build"],"path":"a.txt","contents":"x"}`)}}})
			now = now.Add(time.Hour) // long after the prompt appeared
			s.typeText("wait, any ideas? yes ANY y a n Y A N")
			for _, k := range []string{"left", "right", "down"} {
				s.key(k)
			}
			if len(got) != 0 {
				t.Fatalf("typing answered the question: %+v", got)
			}
			if v := s.m.in.value(); v != "wait, any ideas? yes ANY y a n Y A N" {
				t.Fatalf("the input holds %q, want all that was typed", v)
			}
			s.wantText("enter deny, telling the model what you typed")
			s.key("enter")
			want := Answer{Reason: "wait, any ideas? yes ANY y a n Y A N"}
			if len(got) != 1 || got[0] != want {
				t.Fatalf("replies = %+v, want [%+v]", got, want)
			}
			if s.m.in.value() != "" {
				t.Errorf("the reason stayed in the input: %q", s.m.in.value())
			}
		})
	}
}

// A long command is shown whole: quoted as a shell needs it, wrapped, and
// expanded with ctrl+o when it is longer than the prompt's first lines.
func TestApprovalShowsWholeCommand(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 80, 30)
	startTurn(s, "run-1", "go")
	long := strings.Repeat("x", 150) + "MIDDLE" + strings.Repeat("x", 150)
	s.send(updateMsg{u: Update{SessionID: sessID, Approval: &Approval{PermissionID: "perm-1", Tool: "process.exec",
		Input: json.RawMessage(`{"argv":["sh","-c","echo 'hi' && rm -rf /tmp/a b","` + long + ` && rm -rf END"]}`)}}})
	// The first lines and the last (where "&& rm -rf" would be) show.
	s.wantText(`sh -c 'echo '\''hi'\'' && rm -rf /tmp/a b'`, "more line", "ctrl+o shows the whole command", "&& rm -rf END")
	if strings.Contains(s.text(), "MIDDLE") {
		t.Error("a collapsed prompt shows every line")
	}
	s.key("ctrl+o")
	s.wantText("MIDDLE", "END")
	// One line more than the bound: shown, not hidden behind a line saying so.
	s2 := newScreen(t, idleEngine(), Options{}, 80, 24)
	startTurn(s2, "run-1", "go")
	cmd := strings.Repeat("word ", 52) + "&& rm -rf build"
	s2.send(updateMsg{u: Update{SessionID: sessID, Approval: &Approval{PermissionID: "perm-1", Tool: "process.exec",
		Input: json.RawMessage(`{"argv":["sh","-c","` + cmd + `"]}`)}}})
	s2.wantText("&& rm -rf build")
	if strings.Contains(s2.text(), "more line") {
		t.Errorf("a command one line over the bound is hidden behind a line saying so:\n%s", s2.text())
	}
	for _, c := range []struct{ in, want string }{
		{`{"argv":["ls","-la"]}`, "ls -la"},
		{`{"argv":["printf","a\nb"]}`, `printf $'a\nb'`},
		{`{"argv":["echo",""]}`, `echo ''`},
		{`{"argv":["go","test","--run=TestX"],"cwd":"sub dir"}`, `(in 'sub dir') go test --run=TestX`},
	} {
		if got := execLine(json.RawMessage(c.in), "?"); got != c.want {
			t.Errorf("execLine(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A question whose turn ended (ctrl+c) goes away with the turn.
func TestApprovalDismissedWhenResolvedElsewhere(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	s.events(ev(3, event.PermissionRequested{PermissionID: "perm-1", CallID: "call-1", Action: "fs.write", Scope: "once"}))
	s.send(updateMsg{u: Update{SessionID: sessID, Approval: &Approval{PermissionID: "perm-1", Tool: "fs.write"}}})
	s.resetCalls()
	s.key("ctrl+c")
	s.wantCalls("cancel")
	s.events(ev(4, event.PermissionResolved{PermissionID: "perm-1", CallID: "call-1", Action: "fs.write", Scope: "once", Decision: "deny", Note: "turn canceled"}))
	if s.m.asking != nil {
		t.Error("the prompt stayed after its permission was resolved")
	}
}

func TestDiffAndApply(t *testing.T) {
	eng := idleEngine()
	eng.patch = samplePatch
	eng.plan = ApplyPlan{Root: "/src/app", Patch: samplePatch, Stat: " main.go | 4 +++-\n"}
	s := newScreen(t, eng, Options{}, 100, 30)
	s.resetCalls()
	s.typeText("/diff")
	s.key("enter")
	s.wantText("+import (")
	s.key("esc")
	s.typeText("/apply")
	s.key("enter")
	s.key("y")
	s.wantCalls("diff", "check-apply", "apply /src/app")
	s.wantText("applied the patch to /src/app")
}

// /compact passes its focus to the engine and says when it runs: at once
// when idle (the session runs a compaction turn), before the next request
// while a turn runs; the compaction itself shows in the transcript as its
// events arrive.
func TestCompactCommand(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	endTurn(s, "run-1", event.StatusCompleted)
	s.resetCalls()
	s.typeText("/compact the parser changes")
	s.key("enter")
	s.wantCalls("compact the parser changes")
	s.wantText("Compacting the conversation now")
	// The compaction turn ends: the notice goes with it.
	startTurn(s, "run-c", "")
	endTurn(s, "run-c", event.StatusCompleted)
	if strings.Contains(s.text(), "Compacting the conversation now") {
		t.Errorf("the compaction ended and its notice stayed:\n%s", s.text())
	}
	startTurn(s, "run-2", "go on")
	s.resetCalls()
	s.typeText("/compact")
	s.key("enter")
	s.wantCalls("compact ")
	s.wantText("Compaction asked: it runs before the turn's next model request")
}

func TestApplyRefusedWhenHostChanged(t *testing.T) {
	eng := idleEngine()
	eng.plan = ApplyPlan{Root: "/src/app", Patch: samplePatch, Conflict: "error: patch does not apply"}
	s := newScreen(t, eng, Options{}, 100, 30)
	s.resetCalls()
	s.typeText("/apply")
	s.key("enter")
	s.key("y")
	s.wantCalls("check-apply")
	s.wantText("WORKSPACE_SCOPE", "nothing was applied")
}

// A refusal longer than the screen is wide is wrapped, every word of it
// on the screen, not cut with an ellipsis; and the header does not blame
// a changed tree for every refusal.
func TestApplyRefusalIsWrappedWhole(t *testing.T) {
	eng := idleEngine()
	why := "the patch creates notes/a-rather-long-file-name.txt, which exists in /src/app: made there after the session copied the tree, or left out of the copy (a credential-like name, an --exclude pattern, a file over --max-file-bytes); nothing was applied; move the host file aside and apply again"
	eng.plan = ApplyPlan{Root: "/src/app", Patch: samplePatch, Conflict: why}
	s := newScreen(t, eng, Options{}, 80, 30)
	s.typeText("/apply")
	s.key("enter")
	s.wantText("WORKSPACE_SCOPE", "apply again")
	txt := s.text()
	_, body, _ := strings.Cut(txt, "Apply the workspace patch") // the status line shortens the session ID with …
	if strings.Contains(body, "…") || strings.Contains(txt, "changed under this patch") {
		t.Errorf("the refusal is cut or misblamed:\n%s", txt)
	}
	if got := strings.Join(strings.Fields(txt), " "); !strings.Contains(got, why) {
		t.Errorf("the refusal is not on the screen whole:\n%s", txt)
	}
}

// A write of the file's own contents says so, and ctrl+o has nothing
// more to show.
func TestApprovalOfAnUnchangedWrite(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	s.send(updateMsg{u: Update{SessionID: sessID, Approval: &Approval{PermissionID: "perm-1", CallID: "call-1", Tool: "fs.write", Subject: "a.txt",
		Input: json.RawMessage(`{"path":"a.txt","contents":"same\n"}`), Unchanged: true}}})
	s.wantText("? fs.write wants to write a.txt", "(no change: the file already holds these contents)")
	s.key("ctrl+o")
	if txt := s.text(); strings.Contains(txt, "ctrl+o") {
		t.Errorf("ctrl+o is offered or toggled with nothing to show:\n%s", txt)
	}
}

// A patch the host tree already holds is said to be applied, not a
// conflict.
func TestApplyAlreadyApplied(t *testing.T) {
	eng := idleEngine()
	eng.plan = ApplyPlan{Root: "/src/app", Patch: samplePatch, Applied: true,
		Conflict: "already applied: the host tree at /src/app already has these changes; nothing was applied"}
	s := newScreen(t, eng, Options{}, 100, 30)
	s.typeText("/apply")
	s.key("enter")
	s.wantText("✓ Already applied:", "already holds these changes")
	if strings.Contains(s.text(), "WORKSPACE_SCOPE") || strings.Contains(s.text(), "changed under this patch") {
		t.Errorf("an applied patch is shown as a conflict:\n%s", s.text())
	}
}

func TestCommandsRefusedWhileBusy(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	s.resetCalls()
	for _, c := range []string{"/apply", "/new"} {
		s.typeText(c)
		s.key("enter")
		s.wantText("A turn is running")
	}
	s.wantCalls()
}

func TestNewAndSessions(t *testing.T) {
	eng := idleEngine()
	eng.sessions = []SessionSummary{{ID: "sess-a", Title: "one"}, {ID: "sess-b", Title: "two"}}
	s := newScreen(t, eng, Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	endTurn(s, "run-1", event.StatusCompleted)
	s.resetCalls()
	s.typeText("/sessions")
	s.key("enter")
	s.key("down")
	s.key("enter")
	s.wantCalls("sessions", `open "sess-b" fork=false`)
	if s.m.SessionID() != "sess-b" || s.m.tr.Len() != 0 {
		t.Errorf("after opening sess-b: session %q with %d blocks", s.m.SessionID(), s.m.tr.Len())
	}
	// Events of the session that was replaced are ignored.
	s.send(updateMsg{u: Update{SessionID: sessID, Events: []Record{{Seq: 99, Event: ev(9, event.MessageCompleted{Role: model.RoleUser, Content: "stale"})}}}})
	if strings.Contains(s.text(), "stale") {
		t.Error("an event of the replaced session was shown")
	}
	s.typeText("/new")
	s.key("enter")
	s.wantCalls("sessions", `open "sess-b" fork=false`, `open "" fork=false`)
}

func TestPickerAtStartup(t *testing.T) {
	eng := idleEngine()
	eng.sessions = []SessionSummary{{ID: "sess-a", Title: "one"}}
	s := newScreen(t, eng, Options{Pick: true}, 100, 30)
	s.wantCalls("sessions")
	s.key("esc")
	if !s.quit {
		t.Error("esc on the startup picker with no session open did not quit")
	}
	s = newScreen(t, eng, Options{Pick: true}, 100, 30)
	s.key("enter")
	if s.m.SessionID() != "sess-a" {
		t.Errorf("session after picking = %q", s.m.SessionID())
	}
}

func TestOpenFailureKeepsScreenUsable(t *testing.T) {
	eng := idleEngine()
	eng.openErr = errcode.New(errcode.SessBusy, "sess-x is held by proc-1 (pid 7 on host h)")
	s := newScreen(t, eng, Options{Open: OpenRequest{ID: "sess-x"}}, 100, 30)
	s.wantText("SESS_BUSY", "/sessions picks another session")
	s.typeText("hello")
	s.key("enter")
	s.wantText("No session is open yet.")
	eng.openErr = nil
	s.key("ctrl+u") // the text was kept; clear it
	s.typeText("/new")
	s.key("enter")
	if s.m.SessionID() == "" || s.m.OpenErr() != nil {
		t.Errorf("after /new: session %q, open error %v", s.m.SessionID(), s.m.OpenErr())
	}
}

func TestUnknownCommandAndPathsAreMessages(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	s.resetCalls()
	for _, text := range []string{"/frobnicate", "/modle gpt-5 please", "/Compact-now"} {
		s.typeText(text)
		s.key("enter")
		s.wantText("Unknown command " + strings.Fields(text)[0])
		if s.m.in.value() != text {
			t.Errorf("the unknown command left the input: %q", s.m.in.value())
		}
		s.key("ctrl+c") // clears the draft
	}
	s.wantCalls()
	s.typeText("/usr/local/bin is not on PATH")
	s.key("enter")
	s.typeText(" /tmp is full")
	s.key("enter")
	s.wantCalls(`send "/usr/local/bin is not on PATH"`, `send " /tmp is full"`)
}

// Esc interrupts a running turn; ctrl+c on an idle screen clears a draft
// first (↑ brings it back) and quits only on the next press.
func TestEscCancelsAndCtrlCClearsTheDraft(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	s.resetCalls()
	s.key("esc")
	s.wantCalls("cancel")
	s.wantText("Canceling the turn")
	s.events(ev(50, event.TurnCompleted{RunID: "run-1", Status: event.StatusCanceled}))

	s.typeText("half a thought")
	s.key("ctrl+c")
	if s.quit || s.m.in.value() != "" {
		t.Fatalf("ctrl+c with a draft: quit %v, input %q", s.quit, s.m.in.value())
	}
	s.wantText("Draft cleared", "ctrl+c again quits")
	s.key("up")
	if s.m.in.value() != "half a thought" {
		t.Errorf("↑ after clearing = %q, want the draft back", s.m.in.value())
	}
	s.key("ctrl+c")
	s.key("ctrl+c")
	if !s.quit {
		t.Error("the second ctrl+c on an empty input did not quit")
	}
}

// Tab completes a slash command; Home and End jump through the transcript
// when the input is empty; the mouse wheel scrolls it.
func TestTabHomeEndWheel(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 80, 12)
	for _, c := range []struct{ typed, want string }{{"/d", "/diff "}, {"/s", "/sessions "}, {"/", "/"}, {"/zz", "/zz"}} {
		s.typeText(c.typed)
		s.key("tab")
		if s.m.in.value() != c.want {
			t.Errorf("tab after %q = %q, want %q", c.typed, s.m.in.value(), c.want)
		}
		s.m.in.take()
	}
	startTurn(s, "run-1", "go")
	for i := range 30 {
		s.events(ev(10+i, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a" + itoa(i), Role: model.RoleAssistant, Content: "line " + itoa(i)}))
	}
	s.key("home")
	s.wantText("you  go")
	s.key("end")
	s.wantText("line 29")
	s.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	s.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if s.m.vp.Following() || strings.Contains(s.text(), "line 29") {
		t.Error("the wheel did not scroll up")
	}
	for range 10 {
		s.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	if !s.m.vp.Following() {
		t.Error("the wheel did not scroll back to the bottom")
	}
}

// ↑ recalls the messages of a resumed session.
func TestHistorySurvivesResume(t *testing.T) {
	eng := idleEngine()
	eng.sess.History = []Record{
		{Seq: 0, Event: ev(0, event.TurnStarted{RunID: "run-0", SessionID: sessID, InputMessageID: "msg-u0"})},
		{Seq: 1, Event: ev(1, event.MessageCompleted{RunID: "run-0", MessageID: "msg-u0", Role: model.RoleUser, Content: "first ask"})},
		{Seq: 2, Event: ev(2, event.SteeringQueued{RunID: "run-0", MessageID: "msg-s0", Content: "a steer"})},
		{Seq: 3, Event: ev(3, event.TurnCompleted{RunID: "run-0", Status: event.StatusCompleted})},
	}
	s := newScreen(t, eng, Options{Open: OpenRequest{ID: sessID}}, 100, 30)
	s.key("up")
	if s.m.in.value() != "a steer" {
		t.Fatalf("↑ = %q, want the last message sent before the resume", s.m.in.value())
	}
	s.key("up")
	if s.m.in.value() != "first ask" {
		t.Fatalf("↑↑ = %q", s.m.in.value())
	}
}

// projectEngine is a fakeEngine that keeps the project's input history.
type projectEngine struct {
	*fakeEngine
	id      string // the session the prompts are listed for ("": the open one)
	prompts []string
}

func (p *projectEngine) Prompts(context.Context) (string, []string, error) {
	p.record("prompts")
	if p.id != "" {
		return p.id, p.prompts, nil
	}
	return p.fakeEngine.sess.ID, p.prompts, nil
}

// ↑ and ctrl+r reach the prompts of the project's other sessions, older
// than the open session's own, once the engine has listed them in the
// background (the open does not wait for them); the attachments message
// of an @path is never recalled; a list made for another session is
// dropped.
func TestHistoryIsTheProjects(t *testing.T) {
	fake := idleEngine()
	fake.sess.History = []Record{
		{Seq: 0, Event: ev(0, event.TurnStarted{RunID: "run-0", SessionID: sessID, InputMessageID: "msg-u0"})},
		{Seq: 1, Event: ev(1, event.MessageCompleted{RunID: "run-0", MessageID: "msg-u0", Role: model.RoleUser, Content: "read @a.go"})},
		{Seq: 2, Event: ev(2, event.MessageCompleted{RunID: "run-0", MessageID: "msg-a0", Role: model.RoleUser, Content: event.AttachmentsMarker + "\n<file path=\"a.go\">x</file>"})},
		{Seq: 3, Event: ev(3, event.TurnCompleted{RunID: "run-0", Status: event.StatusCompleted})},
	}
	eng := &projectEngine{fakeEngine: fake, prompts: []string{"fix the lexer", "add a test"}}
	m := New(t.Context(), eng, Options{Open: OpenRequest{ID: sessID}, Now: func() time.Time { return base }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	s, _ := eng.Open(t.Context(), OpenRequest{ID: sessID})
	_, load := m.Update(openedMsg{req: OpenRequest{ID: sessID}, sess: s})
	if slices.Contains(eng.Calls(), "prompts") || len(m.in.history) != 1 {
		t.Fatalf("the open read the project's history itself: calls %q, history %d", eng.Calls(), len(m.in.history))
	}
	if load == nil {
		t.Fatal("the open loads no project history")
	}
	sc := &screen{t: t, m: m, eng: fake, seq: -1}
	sc.run(load, 0)
	for _, want := range []string{"read @a.go", "add a test", "fix the lexer", "fix the lexer"} {
		sc.key("up")
		if v := m.in.value(); v != want {
			t.Fatalf("↑ = %q, want %q", v, want)
		}
	}
	sc.key("down")
	sc.key("down")
	sc.key("down")
	m.in.take()
	sc.key("ctrl+r")
	sc.typeText("lexer")
	if v := m.in.value(); v != "fix the lexer" {
		t.Errorf("ctrl+r lexer = %q", v)
	}
	sc.key("esc")

	// A list made for the session open before is not this one's.
	eng.id, eng.prompts = "sess-other", []string{"stale"}
	sc.run(m.prompts(), 0)
	if slices.ContainsFunc(m.in.history, func(h sent) bool { return h.text() == "stale" }) {
		t.Error("a list for another session was taken")
	}
	// A second list replaces the first.
	eng.id, eng.prompts = "", []string{"only this"}
	sc.run(m.prompts(), 0)
	var got []string
	for _, h := range m.in.history {
		got = append(got, h.text())
	}
	if !slices.Equal(got, []string{"only this", "read @a.go"}) {
		t.Errorf("history after a second list: %q", got)
	}
}

func TestScrollAndNewBelow(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 80, 12)
	startTurn(s, "run-1", "go")
	for i := range 30 {
		s.events(ev(10+i, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a" + itoa(i), Role: model.RoleAssistant, Content: "line " + itoa(i)}))
	}
	s.key("pgup")
	s.events(ev(99, event.MessageCompleted{RunID: "run-1", MessageID: "msg-late", Role: model.RoleAssistant, Content: "late line"}))
	s.wantText("↓ new below")
	if strings.Contains(s.text(), "late line") {
		t.Error("a scrolled-up window jumped to the new line")
	}
	s.key("esc")
	s.wantText("late line")
}

func TestApprovalClosesOverlay(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	s.typeText("/diff")
	s.key("enter")
	s.wantText("Workspace patch")
	s.resetCalls()
	s.send(updateMsg{u: Update{SessionID: sessID, Approval: &Approval{PermissionID: "perm-1", Tool: "fs.write", Subject: "a.txt"}}})
	s.wantText("? fs.write wants to write a.txt")
	if strings.Contains(s.text(), "Workspace patch") {
		t.Error("the pager hides the question")
	}
	s.key("tab")
	s.key("y")
	s.wantCalls(`answer perm-1 allow=true forRun=false reason=""`)
}

// Messages typed while one is with the engine (a turn being admitted, a
// turn ending) reach it one at a time, in the order typed: the session
// makes them steering or the next turn.
func TestTypedWhileSendingKeepsOrder(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	s.resetCalls()
	s.typeText("go")
	_, cmd := s.m.Update(keyMsg("enter")) // the Send is in flight
	s.typeText("quick one")
	s.key("enter")
	s.typeText("later")
	s.key("alt+enter")
	s.wantCalls()
	s.wantText("[sending] quick one", "[sending] later")
	if !s.m.busy() {
		t.Error("not busy while a message is on its way")
	}
	s.run(cmd, 0)
	s.wantCalls(`send "go"`, `send "quick one"`, `queue "later"`)
	if len(s.m.outbox) != 0 {
		t.Errorf("outbox = %+v", s.m.outbox)
	}
}

// A session whose last turn was interrupted opens on an offer: /fork
// continues it in a new session from its last finished turn.
func TestForkOffersToContinueAnInterruptedSession(t *testing.T) {
	eng := idleEngine()
	eng.openErr = errInterrupted
	s := newScreen(t, eng, Options{Open: OpenRequest{ID: "sess-x"}}, 100, 30)
	eng.openErr = nil
	s.eng.calls = nil
	s.typeText("/fork")
	s.key("enter")
	s.wantCalls(`open "sess-x" fork=true`)
	if s.m.OpenErr() != nil || s.m.SessionID() != "sess-x" {
		t.Fatalf("after /fork: OpenErr %v, SessionID %q", s.m.OpenErr(), s.m.SessionID())
	}
}

// The interrupted turn's end line counts what it did: it said 0 model
// requests and 0 tool calls after a request and a command.
func TestInterruptedTurnCountsWhatItDid(t *testing.T) {
	eng := idleEngine()
	eng.openErr = errInterrupted
	eng.errSess.History = []Record{
		{Seq: 0, Event: ev(0, event.TurnStarted{RunID: "run-1", SessionID: sessID, TurnID: "turn-1", InputMessageID: "msg-u1"})},
		{Seq: 1, Event: ev(1, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u1", Role: model.RoleUser, Content: "vet it"})},
		{Seq: 2, Event: ev(2, event.ModelRequest{RequestID: "req-1", RunID: "run-1", SessionID: sessID, TurnID: "turn-1"})},
		{Seq: 3, Event: ev(3, event.ModelResponse{RequestID: "req-1", RunID: "run-1", SessionID: sessID, TurnID: "turn-1", FinishReason: "tool_calls"})},
		{Seq: 4, Event: ev(4, event.ToolCall{CallID: "call-1", Tool: "process.exec", Input: []byte(`{"argv":["go","vet"]}`), RunID: "run-1", SessionID: sessID, TurnID: "turn-1"})},
	}
	s := newScreen(t, eng, Options{Open: OpenRequest{ID: sessID}}, 120, 30)
	s.wantText("interrupted", "1 model request · 1 tool call")
}

// A fork shows the transcript it continues before its own events, whose
// sequence numbers start again from 0.
func TestForkShowsItsInheritedTranscript(t *testing.T) {
	eng := idleEngine()
	eng.sess.Inherited = []Record{
		{Seq: 7, Event: ev(7, event.TurnStarted{RunID: "run-0", SessionID: "sess-parent", InputMessageID: "msg-u0"})},
		{Seq: 8, Event: ev(8, event.MessageCompleted{RunID: "run-0", MessageID: "msg-u0", Role: model.RoleUser, Content: "the question before the fork"})},
		{Seq: 9, Event: ev(9, event.MessageCompleted{RunID: "run-0", MessageID: "msg-a0", Role: model.RoleAssistant, Content: "the answer before the fork"})},
		{Seq: 10, Event: ev(10, event.TurnCompleted{RunID: "run-0", Status: event.StatusCompleted})},
	}
	eng.sess.History = []Record{
		{Seq: 0, Event: ev(0, event.SessionForked{SessionID: sessID, FromSessionID: "sess-parent", FromTurnID: "turn-0"})},
	}
	s := newScreen(t, eng, Options{Open: OpenRequest{ID: sessID}}, 100, 30)
	s.wantText("the question before the fork", "the answer before the fork")
	startTurn(s, "run-1", "go")
	s.events(ev(3, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a1", Role: model.RoleAssistant, Content: "after the fork"}))
	s.wantText("the answer before the fork", "after the fork")
}

// The picker shows each session's directory; / searches titles,
// directories and IDs, and enter opens the match.
func TestPickerSearch(t *testing.T) {
	eng := idleEngine()
	eng.sessions = []SessionSummary{
		{ID: "sess-a", Title: "fix the parser", Dir: "/src/alpha"},
		{ID: "sess-b", Title: "write docs", Dir: "/src/beta"},
		{ID: "sess-c", Title: "release notes", Dir: "/src/alpha"},
	}
	s := newScreen(t, eng, Options{Pick: true}, 120, 30)
	s.wantText("/src/alpha", "/src/beta")
	s.key("/")
	s.typeText("beta")
	if got := s.m.picker.shown(); len(got) != 1 || got[0].ID != "sess-b" {
		t.Fatalf("search beta: %+v", got)
	}
	s.key("backspace")
	s.key("backspace")
	s.key("backspace")
	s.key("backspace")
	s.typeText("notes")
	s.eng.calls = nil
	s.key("enter")
	s.wantCalls(`open "sess-c" fork=false`)
}

// /model NAME switches the model for the following requests; the screen
// says so; /model alone names the current one and lists the server's.
func TestModelCommand(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	s.resetCalls()
	s.typeText("/model deepseek-reasoner")
	s.key("enter")
	s.wantCalls("model deepseek-reasoner")
	s.wantText("model: deepseek-reasoner answers from the next model request on")
	s.resetCalls()
	s.typeText("/model")
	s.key("enter")
	s.wantCalls("models")
	s.wantText("/model NAME switches it", "models the server serves: gpt-x, gpt-y")
}

// What is sent is the whole paste in place of its marker; a short paste
// is inserted as it is; the transcript shows the message as sent.
func TestPasteSendsWholeText(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 80, 30)
	long := pasted200()
	s.typeText("why? ")
	s.send(tea.PasteMsg{Content: long})
	s.send(tea.PasteMsg{Content: "\nand\r\nthis"})
	s.send(tea.PasteMsg{Content: strings.ReplaceAll(long, "panic", "fatal")})
	s.wantText("› why? [pasted 200 lines]", "and", "this[pasted 200 lines #2]")
	want := "why? " + long + "\nand\nthis" + strings.ReplaceAll(long, "panic", "fatal")
	if got := s.m.in.value(); got != want {
		t.Fatalf("value is %d chars, want %d", len(got), len(want))
	}
	s.resetCalls()
	s.key("enter")
	s.wantCalls("send " + strconv.Quote(want))
	if s.m.in.value() != "" || len(s.m.in.pastes) != 0 {
		t.Errorf("the input kept %q and %d pastes after sending", s.m.in.value(), len(s.m.in.pastes))
	}
	s.events(
		ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-u"}),
		ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: want}),
	)
	// The transcript shows its head, and all of it on ctrl+o.
	s.wantText("you  why? ", "more lines · ctrl+o expands")
	if strings.Contains(s.text(), "fatal line 199") {
		t.Error("a 400-line message is shown whole before it is expanded")
	}
	s.key("ctrl+o")
	s.wantText("panic line 016")
	s.key("end")
	s.wantText("fatal line 199")
}

// A paste never takes the message past the runtime's limit.
func TestPasteKeepsLimit(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 80, 30)
	s.typeText("ab")
	s.send(tea.PasteMsg{Content: strings.Repeat("x\n", maxInputChars)})
	if n := len([]rune(s.m.in.value())); n != maxInputChars {
		t.Errorf("the message is %d characters, want the limit %d", n, maxInputChars)
	}
	s.send(tea.PasteMsg{Content: strings.Repeat("y\n", 20)})
	if n := len([]rune(s.m.in.value())); n != maxInputChars {
		t.Errorf("after a second paste the message is %d characters, want %d", n, maxInputChars)
	}
}

// Recalling history and coming back keeps a draft's collapsed paste.
func TestPasteSurvivesHistoryRecall(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 80, 30)
	s.typeText("first")
	s.key("enter")
	s.typeText("see ")
	s.send(tea.PasteMsg{Content: pasted200()})
	s.key("up")
	s.wantText("› first")
	s.key("down")
	s.wantText("› see [pasted 200 lines]")
	if got := s.m.in.value(); got != "see "+pasted200() {
		t.Errorf("after recall the draft is %d chars, want the paste back", len(got))
	}
}

// workspaceFiles is the listing the completion tests complete from.
var workspaceFiles = []string{"README.md", "docs/guide.md", "docs/usage.md", "my notes.txt", "src/main.go", "src/main_test.go", "src/util/str.go"}

// Tab completes the path before the cursor, after an @ or in a word that
// looks like a path, from the workspace listing the engine gives: to the
// one match, or to what the matches share, listing them. The listing is
// fetched once, at the first tab that needs it, and again after a turn.
func TestTabCompletesPaths(t *testing.T) {
	eng := idleEngine()
	eng.files = workspaceFiles
	s := newScreen(t, eng, Options{}, 100, 30)
	s.resetCalls()
	for _, c := range []struct {
		typed string
		keys  []string
		want  string
		shown string // on screen after the keys
	}{
		{"@REA", []string{"tab"}, "@README.md ", ""},
		{"@readme", []string{"tab"}, "@README.md ", ""},
		{"look at @src/m", []string{"tab"}, "look at @src/main", "2 paths match @src/main"},
		{"look at @src/m", []string{"tab", "_", "tab"}, "look at @src/main_test.go ", ""},
		{"@src/", []string{"tab"}, "@src/", "3 paths match @src/"},
		{"@src/u", []string{"tab"}, "@src/util/", ""},
		{"@src/u", []string{"tab", "tab"}, "@src/util/str.go ", ""},
		{"see docs/g", []string{"tab"}, "see docs/guide.md ", ""},
		{"see ./docs/u", []string{"tab"}, "see ./docs/usage.md ", ""},
		{"hello wor", []string{"tab"}, "hello wor", ""},
		{"@my", []string{"tab"}, "@my", "Nothing in the workspace matches @my."},
		{"@nope", []string{"tab"}, "@nope", "Nothing in the workspace matches @nope."},
	} {
		s.typeText(c.typed)
		for _, k := range c.keys {
			if k == "tab" {
				s.key(k)
			} else {
				s.typeText(k)
			}
		}
		if v := s.m.in.value(); v != c.want {
			t.Errorf("%q + %v = %q, want %q", c.typed, c.keys, v, c.want)
		}
		if c.shown != "" {
			s.wantText(c.shown)
		}
		s.m.in.take()
		s.key("esc")
	}
	// In the middle of the text, the space after is not doubled.
	s.typeText("@REA and more")
	for range len(" and more") {
		s.key("left")
	}
	s.key("tab")
	if v := s.m.in.value(); v != "@README.md and more" {
		t.Errorf("completing inside the text gave %q", v)
	}
	s.m.in.take()
	s.wantCalls("files")

	// The list of matches narrows as one types, and esc takes it away.
	s.typeText("@src/")
	s.key("tab")
	s.wantText("3 paths match @src/", "main.go", "main_test.go", "util/")
	s.typeText("m")
	s.wantText("2 paths match @src/m")
	s.key("esc")
	if s.m.comp.shown != nil || strings.Contains(s.text(), "paths match") {
		t.Error("esc left the list of matches")
	}
	s.m.in.take()

	// A turn may change the files: the listing is fetched again.
	startTurn(s, "run-1", "go")
	endTurn(s, "run-1", event.StatusCompleted)
	s.wantCalls("files", `send "go"`, "files")
}

// A tab pressed before the listing arrives completes when it does, unless
// the draft changed meanwhile; a listing that failed says why, and the
// next tab asks again.
func TestTabWaitsForTheListing(t *testing.T) {
	eng := idleEngine()
	eng.files = workspaceFiles
	s := newScreen(t, eng, Options{}, 100, 30)
	s.typeText("@REA")
	_, cmd := s.m.Update(keyMsg("tab"))
	if v := s.m.in.value(); v != "@REA" {
		t.Fatalf("completed before the listing came: %q", v)
	}
	s.run(cmd, 0)
	if v := s.m.in.value(); v != "@README.md " {
		t.Fatalf("after the listing came: %q", v)
	}

	s = newScreen(t, eng, Options{}, 100, 30)
	s.typeText("@REA")
	_, cmd = s.m.Update(keyMsg("tab"))
	s.typeText("X")
	s.run(cmd, 0)
	if v := s.m.in.value(); v != "@REAX" {
		t.Fatalf("a stale tab completed a changed draft: %q", v)
	}

	eng = idleEngine()
	eng.filesErr = errcode.New(errcode.WorkspaceLimit, "list files: too many files")
	s = newScreen(t, eng, Options{}, 100, 30)
	s.resetCalls()
	s.typeText("@REA")
	s.key("tab")
	s.wantText("No path completion: WORKSPACE_LIMIT")
	eng.filesErr, eng.files = nil, workspaceFiles
	s.key("tab")
	if v := s.m.in.value(); v != "@README.md " {
		t.Fatalf("the tab after a failed listing: %q", v)
	}
	s.wantCalls("files", "files")
}

// With a question up, a tab with a draft completes the draft and the
// question keeps waiting.
func TestTabCompletesDuringApproval(t *testing.T) {
	eng := idleEngine()
	eng.files = workspaceFiles
	var got []Answer
	eng.answered = &got
	s := newScreen(t, eng, Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	askExec(s)
	s.typeText("look at @REA")
	s.key("tab")
	s.typeText("more")
	s.key("space")
	if v := s.m.in.value(); v != "look at @README.md more " || len(got) != 0 || s.m.asking == nil || s.m.asking.answering {
		t.Fatalf("input %q, answers %+v, asking %+v", v, got, s.m.asking)
	}
}

// What the terminal keeps after quitting is the newest answer as plain
// text: the completed one, or as far as a canceled one got; never a
// summary; bounded to its last lines; no escape sequence of the model's
// reaches the terminal.
func TestLastAnswer(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	if got := s.m.LastAnswer(40); got != "" {
		t.Fatalf("before any answer: %q", got)
	}
	startTurn(s, "run-1", "go")
	s.events(
		ev(3, event.MessageDelta{RunID: "run-1", MessageID: "msg-a1", Delta: "Half"}),
		ev(4, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a1", Role: model.RoleAssistant, Content: "The **first** answer.\x1b]0;pwned\x07\x1b[2J  \r\n"}),
		ev(5, event.ContextAccounted{RunID: "run-1", RequestID: "req-sum", SummaryRequest: true}),
		ev(6, event.MessageDelta{RunID: "run-1", RequestID: "req-sum", MessageID: "msg-sum", Delta: "a summary"}),
	)
	endTurn(s, "run-1", event.StatusCompleted)
	if got := s.m.LastAnswer(40); got != "The **first** answer." {
		t.Errorf("after a completed answer: %q", got)
	}
	startTurn(s, "run-2", "more")
	var long strings.Builder
	for i := range 100 {
		long.WriteString("line " + itoa(i) + "\n")
	}
	s.events(ev(7, event.MessageDelta{RunID: "run-2", MessageID: "msg-a2", Delta: long.String()}))
	endTurn(s, "run-2", event.StatusCanceled)
	got := strings.Split(s.m.LastAnswer(40), "\n")
	if len(got) != 41 || got[0] != "… 60 earlier lines" || got[1] != "line 60" || got[40] != "line 99" {
		t.Errorf("a long canceled answer gave %d lines: %q … %q", len(got), got[0], got[len(got)-1])
	}
}

// overwriteApproval is the audit's case: a 140-line README overwritten
// with 3 lines.
func overwriteApproval() *Approval {
	var old strings.Builder
	for i := range 140 {
		old.WriteString("line " + itoa(i+1) + " of a long README\n")
	}
	return &Approval{PermissionID: "perm-1", CallID: "call-2", Tool: "fs.write", Subject: "README.md",
		Input: json.RawMessage(`{"path":"README.md","contents":"# Short\nthree lines\nnow\n"}`),
		Diff:  diffview.Unified("README.md", old.String(), "# Short\nthree lines\nnow\n", false)}
}

// The collapsed write approval of an overwrite shows what gets written,
// not only the head of what it replaces, and counts against the file.
func TestApprovalShowsBothSidesOfAnOverwrite(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 40)
	startTurn(s, "run-1", "shorten the README")
	s.send(updateMsg{u: Update{SessionID: sessID, Approval: overwriteApproval()}})
	s.wantText("? fs.write wants to write README.md  +3 −140", "-line 1 of a long README", "… 133 more removed lines · ctrl+o shows all",
		"+# Short", "+three lines", "+now")
	if strings.Contains(s.text(), "line 9 of") {
		t.Error("the collapsed approval shows more of the old file than fits")
	}
	s.key("ctrl+o")
	s.wantText("-line 8 of a long README", "ctrl+o/esc collapse")
	wantFits(t, s, 40)
	// The whole diff does not fit in 40 lines: pgdn moves the window to
	// what gets written, the answers and keys staying on screen.
	for range 20 {
		if strings.Contains(s.text(), "+now") {
			break
		}
		s.key("pgdown")
	}
	s.wantText("+now", "of 144 · pgup/pgdn scroll", "y allow once", "ctrl+c cancel turn")
	wantFits(t, s, 40)
	for range 20 {
		s.key("pgup")
	}
	s.wantText("lines 1–", "-line 1 of a long README")
}

// wantFits fails when the screen is taller than h lines.
func wantFits(t *testing.T, s *screen, h int) {
	t.Helper()
	if n := strings.Count(s.view(), "\n") + 1; n > h {
		t.Errorf("the screen has %d lines, more than its %d:\n%s", n, h, s.text())
	}
}

// On a short terminal even the collapsed approval of a long command and
// diff keeps its answers on screen: what does not fit is a window.
func TestApprovalFitsAShortTerminal(t *testing.T) {
	eng := idleEngine()
	var got []Answer
	eng.answered = &got
	s := newScreen(t, eng, Options{}, 80, 16)
	startTurn(s, "run-1", "shorten the README")
	s.send(updateMsg{u: Update{SessionID: sessID, Approval: overwriteApproval()}})
	s.wantText("? fs.write wants to write README.md", "pgup/pgdn scroll", "allow once", "esc deny")
	wantFits(t, s, 16)
	for range 3 {
		s.key("pgdown")
	}
	s.wantText("+now", "lines 9–12 of 12")
	wantFits(t, s, 16)
	s.key("y")     // the input has the keys: y is typed, not an answer
	s.key("enter") // nor is enter: a lone y is no reason to deny with either
	if len(got) != 0 || s.m.in.value() != "y" {
		t.Errorf("answers %+v, input %q; want none, y kept", got, s.m.in.value())
	}
}

// Esc on a question: an expanded box collapses first and nothing is
// answered; on the collapsed box Esc denies the call and then stops the
// turn, as the box's hint says.
func TestEscCollapsesThenDeniesAndStops(t *testing.T) {
	for _, answering := range []bool{false, true} {
		s := newScreen(t, idleEngine(), Options{}, 100, 30)
		startTurn(s, "run-1", "go")
		ask(s, "fs.write")
		if answering {
			s.key("tab")
		}
		s.wantText("esc deny and stop")
		s.key("ctrl+o")
		s.wantText("ctrl+o/esc collapse")
		s.resetCalls()
		s.key("esc")
		s.wantCalls()
		if s.m.asking == nil || s.m.asking.all {
			t.Fatalf("answering=%v: esc on an expanded box did not just collapse it", answering)
		}
		s.key("esc")
		s.wantCalls(`answer perm-1 allow=false forRun=false reason=""`, "cancel")
		if s.m.asking != nil || !s.m.canceling {
			t.Errorf("answering=%v: esc on the box left the question or did not stop the turn", answering)
		}
	}
}

// A mention completes any file name (non-ASCII, "+", "@") and the files
// the session's own calls wrote, before the listing is fetched again.
func TestTabCompletesAnyFileName(t *testing.T) {
	eng := idleEngine()
	eng.files = []string{"notes/日本語.txt", "c++/a+b.h", "pkg/@types/x.d.ts", "README.md"}
	s := newScreen(t, eng, Options{}, 100, 30)
	for _, c := range []struct{ typed, want string }{
		{"@notes/日", "@notes/日本語.txt "},
		{"@c+", "@c++/"},
		{"@c++/a", "@c++/a+b.h "},
		{"@pkg/@", "@pkg/@types/"},
	} {
		s.typeText(c.typed)
		s.key("tab")
		if v := s.m.in.value(); v != c.want {
			t.Errorf("%q + tab = %q, want %q", c.typed, v, c.want)
		}
		s.m.in.take()
	}
	// A file the model wrote in the turn still running.
	startTurn(s, "run-1", "go")
	s.events(
		ev(10, event.ToolCall{CallID: "call-w", Tool: "fs.write", Input: json.RawMessage(`{"path":"notes/今日.md","contents":"x\n"}`), RunID: "run-1"}),
		ev(11, event.ToolResult{CallID: "call-w", Tool: "fs.write", OK: true, Output: json.RawMessage(`{"path":"notes/今日.md","bytes":2}`), DurationMs: 1}),
	)
	s.typeText("@notes/今")
	s.key("tab")
	if v := s.m.in.value(); v != "@notes/今日.md " {
		t.Errorf("a file the model wrote does not complete: %q", v)
	}
}

// ↑ recalls a pasted block as it was sent: its marker, the paste whole
// behind it.
func TestHistoryRecallsAPasteAsItsMarker(t *testing.T) {
	eng := idleEngine()
	s := newScreen(t, eng, Options{}, 100, 30)
	s.typeText("why? ")
	s.send(tea.PasteMsg{Content: pasted200()})
	s.key("enter")
	endTurnFromSend(s)
	s.key("up")
	if v := s.m.in.ta.Value(); v != "why? [pasted 200 lines]" {
		t.Errorf("↑ shows %q, want the marker", v)
	}
	if v := s.m.in.value(); v != "why? "+pasted200() {
		t.Errorf("the recalled message would send %d bytes, not the paste", len(v))
	}
}

// endTurnFromSend ends the turn the last send started, so the screen is idle.
func endTurnFromSend(s *screen) {
	s.m.outbox = nil
}

// ctrl+u clears the input (↑ brings it back); ctrl+r searches the history;
// a message may start with "?"; Esc Esc on an empty input brings the last
// message back, withdrawn when it still waits.
func TestInputKeys(t *testing.T) {
	eng := idleEngine()
	s := newScreen(t, eng, Options{}, 100, 30)
	for _, msg := range []string{"fix the parser", "? why does it fail", "run the linter"} {
		s.typeText(msg)
		s.key("enter")
		endTurnFromSend(s)
	}
	s.wantCalls(`open "" fork=false`, `send "fix the parser"`, `send "? why does it fail"`, `send "run the linter"`)

	s.typeText("a draft")
	s.key("ctrl+u")
	if v := s.m.in.value(); v != "" {
		t.Fatalf("ctrl+u left %q", v)
	}
	s.key("up")
	if v := s.m.in.value(); v != "a draft" {
		t.Errorf("↑ after ctrl+u = %q", v)
	}
	s.m.in.take()

	s.key("ctrl+r")
	s.typeText("pars")
	s.wantText("history search: pars")
	if v := s.m.in.value(); v != "fix the parser" {
		t.Errorf("ctrl+r pars shows %q", v)
	}
	s.m.in.search.query = "" // any message: ctrl+r walks back from the newest
	s.key("ctrl+r")
	s.key("enter")
	if v := s.m.in.value(); v == "" || s.m.in.search != nil {
		t.Errorf("enter did not take the match: %q", v)
	}
	s.m.in.take()
	s.key("ctrl+r")
	s.typeText("zzz")
	s.wantText("(no match)")
	s.key("esc")
	if s.m.in.search != nil || s.m.in.value() != "" {
		t.Errorf("esc did not leave the search as the input was: %q", s.m.in.value())
	}

	// Idle: Esc Esc brings the last message back as a new one.
	s.resetCalls()
	s.key("esc")
	s.key("esc")
	if v := s.m.in.value(); v != "run the linter" {
		t.Errorf("esc esc = %q, want the last message", v)
	}
	s.m.in.take()
	// Another key between the two: nothing.
	s.key("esc")
	s.key("left")
	s.key("esc")
	if v := s.m.in.value(); v != "" {
		t.Errorf("esc, left, esc = %q", v)
	}
	// A queued message still waiting is withdrawn to edit.
	startTurn(s, "run-1", "go")
	s.events(ev(20, event.InputQueued{RunID: "run-1", MessageID: "msg-q", Content: "then the docs"}))
	s.m.canceling = true // the first esc already stopped the turn
	s.resetCalls()
	s.key("esc")
	s.key("esc")
	s.wantCalls("withdraw msg-q")
}

// ctrl+g: the draft goes to a file for the editor, ending with a newline
// as text files do, and what the editor left there (less that final
// newline) is the draft; the file goes.
func TestEditorRoundTrip(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	s.typeText("a draft")
	ready, ok := s.m.editDraft()().(editorReadyMsg)
	if !ok || ready.err != nil {
		t.Fatalf("editDraft: %+v", ready)
	}
	b, err := os.ReadFile(ready.path)
	if err != nil || string(b) != "a draft\n" {
		t.Fatalf("the editor's file holds %q (%v)", b, err)
	}
	// Left as it was, the draft comes back as it was.
	same, ok := s.m.editDraft()().(editorReadyMsg)
	if !ok || same.err != nil {
		t.Fatalf("editDraft: %+v", same)
	}
	s.send(readEdited(same.path, nil))
	if v := s.m.in.value(); v != "a draft" {
		t.Errorf("the draft after an editor that changed nothing = %q", v)
	}
	if err := os.WriteFile(ready.path, []byte("an edited draft\nof two lines\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.send(readEdited(ready.path, nil))
	if v := s.m.in.value(); v != "an edited draft\nof two lines" {
		t.Errorf("the draft after the editor = %q", v)
	}
	if _, err := os.Stat(ready.path); !os.IsNotExist(err) {
		t.Errorf("the draft's file stayed: %v", err)
	}
}

// At 50x12 the box keeps its answers and keys on screen (in their short
// form), with the input under it, for a command and for a long diff.
func TestApprovalKeysFitFiftyByTwelve(t *testing.T) {
	for _, tool := range []string{"process.exec", "fs.write", "overwrite"} {
		s := newScreen(t, idleEngine(), Options{}, 50, 12)
		startTurn(s, "run-1", "go")
		if tool == "overwrite" {
			s.send(updateMsg{u: Update{SessionID: sessID, Approval: overwriteApproval()}})
		} else {
			ask(s, tool)
		}
		for _, answering := range []bool{false, true} {
			if answering {
				s.key("tab")
			}
			wantFits(t, s, 12)
			want := []string{"tab answer (y/a/s/n/r)", "esc deny+stop", "› Ask anything"}
			if answering {
				want = []string{"›n deny", "r reason", "y once", "a turn", "esc deny+stop", "› paused"}
			}
			s.wantText(want...)
			if strings.Contains(s.text(), "of 0") {
				t.Errorf("%s: the box shows an empty window:\n%s", tool, s.text())
			}
		}
	}
}

// What stays in the scrollback after quitting is the transcript of the
// turns this process ran, rendered (a table as a table, no Markdown marks),
// not the log it opened with; bounded to its last lines.
func TestScrollbackIsThisProcessTranscript(t *testing.T) {
	eng := idleEngine()
	eng.sess.History = []Record{
		{Seq: 0, Event: ev(0, event.TurnStarted{RunID: "run-0", SessionID: sessID, InputMessageID: "msg-u0"})},
		{Seq: 1, Event: ev(1, event.MessageCompleted{RunID: "run-0", MessageID: "msg-u0", Role: model.RoleUser, Content: "an old question"})},
		{Seq: 2, Event: ev(2, event.TurnCompleted{RunID: "run-0", SessionID: sessID, Status: event.StatusCompleted})},
	}
	s := newScreen(t, eng, Options{}, 80, 30)
	s.seq = 2 // after the log
	startTurn(s, "run-1", "compare them")
	s.events(
		ev(10, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a1", Role: model.RoleAssistant,
			Content: "The **result**:\n\n| name | size |\n| --- | ---: |\n| a.go | 12 |\n| b.go | 3400 |\n"}),
	)
	endTurn(s, "run-1", event.StatusCompleted)
	got := ansi.Strip(s.m.Scrollback(2000))
	for _, want := range []string{"you  compare them", "The result:", "name │ size", "a.go │   12", "✓ completed"} {
		if !strings.Contains(got, want) {
			t.Errorf("the scrollback lacks %q:\n%s", want, got)
		}
	}
	for _, raw := range []string{"**", "| ---", "an old question"} {
		if strings.Contains(got, raw) {
			t.Errorf("the scrollback holds %q:\n%s", raw, got)
		}
	}
	lines := strings.Split(ansi.Strip(s.m.Scrollback(3)), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "earlier lines") {
		t.Errorf("a bounded scrollback: %q", lines)
	}
}

// A project with an AGENTS.md keeps the welcome, the note under it.
func TestWelcomeStaysWithInstructions(t *testing.T) {
	eng := idleEngine()
	eng.sess.Instructions = []string{"AGENTS.md"}
	s := newScreen(t, eng, Options{}, 100, 30)
	s.wantText("Ready.", "/help lists keys and commands", "using AGENTS.md")
	startTurn(s, "run-1", "go")
	if strings.Contains(s.text(), "Ready.") {
		t.Error("the welcome stays once the session has a turn")
	}
}

// An interrupted session shows its transcript above the offer to fork it,
// and /fork puts the request the interrupted turn was answering back in
// the input.
func TestInterruptedSessionShowsItsTranscript(t *testing.T) {
	eng := idleEngine()
	eng.openErr = errInterrupted
	eng.errSess = Session{ID: "sess-x", History: []Record{
		{Seq: 0, Event: ev(0, event.TurnStarted{RunID: "run-0", SessionID: "sess-x", InputMessageID: "msg-u0"})},
		{Seq: 1, Event: ev(1, event.MessageCompleted{RunID: "run-0", MessageID: "msg-u0", Role: model.RoleUser, Content: "the first question"})},
		{Seq: 2, Event: ev(2, event.MessageCompleted{RunID: "run-0", MessageID: "msg-a0", Role: model.RoleAssistant, Content: "the first answer"})},
		{Seq: 3, Event: ev(3, event.TurnCompleted{RunID: "run-0", SessionID: "sess-x", Status: event.StatusCompleted})},
		{Seq: 4, Event: ev(4, event.TurnStarted{RunID: "run-1", SessionID: "sess-x", InputMessageID: "msg-u1"})},
		{Seq: 5, Event: ev(5, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u1", Role: model.RoleUser, Content: "rename the loader everywhere"})},
		{Seq: 6, Event: ev(6, event.ToolCall{CallID: "call-1", Tool: "process.exec", Input: json.RawMessage(`{"argv":["make"]}`), RunID: "run-1"})},
	}}
	s := newScreen(t, eng, Options{Open: OpenRequest{ID: "sess-x"}}, 100, 30)
	s.wantText("the first answer", "you  rename the loader everywhere", "process.exec  make", "/fork continues it")
	if s.m.busy() {
		t.Error("the interrupted session's screen is busy")
	}
	eng.openErr = nil
	s.resetCalls()
	s.typeText("/fork")
	s.key("enter")
	s.wantCalls(`open "sess-x" fork=true`)
	if v := s.m.in.value(); v != "rename the loader everywhere" {
		t.Errorf("after /fork the input holds %q, want the interrupted request", v)
	}
}

// Enter pressed while the session is still opening (a prompt typed at
// launch) is not lost: the input stays, the screen says it goes once the
// session is open, and it is sent then. A failed open sends nothing.
func TestEnterWhileOpeningSendsOnceOpen(t *testing.T) {
	for _, fail := range []bool{false, true} {
		eng := idleEngine()
		if fail {
			eng.openErr = errcode.New(errcode.SessBusy, "sess-x is held by proc-1 (pid 7 on host h)")
		}
		s := &screen{t: t, m: New(t.Context(), eng, Options{Now: func() time.Time { return base }}), eng: eng, seq: -1}
		s.send(tea.WindowSizeMsg{Width: 100, Height: 30})
		open := s.m.Init() // not run yet: the session is opening
		s.typeText("read the README")
		s.key("enter")
		s.wantText(sendOnOpenFlash, "read the README")
		s.wantCalls()
		s.run(open, 0)
		if fail {
			s.wantCalls(`open "" fork=false`)
			if s.m.in.value() != "read the README" {
				t.Errorf("after a failed open the input holds %q", s.m.in.value())
			}
			continue
		}
		s.wantCalls(`open "" fork=false`, `send "read the README"`)
		if s.m.in.value() != "" {
			t.Errorf("the sent text stayed in the input: %q", s.m.in.value())
		}
		if strings.Contains(s.text(), sendOnOpenFlash) {
			t.Errorf("the flash stayed after the send:\n%s", s.text())
		}
	}
}

// Options.Prompt (harness "PROMPT") is the first message: it stands in
// the input while the session opens and is sent once it is open, as an
// enter pressed then is.
func TestPromptOptionSentOnceOpen(t *testing.T) {
	eng := idleEngine()
	s := &screen{t: t, m: New(t.Context(), eng, Options{Now: func() time.Time { return base }, Prompt: "fix the bug"}), eng: eng, seq: -1}
	s.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	open := s.m.Init()
	s.wantText(sendOnOpenFlash, "fix the bug")
	s.wantCalls()
	s.run(open, 0)
	s.wantCalls(`open "" fork=false`, `send "fix the bug"`)
	if s.m.in.value() != "" {
		t.Errorf("the sent prompt stayed in the input: %q", s.m.in.value())
	}
}

// "y" then enter, typed in the input while a question waits, is meant as
// an answer: it is neither a denial with "y" as the reason nor an
// approval (typing never answers). The text stays, and the flash says
// how to answer; a real message still denies with its words.
func TestLoneAnswerKeyIsNotADenial(t *testing.T) {
	for _, typed := range []string{"y", "Yes", "a", "s"} {
		t.Run(typed, func(t *testing.T) {
			s, answers := askedToRun(t)
			s.typeText(typed)
			s.key("enter")
			if len((*answers)) != 0 {
				t.Fatalf("replies = %+v, want none", (*answers))
			}
			if v := s.m.in.value(); v != typed {
				t.Fatalf("the input holds %q, want %q", v, typed)
			}
			if !strings.Contains(s.m.flash, "Typing never answers") {
				t.Fatalf("flash = %q", s.m.flash)
			}
			s.typeText(" please not")
			s.key("enter")
			if want := (Answer{Reason: typed + " please not"}); len((*answers)) != 1 || (*answers)[0] != want {
				t.Fatalf("replies = %+v, want [%+v]", (*answers), want)
			}
		})
	}
}

// Leaving with background jobs running says first that it ends them; the
// second ctrl+c (or /quit) leaves.
func TestQuitWithRunningJobsSaysSoFirst(t *testing.T) {
	for _, how := range []string{"ctrl+c", "/quit"} {
		t.Run(how, func(t *testing.T) {
			s := newScreen(t, idleEngine(), Options{}, 100, 30)
			s.events(ev(1, event.JobStarted{SessionID: sessID, TurnID: "turn-1", CallID: "call-1", JobID: "job-1", Argv: []string{"sleep", "600"}}))
			press := func() {
				if how == "ctrl+c" {
					s.key("ctrl+c")
					return
				}
				s.typeText("/quit")
				s.key("enter")
			}
			press()
			if s.m.quitting {
				t.Fatal("left at once with a job running")
			}
			s.wantText("1 background job running: leaving ends them")
			press()
			if !s.m.quitting {
				t.Fatal("the second press did not leave")
			}
		})
	}
}

// A slash command typed while a question waits runs (here /diff, to look
// before answering): it is not a denial with the command as the reason,
// and the question still waits. A lone n then enter denies, with no
// reason passed on.
func TestCommandAtAQuestionRuns(t *testing.T) {
	s, answers := askedToRun(t)
	s.typeText("/diff")
	s.key("enter")
	if len((*answers)) != 0 {
		t.Fatalf("/diff answered the question: %+v", (*answers))
	}
	if s.m.asking == nil {
		t.Fatal("the question no longer waits")
	}
	if s.m.in.value() != "" {
		t.Fatalf("the input holds %q after the command", s.m.in.value())
	}
	if s.m.pager == nil {
		t.Fatalf("/diff opened no view:\n%s", s.text())
	}
	s.key("esc") // out of the diff view
	if s.m.pager != nil || len((*answers)) != 0 {
		t.Fatalf("esc in the diff view: pager %v, replies %+v", s.m.pager != nil, (*answers))
	}
	s.typeText("n")
	s.key("enter")
	if want := (Answer{}); len((*answers)) != 1 || (*answers)[0] != want {
		t.Fatalf("replies = %+v, want [%+v]", (*answers), want)
	}
}

// askedToRun is a 100x30 screen whose turn asks to run a command; got
// collects the answers given.
func askedToRun(t *testing.T) (s *screen, got *[]Answer) {
	eng := idleEngine()
	got = &[]Answer{}
	eng.answered = got
	s = newScreen(t, eng, Options{}, 100, 30)
	startTurn(s, "run-1", "go")
	askExec(s)
	return s, got
}
