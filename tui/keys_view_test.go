package tui

import (
	"testing"
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
