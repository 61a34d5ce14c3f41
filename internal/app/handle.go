package app

import (
	"context"
	"sync"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/model/openai"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// OpenRequest says which session to open, and the choices that are this
// open's (the App itself does not change after New).
type OpenRequest struct {
	ResumeID string // "": a new session
	Fork     bool   // with ResumeID: continue in a new session from its last finished turn
	// IgnoreFlags leaves the command line's session-setting flags
	// (Options: model, base URL, context window, compact-at, compact-tail,
	// max tokens, budget) out of a resume or fork: the session's own
	// settings, a /model switch included, carry on. The TUI sets it for
	// every open after its first (a /fork, a picked session, the reopen
	// after /rewind). The scripted model and --approve apply always (see
	// sessionFlags).
	IgnoreFlags bool
	// Defer starts the Docker workspace's background open with the
	// session's first model request instead of at once (harness exec,
	// which sends its prompt right away: the open then never competes with
	// what comes before the request, and overlaps the model's answer). A
	// resume that replays a patch still begins it at once.
	Defer bool
	// Spare lets the Docker workspace claim a warm spare container and
	// leave one for the next run (dockerws.Options.Spare; harness exec),
	// unless the configuration turns spares off (--no-spare,
	// HARNESS_SPARE=0).
	Spare bool
}

// Session is one open session, the one handle a front end drives: it
// owns the session's lease, its workspace, its runtime session and its
// event subscription, and Close releases them, in one order. Front ends
// reach the runtime only through it.
type Session struct {
	rt        *runtime.Session
	Workspace workspace.Workspace
	Root      string // the project the session works on (recorded when it started): HostRoot
	Demo      bool   // the built-in demo model answers
	Ask       bool   // mutating tools ask first (--approve ask)
	Note      string // why the workspace is read-only, or what its rebuild skipped
	Moved     string // set when Root is not the current directory: says so

	models modelLister // the provider's model list; nil: the demo or a scripted model

	lost   <-chan struct{}
	lostTo string // written before lost is closed
	before int64  // the session's last event stored before this open; -1: none

	a       *App
	owner   store.Owner
	closers []func()
	// release stops renewing the lease and releases it: run after every
	// closer, so the last record (workspace.lifecycle disposed) is still
	// written under the lease.
	release func()

	mu     sync.Mutex
	wsErr  error                 // guarded by mu: the background open's failure, once reported
	sub    *runtime.Subscription // guarded by mu: Subscribe's
	rest   []runtime.Published   // guarded by mu: what the subscription held when Close closed it
	closed bool                  // guarded by mu: the subscription is closed

	closeOnce sync.Once
	closeErr  error
}

// modelLister is a provider that lists the models it serves
// (*openai.Client).
type modelLister interface {
	Models(ctx context.Context) ([]openai.ModelInfo, error)
}

// Before is the sequence number of the session's last event stored
// before this open (-1 for a new session or a fork): what follows it is
// what this open wrote, then the turns.
func (s *Session) Before() int64 { return s.before }

// ID is the session's ID.
func (s *Session) ID() string { return s.rt.ID() }

// Settings are the session's current settings.
func (s *Session) Settings() checkpoint.Settings { return s.rt.Settings() }

// Usage is the session's token usage so far.
func (s *Session) Usage() model.Usage { return s.rt.Usage() }

// Occupancy is the session's context occupancy, in tokens.
func (s *Session) Occupancy() int { return s.rt.Occupancy() }

// Send starts a turn with text, or steers the running one
// (runtime.Session.Send).
func (s *Session) Send(ctx context.Context, text string) (runtime.Sent, error) {
	return s.rt.Send(ctx, text)
}

// Queue queues text as the next turn (runtime.Session.Queue).
func (s *Session) Queue(ctx context.Context, text string) (runtime.Sent, error) {
	return s.rt.Queue(ctx, text)
}

// StartQueued starts the queued turn (runtime.Session.StartQueued).
func (s *Session) StartQueued(ctx context.Context) (runtime.Sent, error) {
	return s.rt.StartQueued(ctx)
}

// Withdraw takes back a queued or not yet applied message
// (runtime.Session.Withdraw).
func (s *Session) Withdraw(ctx context.Context, messageID string) error {
	return s.rt.Withdraw(ctx, messageID)
}

// Cancel cancels the running turn; false when none runs.
func (s *Session) Cancel() bool { return s.rt.Cancel() }

// Answer answers a permission question (runtime.Session.Answer).
func (s *Session) Answer(ctx context.Context, permissionID string, a runtime.PermissionAnswer) error {
	return s.rt.Answer(ctx, permissionID, a)
}

// Revoke takes back the session's grant of tool (runtime.Session.Revoke).
func (s *Session) Revoke(ctx context.Context, tool string) error {
	return s.rt.Revoke(ctx, tool)
}

// Compact compacts the session's context (runtime.Session.Compact).
func (s *Session) Compact(ctx context.Context, focus string) (runtime.Sent, error) {
	return s.rt.Compact(ctx, focus)
}

// Idle is closed when no turn is active (runtime.Session.Idle).
func (s *Session) Idle() <-chan struct{} { return s.rt.Idle() }

// State is the owner's state and a channel closed at its next change
// (runtime.Session.State): front ends show it instead of guessing busy.
func (s *Session) State() (runtime.SessionState, <-chan struct{}) { return s.rt.State() }

// Wait waits until no turn is active and returns how the last one ended.
func (s *Session) Wait(ctx context.Context) (runtime.Outcome, error) { return s.rt.Wait(ctx) }

// Lost is closed when another process takes the session over; this one
// must stop writing to it. LostTo then says who took it.
func (s *Session) Lost() <-chan struct{} { return s.lost }

// LostTo says which process took the session over ("pid N on host H"),
// once Lost is closed; "" before.
func (s *Session) LostTo() string {
	select {
	case <-s.lost:
		return s.lostTo
	default:
		return ""
	}
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

// Patch returns the session's pending patch (host.go): the workspace
// patch recorded at its last finished turn — what its end-of-turn diff
// found, read back from the store, so no second diff of the workspace
// runs (a diff that failed, or ran out of time, does not run again) —
// less what the host received since. A failed diff is its coded error.
func (s *Session) Patch(ctx context.Context) (string, error) {
	rp, err := runtime.LatestTerminal(ctx, s.a.Store, s.ID())
	if err != nil {
		return "", err
	}
	patch, _, err := s.a.pendingPatch(ctx, s.ID(), s.Root, rp.Checkpoint)
	return patch, err
}

// Diff is the workspace's diff against the project tree, now.
func (s *Session) Diff(ctx context.Context) (string, error) { return s.Workspace.Diff(ctx) }

// Files lists the workspace's files (for path completion).
func (s *Session) Files(ctx context.Context) ([]string, error) { return s.Workspace.List(ctx, ".") }

// WorkspaceInfo describes the workspace (backend, image).
func (s *Session) WorkspaceInfo() workspace.Info { return s.Workspace.Info() }

// ReadOnly reports whether the workspace refuses writes and commands.
func (s *Session) ReadOnly() bool { return !workspace.Attested(s.Workspace) }

// SwitchModel makes name the model of the session's following requests
// (App.SwitchModel); the note says when the name was not checked.
func (s *Session) SwitchModel(ctx context.Context, name string) (note string, err error) {
	return s.a.SwitchModel(ctx, s, name)
}

// Subscribe starts the session's event stream after seq after (-1: all):
// Ready and Drain deliver it, those already stored first, without gaps or
// repeats. Close ends it, last. Subscribe once.
func (s *Session) Subscribe(ctx context.Context, after int64) error {
	sub, err := s.rt.Events(ctx, after)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.sub = sub
	s.mu.Unlock()
	return nil
}

var never = make(chan struct{})

// Ready is signaled when events may be waiting; call Drain after it
// fires. Before Subscribe it never fires.
func (s *Session) Ready() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sub == nil {
		return never
	}
	return s.sub.Ready()
}

// Drain returns and clears the events delivered so far, each once. After
// Close it returns, once, what was delivered up to the close (the
// workspace's disposal included) and not drained yet.
func (s *Session) Drain() []runtime.Published {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		rest := s.rest
		s.rest = nil
		return rest
	}
	if s.sub == nil {
		return nil
	}
	return s.sub.Drain()
}

