// Package tuiengine adapts the app (store, workspace, runtime session) to
// tui.Engine, the interface the terminal UI drives: each turn command is
// one session command, and the session's events come back through Next.
// It is the one package that knows both app and tui.
package tuiengine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/tui"
	"github.com/harness-dev/harness/tui/diffview"
)

// Held keeps what is written while the TUI owns the terminal and
// writes it out once released.
type Held struct {
	mu  sync.Mutex
	buf bytes.Buffer
	out io.Writer // set once released
}

func (h *Held) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.out != nil {
		return h.out.Write(p)
	}
	return h.buf.Write(p)
}

// Take returns and clears what was held since the last take.
func (h *Held) Take() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.buf.String()
	h.buf.Reset()
	return s
}

// Release writes out what was held, and from then on passes writes
// through to w.
func (h *Held) Release(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.out == nil {
		h.out = w
		_, _ = h.buf.WriteTo(w)
	}
}

// tuiSession is the open session as the screen follows it: the app's
// handle, which owns everything the session holds, and what Next tracks.
type tuiSession struct {
	// ctx is the Open's, without its cancellation: closing the session
	// (which waits for its turn to end) must work after the screen's
	// context ended.
	ctx  context.Context
	id   string
	sess *app.Session
	gone chan struct{} // closed when the session is replaced or closed

	// lost is the session's take-over signal until Next reported it; nil
	// after (one Next runs at a time).
	lost <-chan struct{}
	// told is the owner's state as Next last reported it (one Next runs
	// at a time); the screen takes a session it opens to be idle.
	told runtime.SessionState
	// open is the run whose turn.started Next delivered and whose
	// turn.completed it has not ("" for none; one Next runs at a time).
	open string
}

// states names the owner's states for the screen.
var states = map[runtime.SessionState]tui.State{
	runtime.StateIdle:      tui.StateIdle,
	runtime.StateAdmitting: tui.StateAdmitting,
	runtime.StateRunning:   tui.StateRunning,
	runtime.StateEnding:    tui.StateEnding,
	runtime.StateClosed:    tui.StateClosed,
}

// Engine adapts the app (store, workspace, runtime session) to
// tui.Engine: each turn command is one session command.
type Engine struct {
	a    *app.App
	held *Held

	openMu sync.Mutex // serializes Open and close
	// opened is set by the first successful open (guarded by openMu): the
	// command line's session flags are that open's; later ones (a /fork,
	// a picked session, the reopen after /rewind) continue with what each
	// session recorded (app.OpenRequest.IgnoreFlags).
	opened bool
	// closedOn (guarded by openMu) is the session an engine-made reopen
	// (after a rebuild or a rewind) failed to open again: the next prompt
	// tries again, rather than leaving the screen with no session.
	closedOn string

	mu      sync.Mutex
	cur     *tuiSession   // guarded by mu
	changed chan struct{} // guarded by mu; closed and replaced when cur changes
}

var _ tui.Engine = (*Engine)(nil)

// New returns an engine with no session open; Open opens one. What the
// app writes meanwhile goes to held, and Open shows it in the banner.
func New(a *app.App, held *Held) *Engine {
	return &Engine{a: a, held: held, changed: make(chan struct{})}
}

func (e *Engine) current() (*tuiSession, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur == nil {
		return nil, errcode.New(errcode.SessNotFound, "no session is open")
	}
	return e.cur, nil
}

// SessionID is the ID of the open session, or "" when none is.
func (e *Engine) SessionID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur == nil {
		return ""
	}
	return e.cur.id
}

// Open opens req's session, then closes the one it replaces.
func (e *Engine) Open(ctx context.Context, req tui.OpenRequest) (tui.Session, error) {
	e.openMu.Lock()
	defer e.openMu.Unlock()
	return e.open(ctx, req)
}

