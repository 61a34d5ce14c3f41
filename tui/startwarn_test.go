package tui

import (
	"context"
	"strings"
	"testing"
)

// checkingEngine is a fakeEngine that warns of what will stop the
// workspace.
type checkingEngine struct {
	*fakeEngine
	id      string // the session the warning is for ("": the open one)
	warning string
}

func (c *checkingEngine) StartWarning(context.Context) (string, string, error) {
	c.record("start warning")
	if c.id != "" {
		return c.id, c.warning, nil
	}
	return c.fakeEngine.sess.ID, c.warning, nil
}

// An un-ignored .env is named in a banner as the session opens, with the
// flag that leaves it out, before any tool call fails on it; a warning
// made for another session is not shown.
func TestStartWarningIsABanner(t *testing.T) {
	const warning = "the project holds credential-like files that are never copied into the sandbox: .env; quit and start again with `harness --exclude .env` to leave them out"
	eng := &checkingEngine{fakeEngine: idleEngine(), warning: warning}
	s := newScreen(t, eng.fakeEngine, Options{}, 160, 30)
	s.m.eng = eng
	s.run(s.m.open(OpenRequest{}), 0)
	s.wantText("▲ the project holds credential-like files", ".env", "--exclude .env")

	eng.id = "sess-other"
	s.run(s.m.open(OpenRequest{}), 0)
	if strings.Contains(s.text(), "credential-like") {
		t.Errorf("a warning for another session is shown:\n%s", s.text())
	}
}
