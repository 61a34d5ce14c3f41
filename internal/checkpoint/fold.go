package checkpoint

import (
	"slices"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// Chain folds the runtime.checkpoint events of one session log, oldest
// first, into whole checkpoints: each event's history holds only what was
// added since the previous one.
type Chain struct {
	prev *Checkpoint
}

// Next parses the payload of the next runtime.checkpoint event of the log
// and returns the whole checkpoint it stands for. Codes: those of Parse;
// RUNTIME_CHECKPOINT_INVALID for a base past the previous checkpoint's
// history or a folded history that breaks the format.
func (c *Chain) Next(payload []byte) (*Checkpoint, error) {
	cp, err := Parse(payload)
	if err != nil {
		return nil, err
	}
	if b := cp.History.Base; b > 0 {
		if c.prev == nil {
			return nil, errcode.Errorf(errcode.RuntimeCheckpointInvalid, "fold checkpoint: its base of %d messages has no previous checkpoint", b)
		}
		if have := len(c.prev.History.Messages); b != have {
			return nil, errcode.Errorf(errcode.RuntimeCheckpointInvalid, "fold checkpoint: its base of %d messages does not match the previous checkpoint's %d", b, have)
		}
		full := make([]model.Message, 0, b+len(cp.History.Messages))
		full = append(append(full, c.prev.History.Messages[:b]...), cp.History.Messages...)
		cp.History.Messages, cp.History.Base = full, 0
		if err := cp.Validate(); err != nil {
			return nil, errcode.Errorf(errcode.RuntimeCheckpointInvalid, "fold checkpoint: %s", errcode.Message(err))
		}
	}
	c.prev = cp
	return cp, nil
}

// Record is one stored event as a scan reads it.
type Record struct {
	Seq  int64
	Type string
	Body []byte
}

// Scan reads a session's log, oldest first, once, folding its checkpoints.
// After the last Add it holds the newest checkpoint, the newest one with a
// next request, and the last finished state.
type Scan struct {
	chain Chain

	// Latest is the newest checkpoint, whole, and LatestSeq its event's seq
	// (-1: none).
	Latest    *Checkpoint
	LatestSeq int64
	// Request is the newest checkpoint that carries a next request.
	Request *Checkpoint
	// Finished is the newest terminal checkpoint that its turn.completed
	// follows (or, in a fork, its session.forked precedes): the point a
	// fork continues from.
	Finished *Checkpoint
	// Abandoned is the turn started after Finished that never finished.
	Abandoned string

	candidate *Checkpoint
	forked    bool // the previous event was session.forked
	n         int
}

// Add reads the next event of the log. Codes: the EVENT_* codes of a
// runtime.checkpoint event that does not decode, those of Chain.Next.
func (s *Scan) Add(r Record) error {
	if s.n == 0 {
		s.LatestSeq = -1
	}
	s.n++ // (s.n-- is equivalent: n only tells the first Add from the rest)
	forked := s.forked
	s.forked = false
	switch event.Type(r.Type) {
	case event.TypeRuntimeCheckpoint:
		ev, err := event.Decode(r.Body)
		if err != nil {
			return err
		}
		d, ok := ev.Data.(event.RuntimeCheckpoint)
		if !ok {
			return errcode.Errorf(errcode.RuntimeCheckpointInvalid, "scan log: event %d is no runtime.checkpoint", r.Seq)
		}
		cp, err := s.chain.Next(d.Payload)
		if err != nil {
			return err
		}
		s.Latest, s.LatestSeq = cp, r.Seq
		if cp.NextRequest != nil {
			s.Request = cp
		}
		if cp.Identity.Phase == PhaseTerminal {
			s.candidate = cp
			if forked {
				s.finish()
			}
		}
	case event.TypeTurnCompleted:
		if s.candidate != nil && event.TurnOf(r.Body) == s.candidate.Identity.TurnID {
			s.finish()
		}
	case event.TypeTurnStarted:
		s.Abandoned = event.TurnOf(r.Body)
	case event.TypeSessionForked, event.TypeSessionRewound:
		// The terminal checkpoint that follows is the point the session
		// continues from (a rewind's is the earlier turn's, copied).
		s.forked = true
	case event.TypeSettingsChanged:
		// A change after the finished turn is where a fork starts from.
		if s.Finished != nil && s.candidate == nil {
			next, err := withChange(s.Finished, r.Body)
			if err != nil {
				return err
			}
			s.Finished = next
		}
	case event.TypePermissionRevoked:
		// A revocation after a turn's terminal checkpoint holds for the
		// state that follows it.
		switch {
		case s.candidate != nil:
			next, err := withRevoked(s.candidate, r.Body)
			if err != nil {
				return err
			}
			s.candidate = next
		case s.Finished != nil:
			next, err := withRevoked(s.Finished, r.Body)
			if err != nil {
				return err
			}
			s.Finished = next
		}
	case event.TypeWorkspaceRecovered:
		if s.Finished != nil {
			next, err := withRecovered(s.Finished, r.Body)
			if err != nil {
				return err
			}
			s.Finished = next
		}
	}
	return nil
}

// withRecovered returns cp with a recorded workspace.recovered applied
// when it is about cp's turn: the recovered patch (none when discarded)
// stands for the diff that failed. cp itself is returned otherwise.
func withRecovered(cp *Checkpoint, body []byte) (*Checkpoint, error) {
	ev, err := event.Decode(body)
	if err != nil {
		return nil, err
	}
	d, ok := ev.Data.(event.WorkspaceRecovered)
	if !ok {
		return nil, errcode.New(errcode.RuntimeCheckpointInvalid, "fold a recovered patch: not a workspace.recovered event")
	}
	if cp.Workspace == nil || cp.Workspace.DiffError == "" || d.TurnID != cp.Identity.TurnID {
		return cp, nil
	}
	c := *cp
	c.Workspace = &Workspace{Backend: cp.Workspace.Backend, Snapshot: cp.Workspace.Snapshot, Patch: d.Patch}
	return &c, nil
}

// withRevoked returns a copy of cp without the session grant a recorded
// permission.revoked takes back.
func withRevoked(cp *Checkpoint, body []byte) (*Checkpoint, error) {
	ev, err := event.Decode(body)
	if err != nil {
		return nil, err
	}
	d, ok := ev.Data.(event.PermissionRevoked)
	if !ok {
		return nil, errcode.New(errcode.RuntimeCheckpointInvalid, "fold a revocation: not a permission.revoked event")
	}
	c := *cp
	c.Control.SessionGrants = slices.DeleteFunc(slices.Clone(c.Control.SessionGrants), func(t string) bool { return t == d.Action })
	if len(c.Control.SessionGrants) == 0 {
		c.Control.SessionGrants = nil
	}
	return &c, nil
}

// withChange returns a copy of cp with a recorded settings.changed applied.
func withChange(cp *Checkpoint, body []byte) (*Checkpoint, error) {
	ev, err := event.Decode(body)
	if err != nil {
		return nil, err
	}
	d, ok := ev.Data.(event.SettingsChanged)
	if !ok {
		return nil, errcode.New(errcode.RuntimeCheckpointInvalid, "fold settings: not a settings.changed event")
	}
	c := *cp
	c.Settings = c.Settings.WithChange(d)
	return &c, nil
}

func (s *Scan) finish() {
	s.Finished, s.candidate, s.Abandoned = s.candidate, nil, ""
}

// Done ends the scan: Abandoned is cleared when it names the finished turn.
func (s *Scan) Done() {
	if s.Finished != nil && s.Abandoned == s.Finished.Identity.TurnID {
		s.Abandoned = ""
	}
}

// Restored is a session's last finished state: its terminal checkpoint, the
// seq of that checkpoint's event, and the last seq of the log.
type Restored struct {
	Checkpoint *Checkpoint
	AfterSeq   int64
	LastSeq    int64
}

// Restore decides whether a session whose latest checkpoint is cp, saved
// after event afterSeq (cp nil, afterSeq -1: none yet), can be resumed:
// cp must be terminal, and tail — the events from afterSeq-1 on — may
// after it hold only that turn's turn.completed and agent.stopped,
// workspace.lifecycle, patch.applied, job.exited, session.forked, session.rewound (one
// whose checkpoint never followed) and settings.changed events (the
// last fold into the returned checkpoint's settings), input.withdrawn
// events of commands between turns (folded into its queue), and
// workspace.recovered events (folded into its workspace: the patch of a
// turn whose diff failed), and permission.revoked events (folded into its
// session grants); its turn.completed (or a session.forked just
// before a fork's checkpoint) must be there. With no checkpoint, a
// session.forked must be a fork from nothing (no fromTurnId): a fork of a
// finished turn without its checkpoint was interrupted while it was set up.
// Otherwise RUNTIME_CHECKPOINT_INTERRUPTED says what was interrupted.
func Restore(cp *Checkpoint, afterSeq int64, tail []Record) (Restored, error) {
	if cp != nil && cp.Identity.Phase != PhaseTerminal {
		return Restored{}, errcode.Errorf(errcode.RuntimeCheckpointInterrupted,
			"turn %s was interrupted during a %s request (checkpoint at seq %d); nothing is replayed: resume with --fork to continue from the last finished turn",
			cp.Identity.TurnID, cp.Identity.Phase, afterSeq)
	}
	last := afterSeq
	matched := cp == nil
	for len(tail) > 0 && tail[0].Seq <= afterSeq {
		// A fork's checkpoint follows its session.forked, a rewind's its
		// session.rewound; no turn.completed.
		if tail[0].Seq == afterSeq-1 && (tail[0].Type == string(event.TypeSessionForked) || tail[0].Type == string(event.TypeSessionRewound)) {
			matched = true
		}
		tail = tail[1:]
	}
	for _, rec := range tail {
		last = rec.Seq
		switch event.Type(rec.Type) {
		case event.TypeTurnCompleted, event.TypeAgentStopped:
			if cp != nil && event.TurnOf(rec.Body) == cp.Identity.TurnID {
				matched = matched || rec.Type == string(event.TypeTurnCompleted)
				continue
			}
		case event.TypeSessionForked:
			if cp == nil {
				// A fork from a finished turn writes its own terminal
				// checkpoint right after; without it, the fork's setup was
				// interrupted and its history is not here.
				if from, err := forkedFrom(rec.Body); err != nil || from != "" {
					if err != nil {
						return Restored{}, err
					}
					return Restored{}, errcode.Errorf(errcode.RuntimeCheckpointInterrupted,
						"this fork of turn %s was interrupted while it was set up (seq %d has no checkpoint after it); nothing is replayed: fork the original session again", from, rec.Seq)
				}
			}
			continue
		case event.TypeWorkspaceLifecycle, event.TypePatchApplied, event.TypeJobExited:
			// A background job's end is recorded whenever it comes,
			// between turns too: the turn it names has finished.
			continue
		case event.TypeSessionRewound:
			// A rewind whose checkpoint was never written (the process
			// died in between) changed nothing: the session is where it was.
			continue
		case event.TypeSettingsChanged:
			if cp != nil {
				next, err := withChange(cp, rec.Body)
				if err != nil {
					return Restored{}, err
				}
				cp = next
			}
			continue
		case event.TypeWorkspaceRecovered:
			// The failed diff's patch, recovered (or given up) since.
			if cp != nil {
				next, err := withRecovered(cp, rec.Body)
				if err != nil {
					return Restored{}, err
				}
				cp = next
			}
			continue
		case event.TypePermissionRevoked:
			// A session grant taken back since.
			if cp != nil {
				next, err := withRevoked(cp, rec.Body)
				if err != nil {
					return Restored{}, err
				}
				cp = next
			}
			continue
		case event.TypeInputWithdrawn:
			// Withdrawn between turns: no longer queued.
			if cp != nil {
				next, err := withoutInput(cp, rec.Body)
				if err != nil {
					return Restored{}, err
				}
				cp = next
			}
			continue
		}
		return Restored{}, errcode.Errorf(errcode.RuntimeCheckpointInterrupted,
			"turn %s was interrupted after seq %d (%s) before reaching a terminal checkpoint; nothing is replayed: resume with --fork to continue from the last finished turn",
			event.TurnOf(rec.Body), rec.Seq, rec.Type)
	}
	if !matched {
		return Restored{}, errcode.Errorf(errcode.RuntimeCheckpointInterrupted,
			"turn %s wrote its terminal checkpoint but no turn.completed; resume with --fork", cp.Identity.TurnID)
	}
	return Restored{Checkpoint: cp, AfterSeq: afterSeq, LastSeq: last}, nil
}

// forkedFrom returns the turn a recorded session.forked continues from
// ("" for a fork from nothing).
func forkedFrom(body []byte) (string, error) {
	ev, err := event.Decode(body)
	if err != nil {
		return "", err
	}
	d, ok := ev.Data.(event.SessionForked)
	if !ok {
		return "", errcode.New(errcode.RuntimeCheckpointInvalid, "fold a fork: not a session.forked event")
	}
	return d.FromTurnID, nil
}

// withoutInput returns a copy of cp without the queued input or pending
// steering a recorded input.withdrawn names.
func withoutInput(cp *Checkpoint, body []byte) (*Checkpoint, error) {
	ev, err := event.Decode(body)
	if err != nil {
		return nil, err
	}
	d, ok := ev.Data.(event.InputWithdrawn)
	if !ok {
		return nil, errcode.New(errcode.RuntimeCheckpointInvalid, "fold a withdrawal: not an input.withdrawn event")
	}
	c := *cp
	drop := func(in Input) bool { return in.MessageID == d.MessageID }
	c.Control.QueuedInputs = slices.DeleteFunc(slices.Clone(c.Control.QueuedInputs), drop)
	c.Control.PendingSteering = slices.DeleteFunc(slices.Clone(c.Control.PendingSteering), drop)
	return &c, nil
}

// RestoreLog is Restore over a whole log, as if the store's checkpoint
// row were its newest runtime.checkpoint event: the check an imported or
// recorded log passes before it is resumed. Codes: those of Scan.Add and
// Restore.
func RestoreLog(log []Record) (Restored, error) {
	var s Scan
	for _, r := range log {
		if err := s.Add(r); err != nil {
			return Restored{}, err
		}
	}
	if s.n == 0 {
		return Restored{AfterSeq: -1, LastSeq: -1}, nil
	}
	// Skipping to afterSeq-1 is a shortcut: Restore drops the records up
	// to afterSeq itself and looks only at the one at afterSeq-1, so the
	// mutants of these conditions are equivalent (with no checkpoint,
	// LatestSeq is -1 and the loop stops at 0 anyway).
	from := 0
	for from < len(log) && log[from].Seq < s.LatestSeq-1 {
		from++
	}
	if s.Latest == nil {
		from = 0
	}
	return Restore(s.Latest, s.LatestSeq, log[from:])
}

// WithChange returns set with a recorded settings.changed applied: the
// model, the context policy, the token budget and the answer limit it
// names. System text, tools and provider options stay as they were.
func (set Settings) WithChange(d event.SettingsChanged) Settings {
	set.Model = d.Model
	set.Context = compaction.Policy{WindowTokens: d.WindowTokens, ThresholdTokens: d.ThresholdTokens,
		TailMessages: d.TailMessages, ReserveTokens: d.ReserveTokens}
	set.Budget.MaxModelTokens = int64(d.BudgetTokens)
	set.MaxTokens = d.MaxTokens
	return set
}
