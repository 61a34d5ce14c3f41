package runtime

import "github.com/harness-dev/harness/internal/errcode"

// The session owner's decision core. What a command does to a session,
// and where each step of a turn's life takes it, depends on one thing
// only, the session's state, and is decided by decide, a pure function
// (no lock, no I/O, no clock) held to an exhaustive table test, as
// store/internal/rules decides for the stores. The owner only carries
// the decision out: the commands (commands.go) take it with lockDecide,
// which reads the state under mu, asks decide, waits when told to and
// asks again; the turn reports each step of its life with transition.
// Every change of the state goes through setState, which also tells the
// front ends (State).

// SessionState is where a session's owner stands: what it does with the
// next command. Front ends read it with Session.State instead of guessing
// it from the events they have seen.
type SessionState uint8

// The session's states. A session is idle or closed between turns;
// admitting, running or ending while a turn is active.
const (
	// StateIdle: no turn is active; text starts one.
	StateIdle SessionState = iota
	// StateAdmitting: a turn was started and its admission events
	// (agent.started, turn.started, the user message) are being made
	// durable; commands that need a running turn wait for them.
	StateAdmitting
	// StateRunning: the active turn takes steering, queued input and
	// settings at its next model request.
	StateRunning
	// StateEnding: the active turn takes no more input: it decided to
	// complete, was canceled, failed, or is a compaction turn. Commands
	// wait for its end, then decide again (on the turn the session may
	// have started from its queue, or on an idle session).
	StateEnding
	// StateClosed: Close was called; every command is refused with
	// SESS_CLOSED, and every write but the workspace's own record. A
	// turn that was active may still be ending (Session.Idle says when
	// it has). Closed is final.
	StateClosed

	numStates = iota
)

var stateNames = [numStates]string{"idle", "admitting", "running", "ending", "closed"}

// String returns the state's name: idle, admitting, running, ending or
// closed.
func (s SessionState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "invalid"
}

// Busy reports whether a turn is active (admitting, running or ending).
func (s SessionState) Busy() bool {
	return s == StateAdmitting || s == StateRunning || s == StateEnding
}

// command is what is asked of the owner: a session command (a front end's
// or the application's), or a step of the active turn's life (the turn's
// own report, which the owner never refuses). Cancel is not a command of
// the table: it never takes the owner's lock (it must not wait behind an
// append); the flag it sets is folded into the state as cmdCanceled by
// stateLocked.
type command uint8

const (
	cmdSend            command = iota // Send: text from the user
	cmdQueue                          // Queue: text for the turn after the running one
	cmdStart                          // Start, StartQueued: a turn, only while idle
	cmdCompact                        // Compact: compact the context now
	cmdWithdraw                       // Withdraw: drop pending steering or a queued input
	cmdSetSettings                    // SetSettings: settings of the following requests
	cmdChangeSettings                 // ChangeSettings: the application's recorded change, between turns
	cmdAnswer                         // Answer: a permission question's answer
	cmdRevoke                         // Revoke: take a session grant back (permission.revoked)
	cmdRecordApplied                  // RecordApplied: the user applied a patch to the host tree (patch.applied)
	cmdRecordWorkspace                // RecordWorkspace: the workspace's lifecycle (workspace.lifecycle)
	cmdClose                          // Close: the session takes no more commands

	// The active turn's life, reported by the turn itself.
	cmdAdmitted         // its admission is durable; it takes input
	cmdAdmittedNoInput  // its admission ended without taking input: a compaction turn, or a failed admission
	cmdCanceled         // Cancel was called (folded in by stateLocked)
	cmdFinalAnswer      // the model answered without a tool call and no steering is pending
	cmdSteeredAnswer    // the model answered without a tool call, but steering is pending
	cmdFinish           // the turn ends: its terminal events are written next
	cmdReleaseCompleted // the turn's terminal events are written; it completed (not a compaction turn)
	cmdRelease          // the turn's terminal events are written; it did not complete, or it compacted

	numCommands = iota
)

var commandNames = [numCommands]string{"send", "queue", "start", "compact", "withdraw", "set settings", "change settings", "answer",
	"revoke", "record applied", "record workspace", "close",
	"admitted", "admitted without input", "canceled", "final answer", "steered answer", "finish", "release completed", "release"}

func (c command) String() string {
	if int(c) < len(commandNames) {
		return commandNames[c]
	}
	return "invalid"
}

// lifecycle reports whether c is a step of the active turn's life rather
// than a command someone sends.
func (c command) lifecycle() bool { return c >= cmdAdmitted && c < numCommands }

// action is what the owner does with a command.
type action uint8

const (
	actRefuse      action = iota // refused with decision.code; nothing changes
	actWait                      // wait for the active turn's admission or end, then decide again
	actStart                     // start a turn now (the text, the queued input, or a compaction)
	actSteer                     // the text is steering for the running turn's next request
	actQueue                     // the text is the input of the turn after the running one
	actCompact                   // the running turn compacts before its next request
	actApply                     // take effect now (between turns, or on the owner's queues)
	actNextRequest               // recorded now; the running turn takes it at its next request
	actRun                       // the turn runs: StateRunning
	actEnd                       // the turn takes no more input and ends: StateEnding
	actIdle                      // no turn is active: StateIdle
	actNext                      // the turn after it starts from the queue (StateAdmitting); idle when nothing is queued
	actClose                     // StateClosed
	actKeep                      // the state stays as it is (a step of another turn's life, another round, a closed session)

	numActions = iota
)

