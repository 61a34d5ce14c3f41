package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// A turn whose end-of-turn diff failed (over the cap, out of time) keeps
// its workspace's container (dockerws.Keep): its patch is unknown, and
// diff, apply and resume refuse with the failure's code until the work is
// recovered or given up.
//
// Recovering: harness diff, harness apply and harness resume (or exec
// --resume) of such a session adopt the kept container (dockerws.Adopt:
// the host tree must still be the one copied into it, checked against the
// session's recorded snapshot) and compute its diff with this process's
// limits — --max-total-bytes raises the cap, --max-file-bytes and --exclude
// leave generated files out — then record the patch as workspace.recovered,
// which restore folds into the turn's state, and go on as usual. Once the
// patch is recorded the container is removed: the session holds its work
// (what a patch cannot carry, such as binary files, goes with it, as at
// the end of any turn). A recovery that fails leaves the container and
// says what to change.
//
// Giving up: harness discard removes the kept container and records
// workspace.recovered with discarded set and the patch of the turns before
// (patchBefore): the session goes on from the work they recorded; only the
// failed turn's changes are given up. Nothing else ever removes a kept container (the
// reaper leaves them; harness doctor lists them).

// maxPatchBytes bounds a session's workspace patch, at the end of every
// turn (openWorkspace) as in a recovery: it is recorded in one event, then
// in the session's checkpoints, which hold at most store.MaxPayloadBytes
// (16 MiB) in all: half of that. A bigger one is a failed diff whose files
// are kept, not a checkpoint that cannot be stored.
const maxPatchBytes = store.MaxPayloadBytes / 2

// wsOptions are the Docker workspace options every open of session id's
// workspace on root shares, a new one (Start) and an adopted kept one
// (Adopt) alike: its copy-in limits and the patch bound.
func (a *App) wsOptions(root, id string) dockerws.Options {
	return dockerws.Options{Root: root, SessionID: id, Exclude: a.Opts.Exclude,
		MaxFiles: a.Opts.MaxFiles, MaxFileBytes: a.Opts.MaxFileBytes, MaxTotalBytes: a.Opts.MaxTotalBytes,
		MaxPatchBytes: maxPatchBytes, SecretEnv: a.SecretEnv()}
}

// recoverTimeout bounds the adoption and diff of a kept container, like
// the end-of-turn diff's own deadline.
const recoverTimeout = 2 * time.Minute

// RecoverPatch is the patch of harness diff and apply (pendingPatch: the
// one recorded at the last finished turn less what the host received
// since); root is the session's HostRoot.
// When that turn's diff failed, it first recovers the work from the kept container,
// taking the session's lease to record it (SESS_BUSY when another process
// holds the session).
func (a *App) RecoverPatch(ctx context.Context, id string) (patch, root string, err error) {
	row, err := a.Store.Session(ctx, id)
	if err != nil {
		return "", "", err
	}
	root = a.HostRoot(row.Metadata)
	last, _, err := runtime.LastFinished(ctx, a.Store, id)
	if err != nil {
		return "", "", err
	}
	if last == nil || last.Workspace == nil || last.Workspace.DiffError == "" {
		patch, _, err = a.pendingPatch(ctx, id, root, last)
		return patch, root, err
	}
	err = a.withLease(ctx, id, func(owner store.Owner) error {
		// Under the lease the log cannot move: read it again.
		if last, _, err = runtime.LastFinished(ctx, a.Store, id); err != nil {
			return err
		}
		if _, err = a.recoverKept(ctx, id, owner, last, root); err != nil {
			return err
		}
		patch, _, err = a.pendingPatch(ctx, id, root, last)
		return err
	})
	return patch, root, err
}

// PlanApply is what `harness apply ID` applies, checked against the host
// tree: RecoverPatch's patch on the session's HostRoot, and the turn
// patch.applied will name (that patch's: lastPatch); or, with reverse, the
// last applied patch taken back (RevertPlan). noChange says the session
// has no change to apply (the zero plan).
func (a *App) PlanApply(ctx context.Context, id string, reverse bool) (plan ApplyPlan, turn string, noChange bool, err error) {
	if reverse {
		p, applied, err := a.RevertPlan(ctx, id)
		return p, applied.TurnID, false, err
	}
	// A kept container's work is recovered (and recorded) first.
	if _, _, err := a.RecoverPatch(ctx, id); err != nil {
		return ApplyPlan{}, "", false, err
	}
	row, err := a.Store.Session(ctx, id)
	if err != nil {
		return ApplyPlan{}, "", false, err
	}
	last, _, err := runtime.LastFinished(ctx, a.Store, id)
	if err != nil {
		return ApplyPlan{}, "", false, err
	}
	plan, turn, err = a.checkPending(ctx, id, a.HostRoot(row.Metadata), last)
	if err != nil {
		return ApplyPlan{}, "", false, err
	}
	if plan.Patch == "" && plan.Refused == "" && len(plan.LeftOut) == 0 {
		return ApplyPlan{}, "", true, nil
	}
	return plan, turn, false, nil
}

