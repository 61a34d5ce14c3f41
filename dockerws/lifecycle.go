package dockerws

import (
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// The workspace's life. Where a workspace stands — opening, ready, kept,
// lost, failed or closed — and what each call and each step of the
// background open does to it depends on that state only, and is decided
// by decideLife, a pure function (no lock, no I/O) held to an exhaustive
// table test, as runtime's decide is for the session owner. The
// workspace only carries the decision out: step reads the state under
// mu, asks decideLife and moves the state as told; what the state says
// is read with Phase (and isClosed).

// Phase is where a workspace stands in its life.
type Phase uint8

// The phases. Opening and Copying end in Ready (or Kept, for one that
// Adopt made) or Failed; Ready, Kept and Lost end in Closed; Closed is
// final.
const (
	// PhaseOpening: the background open reads the tree and makes the
	// container; a command may still ride the copy-in (rider.go).
	PhaseOpening Phase = iota
	// PhaseCopying: the open copies the tree in; no command rides from
	// now on, and every operation that needs the container waits.
	PhaseCopying
	// PhaseReady: the container runs with the tree copied in.
	PhaseReady
	// PhaseKept: as Ready, and Keep set the container aside: Close
	// leaves it for the user.
	PhaseKept
	// PhaseLost: the container stopped or went away after the open made
	// it (a Docker daemon restart stops every container). Every
	// operation gets the error that says so; Keep still sets aside one
	// whose files were on disk.
	PhaseLost
	// PhaseFailed: the open failed; every operation gets its error
	// (OpenError).
	PhaseFailed
	// PhaseClosed: Close or Abandon began; every call gets
	// WORKSPACE_DISPOSED.
	PhaseClosed

	numPhases = iota
)

var phaseNames = [numPhases]string{"opening", "copying", "ready", "kept", "lost", "failed", "closed"}

// String returns the phase's name.
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "invalid"
}

// lifeEvent is what happens to a workspace: a step of the background open
// or a call that needs to know whether it may go ahead.
type lifeEvent uint8

const (
	evCopy       lifeEvent = iota // the open starts copying the tree in
	evOpened                      // the open is over and succeeded
	evOpenFailed                  // the open is over and failed (a refused scan included)
	evAdopted                     // Adopt made the workspace of a kept container
	evRide                        // a command asks to ride the copy-in
	evOperate                     // a call that needs the container: WriteFile, Exec, Diff, ApplyPatch, Rebase
	evCheck                       // Lost asks whether to look at the container
	evGone                        // Lost saw the container stopped or removed
	evKeep                        // Keep
	evClose                       // Close or Abandon

	numLifeEvents = iota
)

var lifeEventNames = [numLifeEvents]string{"copy", "opened", "open-failed", "adopted", "ride", "operate", "check", "gone", "keep", "close"}

func (e lifeEvent) String() string {
	if int(e) < len(lifeEventNames) {
		return lifeEventNames[e]
	}
	return "invalid"
}

// lifeAct is what the caller does with a decision.
type lifeAct uint8

const (
	actNothing lifeAct = iota // nothing to do: the event changes nothing it cares about
	actGo                     // go ahead
	actWait                   // wait for the open to end, then ask again
	actRefuse                 // fail with the decision's refusal
	actRename                 // Keep: rename the container aside
	actName                   // Keep: already aside, answer its name
	actRemove                 // Close: remove the container and its volumes
	actLeave                  // Close: leave the container (Keep set it aside)

	numLifeActs = iota
)

var lifeActNames = [numLifeActs]string{"nothing", "go", "wait", "refuse", "rename", "name", "remove", "leave"}

func (a lifeAct) String() string {
	if int(a) < len(lifeActNames) {
		return lifeActNames[a]
	}
	return "invalid"
}

// refusal says which error a refused call gets.
type refusal uint8

const (
	refNone     refusal = iota
	refDisposed         // WORKSPACE_DISPOSED: closed
	refOpen             // the open's error (OpenError)
	refLost             // the error Lost reported (lostErr)
	refGone             // WORKSPACE_NOT_FOUND: Keep of a lost container whose files lived in memory
)

// lifeState is what decideLife reads: the phase, whether Keep set the
// container aside (it stays so when the container is then lost, and
// decides what Close does), and whether the tree lives on the
// container's disk (its files outlive a stop).
type lifeState struct {
	phase Phase
	kept  bool
	disk  bool
}

// lifeDecision is decideLife's answer: the state to move to (the same
// one when nothing moves), and what the caller does.
type lifeDecision struct {
	next lifeState
	act  lifeAct
	ref  refusal
}

