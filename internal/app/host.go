package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/store"
)

// The session's patch bookkeeping, decided here once for every front end.
//
// A turn's recorded patch (its terminal checkpoint's workspace patch) is
// made against the workspace's base: the project tree as copied in, moved
// along with the host by each apply made while the workspace was open
// (dockerws.Workspace.Rebase), or the tree as a later open found it. So
// the patches the host received after a turn ended (patch.applied,
// applied or reverted) are exactly those its patch does not know about.
// From them:
//
//   - what harness diff, harness apply, /apply and the exec summary show
//     is the pending patch: the turn's work less what the host has
//     (dockerws.Pending); after an apply it is empty, after more work it
//     is only that work, after apply --reverse it is the work again;
//   - a workspace rebuilt for that turn (resume, a rewind, a lost
//     container) takes those host changes back, replays the turn's patch
//     on the base it was made on, and diffs against the host tree as it
//     is (dockerws.Options.HostChanges);
//   - a rewind checks that rebuild on the host's files before it records
//     anything (dockerws.CheckReplay).

// hostChanges lists the patches the host tree received from session id
// after turn ended (its turn.completed), oldest first: each patch.applied
// recorded since, applied or, with Reverse, taken back. None when turn
// did not end in this session's log (a fork's first turn is its
// origin's). Codes: those of the store, EVENT_* for a log that does not
// decode.
func hostChanges(ctx context.Context, r store.Reader, id, turn string) ([]dockerws.HostChange, error) {
	if turn == "" {
		return nil, nil
	}
	changes, _, err := readForOpen(ctx, r, id, turn)
	return changes, err
}

// readForOpen reads session id's log once for what a workspace's open
// needs of it: the host changes after turn (hostChanges; none for turn
// "") and the number of background jobs the log shows started (their IDs
// go on from it: dockerws.Options.JobsBefore). A log not stored yet (a
// fork's) has neither.
func readForOpen(ctx context.Context, r store.Reader, id, turn string) (changes []dockerws.HostChange, jobs int, err error) {
	ended := false
	err = store.Each(ctx, r, id, -1, func(rec store.Record) error {
		t := event.Type(rec.Type)
		if t == event.TypeJobStarted {
			jobs++
			return nil
		}
		if turn == "" || (t != event.TypeTurnCompleted || ended) && (t != event.TypePatchApplied || !ended) {
			return nil
		}
		ev, err := event.Decode(rec.Body)
		if err != nil {
			return err
		}
		switch d := ev.Data.(type) {
		case event.TurnCompleted:
			ended = d.TurnID == turn
		case event.PatchApplied:
			changes = append(changes, dockerws.HostChange{Patch: d.Patch, Reverse: d.Reverse})
		}
		return nil
	})
	if errcode.Of(err) == errcode.SessNotFound {
		return nil, 0, nil
	}
	return changes, jobs, err
}

// pendingPatch is the patch that brings the host tree at root to the work
// of session id at last, its last finished turn (nil: none), with that
// turn's ID: the turn's recorded patch less what the host received since
// it ended. A diff that failed is its coded error (RecoverPatch recovers
// the work first). Codes: those of lastPatch, hostChanges and
// dockerws.Pending.
func (a *App) pendingPatch(ctx context.Context, id, root string, last *checkpoint.Checkpoint) (patch, turn string, err error) {
	patch, turn, err = lastPatch(last)
	if err != nil || last == nil {
		return patch, turn, err
	}
	changes, err := hostChanges(ctx, a.Store, id, turn)
	if err != nil {
		return "", "", err
	}
	patch, err = dockerws.Pending(ctx, root, patch, changes, a.Opts.MaxFileBytes)
	return patch, turn, err
}

// checkPending is the session's pending patch at last (pendingPatch)
// checked against the host tree at root (CheckApply), with last's turn.
// Work the host already has in full (applied since) is RefusedApplied,
// as the same patch applied twice is, not a session without changes.
func (a *App) checkPending(ctx context.Context, id, root string, last *checkpoint.Checkpoint) (ApplyPlan, string, error) {
	patch, turn, err := a.pendingPatch(ctx, id, root, last)
	if err != nil {
		return ApplyPlan{}, "", err
	}
	plan := a.checkSession(ctx, id, root, patch, false)
	if recorded, _, _ := lastPatch(last); plan.Patch == "" && len(plan.LeftOut) == 0 && strings.TrimSpace(workspace.Carried(recorded)) != "" {
		plan.Patch, plan.Refused = recorded, RefusedApplied
		plan.Conflict = fmt.Sprintf("already applied: the host tree at %s already has these changes; nothing was applied", root)
	}
	return plan, turn, nil
}

// HostLine says, after a rewind, what the host tree has against the turn
// the session is now at: nothing to say when no patch of the session is
// applied there; otherwise that the host keeps what was applied, and what
// /apply (harness apply) would change there to match the turn's files.
func (r Rewound) HostLine(id string) string {
	if len(r.OnHost) == 0 {
		return ""
	}
	root := r.OnHost[len(r.OnHost)-1].Root
	files := PatchFiles(r.Pending)
	if len(files) == 0 {
		return fmt.Sprintf("the host tree at %s already matches this turn's files (the applied patches stay applied; `harness apply %s --reverse` takes the last one back)", root, id)
	}
	added, deleted := 0, 0
	for _, f := range files {
		added, deleted = added+f.Added, deleted+f.Deleted
	}
	return fmt.Sprintf("the host tree at %s keeps the %d applied patch(es) of this session: it differs from this turn's files in %d file(s), +%d −%d (`harness diff %s` shows it; apply brings the host to this turn, `harness apply %s --reverse` takes the last apply back)",
		root, len(r.OnHost), len(files), added, deleted, id, id)
}
