package tui

import (
	"testing"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
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

// A reopened session's log is folded into the transcript and not kept
// besides: a long session's log is many MiB.
func TestOpenedHistoryIsNotKept(t *testing.T) {
	eng := idleEngine()
	eng.sess.History = []Record{
		{Seq: 0, Event: ev(1, event.TurnStarted{RunID: "run-1", SessionID: sessID, TurnID: "turn-1", InputMessageID: "msg-u"})},
		{Seq: 1, Event: ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "what is in the box"})},
		{Seq: 2, Event: ev(3, event.TurnCompleted{RunID: "run-1", SessionID: sessID, TurnID: "turn-1", Status: event.StatusCompleted})},
	}
	s := newScreen(t, eng, Options{}, 100, 30)
	s.wantText("what is in the box")
	if s.m.sess == nil || s.m.sess.History != nil {
		t.Fatalf("the open session keeps its history: %+v", s.m.sess)
	}
}
