package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/harness-dev/harness/internal/event"
)

// A hint goes once it stops being true: "Input cleared" and "Draft
// cleared" once the input holds text again (a paste types none of the
// keys that clear a hint).
func TestClearedInputHintGoesWhenTheInputFills(t *testing.T) {
	for _, c := range []struct{ key, hint string }{
		{"ctrl+u", "Input cleared"},
		{"ctrl+c", "Draft cleared"},
	} {
		t.Run(c.key, func(t *testing.T) {
			s := newScreen(t, idleEngine(), Options{}, 100, 30)
			s.typeText("a draft")
			s.key(c.key)
			s.wantText(c.hint)
			s.send(tea.PasteMsg{Content: "pasted text"})
			if txt := s.text(); !strings.Contains(txt, "pasted text") || strings.Contains(txt, c.hint) {
				t.Errorf("after a paste the hint %q stays:\n%s", c.hint, txt)
			}
		})
	}
}

// "Compaction asked" goes when the compaction begins, and when the turn
// it was asked in ends.
func TestCompactionAskedHintGoes(t *testing.T) {
	const hint = "Compaction asked"
	ask := func(s *screen) {
		s.typeText("/compact")
		s.key("enter")
		s.wantText(hint)
	}
	t.Run("compaction begins", func(t *testing.T) {
		s := newScreen(t, idleEngine(), Options{}, 100, 30)
		startTurn(s, "run-1", "go")
		ask(s)
		s.events(ev(10, event.ContextAccounted{RunID: "run-1", SessionID: sessID, RequestID: "req-sum", OccupancyTokens: 9000,
			WindowTokens: 128000, SummaryRequest: true}))
		if txt := s.text(); strings.Contains(txt, hint) {
			t.Errorf("the compaction began and the hint stays:\n%s", txt)
		}
	})
	t.Run("turn ends", func(t *testing.T) {
		s := newScreen(t, idleEngine(), Options{}, 100, 30)
		startTurn(s, "run-1", "go")
		ask(s)
		endTurn(s, "run-1", event.StatusCompleted)
		if txt := s.text(); strings.Contains(txt, hint) {
			t.Errorf("the turn ended and the hint stays:\n%s", txt)
		}
	})
}
