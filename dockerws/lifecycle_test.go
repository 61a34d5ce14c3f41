package dockerws

import (
	"fmt"
	"testing"
)

// lifeCell is one cell of the workspace's decision table: in phase p,
// event e is answered with act (and ref when refused) and moves to next.
// kept and disk, when set, narrow the cell to states with that flag;
// setKept says the decision sets the kept flag.
type lifeCell struct {
	p          Phase
	e          lifeEvent
	kept, disk *bool
	act        lifeAct
	ref        refusal
	next       Phase
	setKept    bool
}

func flag(b bool) *bool { return &b }

// lifeTable is every cell of decideLife, written out.
var lifeTable = []lifeCell{
	// Opening: the open reads the tree and makes the container.
	{p: PhaseOpening, e: evCopy, act: actGo, next: PhaseCopying},
	{p: PhaseOpening, e: evOpened, act: actGo, next: PhaseReady},
	{p: PhaseOpening, e: evOpenFailed, act: actGo, next: PhaseFailed},
	{p: PhaseOpening, e: evAdopted, act: actGo, next: PhaseKept, setKept: true},
	{p: PhaseOpening, e: evRide, act: actGo, next: PhaseOpening},
	{p: PhaseOpening, e: evOperate, act: actWait, next: PhaseOpening},
	{p: PhaseOpening, e: evCheck, act: actNothing, next: PhaseOpening},
	{p: PhaseOpening, e: evGone, act: actNothing, next: PhaseOpening},
	{p: PhaseOpening, e: evKeep, act: actWait, next: PhaseOpening},
	{p: PhaseOpening, e: evClose, act: actRemove, next: PhaseClosed},

	// Copying: no command rides any more.
	{p: PhaseCopying, e: evCopy, act: actNothing, next: PhaseCopying},
	{p: PhaseCopying, e: evOpened, act: actGo, next: PhaseReady},
	{p: PhaseCopying, e: evOpenFailed, act: actGo, next: PhaseFailed},
	{p: PhaseCopying, e: evAdopted, act: actNothing, next: PhaseCopying},
	{p: PhaseCopying, e: evRide, act: actNothing, next: PhaseCopying},
	{p: PhaseCopying, e: evOperate, act: actWait, next: PhaseCopying},
	{p: PhaseCopying, e: evCheck, act: actNothing, next: PhaseCopying},
	{p: PhaseCopying, e: evGone, act: actNothing, next: PhaseCopying},
	{p: PhaseCopying, e: evKeep, act: actWait, next: PhaseCopying},
	{p: PhaseCopying, e: evClose, act: actRemove, next: PhaseClosed},

	// Ready.
	{p: PhaseReady, e: evCopy, act: actNothing, next: PhaseReady},
	{p: PhaseReady, e: evOpened, act: actNothing, next: PhaseReady},
	{p: PhaseReady, e: evOpenFailed, act: actNothing, next: PhaseReady},
	{p: PhaseReady, e: evAdopted, act: actNothing, next: PhaseReady},
	{p: PhaseReady, e: evRide, act: actNothing, next: PhaseReady},
	{p: PhaseReady, e: evOperate, act: actGo, next: PhaseReady},
	{p: PhaseReady, e: evCheck, act: actGo, next: PhaseReady},
	{p: PhaseReady, e: evGone, act: actGo, next: PhaseLost},
	{p: PhaseReady, e: evKeep, act: actRename, next: PhaseKept, setKept: true},
	{p: PhaseReady, e: evClose, act: actRemove, next: PhaseClosed},

	// Kept: as ready, but Close leaves the container.
	{p: PhaseKept, e: evCopy, act: actNothing, next: PhaseKept},
	{p: PhaseKept, e: evOpened, act: actNothing, next: PhaseKept},
	{p: PhaseKept, e: evOpenFailed, act: actNothing, next: PhaseKept},
	{p: PhaseKept, e: evAdopted, act: actNothing, next: PhaseKept},
	{p: PhaseKept, e: evRide, act: actNothing, next: PhaseKept},
	{p: PhaseKept, e: evOperate, act: actGo, next: PhaseKept},
	{p: PhaseKept, e: evCheck, act: actGo, next: PhaseKept},
	{p: PhaseKept, e: evGone, act: actGo, next: PhaseLost},
	{p: PhaseKept, e: evKeep, act: actName, next: PhaseKept},
	{p: PhaseKept, e: evClose, act: actLeave, next: PhaseClosed},

	// Lost: the container stopped or went away; it stays lost.
	{p: PhaseLost, e: evCopy, act: actNothing, next: PhaseLost},
	{p: PhaseLost, e: evOpened, act: actNothing, next: PhaseLost},
	{p: PhaseLost, e: evOpenFailed, act: actNothing, next: PhaseLost},
	{p: PhaseLost, e: evAdopted, act: actNothing, next: PhaseLost},
	{p: PhaseLost, e: evRide, act: actNothing, next: PhaseLost},
	{p: PhaseLost, e: evOperate, act: actRefuse, ref: refLost, next: PhaseLost},
	{p: PhaseLost, e: evCheck, act: actRefuse, ref: refLost, next: PhaseLost},
	{p: PhaseLost, e: evGone, act: actNothing, next: PhaseLost},
	{p: PhaseLost, e: evKeep, kept: flag(true), act: actName, next: PhaseLost},
	{p: PhaseLost, e: evKeep, kept: flag(false), disk: flag(true), act: actRename, next: PhaseLost, setKept: true},
	{p: PhaseLost, e: evKeep, kept: flag(false), disk: flag(false), act: actRefuse, ref: refGone, next: PhaseLost},
	{p: PhaseLost, e: evClose, kept: flag(true), act: actLeave, next: PhaseClosed},
	{p: PhaseLost, e: evClose, kept: flag(false), act: actRemove, next: PhaseClosed},

	// Failed: every call gets the open's error.
	{p: PhaseFailed, e: evCopy, act: actNothing, next: PhaseFailed},
	{p: PhaseFailed, e: evOpened, act: actNothing, next: PhaseFailed},
	{p: PhaseFailed, e: evOpenFailed, act: actNothing, next: PhaseFailed},
	{p: PhaseFailed, e: evAdopted, act: actNothing, next: PhaseFailed},
	{p: PhaseFailed, e: evRide, act: actNothing, next: PhaseFailed},
	{p: PhaseFailed, e: evOperate, act: actRefuse, ref: refOpen, next: PhaseFailed},
	{p: PhaseFailed, e: evCheck, act: actNothing, next: PhaseFailed},
	{p: PhaseFailed, e: evGone, act: actNothing, next: PhaseFailed},
	{p: PhaseFailed, e: evKeep, act: actRefuse, ref: refOpen, next: PhaseFailed},
	{p: PhaseFailed, e: evClose, act: actRemove, next: PhaseClosed},

	// Closed is final.
	{p: PhaseClosed, e: evCopy, act: actNothing, next: PhaseClosed},
	{p: PhaseClosed, e: evOpened, act: actNothing, next: PhaseClosed},
	{p: PhaseClosed, e: evOpenFailed, act: actNothing, next: PhaseClosed},
	{p: PhaseClosed, e: evAdopted, act: actNothing, next: PhaseClosed},
	{p: PhaseClosed, e: evRide, act: actNothing, next: PhaseClosed},
	{p: PhaseClosed, e: evOperate, act: actRefuse, ref: refDisposed, next: PhaseClosed},
	{p: PhaseClosed, e: evCheck, act: actNothing, next: PhaseClosed},
	{p: PhaseClosed, e: evGone, act: actNothing, next: PhaseClosed},
	{p: PhaseClosed, e: evKeep, act: actRefuse, ref: refDisposed, next: PhaseClosed},
	{p: PhaseClosed, e: evClose, act: actRefuse, ref: refDisposed, next: PhaseClosed},
}

