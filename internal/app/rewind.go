package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// Turn is one turn of a session as a rewind names it.
type Turn struct {
	N       int       // its number: the session's turn.started events counted from 1
	ID      string    // its turn ID
	Prompt  string    // the user's message that started it ("" for a compaction)
	At      time.Time // when it started
	Status  string    // how it ended (turn.completed); "" when it did not finish
	Files   []event.PatchFile
	Rewound bool // after the point the session is at: kept in the log, out of the model's view
	Current bool // the turn whose end the session is at

	// Own is what the turn itself changed: its patch's difference from
	// the patch of the finished turn it continued from (Files, Added and
	// Deleted count the whole patch, against the session's start).
	Own TurnLines

	cp *checkpoint.Checkpoint // its terminal checkpoint, whole; nil: nothing to return to
}

// Finished says whether the session can be rewound to the end of t.
func (t Turn) Finished() bool { return t.cp != nil }

// Added and Deleted sum the line counts of the turn's workspace patch.
func (t Turn) Added() (n int) {
	for _, f := range t.Files {
		n += f.Added
	}
	return n
}

// Deleted sums the deleted lines of the turn's workspace patch.
func (t Turn) Deleted() (n int) {
	for _, f := range t.Files {
		n += f.Deleted
	}
	return n
}

// Timeline is a session's turns, the point it is at, its last rewind and
// the patches on the host, read from its log in one pass.
type Timeline struct {
	Turns []Turn
	// LastRewind is the session's last session.rewound (nil: none).
	LastRewind *event.SessionRewound
	// OnHost is what patch.applied left applied on the host tree, oldest
	// first (an apply --reverse takes the newest off).
	OnHost []event.PatchApplied

	current    *checkpoint.Checkpoint // the last finished state
	beforeLast *checkpoint.Checkpoint // the finished state before LastRewind
}

