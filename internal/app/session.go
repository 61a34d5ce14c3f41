package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/model/openai"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// Open creates a session, or reopens req.ResumeID at its last finished
// turn; either way it takes the session's lease, opens the workspace and
// opens the session in the App's runtime (one for the process: the
// session leaves it when it closes). A session whose last turn was
// interrupted (or is running in another process) is refused with
// RUNTIME_CHECKPOINT_INTERRUPTED before its lease is touched, unless
// req.Fork is set, which continues in a new session from the last
// finished turn. A session open in this process already is
// RUNTIME_INVALID_INPUT, refused before anything is touched (a fork of it
// is not).
//
// Flags given explicitly (Options: model, base URL, scripted model, context
// window, compact-at, compact-tail, budget, approve) override what a
// resumed or forked session recorded (all but the scripted model and
// approve are left out with req.IgnoreFlags), and the change is recorded
// as settings.changed before any request. A resumed session works on the
// project it recorded (HostRoot), from whatever directory it is opened:
// SESS_PROJECT_MISSING when that directory is gone.
//
// A new session (or fork) is stored with its first event, in one store
// transaction, once everything that can fail before is done (the model,
// the settings, the project, the workspace's image, a recorded patch's
// replay): a failed open, or a process killed during it, leaves no new
// session behind. Sessions without events that older processes left (no
// live holder, created more than a lease ago) are removed first. A
// recorded patch that no longer applies to the project tree is
// SESS_PATCH_CONFLICT naming the file, found before anything is stored.
//
// The Docker workspace otherwise opens in the background
// (dockerws.Start): the first model request does not wait for it. Its
// workspace.lifecycle (opened or restored) is recorded once it is up; a
// failure of that open is printed to Warn as soon as it is known, reaches
// the model's tool calls with its code, and is kept for WorkspaceErr. On
// error nothing stays open.
func (a *App) Open(ctx context.Context, req OpenRequest) (*Session, error) {
	s := &Session{Root: a.HostRoot(nil), a: a, before: -1}
	if err := a.open(ctx, req, s); err != nil {
		_ = s.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return s, nil
}

func (a *App) open(ctx context.Context, req OpenRequest, s *Session) (rerr error) {
	resumeID, fork := req.ResumeID, req.Fork && req.ResumeID != ""
	flags := a.sessionFlags(req.IgnoreFlags)
	conf := a.Conf
	// Start-up housekeeping: sessions without events that processes killed
	// while creating them left (best effort: a store that cannot be
	// written fails below with its own error).
	_, _ = RemoveEmptySessions(ctx, a.Store)
	var (
		cp        *checkpoint.Checkpoint
		abandoned string
		md        = map[string]string{}
		title     string // a fork's: the session it continues, named
		b         built
		err       error
	)
	if resumeID != "" && !fork && a.rt.IsOpen(resumeID) {
		// Refused before its lease is touched: this process holds it
		// for the open session, whose Close releases it.
		return errcode.Errorf(errcode.RuntimeInvalidInput, "session %s is open in this process already: close it before opening it again", resumeID)
	}
	if resumeID != "" {
		row, err := a.Store.Session(ctx, resumeID)
		if err != nil {
			return err
		}
		maps.Copy(md, row.Metadata)
		if !fork {
			s.before = row.LastSeq
		} else if row.Title != "" {
			title = "fork: " + strings.TrimPrefix(row.Title, "fork: ")
		}
		if err := a.project(resumeID, a.HostRoot(md), s); err != nil {
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
		if b, err = a.rebuildModel(resumeID, md, flags); err != nil {
			return err
		}
	} else {
		if b, err = a.buildModel(); err != nil {
			return err
		}
		if c, ok := b.model.(*openai.Client); ok {
			// This session's window: what the server says, unless
			// configured smaller (the App's configuration stays as resolved).
			conf = WithServerWindow(conf, ServerWindow(ctx, c, b.id))
		}
	}
	s.Demo = b.demo
	if c, ok := b.model.(*openai.Client); ok {
		s.models = c
	}
	settings, err := freshSettings(conf, md[metaModel])
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
		if change, err = a.override(settings, md, b, flags); err != nil {
			return err
		}
	}
	approve := approveOr(flags.Approve)
	if flags.Approve == "" {
		approve = approveOr(md[metaApprove])
	}
	s.Ask = approve == "ask"

	id := resumeID
	if resumeID == "" || fork {
		id = event.NewID("sess")
	}
	if err := a.openWorkspace(ctx, id, s, cp, req); err != nil {
		return err
	}
	if err := a.checkReplay(ctx, cp, s); err != nil {
		return err
	}
	var log runtime.EventLog
	if resumeID == "" || fork {
		// A new session (or fork) is stored with its first event, once
		// its workspace is up (and its patch replayed): nothing that fails
		// before leaves a session behind.
		init := map[string]string{metaRoot: s.Root, metaProject: ProjectRoot(s.Root), metaModel: b.id}
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
		sl := &startLog{st: a.Store, init: store.SessionInit{ID: id, Title: title, Metadata: init}, who: a.owner,
			started: func(owner store.Owner) { a.hold(ctx, id, owner, s) }}
		defer func() {
			if err := sl.startErr(); err != nil {
				// The store's own error (SESS_READ_ONLY naming the file…),
				// not the runtime's wrapping of it.
				rerr = err
			}
		}()
		log = sl
	} else if log, err = store.NewSessionLog(ctx, a.Store, id, s.owner); err != nil {
		return err
	}
	policy := runtime.Policy(runtime.AllowAll)
	if s.Ask {
		policy = runtime.AskForMutations
	}
	m := b.model
	if ws, ok := s.Workspace.(*dockerws.Workspace); ok && req.Defer {
		m = beginOnRequest{Model: m, ws: ws}
	}
	// A provider's model is counted at the measured bytes per token until
	// it reports usage; a scripted or demo model has no tokenizer: bytes.
	// Its tools go out under their wire names (aliases).
	estimator, wire := compaction.Algorithm, func(c string) string { return c }
	if _, ok := b.model.(*openai.Client); ok {
		estimator, wire = compaction.AlgorithmRatio, openai.WireName
	}
	sc := runtime.SessionConfig{Model: m, Workspace: s.Workspace, Policy: policy, MaxRounds: a.Opts.MaxRounds,
		Estimator: estimator, WireName: wire}
	if fork {
		s.rt, err = a.rt.Fork(ctx, log, sc, resumeID, cp, abandoned, settings)
	} else {
		s.rt, err = a.rt.RestoreSession(ctx, log, sc, cp, settings)
	}
	if err != nil {
		return err
	}
	if resumeID != "" {
		if err := a.endedJobs(ctx, s, resumeID); err != nil {
			return err
		}
	}
	if change != nil {
		if err := s.rt.ChangeSettings(ctx, *change); err != nil {
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
		if err := s.rt.RecordWorkspace(ctx, phase); err != nil {
			return err
		}
	}
	sess := s.rt
	s.closers = append(s.closers, func() {
		// A session never stored (a Docker session that ran no turn) has
		// nothing to record; any other failure is reported.
		if sl, ok := log.(*startLog); ok && !sl.stored() {
			return
		}
		if s.LostTo() != "" {
			return // taken over: already reported, no longer ours to write
		}
		if err := sess.RecordWorkspace(context.WithoutCancel(ctx), event.PhaseDisposed); err != nil {
			a.warnClose("record the workspace's disposal", err)
		}
	})
	// Before the disposal is recorded (closers run last first), the jobs
	// still running end and their ends are recorded.
	s.closers = append(s.closers, a.watchJobs(ctx, s))
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
// request goes out (OpenRequest.Defer): the open overlaps the model's
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
		if errcode.Of(err) == errcode.WorkspaceCredentialInput {
			// Named with the flags that leave them out, as soon as the
			// copy's scan finds them. The refusal is already known: a
			// stop (the run ending on it) must not cut the naming short,
			// so the walk has its own bound.
			nctx, cancel := context.WithTimeout(context.WithoutCancel(wctx), credentialWalkBound)
			hint := CredentialHint(a.CredentialFiles(nctx, s.Root))
			cancel()
			if hint != "" {
				fmt.Fprintf(a.Warn, "harness: %s: the workspace could not be opened: %s\n", errcode.Of(err), hint)
				return
			}
		}
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
		if got := ws.Origin(); want != "" && got != want && !ws.PatchInTree() {
			// (A patch already in the tree is not replayed: Note says so.)
			fmt.Fprintf(a.Warn, "harness: warning: the project tree at %s changed since this session started; replaying its patch on the current tree\n", s.Root)
		}
		if !reached(ws.Opened()) {
			return
		}
		if err := ws.OpenError(); err != nil {
			fail(err)
			return
		}
		if err := s.rt.RecordWorkspace(wctx, phase); err != nil && wctx.Err() == nil {
			a.warnClose("record the workspace's "+phase, err)
		}
	}()
	return func() {
		stop()
		<-done
	}
}

// resume takes the lease of session id and returns its last finished
// state. A take-over first checks that no turn is running or was
// interrupted, so a refused take-over takes nothing from the process that
// runs the turn — a turn running in another live process is SESS_BUSY
// naming it —, and takes the lease only while the log is still as checked
// (store.AcquireOptions.IfLastSeq): a turn the holder starts in between
// makes the take-over SESS_BUSY too, its process untouched. Then the
// check is repeated under the lease, where the log can no longer move.
func (a *App) resume(ctx context.Context, id string, s *Session) (*checkpoint.Checkpoint, error) {
	owner, err := a.take(ctx, id)
	if err != nil {
		return nil, err
	}
	a.hold(ctx, id, owner, s)
	rp, err := runtime.LatestTerminal(ctx, a.Store, id)
	return rp.Checkpoint, err
}

// take takes session id's lease for this process: a take-over only once
// no turn runs and only while the log is as checked (see resume), so
// every command that takes a session — resume, diff, apply, discard —
// takes it the same safe way. A turn left unfinished by a holder that is
// gone needs no take-over: the lease is taken as without --take-over, and
// what the command makes of that turn is its own rule (resume refuses it,
// discard and recovery read the last finished one). SESS_BUSY names
// --take-over, the running turn's process, or says the session moved on.
func (a *App) take(ctx context.Context, id string) (store.Owner, error) {
	var seen *int64
	if a.Opts.TakeOver {
		rp, err := runtime.LatestTerminal(ctx, a.Store, id)
		switch {
		case errcode.Of(err) == errcode.RuntimeCheckpointInterrupted:
			// An unfinished turn: a live holder runs it (refused, named);
			// a dead one left it, and its lease needs no take-over (the
			// plain acquire reclaims it).
			owner, aerr := a.Store.Acquire(ctx, id, a.owner, store.AcquireOptions{})
			switch {
			case errcode.Of(aerr) == errcode.SessBusy:
				return store.Owner{}, a.running(ctx, id, err)
			case aerr != nil:
				return store.Owner{}, aerr
			}
			return owner, nil
		case err != nil:
			return store.Owner{}, err
		}
		seen = &rp.LastSeq
	}
	owner, err := a.Store.Acquire(ctx, id, a.owner, store.AcquireOptions{TakeOver: a.Opts.TakeOver, IfLastSeq: seen})
	switch {
	case err != nil && seen != nil && errcode.Of(err) == errcode.SessBusy:
		return store.Owner{}, &errcode.Error{Code: errcode.SessBusy, Err: err, Message: fmt.Sprintf(
			"session %s moved on while it was checked (its holder started a turn): nothing was taken; take it over once it is idle", id)}
	case errcode.Of(err) == errcode.SessBusy:
		return store.Owner{}, &errcode.Error{Code: errcode.SessBusy, Err: err, Message: fmt.Sprintf(
			"session %s is open in another live process (%s): close it there, or pass --take-over to take it", id, errcode.Message(err))}
	case err != nil:
		return store.Owner{}, err
	}
	return owner, nil
}

// running turns the refusal err of a take-over of session id into
// SESS_BUSY naming the holder when the turn it found unfinished is running
// in another live process (not interrupted: a crash leaves no live
// holder).
func (a *App) running(ctx context.Context, id string, err error) error {
	if errcode.Of(err) != errcode.RuntimeCheckpointInterrupted {
		return err
	}
	row, rerr := a.Store.Session(ctx, id)
	if rerr != nil || row.Status != store.StatusRunning || row.Lease == nil {
		return err
	}
	o := row.Lease.Owner
	return &errcode.Error{Code: errcode.SessBusy, Err: err, Message: fmt.Sprintf(
		"session %s is running a turn in pid %d on host %s: a take-over would end it; let it finish or cancel it there (esc in the TUI, ctrl+c for exec), then take over",
		id, o.PID, o.Host)}
}

// hold makes s the holder of session id as owner: the lease is renewed
// while s is open, watched for a take-over (s.Lost) and released when s
// closes. (The App's owner stays as New made it: a lease's epoch is the
// session's, given by each Acquire.)
func (a *App) hold(ctx context.Context, id string, owner store.Owner, s *Session) {
	s.owner = owner
	lost, stop := a.keepLease(ctx, id, owner, &s.lostTo)
	s.lost = lost
	s.release = func() {
		stop()
		// A session taken over is no longer this process's to release.
		if err := a.Store.Release(context.WithoutCancel(ctx), id, owner); err != nil && errcode.Of(err) != errcode.SessOwnershipLost {
			a.warnClose("release the session's lease", err)
		}
	}
}

// warnClose reports a failure on the close path: nothing there is dropped
// silently.
func (a *App) warnClose(what string, err error) {
	fmt.Fprintf(a.Warn, "harness: %s: could not %s: %s\n", errcode.Of(err), what, errcode.Message(err))
}

// project binds s to the project directory a session recorded. Opened
// from another directory it works there and says so; a recorded directory
// that is gone is SESS_PROJECT_MISSING: no workspace is ever rebuilt from
// the wrong tree.
func (a *App) project(id, root string, s *Session) error {
	if root == a.Root {
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

// readOnlyNote is the banner of a session that fell back to the read-only
// workspace because Docker answered with msg: what the user does on their
// own machine, never a path of Harness's repository.
func readOnlyNote(msg string) string {
	n := "Docker is not available (" + msg + "): this session is read-only"
	if !strings.Contains(msg, dockerws.StartDaemon) {
		n += "; " + dockerws.StartDaemon
	}
	return n + "; then quit and resume it (`harness resume`) to write and run commands"
}

// openWorkspace opens the Docker workspace on s.Root, or the read-only
// local one when asked, or when Docker is not available and the user did
// not insist. A resumed or forked session's workspace replays the patch
// of cp, its last finished turn; a turn whose diff failed is refused with
// that failure's code, since resuming on the bare tree would silently lose
// its work.
func (a *App) openWorkspace(ctx context.Context, sessionID string, s *Session, cp *checkpoint.Checkpoint, req OpenRequest) error {
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
			o := a.wsOptions(s.Root, sessionID)
			o.Image, o.MaxWorkspaceBytes, o.Patch, o.Defer = a.Conf.Image, a.Opts.MaxWorkspaceBytes, patch, req.Defer
			if cp != nil {
				// What the host received since that turn ended is taken
				// back before its patch is replayed (host.go); job IDs go
				// on from the jobs the session's history holds: its own,
				// and a fork's origin's. One read of each log.
				for _, id := range slices.Compact([]string{cp.Identity.SessionID, sessionID}) {
					turn := ""
					if id == cp.Identity.SessionID {
						turn = cp.Identity.TurnID
					}
					changes, jobs, err := readForOpen(ctx, a.Store, id, turn)
					if err != nil {
						return err
					}
					o.HostChanges = append(o.HostChanges, changes...)
					o.JobsBefore += jobs
				}
			}
			o.Spare = req.Spare && a.Conf.Spares
			o.MaxJobs = a.Opts.MaxJobs
			if missing := a.sandbox(ctx, s.Root, &o); len(missing) > 0 {
				s.Note = strings.Join(missing, "\n")
			}
			ws, err := dockerws.Start(ctx, o)
			if err != nil {
				return err
			}
			s.Workspace = ws
			// Leaving never waits for the container's removal: the daemon
			// finishes it (and the reaper, should it not).
			s.closers = append(s.closers, func() {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				if err := ws.Abandon(cctx); err != nil {
					a.warnClose("remove the workspace's container", err)
				}
			})
			return nil
		}
		if a.Conf.Workspace == "docker" {
			return err
		}
		s.Note = readOnlyNote(errcode.Message(err))
	} else {
		s.Note = "--workspace local: this session is read-only (writes and commands need the Docker workspace)"
	}
	// What the Docker copy leaves out, the local workspace leaves out too.
	ws, err := workspace.OpenLocalWith(s.Root, workspace.LocalOptions{Exclude: a.Opts.Exclude, Carried: patch,
		ListIgnored: func(ctx context.Context) map[string]bool {
			return workspace.GitIgnored(ctx, s.Root, a.SecretEnv())
		}})
	if err != nil {
		return err
	}
	s.Workspace = ws
	s.closers = append(s.closers, func() {
		if err := ws.Close(context.WithoutCancel(ctx)); err != nil {
			a.warnClose("close the workspace", err)
		}
	})
	if patch != "" {
		// Why it is read-only (Docker's own words) comes first.
		s.Note = strings.TrimPrefix(s.Note+"\n", "\n") + "the recorded workspace patch was not replayed: the workspace is read-only; it stays the session's patch (`harness diff` shows it, `harness apply` applies it) and a Docker workspace replays it"
	}
	return nil
}

// checkReplay waits, when the Docker workspace replays a recorded patch
// (a resume or a fork of a turn that changed files), for the scan that
// replays it, so that a patch which no longer applies to the project tree
// is refused before anything is stored, with SESS_PATCH_CONFLICT naming
// the file, not found later by the model's first tool call. Other
// workspaces, and sessions with nothing to replay, do not wait.
func (a *App) checkReplay(ctx context.Context, cp *checkpoint.Checkpoint, s *Session) error {
	ws, ok := s.Workspace.(*dockerws.Workspace)
	if !ok || cp == nil || cp.Workspace == nil || cp.Workspace.Patch == "" {
		return nil
	}
	ws.Begin() // a deferred open starts now: its scan is what is asked
	select {
	case <-ws.Scanned():
	case <-ctx.Done():
		return ctx.Err()
	}
	err := ws.OpenError()
	if err == nil && ws.Origin() != ws.Snapshot() {
		// Patches of this session were applied to the project since
		// that turn: taken back, the turn's patch replayed (host.go).
		if pending, derr := ws.Diff(ctx); derr == nil && pending == "" {
			s.Note = strings.TrimSpace("the session's recorded changes are already in the project tree (applied there): the workspace holds them, and its diff shows what changes from now on\n" + s.Note)
		} else if derr == nil {
			s.Note = strings.TrimSpace("patches of this session are applied to the project tree: the workspace holds the session's work as its last finished turn left it, and its diff shows how the project differs from it\n" + s.Note)
		}
		return nil
	}
	if err == nil && ws.PatchInTree() {
		s.Note = strings.TrimSpace("the session's recorded changes are already in the project tree (applied there): the workspace starts from the tree as it is, and its diff shows what changes from now on\n" + s.Note)
		return nil
	}
	if !errors.Is(err, dockerws.ErrReplayConflict) {
		return nil // any other failure of the open is reported as it happens
	}
	return &errcode.Error{Code: errcode.SessPatchConflict, Err: err, Message: fmt.Sprintf(
		"replay session %s's patch on the project tree at %s: %s — the file changed since the session's last turn; restore it (`harness diff %s` shows the patch) to resume",
		cp.Identity.SessionID, s.Root, errcode.Message(err), cp.Identity.SessionID)}
}

// leasePoll is how often a held session is checked for a take-over.
const leasePoll = time.Second

// keepLease renews the session lease in the background and watches for a
// take-over, until stop is called. lost is closed, and a warning printed,
// as soon as another process holds the session; *to says which, before.
func (a *App) keepLease(ctx context.Context, id string, owner store.Owner, to *string) (lost <-chan struct{}, stop func()) {
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
			} else if row, serr := a.Store.Session(context.WithoutCancel(ctx), id); serr == nil && (row.Lease == nil || row.Lease.Owner.ID != owner.ID) {
				// Held by another process, or by none: one that took the
				// session over and already let it go (a short harness exec)
				// took it all the same; this one is told now, not at its
				// next renewal.
				err = errcode.New(errcode.SessOwnershipLost, "")
			}
			if errcode.Of(err) == errcode.SessOwnershipLost {
				who := "another process"
				if row, serr := a.Store.Session(context.WithoutCancel(ctx), id); serr == nil && row.Lease != nil {
					who = fmt.Sprintf("pid %d on host %s", row.Lease.Owner.PID, row.Lease.Owner.Host)
				}
				fmt.Fprintf(a.Warn, "harness: session %s was taken over by %s: this process no longer writes to it\n", id, who)
				*to = who
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