// validLifeStates is every state a workspace can be in: the kept flag
// only once Keep or Adopt ran, the disk flag only once the open chose
// the storage.
func validLifeStates() []lifeState {
	var out []lifeState
	for p := range Phase(numPhases) {
		for _, kept := range []bool{false, true} {
			for _, disk := range []bool{false, true} {
				switch {
				case (p == PhaseOpening || p == PhaseCopying) && (kept || disk):
				case p == PhaseKept && !kept:
				case (p == PhaseReady || p == PhaseFailed) && kept:
				default:
					out = append(out, lifeState{phase: p, kept: kept, disk: disk})
				}
			}
		}
	}
	return out
}

func (c lifeCell) matches(s lifeState, e lifeEvent) bool {
	return c.p == s.phase && c.e == e && (c.kept == nil || *c.kept == s.kept) && (c.disk == nil || *c.disk == s.disk)
}

// TestDecideLifeTable holds decideLife to the table: every valid state
// and every event has exactly one cell, and the decision is the cell's.
func TestDecideLifeTable(t *testing.T) {
	used := make([]bool, len(lifeTable))
	for _, s := range validLifeStates() {
		for e := range lifeEvent(numLifeEvents) {
			name := fmt.Sprintf("%s(kept=%v,disk=%v)/%s", s.phase, s.kept, s.disk, e)
			var cell *lifeCell
			for i := range lifeTable {
				if lifeTable[i].matches(s, e) {
					if cell != nil {
						t.Fatalf("%s: two cells", name)
					}
					cell, used[i] = &lifeTable[i], true
				}
			}
			if cell == nil {
				t.Errorf("%s: no cell", name)
				continue
			}
			want := lifeDecision{next: s, act: cell.act, ref: cell.ref}
			want.next.phase = cell.next
			want.next.kept = s.kept || cell.setKept
			if got := decideLife(s, e); got != want {
				t.Errorf("%s: decideLife = {%s %v %s %d}, want {%s %v %s %d}", name,
					got.next.phase, got.next.kept, got.act, got.ref, want.next.phase, want.next.kept, want.act, want.ref)
			}
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("cell %d (%s/%s) matches no valid state", i, lifeTable[i].p, lifeTable[i].e)
		}
	}
}

// TestDecideLifeRules checks what every decision must keep, whatever
// its cell says: a refusal moves nothing, closed is final, and only Keep
// and Adopt set a container aside.
func TestDecideLifeRules(t *testing.T) {
	for _, s := range validLifeStates() {
		for e := range lifeEvent(numLifeEvents) {
			d := decideLife(s, e)
			if d.act == actRefuse && d.next != s {
				t.Errorf("%s/%s: a refusal moves the state to %+v", s.phase, e, d.next)
			}
			if (d.act == actRefuse) != (d.ref != refNone) {
				t.Errorf("%s/%s: act %s with refusal %d", s.phase, e, d.act, d.ref)
			}
			if s.phase == PhaseClosed && d.next.phase != PhaseClosed {
				t.Errorf("closed/%s: moves to %s", e, d.next.phase)
			}
			if d.next.kept && !s.kept && e != evKeep && e != evAdopted {
				t.Errorf("%s/%s: sets the container aside", s.phase, e)
			}
			if d.next.disk != s.disk {
				t.Errorf("%s/%s: changes the storage", s.phase, e)
			}
			if (d.act == actLeave) != (e == evClose && s.kept && s.phase != PhaseClosed) {
				t.Errorf("%s(kept=%v)/%s: act %s", s.phase, s.kept, e, d.act)
			}
		}
	}
}
