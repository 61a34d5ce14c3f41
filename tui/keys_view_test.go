package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The goldens of the input's states: completion, questions, flashes. (The
// screens of the transcript are in view_test.go.)

// The matches of a tab listed above the input, more than fit.
func TestViewCompletion(t *testing.T) {
	var files []string
	for _, n := range []string{"app", "cli", "config", "doctor", "events", "exec", "flags", "inspect", "main", "model", "provider", "quirks", "readonly", "resume", "sessions", "tui", "version", "window"} {
		files = append(files, "cmd/harness/"+n+".go", "cmd/harness/"+n+"_test.go")
	}
	files = append(files, "cmd/harness/testdata/tui/first.json", "README.md")
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		eng := idleEngine()
		eng.files = files
		s := newScreen(t, eng, Options{}, w, h)
		s.typeText("why does @cmd/h")
		s.key("tab") // the one directory
		s.key("tab") // what is in it
		s.wantText("› why does @cmd/harness/", "37 paths match @cmd/harness/", "testdata/", "more")
		return s
	})
}

// The write approval of an overwrite, collapsed: the head of both sides.
func TestViewApprovalOverwrite(t *testing.T) {
	eachWidth(t, func(t *testing.T, w, h int) *screen {
		s := newScreen(t, idleEngine(), Options{}, w, h)
		startTurn(s, "run-1", "shorten the README")
		s.send(updateMsg{u: Update{SessionID: sessID, Approval: overwriteApproval()}})
		s.wantText("+3 −140", "more removed lines · ctrl+o shows all", "+# Short", "+now")
		return s
	})
}

// askingScreen is a turn waiting on a process.exec question.
func askingScreen(t *testing.T, w, h int) *screen {
	s := newScreen(t, idleEngine(), Options{}, w, h)
	startTurn(s, "run-1", "clean up the build")
	s.send(updateMsg{u: Update{SessionID: sessID, Approval: &Approval{PermissionID: "perm-1", CallID: "call-1", Tool: "process.exec",
		Input: json.RawMessage(`{"argv":["rm","-rf","build","dist/cache dir"]}`)}}})
	return s
}

// The approval box in each state: the input has the keys and a draft
// (enter would deny with it, tab completes it); the box has the keys (the
// input paused, the highlight on deny); the input takes a reason.
func TestViewApprovalStates(t *testing.T) {
	t.Run("draft", func(t *testing.T) {
		eachWidth(t, func(t *testing.T, w, h int) *screen {
			s := askingScreen(t, w, h)
			s.typeText("wait, why dist?")
			s.wantText("rm -rf build 'dist/cache dir'", "› wait, why dist?", "enter deny, telling the model what you typed", "tab completes the input")
			return s
		})
	})
	t.Run("box", func(t *testing.T) {
		eachWidth(t, func(t *testing.T, w, h int) *screen {
			s := askingScreen(t, w, h)
			s.key("tab")
			s.wantText("› n deny", "y/a/s/n/r answer", "back to the input", "paused while the question has the keys")
			if s.m.View().Cursor != nil {
				t.Error("the paused input shows a cursor")
			}
			return s
		})
	})
	t.Run("reason", func(t *testing.T) {
		eachWidth(t, func(t *testing.T, w, h int) *screen {
			s := askingScreen(t, w, h)
			s.key("tab")
			s.key("r")
			s.wantText("type the reason the model gets", "enter deny with it", "esc deny without one")
			return s
		})
	})
}

// The flashes over the input wrap at 80 columns instead of being cut.
func TestViewFlashes(t *testing.T) {
	t.Run("draft cleared", func(t *testing.T) {
		eachWidth(t, func(t *testing.T, w, h int) *screen {
			s := newScreen(t, idleEngine(), Options{}, w, h)
			s.typeText("half a thought")
			s.key("ctrl+c")
			s.wantText("Draft cleared (↑ brings it back) · ctrl+c again quits.")
			return s
		})
	})
	t.Run("unknown command", func(t *testing.T) {
		eachWidth(t, func(t *testing.T, w, h int) *screen {
			s := newScreen(t, idleEngine(), Options{}, w, h)
			s.typeText("/frobnicate the parser")
			s.key("enter")
			s.wantText("Unknown command /frobnicate", "as a message).")
			return s
		})
	})
	t.Run("question waiting", func(t *testing.T) {
		eachWidth(t, func(t *testing.T, w, h int) *screen {
			s := askingScreen(t, w, h)
			s.key("enter")
			s.wantText("A question is waiting", "esc denies and stops the turn.")
			return s
		})
	})
}

// Many matches: the list keeps to its rows, and the names shown plus the
// "… N more" count all of them.
func TestCompletionOfManyPaths(t *testing.T) {
	var files []string
	for i := range 300 {
		files = append(files, "gen/file"+itoa(i)+".go")
	}
	eng := idleEngine()
	eng.files = files
	s := newScreen(t, eng, Options{}, 100, 40)
	s.typeText("@gen/")
	s.key("tab")
	lines := s.m.completionLines(100)
	if len(lines) != 1+maxCandidateLines {
		t.Fatalf("%d lines, want %d: %q", len(lines), 1+maxCandidateLines, lines)
	}
	shown := 0
	for _, l := range lines[1 : len(lines)-1] {
		shown += strings.Count(l, ".go")
	}
	var more int
	if _, err := fmt.Sscanf(strings.TrimSpace(ansi.Strip(lines[len(lines)-1])), "… %d more", &more); err != nil || shown+more != 300 || shown == 0 {
		t.Fatalf("shown %d, %q: want the rest counted", shown, ansi.Strip(lines[len(lines)-1]))
	}
	if again := s.m.completionLines(100); &again[0] != &lines[0] {
		t.Error("the same frame's list was built again")
	}
}