// Close closes the session, in this order: it cancels the running turn
// and waits (bounded by ctx) until it has ended, so that the session stays
// resumable; it records the workspace as disposed and closes the
// workspace; it stops renewing the lease and releases it; last it ends
// the event subscription (what it still held stays for one Drain). It
// returns the runtime's error when the turn did not end within ctx. A
// second Close returns the first's error and does nothing.
func (s *Session) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { s.closeErr = s.close(ctx) })
	return s.closeErr
}

func (s *Session) close(ctx context.Context) error {
	var err error
	if s.rt != nil {
		err = s.rt.Close(ctx)
	}
	runClosers(s.closers)
	s.closers = nil
	if s.release != nil {
		s.release()
		s.release = nil
	}
	s.mu.Lock()
	s.closed = true
	if s.sub != nil {
		s.rest = s.sub.Drain()
		s.sub.Close()
	}
	s.mu.Unlock()
	return err
}

// ApplyPatch is the patch /apply applies to the host tree (pendingPatch:
// the one recorded at the session's last finished turn less what the host
// received since, as for harness apply) and that turn's ID ("" before the
// first). A diff that failed is its coded error: this process holds the
// session, so its kept work is recovered by `harness diff` once the
// session is closed.
func (s *Session) ApplyPatch(ctx context.Context) (patch, turn string, err error) {
	last, _, err := runtime.LastFinished(ctx, s.a.Store, s.ID())
	if err != nil {
		return "", "", err
	}
	return s.a.pendingPatch(ctx, s.ID(), s.Root, last)
}

