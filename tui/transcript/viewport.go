package transcript

// Viewport is a window onto a transcript. When following, the window's
// bottom is the transcript's last line; otherwise its top is an anchor (a
// block and a line in it) that stays put while new blocks arrive below.
// Every operation renders only the blocks it walks over.
type Viewport struct {
	follow   bool
	top      int // anchor block when not following
	line     int // anchor line inside it
	selected int // selected expandable block, -1 none
}

// NewViewport returns a viewport that follows the bottom.
func NewViewport() *Viewport { return &Viewport{follow: true, selected: -1} }

// Following reports whether the window sticks to the bottom.
func (v *Viewport) Following() bool { return v.follow }

// Selected is the selected block, -1 when none.
func (v *Viewport) Selected() int { return v.selected }

// Reset returns to following with nothing selected (a new session).
func (v *Viewport) Reset() { *v = Viewport{follow: true, selected: -1} }

func (v *Viewport) linesOf(t *Transcript, c *Ctx, i int) []string {
	return t.blocks[i].lines(c, i == v.selected)
}

// Render returns exactly height lines (blank-padded at the top when the
// transcript is shorter).
func (v *Viewport) Render(t *Transcript, c *Ctx, height int) []string {
	if height <= 0 {
		return nil
	}
	if !v.follow {
		if out, ok := v.renderFrom(t, c, height); ok {
			return out
		}
		v.follow = true
	}
	out, _, _ := v.renderBottom(t, c, height)
	return out
}

// renderBottom fills the window from the last block up and returns the
// anchor of its first line.
func (v *Viewport) renderBottom(t *Transcript, c *Ctx, height int) (out []string, top, line int) {
	var chunks [][]string
	total := 0
	i := len(t.blocks) - 1
	for ; i >= 0 && total < height; i-- {
		ls := v.linesOf(t, c, i)
		chunks = append(chunks, ls)
		total += len(ls)
	}
	out = make([]string, 0, height)
	for n := total; n < height; n++ {
		out = append(out, "")
	}
	skip := max(total-height, 0)
	top, line = i+1, skip
	for k := len(chunks) - 1; k >= 0; k-- {
		ls := chunks[k]
		if skip >= len(ls) {
			skip -= len(ls)
			continue
		}
		out = append(out, ls[skip:]...)
		skip = 0
	}
	if len(t.blocks) == 0 {
		top, line = 0, 0
	}
	return out, top, line
}

// renderFrom fills the window from the anchor down; ok is false when the
// blocks below the anchor no longer fill it (the caller then follows).
func (v *Viewport) renderFrom(t *Transcript, c *Ctx, height int) ([]string, bool) {
	if v.top >= len(t.blocks) {
		return nil, false
	}
	out := make([]string, 0, height)
	skip := v.line
	for i := v.top; i < len(t.blocks) && len(out) < height; i++ {
		ls := v.linesOf(t, c, i)
		if skip >= len(ls) {
			skip -= len(ls)
			continue
		}
		ls = ls[skip:]
		skip = 0
		if room := height - len(out); len(ls) > room {
			ls = ls[:room]
		}
		out = append(out, ls...)
	}
	return out, len(out) == height
}

// anchor returns the current top line's block and offset.
func (v *Viewport) anchor(t *Transcript, c *Ctx, height int) (int, int) {
	if v.follow {
		_, top, line := v.renderBottom(t, c, height)
		return top, line
	}
	return v.top, v.line
}

// ScrollUp moves the window n lines towards the start.
func (v *Viewport) ScrollUp(t *Transcript, c *Ctx, height, n int) {
	if len(t.blocks) == 0 {
		return
	}
	top, line := v.anchor(t, c, height)
	top = min(top, len(t.blocks)-1)
	line -= n
	for line < 0 && top > 0 {
		top--
		line += len(v.linesOf(t, c, top))
	}
	v.top, v.line, v.follow = top, max(line, 0), false
	v.settle(t, c, height)
}

// ScrollDown moves the window n lines towards the end, following again
// when it reaches the bottom.
func (v *Viewport) ScrollDown(t *Transcript, c *Ctx, height, n int) {
	if v.follow || len(t.blocks) == 0 {
		return
	}
	top, line := v.top, v.line+n
	for top < len(t.blocks)-1 {
		l := len(v.linesOf(t, c, top))
		if line < l {
			break
		}
		line -= l
		top++
	}
	v.top, v.line = top, line
	v.settle(t, c, height)
}

// Top moves the window to the first line; Bottom follows the end again.
func (v *Viewport) Top() { v.top, v.line, v.follow = 0, 0, false }

// Bottom follows the end.
func (v *Viewport) Bottom() { v.follow = true }

// settle follows again when the lines from the anchor down no longer fill
// the window.
func (v *Viewport) settle(t *Transcript, c *Ctx, height int) {
	if _, ok := v.renderFrom(t, c, height); !ok {
		v.follow = true
	}
}

// Select moves the selection to the previous (dir < 0) or next (dir > 0)
// expandable block and scrolls it into view. With nothing selected, the
// previous one is the last block.
func (v *Viewport) Select(t *Transcript, c *Ctx, height, dir int) {
	i := v.selected
	if i < 0 || i >= len(t.blocks) {
		i = len(t.blocks)
	}
	for {
		i += dir
		if i < 0 || i >= len(t.blocks) {
			if dir > 0 {
				v.selected = -1 // past the last card: back to none
			}
			return
		}
		if t.blocks[i].b.expandable() {
			v.selected = i
			v.reveal(t, c, height, i)
			return
		}
	}
}

// Unselect clears the selection.
func (v *Viewport) Unselect() { v.selected = -1 }

// Toggle expands or collapses the selected block, or the last expandable
// one when none is selected, and returns whether something changed.
func (v *Viewport) Toggle(t *Transcript, c *Ctx, height int) bool {
	i := v.selected
	if i < 0 {
		for j := len(t.blocks) - 1; j >= 0; j-- {
			if t.blocks[j].b.expandable() {
				i = j
				break
			}
		}
	}
	if i < 0 || i >= len(t.blocks) {
		return false
	}
	t.blocks[i].b.toggle()
	t.touch(i)
	v.reveal(t, c, height, i)
	return true
}

// reveal scrolls so that block i's first line is visible.
func (v *Viewport) reveal(t *Transcript, c *Ctx, height, i int) {
	top, line := v.anchor(t, c, height)
	if i < top || (i == top && line > 0) {
		v.top, v.line, v.follow = i, 0, false
		v.settle(t, c, height)
		return
	}
	// Below the window? Count the lines from the anchor to block i.
	n := -line
	for j := top; j < i; j++ {
		n += len(v.linesOf(t, c, j))
		if n >= height {
			v.top, v.line, v.follow = i, 0, false
			v.settle(t, c, height)
			return
		}
	}
}

// Lines renders every block from block from on, as the transcript would
// show them unselected: what a terminal's scrollback keeps once the
// screen has gone.
func (t *Transcript) Lines(c *Ctx, from int) []string {
	var out []string
	for i := max(from, 0); i < len(t.blocks); i++ {
		ls := t.blocks[i].lines(c, false)
		if len(out) == 0 && len(ls) > 0 && ls[0] == "" && t.blocks[i].gap {
			ls = ls[1:] // no blank line first
		}
		out = append(out, ls...)
	}
	return out
}
