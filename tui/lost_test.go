package tui

import (
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

// A session another process took over is said so on screen as soon as the
// engine reports it, and the screen sends it nothing more; /new still
// works.
func TestLostSessionIsShownAndNotSentTo(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	s.resetCalls()
	s.send(updateMsg{u: Update{SessionID: s.m.SessionID(), Lost: "session taken over by pid 7 on host h"}})
	s.wantText(string(errcode.SessOwnershipLost), "taken over by pid 7 on host h")
	s.typeText("are you there?")
	s.key("enter")
	s.wantCalls()
	s.wantText("Another process took this session over")
	if s.m.in.value() != "are you there?" {
		t.Errorf("the refused draft was not kept: %q", s.m.in.value())
	}
	s.key("ctrl+c") // clears the draft
	s.typeText("/new")
	s.key("enter")
	s.wantCalls(`open "" fork=false`)
}