// open is Open with openMu held.
func (e *Engine) open(ctx context.Context, req tui.OpenRequest) (tui.Session, error) {
	a := e.a
	opened, err := a.Open(ctx, app.OpenRequest{ResumeID: req.ID, Fork: req.Fork, IgnoreFlags: e.opened})
	if err != nil {
		if errcode.Of(err) == errcode.RuntimeCheckpointInterrupted && req.ID != "" && !req.Fork {
			// The screen shows the interrupted session's transcript above
			// the offer to fork it: its log, read only.
			if hist, herr := readHistory(ctx, a.Store, req.ID); herr == nil {
				return tui.Session{ID: req.ID, History: hist}, err
			}
		}
		return tui.Session{}, err
	}
	e.opened = true
	sess := opened
	next := &tuiSession{ctx: context.WithoutCancel(ctx), id: sess.ID(), sess: sess, gone: make(chan struct{}), lost: sess.Lost(),
		told: runtime.StateIdle}
	hist, err := readHistory(ctx, a.Store, next.id)
	if req.ID == "" && errcode.Of(err) == errcode.SessNotFound {
		// A new session is stored with its first event, which its Docker
		// workspace's background open may not have written yet: no history.
		hist, err = nil, nil
	}
	var inherited []store.Record
	if err == nil && req.ID != "" {
		inherited, err = app.Inherited(ctx, a.Store, next.id)
	}
	if err != nil {
		_ = opened.Close(next.ctx)
		return tui.Session{}, err
	}
	after := int64(-1)
	if n := len(hist); n > 0 {
		after = hist[n-1].Seq
	}
	// The history, then every event after it: no gap, no repeat.
	if err = sess.Subscribe(ctx, after); err != nil {
		_ = opened.Close(next.ctx)
		return tui.Session{}, err
	}

	e.closedOn = "" // a session is open: nothing to open again
	e.mu.Lock()
	prev := e.cur
	e.cur = next
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
	if prev != nil {
		prev.close()
	}

	set := sess.Settings()
	// One message a line: the banner shows each on its own.
	var notes []string
	for _, n := range []string{opened.Moved, opened.Note, strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(e.held.Take()), "harness: "), "\nharness: ", " · ")} {
		if n = strings.TrimSpace(n); n != "" {
			notes = append(notes, n)
		}
	}
	note := strings.Join(notes, "\n")
	return tui.Session{
		ID:           next.id,
		Model:        set.Model,
		Workspace:    workspaceLabel(sess.WorkspaceInfo()),
		ReadOnly:     sess.ReadOnly(),
		Note:         note,
		Demo:         opened.Demo,
		Budget:       set.Budget.MaxModelTokens,
		Window:       set.Context.WindowTokens,
		Usage:        sess.Usage(),
		Occupancy:    sess.Occupancy(),
		Approve:      opened.Ask,
		History:      hist,
		Inherited:    records(inherited),
		Instructions: set.Instructions,
	}, nil
}

func workspaceLabel(info workspace.Info) string {
	if info.Backend != workspace.BackendDocker {
		return "local · read-only"
	}
	label := "docker " + info.Image
	if id := strings.TrimPrefix(info.ImageID, "sha256:"); id != "" {
		label += "@sha256:" + id[:min(len(id), 8)] + "…"
	}
	return label
}

func readHistory(ctx context.Context, r store.Reader, id string) ([]tui.Record, error) {
	var out []tui.Record
	err := store.Each(ctx, r, id, -1, func(rec store.Record) error {
		ev, err := event.Decode(rec.Body)
		if err != nil {
			return err
		}
		out = append(out, tui.Record{Seq: rec.Seq, Event: ev})
		return nil
	})
	return out, err
}

// records decodes stored records for the screen (they decoded when stored).
func records(recs []store.Record) []tui.Record {
	out := make([]tui.Record, 0, len(recs))
	for _, rec := range recs {
		if ev, err := event.Decode(rec.Body); err == nil {
			out = append(out, tui.Record{Seq: rec.Seq, Event: ev})
		}
	}
	return out
}

// closeWait bounds how long closing a session waits for its running
// turn to end.
const closeWait = 15 * time.Second

