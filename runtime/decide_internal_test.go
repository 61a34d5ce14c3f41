package runtime

import (
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

// The owner's whole rule, one row per state and one column per command
// (the session commands, then the steps of a turn's life). The test fails
// when a state or a command is added without its cells.
func TestDecideTable(t *testing.T) {
	wait, start, steer, queue := decision{act: actWait}, decision{act: actStart}, decision{act: actSteer}, decision{act: actQueue}
	compact, apply, next := decision{act: actCompact}, decision{act: actApply}, decision{act: actNextRequest}
	invalid, exists, closed := refuse(errcode.RuntimeInvalidInput), refuse(errcode.RuntimeRunExists), refuse(errcode.SessClosed)
	run, idle, queued, shut := decision{act: actRun}, decision{act: actIdle}, decision{act: actNext}, decision{act: actClose}
	table := map[SessionState]map[command]decision{
		StateIdle: {
			cmdSend: start, cmdQueue: start, cmdStart: start, cmdCompact: start,
			cmdWithdraw: apply, cmdSetSettings: apply, cmdChangeSettings: apply, cmdAnswer: apply,
			cmdRevoke: apply, cmdRecordApplied: apply, cmdRecordWorkspace: apply, cmdClose: shut,
			cmdAdmitted: keep, cmdAdmittedNoInput: keep, cmdCanceled: keep, cmdFinalAnswer: end, cmdSteeredAnswer: keep,
			cmdFinish: keep, cmdReleaseCompleted: queued, cmdRelease: idle,
		},
		StateAdmitting: {
			cmdSend: wait, cmdQueue: wait, cmdStart: invalid, cmdCompact: wait,
			cmdWithdraw: wait, cmdSetSettings: wait, cmdChangeSettings: exists, cmdAnswer: apply,
			cmdRevoke: apply, cmdRecordApplied: apply, cmdRecordWorkspace: apply, cmdClose: shut,
			cmdAdmitted: run, cmdAdmittedNoInput: end, cmdCanceled: keep, cmdFinalAnswer: end, cmdSteeredAnswer: keep,
			cmdFinish: end, cmdReleaseCompleted: queued, cmdRelease: idle,
		},
		StateRunning: {
			cmdSend: steer, cmdQueue: queue, cmdStart: invalid, cmdCompact: compact,
			cmdWithdraw: apply, cmdSetSettings: next, cmdChangeSettings: exists, cmdAnswer: apply,
			cmdRevoke: apply, cmdRecordApplied: apply, cmdRecordWorkspace: apply, cmdClose: shut,
			cmdAdmitted: keep, cmdAdmittedNoInput: keep, cmdCanceled: end, cmdFinalAnswer: end, cmdSteeredAnswer: keep,
			cmdFinish: end, cmdReleaseCompleted: queued, cmdRelease: idle,
		},
		StateEnding: {
			cmdSend: wait, cmdQueue: wait, cmdStart: invalid, cmdCompact: wait,
			cmdWithdraw: wait, cmdSetSettings: wait, cmdChangeSettings: exists, cmdAnswer: apply,
			cmdRevoke: apply, cmdRecordApplied: apply, cmdRecordWorkspace: apply, cmdClose: shut,
			cmdAdmitted: keep, cmdAdmittedNoInput: keep, cmdCanceled: keep, cmdFinalAnswer: end, cmdSteeredAnswer: keep,
			cmdFinish: end, cmdReleaseCompleted: queued, cmdRelease: idle,
		},
		StateClosed: {
			cmdSend: closed, cmdQueue: closed, cmdStart: closed, cmdCompact: closed,
			cmdWithdraw: closed, cmdSetSettings: closed, cmdChangeSettings: closed, cmdAnswer: closed,
			cmdRevoke: closed, cmdRecordApplied: closed, cmdRecordWorkspace: apply, cmdClose: shut,
			cmdAdmitted: keep, cmdAdmittedNoInput: keep, cmdCanceled: keep, cmdFinalAnswer: end, cmdSteeredAnswer: keep,
			cmdFinish: keep, cmdReleaseCompleted: keep, cmdRelease: keep,
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

// What the owner carrying a decision out relies on, whatever the table
// says: a refusal has a code, a wait happens only where a turn is active
// (it has an admission or an end to wait for), a turn starts only from
// idle (or, from the queue, as the turn before it is released), input
// reaches a turn only while it runs, a step of a turn's life is never
// refused and moves only the state, and closed is final.
func TestDecideInvariants(t *testing.T) {
	for st := range SessionState(numStates) {
		for c := range command(numCommands) {
			d := decide(st, c)
			switch d.act {
			case actRefuse:
				if d.code == "" || d.code == errcode.Internal {
					t.Errorf("decide(%s, %s) refuses without a code of its own: %q", st, c, d.code)
				}
				if c.lifecycle() {
					t.Errorf("decide(%s, %s) refuses a step of the turn's life", st, c)
				}
			case actWait:
				if st != StateAdmitting && st != StateEnding {
					t.Errorf("decide(%s, %s) waits with nothing to wait for", st, c)
				}
			case actStart:
				if st != StateIdle || c.lifecycle() {
					t.Errorf("decide(%s, %s) starts a turn while one is %s", st, c, st)
				}
			case actNext:
				if c != cmdReleaseCompleted {
					t.Errorf("decide(%s, %s) starts a queued turn, not on the release of a completed one", st, c)
				}
			case actSteer, actQueue, actCompact, actNextRequest:
				if st != StateRunning {
					t.Errorf("decide(%s, %s) gives %s to a turn that is %s", st, c, d.act, st)
				}
			}
			if _, moves := d.act.moves(); moves && !c.lifecycle() && c != cmdClose {
				t.Errorf("decide(%s, %s) = %s: a command moved the state itself", st, c, d.act)
			}
			if st == StateClosed {
				if to, moves := d.act.moves(); moves && to != StateClosed && to != StateEnding {
					t.Errorf("decide(closed, %s) = %s leaves closed", c, d.act)
				}
				if d.act == actStart || d.act == actNext || d.act == actRun || d.act == actIdle {
					t.Errorf("decide(closed, %s) = %s", c, d.act)
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
