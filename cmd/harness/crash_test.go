package main

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// Kill -9 mid-turn at random points across the model and tool phases: the
// store opens, resume either continues from the last terminal checkpoint or
// refuses with RUNTIME_CHECKPOINT_INTERRUPTED, --fork always works, and no
// tool call of the interrupted turn runs again.
func TestKillMidTurn(t *testing.T) {
	rounds := 30
	if testing.Short() {
		rounds = 5
	}
	rng := rand.New(rand.NewPCG(uint64(rounds), 7))
	u := newUser(t)
	u.write("a.txt", "alpha\n")
	u.write("b.txt", "beta\n")
	first := u.script(`[{"toolCalls":[{"id":"t1","name":"fs.read","arguments":{"path":"a.txt"}}]},{"content":"first turn done"}]`)
	r := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", first, "turn one")
	if r.code != 0 {
		t.Fatalf("first turn: exit %d\n%s", r.code, r.stderr)
	}
	base := sessionOf(t, r.events)
	// The interrupted turn: three tool rounds, then an answer.
	second := u.script(`[
	  {"toolCalls":[{"id":"k1","name":"fs.read","arguments":{"path":"b.txt"}}],"deltas":[],"delayMs":5},
	  {"content":"looking","deltas":["loo","king"],"toolCalls":[{"id":"k2","name":"fs.list","arguments":{"path":"."}}],"delayBetweenMs":3},
	  {"toolCalls":[{"id":"k3","name":"fs.read","arguments":{"path":"a.txt"}}]},
	  {"content":"second turn done","deltas":["second ","turn ","done"],"delayBetweenMs":2}]`)
	// Count the lines a whole run prints, to pick kill points inside it.
	full := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", second, "--resume", base, "turn two")
	if full.code != 0 {
		t.Fatalf("uninterrupted second turn: exit %d\n%s", full.code, full.stderr)
	}
	total := len(full.events)
	outcomes := map[string]int{}
	for round := range rounds {
		// A fresh copy of turn one for every round.
		r := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", first, "turn one")
		id := sessionOf(t, r.events)
		killAt := 1 + rng.IntN(total-1)
		l := u.start("exec", "--json", "--workspace", "local", "--fake-model", second, "--resume", id, "turn two")
		l.waitLines(killAt)
		l.kill9()
		l.wait()

		if ls := u.run("", "sessions"); ls.code != 0 || !strings.Contains(ls.stdout, id) {
			t.Fatalf("round %d: the store does not open cleanly: %s", round, ls.stderr)
		}
		// The killed holder left its lease: --take-over takes it as a
		// plain open does (discard then finds no kept work), not refused
		// for the turn the dead process left unfinished.
		plain, taken := u.run("", "discard", id), u.run("", "discard", id, "--take-over")
		if taken.code != plain.code || !strings.Contains(taken.stderr, string(errcode.WorkspaceNotFound)) {
			t.Fatalf("round %d (kill at line %d): discard --take-over exit %d (plain: %d)\n%s", round, killAt, taken.code, plain.code, taken.stderr)
		}
		cont := u.script(`[{"content":"continued"}]`)
		res := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", cont, "--resume", id, "go on")
		switch {
		case res.code == 0:
			outcomes["continued"]++
		case strings.Contains(res.stderr, string(errcode.RuntimeCheckpointInterrupted)):
			outcomes["refused"]++
		default:
			t.Fatalf("round %d (kill at line %d): resume exit %d\n%s", round, killAt, res.code, res.stderr)
		}
		fork := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", cont, "--resume", id, "--fork", "go on")
		if fork.code != 0 {
			t.Fatalf("round %d (kill at line %d): fork exit %d\n%s", round, killAt, fork.code, fork.stderr)
		}
		for _, e := range fork.events {
			if d, ok := e.Data.(event.ToolCall); ok {
				t.Fatalf("round %d: the fork ran a tool call again: %+v", round, d)
			}
		}
		if res.code != 0 {
			// The fork's first request has turn one but nothing of the
			// interrupted turn two.
			req := u.run("", "request", sessionOf(t, fork.events))
			if !strings.Contains(req.stdout, "turn one") || strings.Contains(req.stdout, "turn two") {
				t.Fatalf("round %d: fork request:\n%s", round, req.stdout)
			}
		}
	}
	t.Logf("outcomes over %d kills: %v", rounds, outcomes)
	if outcomes["refused"] == 0 {
		t.Error("no kill landed inside the turn")
	}
}
