package runtime

import (
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

// The owner's whole rule, one row per state and one column per command.
// The test fails when a state or a command is added without its cells.
func TestDecideTable(t *testing.T) {
	wait, start, steer, queue := decision{act: actWait}, decision{act: actStart}, decision{act: actSteer}, decision{act: actQueue}
	compact, apply, next := decision{act: actCompact}, decision{act: actApply}, decision{act: actNextRequest}
	invalid, exists := refuse(errcode.RuntimeInvalidInput), refuse(errcode.RuntimeRunExists)
	table := map[SessionState]map[command]decision{
		StateIdle: {
			cmdSend: start, cmdQueue: start, cmdStart: start, cmdCompact: start,
			cmdWithdraw: apply, cmdSetSettings: apply, cmdChangeSettings: apply, cmdAnswer: apply,
		},
		StateAdmitting: {
			cmdSend: wait, cmdQueue: wait, cmdStart: invalid, cmdCompact: wait,
			cmdWithdraw: wait, cmdSetSettings: wait, cmdChangeSettings: exists, cmdAnswer: apply,
		},
		StateRunning: {
			cmdSend: steer, cmdQueue: queue, cmdStart: invalid, cmdCompact: compact,
			cmdWithdraw: apply, cmdSetSettings: next, cmdChangeSettings: exists, cmdAnswer: apply,
		},
		StateEnding: {
			cmdSend: wait, cmdQueue: wait, cmdStart: invalid, cmdCompact: wait,
			cmdWithdraw: wait, cmdSetSettings: wait, cmdChangeSettings: exists, cmdAnswer: apply,
		},
		StateClosed: {
			cmdSend: invalid, cmdQueue: invalid, cmdStart: invalid, cmdCompact: invalid,
			cmdWithdraw: invalid, cmdSetSettings: invalid, cmdChangeSettings: invalid, cmdAnswer: invalid,
		},
	}
	for st := range SessionState(numStates) {
		row, ok := table[st]
		if !ok {
			t.Errorf("state %s has no row", st)
			continue
		}
		for c := range command(numCommands) {
			want, ok := row[c]
			if !ok {
				t.Errorf("%s × %s has no cell", st, c)
				continue
			}
			t.Run(st.String()+"/"+c.String(), func(t *testing.T) {
				if got := decide(st, c); got != want {
					t.Errorf("decide(%s, %s) = %s %s, want %s %s", st, c, got.act, got.code, want.act, want.code)
				}
			})
		}
	}
}

// What the commands carrying a decision out rely on, whatever the table
// says: a refusal has a code, a wait happens only where a turn is active
// (it has an admission or an end to wait for), a turn starts only from
// idle, and input reaches a turn only while it runs.
func TestDecideInvariants(t *testing.T) {
	for st := range SessionState(numStates) {
		for c := range command(numCommands) {
			d := decide(st, c)
			switch d.act {
			case actRefuse:
				if d.code == "" || d.code == errcode.Internal {
					t.Errorf("decide(%s, %s) refuses without a code of its own: %q", st, c, d.code)
				}
			case actWait:
				if st != StateAdmitting && st != StateEnding {
					t.Errorf("decide(%s, %s) waits with nothing to wait for", st, c)
				}
			case actStart:
				if st != StateIdle {
					t.Errorf("decide(%s, %s) starts a turn while one is %s", st, c, st)
				}
			case actSteer, actQueue, actCompact, actNextRequest:
				if st != StateRunning {
					t.Errorf("decide(%s, %s) gives %s to a turn that is %s", st, c, d.act, st)
				}
			}
			if d.act != actRefuse && d.code != "" {
				t.Errorf("decide(%s, %s) = %s with code %s", st, c, d.act, d.code)
			}
		}
	}
	if got := decide(numStates, cmdSend); got.act != actRefuse {
		t.Errorf("an unknown state is not refused: %s", got.act)
	}
}

func TestStateNames(t *testing.T) {
	seen := map[string]bool{}
	for st := range SessionState(numStates + 1) {
		name := st.String()
		if seen[name] {
			t.Errorf("two states are named %q", name)
		}
		seen[name] = true
		if st.Busy() != (st == StateAdmitting || st == StateRunning || st == StateEnding) {
			t.Errorf("%s.Busy() = %v", st, st.Busy())
		}
	}
}
