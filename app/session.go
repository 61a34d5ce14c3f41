package app

import (
	"context"
	"fmt"
	"maps"
	"os"
	"sync"
	"time"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
	"github.com/harness-dev/harness/model/openai"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/workspace"
)

// OpenRequest says which session to open.
type OpenRequest struct {
	ResumeID string // "": a new session
	Fork     bool   // with ResumeID: continue in a new session from its last finished turn
}

// Session is one open session and what it holds: its lease, its
// workspace and its runtime.
type Session struct {
	*runtime.Session
	Runtime   *runtime.Runtime
	Workspace workspace.Workspace
	Root      string // the project the session works on (recorded when it started)
	Demo      bool   // the built-in demo model answers
	Ask       bool   // mutating tools ask first (--approve ask)
	Note      string // why the workspace is read-only, or what its rebuild skipped
	Moved     string // set when Root is not the current directory: says so
	// Lost is closed when another process takes the session over; this one
	// must stop writing to it.
	Lost <-chan struct{}

	owner   store.Owner
	closers []func()

	mu    sync.Mutex
	wsErr error // guarded by mu: the background open's failure, once reported
}

// WorkspaceErr is the failure of the workspace's background open when it
// was known before the session closed (it was printed then), or nil: a
// session whose workspace was refused (a credential-like file, a limit, a
// replay that no longer applies) could not do its work, even when its
// turn completed without touching the workspace.
func (s *Session) WorkspaceErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wsErr
}

// Close records the workspace as disposed, closes it, stops renewing the
// lease and releases it.
func (s *Session) Close() {
	runClosers(s.closers)
	s.closers = nil
}