var actionNames = [numActions]string{"refuse", "wait", "start", "steer", "queue", "compact", "apply", "next-request",
	"run", "end", "idle", "next", "close", "keep"}

func (a action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "invalid"
}

// moves returns the state a lifecycle action moves the session to.
// Starting a turn (actStart, actNext) moves it to StateAdmitting where the
// turn is made (startLocked).
func (a action) moves() (SessionState, bool) {
	switch a {
	case actRun:
		return StateRunning, true
	case actEnd:
		return StateEnding, true
	case actIdle:
		return StateIdle, true
	case actClose:
		return StateClosed, true
	}
	return 0, false
}

// decision is decide's answer: an action, and for actRefuse the code.
type decision struct {
	act  action
	code errcode.Code // set with actRefuse only
}

func refuse(c errcode.Code) decision { return decision{act: actRefuse, code: c} }

var (
	keep = decision{act: actKeep}
	end  = decision{act: actEnd}
)

// decide is the owner's rule: what command c does in state st. It is the
// whole of it; the owner carries it out. Text never interleaves two
// turns' events: while a turn is admitted or ending, text waits and is
// decided again. A closed session refuses every command with SESS_CLOSED
// but the workspace's record: the workspace outlives the session's
// commands (the application records a background open that completes
// while the session closes, then its disposal, after Close). A queued
// input starts only after a completed turn; steering that arrives during
// the final answer makes another round.
func decide(st SessionState, c command) decision {
	switch {
	case st >= numStates:
		return refuse(errcode.Internal)
	case c == cmdClose:
		return decision{act: actClose}
	case c.lifecycle():
		return decideLifecycle(st, c)
	case st == StateClosed:
		if c == cmdRecordWorkspace {
			return decision{act: actApply}
		}
		return refuse(errcode.SessClosed)
	}
	switch c {
	case cmdSend, cmdQueue:
		switch st {
		case StateIdle:
			return decision{act: actStart}
		case StateRunning:
			if c == cmdQueue {
				return decision{act: actQueue}
			}
			return decision{act: actSteer}
		}
		return decision{act: actWait}
	case cmdStart:
		if st == StateIdle {
			return decision{act: actStart}
		}
		return refuse(errcode.RuntimeInvalidInput)
	case cmdCompact:
		switch st {
		case StateIdle:
			return decision{act: actStart} // a compaction turn
		case StateRunning:
			return decision{act: actCompact}
		}
		return decision{act: actWait}
	case cmdWithdraw:
		// Never between a turn's terminal checkpoint and its
		// turn.completed: input.withdrawn is written by a running turn
		// or between turns, where restore folds it in.
		if st == StateIdle || st == StateRunning {
			return decision{act: actApply}
		}
		return decision{act: actWait}
	case cmdSetSettings:
		switch st {
		case StateIdle:
			return decision{act: actApply}
		case StateRunning:
			return decision{act: actNextRequest}
		}
		return decision{act: actWait}
	case cmdChangeSettings:
		if st == StateIdle {
			return decision{act: actApply}
		}
		return refuse(errcode.RuntimeRunExists)
	case cmdAnswer:
		// A question belongs to its turn, which is answered (or
		// dropped) whatever the turn is doing; an unknown one is refused
		// by Answer itself.
		return decision{act: actApply}
	case cmdRevoke, cmdRecordApplied, cmdRecordWorkspace:
		// Records of the session, not of a turn: restore folds
		// permission.revoked wherever it stands (after a terminal
		// checkpoint too) and passes over patch.applied and
		// workspace.lifecycle, so they never wait for a turn.
		return decision{act: actApply}
	}
	return refuse(errcode.Internal)
}

// decideLifecycle is decide for a step of the active turn's life. The
// turn reports facts, which are never refused; a step that does not
// concern the state (a cancel of a turn already ending, any step once
// the session is closed) keeps it.
func decideLifecycle(st SessionState, c command) decision {
	switch c {
	case cmdAdmitted:
		if st == StateAdmitting {
			return decision{act: actRun}
		}
	case cmdAdmittedNoInput:
		if st == StateAdmitting {
			return end
		}
	case cmdCanceled:
		// A canceled turn takes no more input.
		if st == StateRunning {
			return end
		}
	case cmdFinalAnswer:
		// The turn completes (canceled during the answer, or with the
		// session closed, too: the answer is whole); atomically with
		// Send, which steers only a running turn.
		return end
	case cmdSteeredAnswer:
		// Another round takes the steering.
		return keep
	case cmdFinish:
		if st.Busy() {
			return end
		}
	case cmdReleaseCompleted:
		// Straight from ending to admitting: the busy spell goes on
		// with the queued input, if one waits.
		if st != StateClosed {
			return decision{act: actNext}
		}
	case cmdRelease:
		// The queue waits after a turn that did not complete (or a
		// compaction turn): StartQueued or the next text starts it.
		if st != StateClosed {
			return decision{act: actIdle}
		}
	}
	return keep
}