// Discard gives up the kept work of session id's last finished turn: its
// kept container is removed and workspace.recovered(discarded) recorded
// with the patch of the turns before it, so the session goes on from
// what they recorded. Codes:
// WORKSPACE_NOT_FOUND (the turn's patch is known: nothing to discard),
// SESS_BUSY, WORKSPACE_CONTAINER_FAILED.
func (a *App) Discard(ctx context.Context, id string) (removed []string, err error) {
	if _, err := a.Store.Session(ctx, id); err != nil {
		return nil, err
	}
	err = a.withLease(ctx, id, func(owner store.Owner) error {
		last, _, err := runtime.LastFinished(ctx, a.Store, id)
		if err != nil {
			return err
		}
		if last == nil || last.Workspace == nil || last.Workspace.DiffError == "" {
			return errcode.Errorf(errcode.WorkspaceNotFound, "session %s has no kept work to discard: the patch of its last turn is known (`harness diff %s` shows it)", id, id)
		}
		kept, err := dockerws.ListKept(ctx, "", id)
		if err != nil {
			return err
		}
		// What the turns before it recorded stays the session's: only
		// the failed turn's own changes, which lived in the kept
		// container, are given up.
		earlier, err := patchBefore(ctx, a.Store, id, last.Identity.TurnID)
		if err != nil {
			return err
		}
		d := event.WorkspaceRecovered{SessionID: id, TurnID: last.Identity.TurnID, Discarded: true, Patch: earlier}
		for _, k := range kept {
			if err := dockerws.RemoveKept(ctx, "", k.Name); err != nil {
				return err
			}
			removed = append(removed, k.Name)
			d.Container = k.Name
		}
		return appendRecovered(ctx, a.Store, id, owner, d)
	})
	return removed, err
}

// patchBefore is the workspace patch session id held before turn: that of
// the last finished turn before it that the session is at (rewound turns
// left out) whose patch is known, "" when there is none. A turn's patch is
// against the initial snapshot, so it holds every earlier turn's work.
func patchBefore(ctx context.Context, r store.Reader, id, turn string) (string, error) {
	tl, err := ReadTimeline(ctx, r, id)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(tl.Turns, func(t Turn) bool { return t.ID == turn })
	for i--; i >= 0; i-- {
		t := tl.Turns[i]
		if t.Rewound || t.cp == nil || t.cp.Workspace == nil || t.cp.Workspace.DiffError != "" {
			continue
		}
		return t.cp.Workspace.Patch, nil
	}
	return "", nil
}

// withLease runs f holding session id's lease, which it takes (as resume
// does, see take) and then releases.
func (a *App) withLease(ctx context.Context, id string, f func(store.Owner) error) error {
	owner, err := a.take(ctx, id)
	if err != nil {
		return err
	}
	defer func() { _ = a.Store.Release(context.WithoutCancel(ctx), id, owner) }()
	return f(owner)
}

// recoverKept recovers the patch of cp's turn, whose diff failed, from
// session id's kept container, on the project at root, records it and
// removes the container. owner holds the session.
func (a *App) recoverKept(ctx context.Context, id string, owner store.Owner, cp *checkpoint.Checkpoint, root string) (string, error) {
	turn := cp.Identity.TurnID
	kept, err := dockerws.ListKept(ctx, "", id)
	if err != nil {
		return "", err
	}
	if len(kept) == 0 {
		return "", errcode.Errorf(errcode.WorkspaceNotFound,
			"the end-of-turn diff of turn %s failed (%s) and the container its files were kept in is gone: that work is lost; `harness discard %s` lets the session go on from what its earlier turns recorded",
			turn, cp.Workspace.DiffError, id)
	}
	k := kept[0]
	hint := func(err error) error {
		advice := ""
		if errcode.Of(err) == errcode.WorkspaceLimit {
			advice = "raise --max-total-bytes (the diff may hold twice it), or leave generated files out with --max-file-bytes or --exclude, and try again; "
		}
		return &errcode.Error{Code: errcode.Of(err), Err: err, Message: fmt.Sprintf(
			"recover the work of turn %s from the kept container %s: %s; %s`harness discard %s` gives up that turn's changes (what earlier turns recorded stays)",
			turn, k.Name, errcode.Message(err), advice, id)}
	}
	rctx, cancel := context.WithTimeout(ctx, recoverTimeout)
	defer cancel()
	ws, err := dockerws.Adopt(rctx, a.wsOptions(root, id), k.Name, cp.Workspace.Snapshot)
	if err != nil {
		return "", hint(err)
	}
	patch, err := ws.Diff(rctx)
	_ = ws.Close(context.WithoutCancel(ctx)) // kept: the container stays until the patch is recorded
	if err != nil {
		return "", hint(err)
	}
	if err := appendRecovered(ctx, a.Store, id, owner, event.WorkspaceRecovered{SessionID: id, TurnID: turn, Container: k.Name, Patch: patch}); err != nil {
		return "", err
	}
	// The session holds the work now.
	if err := dockerws.RemoveKept(context.WithoutCancel(ctx), "", k.Name); err != nil {
		fmt.Fprintf(a.Warn, "harness: the work is recovered, but its kept container %s could not be removed (%s); `harness doctor` lists it\n", k.Name, errcode.Message(err))
	}
	cp.Workspace = &checkpoint.Workspace{Backend: cp.Workspace.Backend, Snapshot: cp.Workspace.Snapshot, Patch: patch}
	return patch, nil
}

// appendRecovered records d in session id's log as owner.
func appendRecovered(ctx context.Context, st store.Store, id string, owner store.Owner, d event.WorkspaceRecovered) error {
	log, err := store.NewSessionLog(ctx, st, id, owner)
	if err != nil {
		return err
	}
	_, err = log.Append(ctx, event.Event{Type: d.EventType(), ID: event.NewID("evt"), At: time.Now(), Actor: event.ActorUser, Data: d})
	return err
}