// Open creates a session, or reopens req.ResumeID at its last finished
// turn; either way it takes the session's lease, opens the workspace and
// the runtime. A session whose last turn was interrupted (or is running in
// another process) is refused with RUNTIME_CHECKPOINT_INTERRUPTED before
// its lease is touched, unless req.Fork is set, which continues in a new
// session from the last finished turn.
//
// Flags given explicitly (Options: model, base URL, scripted model, context
// window, compact-at, compact-tail, budget, approve) override what a
// resumed or forked session recorded, and the change is recorded as
// settings.changed before any request. A resumed session works on the
// project it recorded, from whatever directory it is opened:
// SESS_PROJECT_MISSING when that directory is gone.
//
// Everything that can fail before the session is written (the model, the
// settings, the project, the workspace's image) is checked first, so a
// failed open leaves no new session behind. The Docker workspace opens in
// the background (dockerws.Start): the first model request does not wait
// for it. Its workspace.lifecycle (opened or restored) is recorded once it
// is up; a failure of that open is printed to Warn as soon as it is known,
// reaches the model's tool calls with its code, and is kept for
// WorkspaceErr. On error nothing stays open.
func (a *App) Open(ctx context.Context, req OpenRequest) (*Session, error) {
	s := &Session{Root: a.Root}
	if err := a.open(ctx, req, s); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (a *App) open(ctx context.Context, req OpenRequest, s *Session) error {
	resumeID, fork := req.ResumeID, req.Fork && req.ResumeID != ""
	var (
		cp        *runtime.Checkpoint
		abandoned string
		md        = map[string]string{}
		b         built
		err       error
	)
	if resumeID != "" {
		row, err := a.Store.Session(ctx, resumeID)
		if err != nil {
			return err
		}
		maps.Copy(md, row.Metadata)
		if err := a.project(resumeID, md[metaRoot], s); err != nil {
			return err
		}
		if fork {
			cp, abandoned, err = runtime.LastFinished(ctx, a.Store, resumeID)
		} else {
			cp, err = a.resume(ctx, resumeID, s)
		}
		if err != nil {
			return err
		}
		if b, err = a.rebuildModel(resumeID, md); err != nil {
			return err
		}
	} else {
		if b, err = a.buildModel(); err != nil {
			return err
		}
		if c, ok := b.model.(*openai.Client); ok {
			a.Conf = WithServerWindow(a.Conf, ServerWindow(ctx, c, b.id))
		}
	}
	s.Demo = b.demo
	settings, err := a.freshSettings(md[metaModel])
	if err != nil {
		return err
	}
	if resumeID == "" {
		settings.Model = b.id
		if settings, err = a.withInstructions(settings, s.Root); err != nil {
			return err
		}
	} else if cp != nil {
		settings = cp.Settings
	}
	var change *event.SettingsChanged
	if resumeID != "" {
		if change, err = a.override(settings, md, b); err != nil {
			return err
		}
	}
	approve := approveOr(a.Opts.Approve)
	if a.Opts.Approve == "" {
		approve = approveOr(md[metaApprove])
	}
	s.Ask = approve == "ask"

	id := resumeID
	if resumeID == "" || fork {
		// A new session (or fork) is written only once its workspace is up.
		id = event.NewID("sess")
		if err := a.openWorkspace(ctx, id, s, cp); err != nil {
			return err
		}
		init := map[string]string{metaRoot: s.Root, metaModel: b.id}
		if b.baseURL != "" {
			init[metaBaseURL] = b.baseURL
		}
		if s.Ask {
			init[metaApprove] = "ask"
		}
		if fork {
			init[metaForkedFrom] = resumeID
			init[metaModel] = settings.Model // the fork starts on the saved settings; a change follows
		}
		if _, err := a.Store.CreateSession(ctx, store.SessionInit{ID: id, Metadata: init}); err != nil {
			return err
		}
	}
	if resumeID == "" || fork {
		if err := a.acquire(ctx, id, s); err != nil {
			return err
		}
	} else if err := a.openWorkspace(ctx, id, s, cp); err != nil {
		return err
	}
	log, err := store.NewSessionLog(ctx, a.Store, id, s.owner)
	if err != nil {
		return err
	}
	policy := runtime.Policy(runtime.AllowAll)
	if s.Ask {
		policy = runtime.AskForMutations
	}
	m := b.model
	if ws, ok := s.Workspace.(*dockerws.Workspace); ok && a.Opts.DeferWorkspace {
		m = beginOnRequest{Model: m, ws: ws}
	}
	rt, err := runtime.New(runtime.Config{Model: m, Workspace: s.Workspace, Policy: policy})
	if err != nil {
		return err
	}
	s.Runtime = rt
	if fork {
		s.Session, err = rt.Fork(ctx, log, resumeID, cp, abandoned, settings)
	} else {
		s.Session, err = rt.RestoreSession(ctx, log, cp, settings)
	}
	if err != nil {
		return err
	}
	if change != nil {
		if err := s.ChangeSettings(ctx, *change); err != nil {
			return err
		}
		upd := map[string]string{metaModel: change.Model, metaBaseURL: change.BaseURL, metaApprove: ""}
		if change.Approve == "ask" {
			upd[metaApprove] = "ask"
		}
		if err := a.Store.SetMetadata(ctx, id, s.owner, upd); err != nil {
			return err
		}
	}
	phase := "opened"
	if cp != nil {
		phase = "restored"
	}
	bg, _ := s.Workspace.(*dockerws.Workspace)
	if bg == nil {
		if err := s.RecordWorkspace(ctx, phase); err != nil {
			return err
		}
	}
	sess := s.Session
	s.closers = append(s.closers, func() { _ = sess.RecordWorkspace(context.WithoutCancel(ctx), "disposed") })
	if bg != nil {
		want := "" // a replayed patch is checked against the tree it was made on
		if cp != nil && cp.Workspace != nil && cp.Workspace.Patch != "" {
			want = cp.Workspace.Snapshot
		}
		s.closers = append(s.closers, a.watchOpen(ctx, s, bg, phase, want))
	}
	return nil
}

// beginOnRequest lets a deferred Docker workspace open as the first model
// request goes out (Options.DeferWorkspace): the open overlaps the model's
// answer, and a turn that never touches the workspace never waits for it.
type beginOnRequest struct {
	model.Model
	ws *dockerws.Workspace
}

func (m beginOnRequest) Stream(ctx context.Context, req model.Request) (model.Stream, error) {
	m.ws.Begin()
	return m.Model.Stream(ctx, req)
}

// watchOpen follows the background open of a Docker workspace: once the
// tree is scanned it warns when the tree differs from the snapshot the
// session recorded (want, "" for none); once the workspace is up it
// records workspace.lifecycle(phase); a failure, at either step, is
// printed to Warn with its code and kept for WorkspaceErr. The function
// returned stops it and waits for it, after it reported what was already
// known (run it before the session records "disposed").
func (a *App) watchOpen(ctx context.Context, s *Session, ws *dockerws.Workspace, phase, want string) func() {
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	// reached waits for c; a stop does not hide what is already known.
	reached := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
		}
		select {
		case <-c:
			return true
		case <-wctx.Done():
			return false
		}
	}
	fail := func(err error) {
		s.mu.Lock()
		s.wsErr = err
		s.mu.Unlock()
		fmt.Fprintf(a.Warn, "harness: %s: the workspace could not be opened: %s\n", errcode.Of(err), errcode.Message(err))
	}
	go func() {
		defer close(done)
		if !reached(ws.Scanned()) {
			return
		}
		if err := ws.OpenError(); err != nil {
			fail(err)
			return
		}
		if got := ws.Snapshot(); want != "" && got != want {
			fmt.Fprintf(a.Warn, "harness: warning: the project tree at %s changed since this session started; replaying its patch on the current tree\n", s.Root)
		}
		if !reached(ws.Opened()) {
			return
		}
		if err := ws.OpenError(); err != nil {
			fail(err)
			return
		}
		_ = s.RecordWorkspace(wctx, phase)
	}()
	return func() {
		stop()
		<-done
	}
}