// close closes the session (app.Session.Close: its running turn ended, so
// that it stays resumable, then its workspace, lease and event stream),
// and tells Next.
func (s *tuiSession) close() {
	wctx, cancel := context.WithTimeout(s.ctx, closeWait)
	_ = s.sess.Close(wctx)
	cancel()
	close(s.gone)
}

// Close closes the open session, if any (a running turn is canceled).
func (e *Engine) Close() {
	e.openMu.Lock()
	defer e.openMu.Unlock()
	e.mu.Lock()
	cur := e.cur
	e.mu.Unlock()
	if cur != nil {
		select {
		case <-cur.gone:
		default:
			cur.close()
		}
	}
}

// watch is what one Next call waits on: the session open when it began,
// and the channel closed when that changes.
type watch struct {
	cur     *tuiSession
	changed chan struct{}
}

func (e *Engine) watch() watch {
	e.mu.Lock()
	defer e.mu.Unlock()
	return watch{e.cur, e.changed}
}

// Next waits for events of the open session, or a change of its owner's
// state, and returns them with that state (read before the events are
// drained, so that the batch holds every event that led to it). A
// permission question in the batch comes with what the TUI shows for it.
func (e *Engine) Next(ctx context.Context) (tui.Update, error) {
	return e.next(ctx, e.watch())
}

func (e *Engine) next(ctx context.Context, w watch) (tui.Update, error) {
	for {
		cur, changed := w.cur, w.changed
		if cur == nil {
			select {
			case <-changed:
				w = e.watch()
				continue
			case <-ctx.Done():
				return tui.Update{}, ctx.Err()
			}
		}
		st, stateChanged := cur.sess.State()
		if st == cur.told {
			select {
			case <-cur.sess.Ready():
			case <-stateChanged:
			case <-cur.lost:
				// Told at once, not at the next send: another process holds
				// the session now.
				cur.lost = nil
				return tui.Update{SessionID: cur.id, Lost: fmt.Sprintf(
					"session %s was taken over by %s: this screen no longer writes to it; /new starts a session here, or take it back with `harness resume %s --take-over`",
					cur.id, cur.sess.LostTo(), cur.id)}, nil
			case <-changed:
				return tui.Update{}, nil
			case <-cur.gone:
				return tui.Update{}, nil
			case <-ctx.Done():
				return tui.Update{}, ctx.Err()
			}
			st, _ = cur.sess.State()
		}
		u := tui.Update{SessionID: cur.id, State: states[st]}
		for _, p := range cur.sess.Drain() {
			u.Events = append(u.Events, tui.Record{Seq: p.Seq, Event: p.Event})
			switch d := p.Event.Data.(type) {
			case event.TurnStarted:
				cur.open = d.RunID
			case event.TurnCompleted:
				cur.open = ""
			case event.PermissionRequested:
				// The question carries its subject: the call's input and,
				// for a write, the diff the runtime computed.
				u.Approval = &tui.Approval{PermissionID: d.PermissionID, CallID: d.CallID, Tool: d.Action, Subject: d.Subject,
					Input: d.Input, Diff: d.Patch,
					Unchanged: d.Lines != nil && d.Patch == "" && d.Lines.Added == 0 && d.Lines.Deleted == 0}
			}
		}
		if st == runtime.StateIdle && cur.open != "" {
			// Idle, and the turn's end never came: the store could not
			// record it (its disk full, its server gone). The screen is
			// told how it ended, from the owner's outcome, so that it
			// never shows the turn running.
			u.Unrecorded = unrecorded(cur)
			cur.open = ""
		}
		if len(u.Events) > 0 || st != cur.told || u.Unrecorded != nil {
			cur.told = st
			return u, nil
		}
	}
}