// decideLife decides what event e does to a workspace in state s.
func decideLife(s lifeState, e lifeEvent) lifeDecision {
	stay := func(a lifeAct) lifeDecision { return lifeDecision{next: s, act: a} }
	move := func(p Phase, a lifeAct) lifeDecision {
		n := s
		n.phase = p
		return lifeDecision{next: n, act: a}
	}
	refuse := func(r refusal) lifeDecision { return lifeDecision{next: s, act: actRefuse, ref: r} }

	if s.phase == PhaseClosed {
		// Closed is final. The open's own steps still end (it is
		// canceled and cleans up after itself); every call is refused.
		switch e {
		case evCopy, evOpened, evOpenFailed, evAdopted, evRide, evCheck, evGone:
			return stay(actNothing)
		default:
			return refuse(refDisposed)
		}
	}
	switch e {
	case evCopy:
		if s.phase == PhaseOpening {
			return move(PhaseCopying, actGo)
		}
		return stay(actNothing)
	case evOpened:
		if s.phase == PhaseOpening || s.phase == PhaseCopying {
			return move(PhaseReady, actGo)
		}
		return stay(actNothing)
	case evOpenFailed:
		if s.phase == PhaseOpening || s.phase == PhaseCopying {
			return move(PhaseFailed, actGo)
		}
		return stay(actNothing)
	case evAdopted:
		if s.phase == PhaseOpening {
			n := s
			n.phase, n.kept = PhaseKept, true
			return lifeDecision{next: n, act: actGo}
		}
		return stay(actNothing)
	case evRide:
		if s.phase == PhaseOpening {
			return stay(actGo)
		}
		return stay(actNothing)
	case evGone:
		if s.phase == PhaseReady || s.phase == PhaseKept {
			return move(PhaseLost, actGo)
		}
		return stay(actNothing)
	case evCheck:
		switch s.phase {
		case PhaseReady, PhaseKept:
			return stay(actGo)
		case PhaseLost:
			return refuse(refLost)
		default:
			return stay(actNothing) // not made yet, or never
		}
	}
	// The calls: evOperate, evKeep, evClose.
	switch s.phase {
	case PhaseOpening, PhaseCopying:
		if e == evClose {
			return move(PhaseClosed, actRemove) // what the canceled open made
		}
		return stay(actWait)
	case PhaseFailed:
		if e == evClose {
			return move(PhaseClosed, actRemove) // a container the open made before it failed
		}
		return refuse(refOpen)
	case PhaseReady:
		switch e {
		case evOperate:
			return stay(actGo)
		case evKeep:
			n := s
			n.phase, n.kept = PhaseKept, true
			return lifeDecision{next: n, act: actRename}
		}
		return move(PhaseClosed, actRemove)
	case PhaseKept:
		switch e {
		case evOperate:
			return stay(actGo)
		case evKeep:
			return stay(actName)
		}
		return move(PhaseClosed, actLeave)
	}
	// PhaseLost.
	switch e {
	case evOperate:
		return refuse(refLost)
	case evKeep:
		switch {
		case s.kept:
			return stay(actName)
		case s.disk:
			// Stopped on disk: the files outlive the stop.
			n := s
			n.kept = true
			return lifeDecision{next: n, act: actRename}
		}
		// Its tree lived in memory and went with it: nothing is left to
		// keep, and a kept container would only be taken for the turn's
		// work.
		return refuse(refGone)
	}
	if s.kept {
		return move(PhaseClosed, actLeave)
	}
	return move(PhaseClosed, actRemove)
}

// Phase is where the workspace stands now.
func (w *Workspace) Phase() Phase {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.life.phase
}

// step decides event e on the workspace's state and moves it as told;
// err is the error of a refused call named op (nil when not refused).
func (w *Workspace) step(e lifeEvent, op string) (d lifeDecision, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stepLocked(e, op)
}

// stepLocked is step with mu held.
func (w *Workspace) stepLocked(e lifeEvent, op string) (lifeDecision, error) {
	d := decideLife(w.lifeLocked(), e)
	if d.act == actRefuse {
		return d, w.refusedLocked(d, op)
	}
	w.life = d.next
	return d, nil
}

// lifeLocked is the state decideLife reads (mu held). The open sets
// storage before it steps out of opening and copying, and it never
// changes after.
func (w *Workspace) lifeLocked() lifeState {
	s := w.life
	s.disk = s.phase != PhaseOpening && s.phase != PhaseCopying && w.storage == workspace.StorageDisk
	return s
}

// refusedLocked is the error of a call named op that d refused (mu
// held).
func (w *Workspace) refusedLocked(d lifeDecision, op string) error {
	switch d.ref {
	case refOpen:
		return w.openErr
	case refLost:
		return w.lostErr
	case refGone:
		return &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Err: w.lostErr,
			Message: "the workspace container stopped or went away during the turn (a Docker daemon restart stops every container): its files, which lived in memory, are lost"}
	}
	return disposed(op)
}