// resume takes the lease of session id and returns its last finished
// state. A take-over first checks that no turn is running or was
// interrupted, so a refused take-over takes nothing from the process that
// runs the turn; then the check is repeated under the lease, where the log
// can no longer move.
func (a *App) resume(ctx context.Context, id string, s *Session) (*runtime.Checkpoint, error) {
	if a.Opts.TakeOver {
		if _, err := runtime.LatestTerminal(ctx, a.Store, id); err != nil {
			return nil, err
		}
	}
	if err := a.acquire(ctx, id, s); err != nil {
		return nil, err
	}
	rp, err := runtime.LatestTerminal(ctx, a.Store, id)
	return rp.Checkpoint, err
}

// acquire takes the session's lease for s, renews it while s is open and
// releases it when s closes. SESS_BUSY names --take-over.
func (a *App) acquire(ctx context.Context, id string, s *Session) error {
	owner, err := a.Store.Acquire(ctx, id, a.owner, store.AcquireOptions{TakeOver: a.Opts.TakeOver})
	if err != nil {
		if errcode.Of(err) == errcode.SessBusy {
			return &errcode.Error{Code: errcode.SessBusy, Err: err, Message: fmt.Sprintf(
				"session %s is open in another live process (%s): close it there, or pass --take-over to take it", id, errcode.Message(err))}
		}
		return err
	}
	a.owner, s.owner = owner, owner
	s.closers = append(s.closers, func() { _ = a.Store.Release(context.WithoutCancel(ctx), id, owner) })
	lost, stop := a.keepLease(ctx, id, owner)
	s.Lost = lost
	s.closers = append(s.closers, stop)
	return nil
}

// project binds s to the project directory a session recorded. Opened
// from another directory it works there and says so; a recorded directory
// that is gone is SESS_PROJECT_MISSING: no workspace is ever rebuilt from
// the wrong tree.
func (a *App) project(id, root string, s *Session) error {
	if root == "" || root == a.Root {
		return nil
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return &errcode.Error{Code: errcode.SessProjectMissing, Err: err, Message: fmt.Sprintf(
			"session %s belongs to the project %s, which is gone: restore that directory to resume it (nothing was rebuilt from %s)", id, root, a.Root)}
	}
	s.Root = root
	s.Moved = fmt.Sprintf("session %s belongs to the project %s: working there, not in %s", id, root, a.Root)
	return nil
}