func (e *Engine) Send(ctx context.Context, text string) (tui.Sent, error) {
	cur, err := e.current()
	if err != nil {
		if cur, err = e.openAgain(ctx); err != nil {
			return tui.Sent{}, err
		}
	}
	note, err := e.rebuildLost(ctx, cur)
	if err != nil {
		return tui.Sent{}, err
	}
	if note != "" {
		if cur, err = e.current(); err != nil {
			return tui.Sent{Note: note}, err
		}
	}
	sent, err := tuiSent(cur.sess.Send(ctx, text))
	sent.Note = note
	return sent, err
}

// closeCurrent closes cur, the open session, and tells Next that no
// session is open until the next open (openMu held).
func (e *Engine) closeCurrent(cur *tuiSession) {
	e.mu.Lock()
	e.cur = nil
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
	cur.close()
}

// rebuildLost rebuilds the open session's workspace before a prompt
// starts a turn when its container went away (app.Rebuild decides, and
// says how in the note it returns; "" when there was nothing to rebuild):
// the engine closes the session and opens it again.
func (e *Engine) rebuildLost(ctx context.Context, cur *tuiSession) (string, error) {
	r, err := cur.sess.LostWorkspace(ctx)
	if r == nil || err != nil {
		return "", err
	}
	e.openMu.Lock()
	defer e.openMu.Unlock()
	if now, _ := e.current(); now != cur {
		return "", nil // reopened meanwhile
	}
	e.closeCurrent(cur)
	return r.Run(ctx, func(ctx context.Context) error { return e.reopen(ctx, cur.id) })
}

// reopen opens session id again after the engine closed it (openMu
// held); when it cannot, the next prompt tries again (openAgain).
func (e *Engine) reopen(ctx context.Context, id string) error {
	if _, err := e.open(ctx, tui.OpenRequest{ID: id}); err != nil {
		e.closedOn = id
		return err
	}
	return nil
}

// openAgain opens the session a reopen failed on, for a prompt typed
// with no session open; without one it is SESS_NOT_FOUND.
func (e *Engine) openAgain(ctx context.Context) (*tuiSession, error) {
	e.openMu.Lock()
	defer e.openMu.Unlock()
	if cur, err := e.current(); err == nil || e.closedOn == "" {
		return cur, err
	}
	id := e.closedOn
	if err := e.reopen(ctx, id); err != nil {
		return nil, &errcode.Error{Code: errcode.Of(err), Err: err, Message: fmt.Sprintf(
			"open session %s again: %s; enter tries again, /new starts a session", id, errcode.Message(err))}
	}
	return e.current()
}

func (e *Engine) Queue(ctx context.Context, text string) (tui.Sent, error) {
	cur, err := e.current()
	if err != nil {
		return tui.Sent{}, err
	}
	return tuiSent(cur.sess.Queue(ctx, text))
}

// Compact compacts the open session's context (/compact [focus]): at once
// when idle, as a compaction turn whose events the transcript shows;
// before the running turn's next model request otherwise.
func (e *Engine) Compact(ctx context.Context, focus string) error {
	cur, err := e.current()
	if err != nil {
		return err
	}
	_, err = cur.sess.Compact(ctx, focus)
	return err
}

// SetModel switches the open session's model for the following requests
// (/model NAME), recorded as settings.changed.
func (e *Engine) SetModel(ctx context.Context, name string) (string, error) {
	cur, err := e.current()
	if err != nil {
		return "", err
	}
	return cur.sess.SwitchModel(ctx, name)
}

// Models lists the models the open session's server serves (/model).
func (e *Engine) Models(ctx context.Context) ([]string, error) {
	cur, err := e.current()
	if err != nil {
		return nil, err
	}
	return cur.sess.ServerModels(ctx)
}

func (e *Engine) StartQueued(ctx context.Context) (tui.Sent, error) {
	cur, err := e.current()
	if err != nil {
		return tui.Sent{}, err
	}
	return tuiSent(cur.sess.StartQueued(ctx))
}

func tuiSent(s runtime.Sent, err error) (tui.Sent, error) {
	return tui.Sent{Kind: string(s.Kind), RunID: s.RunID, MessageID: s.MessageID}, err
}

