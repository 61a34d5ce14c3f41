package main

import (
	"strings"
	"testing"
)

// In an 80-column terminal a table whose cells do not fit wraps them on
// screen and in the scrollback left after /quit: every word is there,
// nothing is cut with "…".
func TestTUITableWrapsAtEightyColumns(t *testing.T) {
	u := newUser(t)
	script := u.script(`[{"content": "| check | result |\n| --- | --- |\n| vet | clean: no findings in any of the eleven packages that were looked at today |\n| race | two data races in the store's lease renewal, both in the same goroutine handoff |\n\nThat is all."}]`)
	tm := newTerminal(t, u)
	tm.tmux("resize-window", "-t", "e2e", "-x", "80")
	tm.line(harnessCmd(u, "--workspace", "local", "--fake-model", script))
	tm.waitFor("Ready.")
	tm.line("how did the checks go")
	s := tm.waitFor("That is all.", "✓ completed")
	words := []string{"clean:", "eleven", "today", "renewal", "goroutine", "handoff"}
	check := func(where, text string) {
		t.Helper()
		if strings.Contains(text, "…") {
			t.Errorf("the %s holds a cut cell:\n%s", where, text)
		}
		for _, w := range words {
			if !strings.Contains(text, w) {
				t.Errorf("the %s lacks %q:\n%s", where, w, text)
			}
		}
	}
	check("screen", s)
	tm.line("/quit")
	tm.waitUntil("the resume line and the prompt", func(s string) bool {
		return resumeLine.MatchString(s) && strings.HasSuffix(strings.TrimRight(s, "\n "), strings.TrimSpace(prompt))
	})
	check("scrollback", tm.scrollback())
}