// openWorkspace opens the Docker workspace on s.Root, or the read-only
// local one when asked, or when Docker is not available and the user did
// not insist. A resumed or forked session's workspace replays the patch
// of cp, its last finished turn; a turn whose diff failed is refused with
// that failure's code, since resuming on the bare tree would silently lose
// its work.
func (a *App) openWorkspace(ctx context.Context, sessionID string, s *Session, cp *runtime.Checkpoint) error {
	patch := ""
	if cp != nil && cp.Workspace != nil {
		p, err := cp.Workspace.PatchOrError()
		switch {
		case err != nil && s.owner.ID == "":
			// A fork: the work is the origin's, recovered there.
			return &errcode.Error{Code: errcode.Of(err), Err: err, Message: errcode.Message(err) +
				"; recover it in the session it belongs to first (`harness diff " + cp.Identity.SessionID + "` with larger limits), then fork"}
		case err != nil:
			if p, err = a.recoverKept(ctx, sessionID, s.owner, cp, s.Root); err != nil {
				return err
			}
		}
		patch = p
	}
	if a.Conf.Workspace != "local" {
		err := dockerws.Ping(ctx, "")
		if err == nil {
			ws, err := dockerws.Start(ctx, dockerws.Options{Root: s.Root, Image: a.Conf.Image, SessionID: sessionID, Exclude: a.Opts.Exclude,
				MaxFiles: a.Opts.MaxFiles, MaxFileBytes: a.Opts.MaxFileBytes, MaxTotalBytes: a.Opts.MaxTotalBytes,
				MaxWorkspaceBytes: a.Opts.MaxWorkspaceBytes, Patch: patch, Defer: a.Opts.DeferWorkspace})
			if err != nil {
				return err
			}
			s.Workspace = ws
			// Leaving never waits for the container's removal: the daemon
			// finishes it (and the reaper, should it not).
			s.closers = append(s.closers, func() {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				_ = ws.Abandon(cctx)
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
	ws, err := workspace.OpenLocal(s.Root)
	if err != nil {
		return err
	}
	s.Workspace = ws
	s.closers = append(s.closers, func() { _ = ws.Close(context.WithoutCancel(ctx)) })
	if patch != "" {
		s.Note = "the recorded workspace patch was not replayed: the workspace is read-only; `harness diff` shows it"
	}
	return nil
}

// leasePoll is how often a held session is checked for a take-over.
const leasePoll = time.Second

// keepLease renews the session lease in the background and watches for a
// take-over, until stop is called. lost is closed, and a warning printed,
// as soon as another process holds the session.
func (a *App) keepLease(ctx context.Context, id string, owner store.Owner) (lost <-chan struct{}, stop func()) {
	done := make(chan struct{})
	gone := make(chan struct{})
	go func() {
		poll := time.NewTicker(leasePoll)
		defer poll.Stop()
		renewed := time.Now()
		for {
			select {
			case <-done:
				return
			case <-poll.C:
			}
			var err error
			if time.Since(renewed) >= store.DefaultLease/3 {
				err = a.Store.Renew(context.WithoutCancel(ctx), id, owner, 0)
				renewed = time.Now()
			} else if row, serr := a.Store.Session(context.WithoutCancel(ctx), id); serr == nil && row.Lease != nil && row.Lease.Owner.ID != owner.ID {
				err = errcode.New(errcode.SessOwnershipLost, "")
			}
			if errcode.Of(err) == errcode.SessOwnershipLost {
				who := "another process"
				if row, serr := a.Store.Session(context.WithoutCancel(ctx), id); serr == nil && row.Lease != nil {
					who = fmt.Sprintf("pid %d on host %s", row.Lease.Owner.PID, row.Lease.Owner.Host)
				}
				fmt.Fprintf(a.Warn, "harness: session %s was taken over by %s: this process no longer writes to it\n", id, who)
				close(gone)
				return
			}
			if err != nil {
				fmt.Fprintf(a.Warn, "harness: lease renewal failed: %s\n", errcode.Of(err))
			}
		}
	}()
	return gone, func() { close(done) }
}