func (e *Engine) Withdraw(ctx context.Context, messageID string) error {
	cur, err := e.current()
	if err != nil {
		return err
	}
	return cur.sess.Withdraw(ctx, messageID)
}

func (e *Engine) Cancel(context.Context) error {
	cur, err := e.current()
	if err != nil {
		return err
	}
	cur.sess.Cancel()
	return nil
}

func (e *Engine) Answer(ctx context.Context, permissionID string, a tui.Answer) error {
	cur, err := e.current()
	if err != nil {
		return err
	}
	scope := runtime.ScopeOnce
	switch {
	case a.ForSession:
		scope = runtime.ScopeSession
	case a.ForRun:
		scope = runtime.ScopeRun
	}
	note := "denied in the TUI"
	switch {
	case a.Allow:
		note = "approved in the TUI"
	case a.Reason != "":
		note = "denied in the TUI: " + a.Reason
	}
	return cur.sess.Answer(ctx, permissionID, runtime.PermissionAnswer{Allow: a.Allow, Scope: scope, Note: note, Reason: a.Reason})
}

// Revoke takes back the open session's grant of tool (runtime
// Session.Revoke).
func (e *Engine) Revoke(ctx context.Context, tool string) error {
	cur, err := e.current()
	if err != nil {
		return err
	}
	return cur.sess.Revoke(ctx, tool)
}

// StopJob stops a background job of the open session's workspace
// (app Session.StopJob).
func (e *Engine) StopJob(ctx context.Context, id string) error {
	cur, err := e.current()
	if err != nil {
		return err
	}
	return cur.sess.StopJob(ctx, id)
}

func (e *Engine) Diff(ctx context.Context) (string, error) {
	cur, err := e.current()
	if err != nil {
		return "", err
	}
	return cur.sess.Diff(ctx)
}

// CheckApply checks the session's patch (app.Session.ApplyPatch: the one
// recorded at its last finished turn) against its host tree, as harness
// apply does.
func (e *Engine) CheckApply(ctx context.Context) (tui.ApplyPlan, error) {
	cur, err := e.current()
	if err != nil {
		return tui.ApplyPlan{}, err
	}
	p, err := cur.sess.CheckApply(ctx)
	if err != nil {
		return tui.ApplyPlan{}, err
	}
	plan := tui.ApplyPlan{Root: p.Root, Patch: p.Patch, Stat: p.Stat, Conflict: p.Conflict, Applied: p.Refused == app.RefusedApplied}
	if line := p.MassDeleteLine(); line != "" {
		plan.Warnings = append(plan.Warnings, line)
	}
	if line := app.LeftOutLine(p.LeftOut); line != "" {
		plan.Warnings = append(plan.Warnings, line)
	}
	return plan, nil
}

// Apply checks again (the host may have changed since), applies, and
// records patch.applied in the session's log, which the screen shows as it
// shows every event; it says what was applied only when the log does not
// have it.
func (e *Engine) Apply(ctx context.Context, plan tui.ApplyPlan) (string, error) {
	cur, err := e.current()
	if err != nil {
		return "", err
	}
	turn, recErr, err := cur.sess.Apply(ctx, app.ApplyPlan{Root: plan.Root, Patch: plan.Patch})
	if err != nil {
		return "", err
	}
	st := diffview.StatOf(plan.Patch)
	out := fmt.Sprintf("applied the patch to %s: %d file(s), +%d −%d", plan.Root, st.Files, st.Added, st.Deleted)
	if turn == "" {
		return out + " (not recorded: the session has no finished turn)", nil
	}
	if err := recErr; err != nil {
		// Applied all the same: said, with why the log does not have it.
		return out + fmt.Sprintf(" — not recorded in the session's log (%s: %s)", errcode.Of(err), errcode.Message(err)), nil
	}
	return "", nil // recorded: the screen shows the log's patch.applied
}

// pickerSessions bounds the session picker to the most recently updated
// sessions, so that its first frame reads that many rows whatever the
// store holds; older ones stay reachable by `harness resume ID` and are
// listed by `harness sessions --all`.
const pickerSessions = 500

