package tools

import (
	"testing"
	"time"
)

// process.exec's call ends its own timeout plus ExecGrace after it starts;
// git.diff gets DiffDeadline and the other tools CallDeadline.
func TestCallDeadlineRule(t *testing.T) {
	for _, c := range []struct {
		in   any
		want time.Duration
	}{
		{ExecInput{TimeoutMs: 1500}, 1500*time.Millisecond + ExecGrace},
		{ExecInput{TimeoutMs: MaxTimeoutMs}, 10*time.Minute + ExecGrace},
		{DiffInput{}, DiffDeadline},
		{ReadInput{Path: "a"}, CallDeadline},
	} {
		if got := callDeadline("", c.in); got != c.want {
			t.Errorf("callDeadline(%T) = %v, want %v", c.in, got, c.want)
		}
	}
}
