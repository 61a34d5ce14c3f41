package app

import (
	"context"
	"fmt"
	"time"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/workspace"
)

// OpenRequest says which session to open.
type OpenRequest struct {
	ResumeID string           // "": a new session
	Fork     bool             // with ResumeID: continue in a new session from its last finished turn
	Resolver runtime.Resolver // answers permission questions with --approve ask
}

// Session is one open session and what it holds: its lease, its
// workspace and its runtime.
type Session struct {
	*runtime.Session
	Runtime   *runtime.Runtime
	Workspace workspace.Workspace
	Note      string // why the workspace is read-only, or what its rebuild skipped

	closers []func()
}

// Close records the workspace as disposed, closes it, stops renewing the
// lease and releases it.
func (s *Session) Close() {
	runClosers(s.closers)
	s.closers = nil
}

// Open creates a session, or reopens req.ResumeID at its last finished
// turn; either way it takes the session's lease, opens the workspace and
// the runtime. A session whose last turn was interrupted is refused with
// RUNTIME_CHECKPOINT_INTERRUPTED unless req.Fork is set, which continues in
// a new session from the last finished turn. On error nothing stays open.
func (a *App) Open(ctx context.Context, req OpenRequest) (*Session, error) {
	s := &Session{}
	if err := a.open(ctx, req, s); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (a *App) open(ctx context.Context, req OpenRequest, s *Session) error {
	var (
		id        string
		cp        *runtime.Checkpoint
		abandoned string
		from      string
	)
	resumeID, fork := req.ResumeID, req.Fork && req.ResumeID != ""
	switch {
	case fork:
		if _, err := a.Store.Session(ctx, resumeID); err != nil {
			return err
		}
		last, ab, err := runtime.LastFinished(ctx, a.Store, resumeID)
		if err != nil {
			return err
		}
		cp, abandoned, from = last, ab, resumeID
		id = event.NewID("sess")
		if _, err := a.Store.CreateSession(ctx, store.SessionInit{ID: id, Metadata: map[string]string{"root": a.Root, "model": a.ModelID, "forkedFrom": resumeID}}); err != nil {
			return err
		}
	case resumeID != "":
		id = resumeID
		if _, err := a.Store.Session(ctx, id); err != nil {
			return err
		}
	default:
		id = event.NewID("sess")
		if _, err := a.Store.CreateSession(ctx, store.SessionInit{ID: id, Metadata: map[string]string{"root": a.Root, "model": a.ModelID}}); err != nil {
			return err
		}
	}
	owner, err := a.Store.Acquire(ctx, id, a.owner, store.AcquireOptions{TakeOver: a.Opts.TakeOver})
	if err != nil {
		return err
	}
	a.owner = owner
	s.closers = append(s.closers, func() { _ = a.Store.Release(context.WithoutCancel(ctx), id, owner) })
	s.closers = append(s.closers, a.keepLease(ctx, id, owner))
	if resumeID != "" && !fork {
		rp, err := runtime.LatestTerminal(ctx, a.Store, id)
		if err != nil {
			return err
		}
		cp = rp.Checkpoint
	}
	log, err := store.NewSessionLog(ctx, a.Store, id, owner)
	if err != nil {
		return err
	}
	if err := a.openWorkspace(ctx, id, s); err != nil {
		return err
	}
	if err := a.replayWorkspace(ctx, cp, s); err != nil {
		return err
	}
	policy := runtime.Policy(runtime.AllowAll)
	if a.Opts.Approve == "ask" {
		policy = runtime.AskForMutations
	}
	rt, err := runtime.New(runtime.Config{Model: a.Model, Workspace: s.Workspace, Policy: policy, Resolver: req.Resolver})
	if err != nil {
		return err
	}
	s.Runtime = rt
	if fork {
		s.Session, err = rt.Fork(ctx, log, from, cp, abandoned, a.Settings)
	} else {
		s.Session, err = rt.RestoreSession(ctx, log, cp, a.Settings)
	}
	if err != nil {
		return err
	}
	phase := "opened"
	if cp != nil {
		phase = "restored"
	}
	if err := s.RecordWorkspace(ctx, phase); err != nil {
		return err
	}
	sess := s.Session
	s.closers = append(s.closers, func() { _ = sess.RecordWorkspace(context.WithoutCancel(ctx), "disposed") })
	return nil
}

// openWorkspace opens the Docker workspace, or the read-only local one when
// asked, or when Docker is not available and the user did not insist.
func (a *App) openWorkspace(ctx context.Context, sessionID string, s *Session) error {
	if a.Conf.Workspace != "local" {
		err := dockerws.Ping(ctx, "")
		if err == nil {
			ws, err := dockerws.Start(ctx, dockerws.Options{Root: a.Root, Image: a.Conf.Image, SessionID: sessionID, Exclude: a.Opts.Exclude,
				MaxFiles: a.Opts.MaxFiles, MaxFileBytes: a.Opts.MaxFileBytes, MaxTotalBytes: a.Opts.MaxTotalBytes})
			if err != nil {
				return err
			}
			s.Workspace = ws
			s.closers = append(s.closers, func() {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				ws.Close(cctx)
			})
			return nil
		}
		if a.Conf.Workspace == "docker" {
			return err
		}
		s.Note = "Docker is not available (" + errcode.Message(err) + "): this session is read-only; run scripts/docker.sh to start a daemon"
	} else {
		s.Note = "--workspace local: this session is read-only (writes and commands need the Docker workspace)"
	}
	ws, err := workspace.OpenLocal(a.Root)
	if err != nil {
		return err
	}
	s.Workspace = ws
	s.closers = append(s.closers, func() { ws.Close(context.WithoutCancel(ctx)) })
	return nil
}

// patcher is implemented by workspaces that can replay a recorded patch
// (the Docker workspace).
type patcher interface {
	ApplyPatch(ctx context.Context, patch string) error
	Snapshot() string
}

// replayWorkspace rebuilds a resumed Docker workspace: the current host tree
// plus the patch recorded at the last finished turn. A host tree that
// changed since the session started is reported, not ignored.
func (a *App) replayWorkspace(ctx context.Context, cp *runtime.Checkpoint, s *Session) error {
	if cp == nil || cp.Workspace == nil {
		return nil
	}
	if _, err := cp.Workspace.PatchOrError(); err != nil {
		// The last turn's diff failed: resuming on the bare tree would
		// silently lose its work.
		return err
	}
	if cp.Workspace.Patch == "" {
		return nil
	}
	p, ok := s.Workspace.(patcher)
	if !ok {
		s.Note = "the recorded workspace patch was not replayed: the workspace is read-only; `harness diff` shows it"
		return nil
	}
	if cp.Workspace.Snapshot != "" && p.Snapshot() != cp.Workspace.Snapshot {
		fmt.Fprintln(a.Warn, "harness: warning: the project tree changed since this session started; replaying its patch on the current tree")
	}
	if err := p.ApplyPatch(ctx, cp.Workspace.Patch); err != nil {
		return errcode.Wrap(errcode.Of(err), "replay the session's patch on the current tree (the host changed under it?)", err)
	}
	return nil
}

// keepLease renews the session lease in the background until the returned
// function is called.
func (a *App) keepLease(ctx context.Context, id string, owner store.Owner) func() {
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(store.DefaultLease / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if err := a.Store.Renew(context.WithoutCancel(ctx), id, owner, 0); err != nil {
					fmt.Fprintf(a.Warn, "harness: lease renewal failed: %s\n", errcode.Of(err))
				}
			}
		}
	}()
	return func() { close(stop) }
}
