package runtime

import "github.com/harness-dev/harness/internal/errcode"

// The session owner's decision core. What a command does to a session
// depends on one thing only, the session's state, and is decided by
// decide, a pure function (no lock, no I/O, no clock) held to an
// exhaustive table test, as store/internal/rules decides for the stores.
// The commands (commands.go) only carry the decision out: lockDecide
// reads the state under mu, asks decide, waits when told to and asks
// again; every change of the state goes through setState, which also
// tells the front ends (State).

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
	// StateClosed: Close was called; every command is refused. A turn
	// that was active may still be ending (Session.Idle says when it
	// has).
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

// command is what a session command asks of the owner. Cancel and Close
// are not commands of the table: Cancel never takes the owner's lock (it
// must not wait behind an append; the flag it sets is folded into the
// state by stateLocked), and Close always succeeds (it moves the session
// to StateClosed).
type command uint8

const (
	cmdSend           command = iota // Send: text from the user
	cmdQueue                         // Queue: text for the turn after the running one
	cmdStart                         // Start, StartQueued: a turn, only while idle
	cmdCompact                       // Compact: compact the context now
	cmdWithdraw                      // Withdraw: drop pending steering or a queued input
	cmdSetSettings                   // SetSettings: settings of the following requests
	cmdChangeSettings                // ChangeSettings: the application's recorded change, between turns
	cmdAnswer                        // Answer: a permission question's answer

	numCommands = iota
)

var commandNames = [numCommands]string{"send", "queue", "start", "compact", "withdraw", "set settings", "change settings", "answer"}

func (c command) String() string {
	if int(c) < len(commandNames) {
		return commandNames[c]
	}
	return "invalid"
}

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

	numActions = iota
)

var actionNames = [numActions]string{"refuse", "wait", "start", "steer", "queue", "compact", "apply", "next-request"}

func (a action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "invalid"
}

// decision is decide's answer: an action, and for actRefuse the code.
type decision struct {
	act  action
	code errcode.Code // set with actRefuse only
}

func refuse(c errcode.Code) decision { return decision{act: actRefuse, code: c} }

// decide is the owner's rule: what command c does in state st. It is the
// whole of it; the commands carry it out. Text never interleaves two
// turns' events: while a turn is admitted or ending, text waits and is
// decided again; a closed session refuses everything with
// RUNTIME_INVALID_INPUT.
func decide(st SessionState, c command) decision {
	switch {
	case st >= numStates:
		return refuse(errcode.Internal)
	case st == StateClosed:
		return refuse(errcode.RuntimeInvalidInput)
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
	}
	return refuse(errcode.Internal)
}