// ReadTimeline reads session id's log. Codes: SESS_NOT_FOUND, those of
// the store, the EVENT_* and RUNTIME_CHECKPOINT_* codes of a log that does
// not decode.
func ReadTimeline(ctx context.Context, r store.Reader, id string) (*Timeline, error) {
	if _, err := r.Session(ctx, id); err != nil {
		return nil, err
	}
	tl := &Timeline{}
	byID := map[string]int{}
	inputs := map[string]int{}          // input message ID → turn index
	var finished *checkpoint.Checkpoint // the scan's last finished state before the record at hand
	scan, err := runtime.ScanLog(ctx, r, id, func(rec store.Record, scan *checkpoint.Scan) error {
		before := finished
		finished = scan.Finished
		if f := finished; f != nil && f != before {
			if i, ok := byID[f.Identity.TurnID]; ok {
				tl.Turns[i].cp = f
			}
		}
		switch event.Type(rec.Type) {
		case event.TypeTurnStarted, event.TypeMessageCompleted, event.TypeTurnCompleted,
			event.TypeSessionRewound, event.TypePatchApplied:
		default:
			return nil
		}
		ev, err := event.Decode(rec.Body)
		if err != nil {
			return err
		}
		switch d := ev.Data.(type) {
		case event.TurnStarted:
			byID[d.TurnID] = len(tl.Turns)
			if d.InputMessageID != "" {
				inputs[d.InputMessageID] = len(tl.Turns)
			}
			tl.Turns = append(tl.Turns, Turn{N: len(tl.Turns) + 1, ID: d.TurnID, At: ev.At})
		case event.MessageCompleted:
			if i, ok := inputs[d.MessageID]; ok && tl.Turns[i].Prompt == "" {
				tl.Turns[i].Prompt = d.Content
			}
		case event.TurnCompleted:
			if i, ok := byID[d.TurnID]; ok {
				tl.Turns[i].Status = d.Status
			}
		case event.SessionRewound:
			tl.LastRewind, tl.beforeLast = &d, before
		case event.PatchApplied:
			if d.Reverse {
				if n := len(tl.OnHost); n > 0 {
					tl.OnHost = tl.OnHost[:n-1]
				}
			} else {
				tl.OnHost = append(tl.OnHost, d)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tl.current = scan.Finished
	in := map[string]bool{}
	if tl.current != nil {
		for _, t := range tl.current.Identity.SessionTurns {
			in[t] = true
		}
	}
	for i := range tl.Turns {
		t := &tl.Turns[i]
		t.Rewound = !in[t.ID]
		t.Current = tl.current != nil && tl.current.Identity.TurnID == t.ID
		if t.cp != nil && t.cp.Workspace != nil {
			t.Files = PatchFiles(t.cp.Workspace.Patch)
			t.Own = PatchDelta(tl.startPatch(t, byID), t.cp.Workspace.Patch)
		}
	}
	return tl, nil
}

// startPatch is the workspace patch turn t started from: that of the
// last finished turn before it among its session's turns ("" for none,
// and for one whose patch is against another snapshot).
func (tl *Timeline) startPatch(t *Turn, byID map[string]int) string {
	ids := t.cp.Identity.SessionTurns
	for i := len(ids) - 1; i >= 0; i-- {
		if ids[i] != t.ID {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			k, ok := byID[ids[j]]
			if !ok || tl.Turns[k].cp == nil {
				continue
			}
			if w := tl.Turns[k].cp.Workspace; w != nil && w.Snapshot == t.cp.Workspace.Snapshot {
				return w.Patch
			}
			return ""
		}
		break
	}
	return ""
}

// number returns the number of turn id (0 when it is not in the log).
func (tl *Timeline) number(id string) int {
	for _, t := range tl.Turns {
		if t.ID == id {
			return t.N
		}
	}
	return 0
}

// find returns the turn that ref names: its number (from 1) or its ID.
func (tl *Timeline) find(id, ref string) (*Turn, error) {
	if n, err := strconv.Atoi(ref); err == nil {
		if n < 1 || n > len(tl.Turns) {
			return nil, errcode.Errorf(errcode.SessTurnNotFound, "session %s has %d turn(s): there is no turn %d; nothing changed", id, len(tl.Turns), n)
		}
		return &tl.Turns[n-1], nil
	}
	for i := range tl.Turns {
		if tl.Turns[i].ID == ref {
			return &tl.Turns[i], nil
		}
	}
	return nil, errcode.Errorf(errcode.SessTurnNotFound, "session %s has no turn %q (name a turn by its number, from 1, or its ID; `harness rewind %s` lists them); nothing changed", id, ref, id)
}

// RewindRequest says where a rewind goes: to the end of Turn (its number
// from 1, or its ID), or, with Undo, back to where the session was before
// its last rewind.
type RewindRequest struct {
	Turn string
	Undo bool
}

// Rewound is what a rewind recorded and what the user must know.
type Rewound struct {
	Event event.SessionRewound
	// OnHost lists the patches applied to the host tree that the rewind
	// does not touch: the host's files are not rewound.
	OnHost []event.PatchApplied
	// Pending is the session's pending patch at the turn it is now at
	// (host.go): what apply would change on the host to match its files.
	Pending string
}

// Rewind brings session id back to the end of one of its finished turns
// (or, with Undo, to where it was before its last rewind), under its
// lease (taken as resume takes it: SESS_BUSY while another live process
// holds it or runs a turn): session.rewound, then that turn's terminal
// checkpoint, are appended, so that the next model request is the one
// that checkpoint rebuilds plus the new message and the workspace, rebuilt
// at the next open, holds exactly that turn's files (its patch on the
// project tree). Nothing is removed from the log. The settings in force
// and the accounting that is never refunded (usage, requests, tool calls,
// budget warnings) and inputs queued for the next turn go on as they are.
//
// Codes: SESS_NOT_FOUND; SESS_BUSY; SESS_TURN_NOT_FOUND (no such turn,
// nothing to undo); SESS_TURN_UNFINISHED (the turn has no terminal
// checkpoint); SESS_KEPT_WORK (the last turn's work lives only in a kept
// container: recover or discard it first); the turn's own diff failure
// code when the target turn's patch is unknown; those of the store.
func (a *App) Rewind(ctx context.Context, id string, req RewindRequest) (Rewound, error) {
	if _, err := a.Store.Session(ctx, id); err != nil {
		return Rewound{}, err
	}
	var out Rewound
	err := a.withLease(ctx, id, func(owner store.Owner) error {
		tl, err := ReadTimeline(ctx, a.Store, id)
		if err != nil {
			return err
		}
		cp, data, err := tl.plan(id, req)
		if err != nil {
			return err
		}
		pending, err := a.checkRebuild(ctx, id, cp, data)
		if err != nil {
			return err
		}
		log, err := store.NewSessionLog(ctx, a.Store, id, owner)
		if err != nil {
			return err
		}
		if err := runtime.Rewind(ctx, log, cp, data, time.Now); err != nil {
			return err
		}
		out = Rewound{Event: data, OnHost: tl.OnHost, Pending: pending}
		return nil
	})
	return out, err
}

// plan decides a rewind: the checkpoint to write and its session.rewound.
func (tl *Timeline) plan(id string, req RewindRequest) (*checkpoint.Checkpoint, event.SessionRewound, error) {
	var target *checkpoint.Checkpoint
	switch {
	case req.Undo && tl.LastRewind == nil:
		return nil, event.SessionRewound{}, errcode.Errorf(errcode.SessTurnNotFound, "session %s was never rewound: nothing to undo", id)
	case req.Undo && tl.beforeLast == nil:
		return nil, event.SessionRewound{}, errcode.Errorf(errcode.SessTurnUnfinished, "session %s had finished no turn before its last rewind: nothing to return to", id)
	case req.Undo:
		target = tl.beforeLast
	default:
		t, err := tl.find(id, req.Turn)
		if err != nil {
			return nil, event.SessionRewound{}, err
		}
		if t.cp == nil {
			return nil, event.SessionRewound{}, errcode.Errorf(errcode.SessTurnUnfinished,
				"turn %d (%s) of session %s did not finish (interrupted, or failed before its checkpoint): there is no state at its end to return to; nothing changed", t.N, t.ID, id)
		}
		target = t.cp
	}
	cur := tl.current
	if cur != nil && cur.Workspace != nil && cur.Workspace.DiffError != "" {
		return nil, event.SessionRewound{}, errcode.Errorf(errcode.SessKeptWork,
			"the work of turn %d of session %s lives only in its kept container (its end-of-turn diff failed): a rewind would leave it behind, so nothing changed and the container stays; recover it (`harness diff %s`, larger limits) or give it up (`harness discard %s`), then rewind",
			tl.number(cur.Identity.TurnID), id, id, id)
	}
	patch := ""
	if target.Workspace != nil {
		p, err := target.Workspace.PatchOrError()
		if err != nil {
			return nil, event.SessionRewound{}, &errcode.Error{Code: errcode.Of(err), Err: err, Message: fmt.Sprintf(
				"turn %d of session %s: %s; its files cannot be rebuilt, nothing changed", tl.number(target.Identity.TurnID), id, errcode.Message(err))}
		}
		patch = p
	}
	c := *target
	c.Identity.SessionID = id
	if cur != nil {
		c.Settings = cur.Settings
		c.Accounting.Usage, c.Accounting.ModelRequests, c.Accounting.ToolCalls =
			cur.Accounting.Usage, cur.Accounting.ModelRequests, cur.Accounting.ToolCalls
		c.Control.WarnedBudgets = cur.Control.WarnedBudgets
		c.Control.SessionGrants = cur.Control.SessionGrants // the user's permissions are not rewound
		c.Control.QueuedInputs, c.Control.PendingSteering = cur.Control.QueuedInputs, cur.Control.PendingSteering
	}
	data := event.SessionRewound{SessionID: id, ToTurnID: c.Identity.TurnID, ToTurn: tl.number(c.Identity.TurnID), Patch: patch, Undo: req.Undo}
	if cur != nil {
		data.FromTurnID, data.FromTurn = cur.Identity.TurnID, tl.number(cur.Identity.TurnID)
	}
	return &c, data, nil
}

// PatchFiles lists the files a patch changes with their line counts, in
// its order (none for a patch that does not parse).
func PatchFiles(patch string) []event.PatchFile {
	if strings.TrimSpace(patch) == "" {
		return nil
	}
	files, _, err := gitdiff.Parse(strings.NewReader(patch))
	if err != nil {
		return nil
	}
	out := make([]event.PatchFile, 0, len(files))
	for _, f := range files {
		pf := event.PatchFile{Path: f.NewName}
		if f.IsDelete || pf.Path == "" {
			pf.Path = f.OldName
		}
		for _, fr := range f.TextFragments {
			pf.Added += int(fr.LinesAdded)
			pf.Deleted += int(fr.LinesDeleted)
		}
		out = append(out, pf)
	}
	return out
}

// Applied is the patch.applied that records patch, of turn turnID of
// session id, applied to the host tree at root (reverse: reverted there).
func Applied(id, turnID, root, patch string, reverse bool) event.PatchApplied {
	sum := sha256.Sum256([]byte(patch))
	files := PatchFiles(patch)
	if len(files) == 0 {
		files = []event.PatchFile{{Path: "(unparsed patch)"}}
	}
	return event.PatchApplied{SessionID: id, TurnID: turnID, Root: root, SHA256: hex.EncodeToString(sum[:]),
		Files: files, Patch: patch, Reverse: reverse}
}

// ApplyRecorded applies plan, the workspace patch of turn turnID of
// session id, to the host tree, and records patch.applied: under the
// session's lease, taken first (as resume takes it), so that an apply
// the log cannot record (SESS_BUSY: another live process holds the
// session) changes nothing on the host. A reverting plan records
// patch.applied with reverse. Codes: those of Apply, SESS_BUSY, those of
// the store.
func (a *App) ApplyRecorded(ctx context.Context, id, turnID string, plan ApplyPlan) error {
	return a.withLease(ctx, id, func(owner store.Owner) error {
		if err := Apply(ctx, plan); err != nil {
			return err
		}
		return appendUser(ctx, a.Store, id, owner, Applied(id, turnID, plan.Root, plan.Patch, plan.Reverse))
	})
}

// RevertPlan checks reverting, on the host, the newest patch that
// patch.applied recorded for session id and no later revert took back.
// Codes: SESS_TURN_NOT_FOUND when nothing is applied; those of
// ReadTimeline.
func (a *App) RevertPlan(ctx context.Context, id string) (ApplyPlan, event.PatchApplied, error) {
	tl, err := ReadTimeline(ctx, a.Store, id)
	if err != nil {
		return ApplyPlan{}, event.PatchApplied{}, err
	}
	if len(tl.OnHost) == 0 {
		return ApplyPlan{}, event.PatchApplied{}, errcode.Errorf(errcode.SessTurnNotFound, "session %s has no applied patch on record to revert; nothing changed", id)
	}
	top := tl.OnHost[len(tl.OnHost)-1]
	return a.checkSession(ctx, id, top.Root, top.Patch, true), top, nil
}

// appendUser records d, a user's action, in session id's log as owner.
func appendUser(ctx context.Context, st store.Store, id string, owner store.Owner, d event.Data) error {
	log, err := store.NewSessionLog(ctx, st, id, owner)
	if err != nil {
		return err
	}
	_, err = log.Append(ctx, event.Event{Type: d.EventType(), ID: event.NewID("evt"), At: time.Now(), Actor: event.ActorUser, Data: d})
	return err
}

// CheckRewind says whether Rewind would go ahead for session id, without
// taking its lease or writing anything: the refusals of Rewind that its
// log decides (SESS_TURN_NOT_FOUND, SESS_TURN_UNFINISHED, SESS_KEPT_WORK,
// a target turn's diff failure) and the host tree (SESS_PATCH_CONFLICT:
// the turn's files cannot be rebuilt on it), for a front end that must
// close the session it holds before the rewind proper.
func (a *App) CheckRewind(ctx context.Context, id string, req RewindRequest) error {
	tl, err := ReadTimeline(ctx, a.Store, id)
	if err != nil {
		return err
	}
	cp, data, err := tl.plan(id, req)
	if err != nil {
		return err
	}
	_, err = a.checkRebuild(ctx, id, cp, data)
	return err
}

// checkRebuild checks, on the host's files, that the workspace of session
// id can be rebuilt at cp, the turn a rewind (data) goes to, as the next
// open rebuilds it (host.go): that turn's patch replayed on the base it
// was made on, once what the host received since that turn ended is taken
// back. It returns the session's pending patch there. Codes:
// SESS_PATCH_CONFLICT saying what to do; those of hostChanges.
func (a *App) checkRebuild(ctx context.Context, id string, cp *checkpoint.Checkpoint, data event.SessionRewound) (string, error) {
	row, err := a.Store.Session(ctx, id)
	if err != nil {
		return "", err
	}
	root := a.HostRoot(row.Metadata)
	changes, err := hostChanges(ctx, a.Store, id, cp.Identity.TurnID)
	if err != nil {
		return "", err
	}
	if err := dockerws.CheckReplay(ctx, root, data.Patch, changes); err != nil {
		undo := ""
		if len(changes) > 0 {
			undo = fmt.Sprintf("; a patch of this session applied to the host since then may have been edited there: `harness apply %s --reverse` takes the last apply back", id)
		}
		return "", &errcode.Error{Code: errcode.SessPatchConflict, Err: err, Message: fmt.Sprintf(
			"turn %d's files cannot be rebuilt on the project tree at %s (%s); nothing changed, the session stays where it is%s",
			data.ToTurn, root, errcode.Message(err), undo)}
	}
	return dockerws.Pending(ctx, root, data.Patch, changes, a.Opts.MaxFileBytes)
}