func (e *Engine) Sessions(ctx context.Context) ([]tui.SessionSummary, error) {
	list, _, err := app.RecentSessions(ctx, e.a.Store, "", pickerSessions)
	if err != nil {
		return nil, err
	}
	out := make([]tui.SessionSummary, len(list))
	for i, s := range list {
		out[i] = tui.SessionSummary{ID: s.ID, Title: s.Title, Updated: s.UpdatedAt, Turns: s.Turns, Tokens: s.Tokens, Status: s.Status, Dir: s.Metadata["root"]}
	}
	return out, nil
}

// Files lists the open session's workspace files, for the TUI's path
// completion.
func (e *Engine) Files(ctx context.Context) ([]string, error) {
	cur, err := e.current()
	if err != nil {
		return nil, err
	}
	return cur.sess.Files(ctx)
}

// Turns lists the open session's turns for the /rewind picker.
func (e *Engine) Turns(ctx context.Context) ([]tui.TurnSummary, bool, error) {
	cur, err := e.current()
	if err != nil {
		return nil, false, err
	}
	tl, err := app.ReadTimeline(ctx, e.a.Store, cur.id)
	if err != nil {
		return nil, false, err
	}
	out := make([]tui.TurnSummary, len(tl.Turns))
	for i, t := range tl.Turns {
		out[i] = tui.TurnSummary{N: t.N, ID: t.ID, Prompt: t.Prompt, At: t.At, Status: t.Status, Files: t.Own.Files,
			Added: t.Own.Added, Deleted: t.Own.Deleted, Current: t.Current, Rewound: t.Rewound, Finished: t.Finished()}
	}
	return out, tl.LastRewind != nil, nil
}

// Rewind closes the open session (idle: SESS_BUSY while a turn runs),
// rewinds it (app.App.Rewind) and reopens it at that point, its Docker
// workspace rebuilt from the turn's patch. A refusal its log decides
// comes before anything closes; a rewind that fails once the session is
// closed still reopens it, where it was.
func (e *Engine) Rewind(ctx context.Context, turnID string, undo bool) (tui.Session, string, error) {
	e.openMu.Lock()
	defer e.openMu.Unlock()
	cur, err := e.current()
	if err != nil {
		return tui.Session{}, "", err
	}
	select {
	case <-cur.sess.Idle():
	default:
		return tui.Session{}, "", errcode.New(errcode.SessBusy, "a turn is running: /rewind works between turns (esc cancels the turn)")
	}
	// Reopened without its daemon, a Docker session would come back
	// read-only, saying it holds the turn's files.
	if err := cur.sess.DockerAnswers(ctx, "nothing was rewound; start the daemon, then /rewind again"); err != nil {
		return tui.Session{}, "", err
	}
	req := app.RewindRequest{Turn: turnID, Undo: undo}
	if err := e.a.CheckRewind(ctx, cur.id, req); err != nil {
		return tui.Session{}, "", err
	}
	e.closeCurrent(cur)
	r, rerr := e.a.Rewind(ctx, cur.id, req)
	s, err := e.open(ctx, tui.OpenRequest{ID: cur.id})
	if err != nil {
		e.closedOn = cur.id // the next prompt tries again
	}
	if rerr != nil {
		return s, "", rerr
	}
	if err != nil {
		return s, "", err
	}
	// Where the session now is, the reopened transcript says (its
	// session.rewound): out adds only what the log does not, what the
	// host tree has.
	return s, r.HostLine(cur.id), nil
}

// unrecorded is the end of cur's open run that the store could not
// record (app.Unrecorded), from the owner's outcome of its last turn.
func unrecorded(cur *tuiSession) *event.TurnCompleted {
	out, _ := cur.sess.Wait(context.WithoutCancel(cur.ctx)) // idle: at once
	tc := app.Unrecorded(cur.id, cur.open, out)
	return &tc
}
