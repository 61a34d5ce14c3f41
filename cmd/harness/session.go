package main

import (
	"context"
	"fmt"
	"time"

	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// patcher is implemented by workspaces that can replay a recorded patch
// (the Docker workspace).
type patcher interface {
	ApplyPatch(ctx context.Context, patch string) error
	Snapshot() string
}

// openSession creates a session, or reopens resumeID at its last finished
// turn; either way it takes the session's lease, opens the workspace and the
// runtime. A session whose last turn was interrupted is refused with
// RUNTIME_CHECKPOINT_INTERRUPTED unless fork is set, which continues in a new
// session from the last finished turn.
func (a *app) openSession(ctx context.Context, resumeID string) (*runtime.Session, error) {
	return a.openSessionWith(ctx, resumeID, a.opts.Fork, nil)
}

func (a *app) openSessionWith(ctx context.Context, resumeID string, fork bool, resolver runtime.Resolver) (*runtime.Session, error) {
	var (
		id        string
		cp        *runtime.Checkpoint
		abandoned string
		from      string
	)
	switch {
	case resumeID != "" && fork:
		if _, err := a.store.Session(ctx, resumeID); err != nil {
			return nil, err
		}
		last, ab, err := runtime.LastFinished(ctx, a.store, resumeID)
		if err != nil {
			return nil, err
		}
		cp, abandoned, from = last, ab, resumeID
		id = event.NewID("sess")
		if _, err := a.store.CreateSession(ctx, store.SessionInit{ID: id, Metadata: map[string]string{"root": a.root, "model": a.modelID, "forkedFrom": resumeID}}); err != nil {
			return nil, err
		}
	case resumeID != "":
		id = resumeID
		if _, err := a.store.Session(ctx, id); err != nil {
			return nil, err
		}
	default:
		id = event.NewID("sess")
		if _, err := a.store.CreateSession(ctx, store.SessionInit{ID: id, Metadata: map[string]string{"root": a.root, "model": a.modelID}}); err != nil {
			return nil, err
		}
	}
	owner, err := a.store.Acquire(ctx, id, a.owner, store.AcquireOptions{TakeOver: a.opts.TakeOver})
	if err != nil {
		return nil, err
	}
	a.owner = owner
	a.closers = append(a.closers, func() { _ = a.store.Release(context.WithoutCancel(ctx), id, owner) })
	a.keepLease(ctx, id)
	if resumeID != "" && !fork {
		rp, err := runtime.LatestTerminal(ctx, a.store, id)
		if err != nil {
			return nil, err
		}
		cp = rp.Checkpoint
	}
	log, err := store.NewSessionLog(ctx, a.store, id, owner)
	if err != nil {
		return nil, err
	}
	if err := a.openWorkspace(ctx, id); err != nil {
		return nil, err
	}
	if err := a.replayWorkspace(ctx, cp); err != nil {
		return nil, err
	}
	if err := a.newRuntime(resolver); err != nil {
		return nil, err
	}
	var sess *runtime.Session
	if fork {
		sess, err = a.rt.Fork(ctx, log, from, cp, abandoned, a.settings)
	} else {
		sess, err = a.rt.RestoreSession(ctx, log, cp, a.settings)
	}
	if err != nil {
		return nil, err
	}
	phase := "opened"
	if cp != nil {
		phase = "restored"
	}
	if err := sess.RecordWorkspace(ctx, phase); err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { _ = sess.RecordWorkspace(context.WithoutCancel(ctx), "disposed") })
	return sess, nil
}

// replayWorkspace rebuilds a resumed Docker workspace: the current host tree
// plus the patch recorded at the last finished turn. A host tree that
// changed since the session started is reported, not ignored.
func (a *app) replayWorkspace(ctx context.Context, cp *runtime.Checkpoint) error {
	if cp == nil || cp.Workspace == nil || cp.Workspace.Patch == "" {
		return nil
	}
	p, ok := a.ws.(patcher)
	if !ok {
		a.wsNote = "the recorded workspace patch was not replayed: the workspace is read-only; `harness diff` shows it"
		return nil
	}
	if cp.Workspace.Snapshot != "" && p.Snapshot() != cp.Workspace.Snapshot {
		fmt.Fprintln(a.stderr, "harness: warning: the project tree changed since this session started; replaying its patch on the current tree")
	}
	if err := p.ApplyPatch(ctx, cp.Workspace.Patch); err != nil {
		return errcode.Wrap(errcode.Of(err), "replay the session's patch on the current tree (the host changed under it?)", err)
	}
	return nil
}

// keepLease renews the session lease in the background while the process
// lives.
func (a *app) keepLease(ctx context.Context, id string) {
	stop := make(chan struct{})
	a.closers = append(a.closers, func() { close(stop) })
	go func() {
		tick := time.NewTicker(store.DefaultLease / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if err := a.store.Renew(context.WithoutCancel(ctx), id, a.owner, 0); err != nil {
					fmt.Fprintf(a.stderr, "harness: lease renewal failed: %s\n", errcode.Of(err))
				}
			}
		}
	}()
}

// fail prints a coded error and returns the exit status for it.
func (a *app) fail(err error) int {
	if u, ok := err.(*usageError); ok {
		fmt.Fprintln(a.stderr, "harness: "+u.msg)
		return exitUsage
	}
	fmt.Fprintf(a.stderr, "harness: %s: %s\n", errcode.Of(err), errcode.Message(err))
	return exitFailed
}
