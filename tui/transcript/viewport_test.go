package transcript

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// numbered builds n finished turns (user, answer, end): 3n blocks whose
// text says where they are.
func numbered(n int) *Transcript {
	tr := New()
	i := 0
	for k := range n {
		run := fmt.Sprintf("run-%d", k)
		i++
		tr.Apply(ev(i, event.TurnStarted{RunID: run, InputMessageID: fmt.Sprintf("msg-u%d", k)}))
		i++
		tr.Apply(ev(i, event.MessageCompleted{RunID: run, MessageID: fmt.Sprintf("msg-u%d", k), Role: model.RoleUser, Content: fmt.Sprintf("question %d", k)}))
		i++
		tr.Apply(ev(i, event.MessageCompleted{RunID: run, MessageID: fmt.Sprintf("msg-a%d", k), Role: model.RoleAssistant, Content: fmt.Sprintf("answer %d", k)}))
		i++
		tr.Apply(ev(i, event.TurnCompleted{RunID: run, Status: event.StatusCompleted, Usage: usage}))
	}
	return tr
}

func rendered(t *Transcript) int {
	n := 0
	for _, e := range t.blocks {
		if e.cLines != nil {
			n++
		}
	}
	return n
}

// Following the bottom of a 10,000-block transcript renders only the blocks
// on screen.
func TestRendersOnlyVisibleBlocks(t *testing.T) {
	tr := numbered(3334) // 10,002 blocks
	vp := NewViewport()
	c := ctxAt(100)
	out := vp.Render(tr, c, 30)
	if len(out) != 30 {
		t.Fatalf("got %d lines, want 30", len(out))
	}
	if n := rendered(tr); n > 20 {
		t.Errorf("%d blocks rendered for a 30-line window, want only the visible ones", n)
	}
	if got := plain(out[len(out)-3:]); !strings.Contains(got, "answer 3333") {
		t.Errorf("bottom of the window:\n%s", got)
	}
	// Scrolling to the top and back renders what it walks, no more.
	vp.Top()
	if got := plain(vp.Render(tr, c, 30)); !strings.Contains(got, "question 0") {
		t.Errorf("top of the window:\n%s", got)
	}
	if n := rendered(tr); n > 40 {
		t.Errorf("%d blocks rendered after viewing both ends", n)
	}
}

// A finished block is rendered once per width: the second frame reuses it.
func TestCacheByWidth(t *testing.T) {
	tr := numbered(2)
	c := ctxAt(80)
	first := tr.blocks[1].lines(c, false)
	again := tr.blocks[1].lines(c, false)
	if &first[0] != &again[0] {
		t.Error("the same width rendered the block again")
	}
	wide := tr.blocks[1].lines(ctxAt(120), false)
	if &first[0] == &wide[0] {
		t.Error("another width reused the cached lines")
	}
	tr.Invalidate()
	if fresh := tr.blocks[1].lines(ctxAt(120), false); &fresh[0] == &wide[0] {
		t.Error("Invalidate kept the cache")
	}
}

func TestScrollAnchorsAndFollows(t *testing.T) {
	tr := numbered(20) // 60 blocks
	vp := NewViewport()
	c := ctxAt(80)
	const h = 10
	bottom := plain(vp.Render(tr, c, h))
	vp.ScrollUp(tr, c, h, 15)
	if vp.Following() {
		t.Fatal("still following after scrolling up")
	}
	up := plain(vp.Render(tr, c, h))
	if up == bottom {
		t.Fatal("scrolling up did not move the window")
	}
	// New blocks below do not move an anchored window.
	tr.Apply(ev(9999, event.MessageCompleted{RunID: "x", MessageID: "m-new", Role: model.RoleUser, Content: "late arrival"}))
	if got := plain(vp.Render(tr, c, h)); got != up {
		t.Errorf("the anchored window moved when a block arrived:\n%s\nwant\n%s", got, up)
	}
	// Scrolling down past the end follows again and shows the new block.
	vp.ScrollDown(tr, c, h, 1000)
	if !vp.Following() {
		t.Fatal("not following after scrolling to the end")
	}
	if got := plain(vp.Render(tr, c, h)); !strings.Contains(got, "late arrival") {
		t.Errorf("bottom after following:\n%s", got)
	}
	// Scrolling up line by line is exact: one line up shifts by one.
	vp.ScrollUp(tr, c, h, 1)
	one := vp.Render(tr, c, h)
	vp.ScrollUp(tr, c, h, 1)
	two := vp.Render(tr, c, h)
	if plain(two[1:]) != plain(one[:h-1]) {
		t.Errorf("one line up is not a one-line shift:\n%s\n--\n%s", plain(one), plain(two))
	}
}

func TestSelectAndToggle(t *testing.T) {
	tr := mustReplay(t, fixture)
	vp := NewViewport()
	c := ctxAt(100)
	const h = 12
	// Nothing selected: ctrl+o toggles the last card (the compaction marker).
	if !vp.Toggle(tr, c, h) {
		t.Fatal("toggle found no card")
	}
	if got := plain(vp.Render(tr, c, 200)); !strings.Contains(got, "main.go now declares and parses it") {
		t.Errorf("the compaction summary is not shown after toggling:\n%s", got)
	}
	// Select walks back through the cards, scrolling each into view, up
	// to the first successful fs.read.
	var card *toolCard
	for range 20 {
		vp.Select(tr, c, h, -1)
		sel := vp.Selected()
		tc, ok := tr.blocks[sel].b.(*toolCard)
		if !ok {
			continue
		}
		if got := plain(vp.Render(tr, c, h)); !strings.Contains(got, "▶ "+tc.tool+"  "+tc.subject[:min(len(tc.subject), 10)]) {
			t.Fatalf("the selected card %s %s is not on screen:\n%s", tc.tool, tc.subject, got)
		}
		if tc.tool == "fs.read" && tc.status == statusDone {
			card = tc
			break
		}
	}
	if card == nil {
		t.Fatal("no fs.read card selected")
	}
	sel := vp.Selected()
	before := len(tr.blocks[sel].lines(c, true))
	vp.Toggle(tr, c, h)
	if after := len(tr.blocks[sel].lines(c, true)); after <= before {
		t.Errorf("expanding %s: %d lines → %d", card.subject, before, after)
	}
	vp.Unselect()
	if vp.Selected() != -1 {
		t.Error("Unselect kept a selection")
	}
}

func TestEmptyAndShortTranscripts(t *testing.T) {
	vp := NewViewport()
	if got := vp.Render(New(), ctxAt(80), 5); len(got) != 5 {
		t.Errorf("empty transcript: %d lines, want 5 blank", len(got))
	}
	vp.ScrollUp(New(), ctxAt(80), 5, 3)
	tr := numbered(1)
	got := vp.Render(tr, ctxAt(80), 20)
	if len(got) != 20 || got[0] != "" || !strings.Contains(plain(got), "question 0") {
		t.Errorf("short transcript is not bottom-aligned:\n%s", plain(got))
	}
}
