package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// listScript is n rounds calling fs.list (on a new path each round when
// vary), then an answer.
func listScript(n int, vary bool) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		path := "."
		if vary {
			path = fmt.Sprintf("d%d", i)
		}
		fmt.Fprintf(&b, `{"toolCalls":[{"id":"c%d","name":"fs.list","arguments":{"path":%q}}]},`, i, path)
	}
	b.WriteString(`{"content":"done"}]`)
	return b.String()
}

func turnCompleted(t *testing.T, evs []event.Event) event.TurnCompleted {
	t.Helper()
	for _, e := range evs {
		if d, ok := e.Data.(event.TurnCompleted); ok {
			return d
		}
	}
	t.Fatal("no turn.completed")
	return event.TurnCompleted{}
}

// harness exec ends a runaway turn at --max-rounds with RUNTIME_ROUND_LIMIT
// (exit 1), and the same call repeated with the same result with
// RUNTIME_LOOP_DETECTED; each says how to go on, and --resume goes on.
func TestExecRunawayTurns(t *testing.T) {
	t.Run("round limit", func(t *testing.T) {
		u := newUser(t)
		s := u.script(listScript(3, true))
		r := u.run("", "exec", "--json", "--workspace", "local", "--max-rounds", "2", "--fake-model", s, "list")
		if r.code != 1 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		tc := turnCompleted(t, r.events)
		if tc.ErrorCode != string(errcode.RuntimeRoundLimit) || tc.ModelRequests != 2 {
			t.Fatalf("turn.completed = %+v", tc)
		}
		// Text mode says how to go on, and going on works (the script's
		// third round, then its answer).
		u2 := newUser(t)
		r = u2.run("", "exec", "--workspace", "local", "--max-rounds", "2", "--fake-model", u2.script(listScript(3, true)), "list")
		if r.code != 1 || !strings.Contains(r.stderr, "RUNTIME_ROUND_LIMIT") || !strings.Contains(r.stderr, "--resume") {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		id := tc.SessionID
		r = u.run("", "exec", "--json", "--workspace", "local", "--resume", id, "--fake-model", s, "continue")
		if r.code != 0 {
			t.Fatalf("resume: exit %d; stderr:\n%s", r.code, r.stderr)
		}
	})
	t.Run("loop guard", func(t *testing.T) {
		u := newUser(t)
		r := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", u.script(listScript(8, false)), "list")
		if r.code != 1 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		if tc := turnCompleted(t, r.events); tc.ErrorCode != string(errcode.RuntimeLoopDetected) || tc.ToolCalls != 5 {
			t.Fatalf("turn.completed = %+v", tc)
		}
	})
	t.Run("bad flag", func(t *testing.T) {
		u := newUser(t)
		if r := u.run("", "exec", "--workspace", "local", "--max-rounds", "-1", "--fake-model", u.script(`[]`), "x"); r.code != 2 {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
	})
}