// CheckApply checks ApplyPatch against the session's host tree (Root),
// as `harness apply` does.
// A session whose work the host already has in full (applied since) is
// RefusedApplied, not a session with no change.
func (s *Session) CheckApply(ctx context.Context) (ApplyPlan, error) {
	last, _, err := runtime.LastFinished(ctx, s.a.Store, s.ID())
	if err != nil {
		return ApplyPlan{}, err
	}
	plan, _, err := s.a.checkPending(ctx, s.ID(), s.Root, last)
	return plan, err
}

// Apply applies plan's patch to plan.Root (checked again: the host may
// have changed since CheckApply), records patch.applied against the
// session's last finished turn and moves the Docker workspace's base
// with the host (host.go): its diff, and the next turn's patch, then
// carry only what the host does not have. turn is that turn ("": none
// finished, nothing recorded); recErr says why the record or the move
// failed, the patch applied all the same.
func (s *Session) Apply(ctx context.Context, plan ApplyPlan) (turn string, recErr, err error) {
	last, _, err := runtime.LastFinished(ctx, s.a.Store, s.ID())
	if err != nil {
		return "", nil, err
	}
	if err := Apply(ctx, ApplyPlan{Root: plan.Root, Patch: plan.Patch, SecretEnv: s.a.SecretEnv()}); err != nil {
		return "", nil, err
	}
	if last == nil {
		return "", nil, nil
	}
	turn = last.Identity.TurnID
	if err := s.rt.RecordApplied(ctx, Applied(s.ID(), turn, plan.Root, plan.Patch, false)); err != nil {
		return turn, err, nil
	}
	if ws, ok := s.Workspace.(*dockerws.Workspace); ok {
		if err := ws.Rebase(ctx, dockerws.HostChange{Patch: plan.Patch}); err != nil {
			return turn, err, nil
		}
	}
	return turn, nil, nil
}
