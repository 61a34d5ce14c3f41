package tui

import (
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

// busy is the owner's to say: a turn's events do not make the screen
// busy or idle, the state the engine reports with them does (an ending
// turn's text still waits; a queued turn started at once stays busy).
func TestBusyFollowsTheOwnersState(t *testing.T) {
	s := newScreen(t, idleEngine(), Options{}, 100, 30)
	if s.m.busy() {
		t.Fatal("busy on a session just opened")
	}
	update := func(st State, evs ...event.Event) {
		var recs []Record
		for _, e := range evs {
			s.seq++
			recs = append(recs, Record{Seq: s.seq, Event: e})
		}
		s.send(updateMsg{u: Update{SessionID: sessID, Events: recs, State: st}})
	}
	update(StateAdmitting)
	if !s.m.busy() {
		t.Error("not busy while the owner admits a turn whose events have not come")
	}
	update(StateRunning, ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, InputMessageID: "msg-1"}))
	update(StateEnding, ev(2, event.TurnCompleted{RunID: "run-1", SessionID: sessID, Status: event.StatusCompleted}))
	if !s.m.busy() {
		t.Error("not busy while the owner says the turn is still ending")
	}
	update("") // an engine that says nothing changes nothing
	if !s.m.busy() {
		t.Error("an update without a state made the screen idle")
	}
	update(StateIdle)
	if s.m.busy() {
		t.Error("busy once the owner is idle")
	}
}
