package runtime

import (
	"context"
	"slices"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/store"
)

// The session's command surface. Front ends (the TUI engine, harness exec)
// only ever call these; what typed text becomes — steering, the next turn,
// a new turn — is decided by decide (decide.go), under the session's mu,
// in one place.
//
// Adding a command: name it in decide's table (and its test), take the
// decision with lockDecide (which waits while the turn is admitted or
// ending and refuses what the state refuses), carry it out while still
// holding s.mu, appending what it records, and return once the append is
// durable.

// SentKind says what a Send or Queue did with the text.
type SentKind string

// What became of sent text.
const (
	SentStarted SentKind = "started" // it is the user message of a new turn
	SentSteered SentKind = "steered" // steering for the running turn's next request
	SentQueued  SentKind = "queued"  // the input of the turn after the running one

	SentCompacting   SentKind = "compacting"    // Compact started a compaction turn
	SentCompactAsked SentKind = "compact-asked" // the running turn compacts before its next request
)

// Sent is the result of Send, Queue and StartQueued.
type Sent struct {
	Kind      SentKind
	RunID     string // the turn it went to (started, steered) or came after (queued)
	TurnID    string
	MessageID string
}

// question is a permission question waiting for Answer.
type question struct {
	run   *run
	reply chan PermissionAnswer // capacity 1; sent to once, under mu
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func errClosed(id string) error {
	return errcode.Errorf(errcode.SessClosed, "session %s is closed", id)
}

// Send delivers text from the user. While a turn runs, it is steering for
// the turn's next model request (steering.queued); while no turn is
// active, it starts a turn with text as its message; while the turn is
// being admitted it waits for the admission, then steers; while the turn
// is ending (it decided to complete, or was canceled) it waits for the end
// and then steers the turn the session started from its queue, or starts a
// new one. It returns once the event that records text is durable.
//
// Codes: RUNTIME_INVALID_INPUT (empty, too long or invalid UTF-8 text, a
// full queue), SESS_CLOSED (a closed session), RUNTIME_EVENT_APPEND_FAILED,
// and the context's error when ctx ends while waiting.
func (s *Session) Send(ctx context.Context, text string) (Sent, error) {
	return s.submit(ctx, text, false)
}

// Queue keeps text as the input of the turn after the running one
// (input.queued); the session starts that turn when the running one
// completes. While no turn is active, text starts one at once, like Send.
// Codes as Send.
func (s *Session) Queue(ctx context.Context, text string) (Sent, error) {
	return s.submit(ctx, text, true)
}

func (s *Session) submit(ctx context.Context, text string, next bool) (Sent, error) {
	if err := validText("message", text); err != nil {
		return Sent{}, err
	}
	c := cmdSend
	if next {
		c = cmdQueue
	}
	d, err := s.lockDecide(ctx, c, nil)
	if err != nil {
		return Sent{}, err
	}
	if d.act == actStart {
		t, err := s.startLocked(ctx, StartRequest{Input: text})
		s.mu.Unlock()
		if err != nil {
			return Sent{}, err
		}
		sent := Sent{Kind: SentStarted, RunID: t.r.id, TurnID: t.r.turnID, MessageID: t.input.MessageID}
		return sent, t.begin()
	}
	r := s.active // steer or queue: the running turn
	id, err := s.enqueueLocked(ctx, r, text, d.act == actQueue)
	s.mu.Unlock()
	if err != nil {
		return Sent{}, err
	}
	kind := SentSteered
	if d.act == actQueue {
		kind = SentQueued
	}
	return Sent{Kind: kind, RunID: r.id, TurnID: r.turnID, MessageID: id}, nil
}

// lockDecide takes s.mu and decides c in the session's state. On a
// decision to act it returns with s.mu held, for the caller to carry the
// decision out and release it. A refusal returns its coded error, and a
// context that ends while waiting its cause, both with s.mu released.
// While the decision is to wait, it waits without s.mu for the active
// turn's admission or end and decides again: the one wait of every
// command. check, when set, runs under s.mu before any wait: a refusal
// that does not depend on the state (the command's own precondition).
func (s *Session) lockDecide(ctx context.Context, c command, check func() error) (decision, error) {
	for {
		s.mu.Lock()
		st := s.stateLocked()
		d := decide(st, c)
		if d.act == actRefuse {
			s.mu.Unlock()
			return d, s.refusal(c, st, d.code)
		}
		if check != nil {
			if err := check(); err != nil {
				s.mu.Unlock()
				return d, err
			}
		}
		if d.act != actWait {
			return d, nil
		}
		wait := s.active.done // ending
		if st == StateAdmitting {
			wait = s.active.admitted
		}
		s.mu.Unlock()
		if err := waitFor(ctx, wait); err != nil {
			return d, err
		}
	}
}

// refusal is the error of a command refused in state st.
func (s *Session) refusal(c command, st SessionState, code errcode.Code) error {
	switch {
	case st == StateClosed:
		return errClosed(s.id)
	case st.Busy():
		return errcode.Errorf(code, "%s: run %s is still active on session %s", c, s.active.id, s.id)
	}
	return errcode.Errorf(code, "%s: session %s is %s", c, s.id, st)
}

// stateLocked returns the session's state. Cancel never takes mu (it
// must not wait behind an append), so a cancel of the active turn that
// no one has decided on yet is decided here (cmdCanceled), and its
// change of state published through setState.
func (s *Session) stateLocked() SessionState {
	if s.active != nil && s.active.canceled.Load() {
		s.carryOut(decide(s.owner, cmdCanceled))
	}
	return s.owner
}

// transition decides a step c of the active turn's life in the session's
// state and makes the change of state it implies; the caller carries out
// the rest of the decision. Caller holds mu.
func (s *Session) transition(c command) decision {
	d := decide(s.stateLocked(), c)
	s.carryOut(d)
	return d
}

// carryOut makes the change of state a decision implies, if any.
func (s *Session) carryOut(d decision) {
	if to, ok := d.act.moves(); ok {
		s.setState(to)
	}
}

// setState is the one place the session's state changes; it publishes
// the change to State's readers. StateClosed is final: a turn that ends
// after Close leaves the session closed.
func (s *Session) setState(st SessionState) {
	if st == s.owner || s.owner == StateClosed {
		return
	}
	s.owner = st
	old := s.told.Swap(&toldState{st: st, changed: make(chan struct{})})
	close(old.changed)
}

// toldState is a published state and the channel closed when it changes.
type toldState struct {
	st      SessionState
	changed chan struct{}
}

// State returns the session's state and a channel closed at its next
// change; front ends show whether the session is busy from it, instead of
// guessing from the events they have folded. It never waits on the
// session's lock: a Cancel is told as soon as the turn's context has
// ended (Cancel itself takes no lock), a moment after it returns.
//
// A value and a change channel rather than an entry in the event
// stream (Events): the state is the owner's standing, not a recorded
// fact, and a reader wants the latest one, not each step. A channel
// closed on change coalesces changes for a slow reader, never blocks
// setState (which runs under the owner's lock), and leaves the
// subscription exactly what the log holds. The events that end a turn are
// published before the state leaves it, so a reader that reads the state
// and then drains its subscription holds every event that led to that
// state (and perhaps later ones).
func (s *Session) State() (SessionState, <-chan struct{}) {
	t := s.told.Load()
	return t.st, t.changed
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func waitFor(ctx context.Context, c <-chan struct{}) error {
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// enqueueLocked durably records steering (next=false) or an input for the
// next turn (next=true) of the running turn r.
func (s *Session) enqueueLocked(ctx context.Context, r *run, text string, next bool) (string, error) {
	if len(s.pending)+len(s.next) >= MaxQueue {
		return "", errcode.Errorf(errcode.RuntimeInvalidInput, "queue a message on run %s: the queue is full (%d)", r.id, MaxQueue)
	}
	id := s.rt.cfg.NewID("msg")
	var data event.Data = event.SteeringQueued{RunID: r.id, SessionID: s.id, TurnID: r.turnID, MessageID: id, Content: text}
	if next {
		data = event.InputQueued{RunID: r.id, SessionID: s.id, TurnID: r.turnID, MessageID: id, Content: text}
	}
	// mu is held across the durable append so that the queue and the log
	// agree on order: the turn drains the queue under the same lock.
	if _, err := s.append(ctx, data); err != nil {
		return "", err
	}
	if next {
		s.next = append(s.next, checkpoint.Input{MessageID: id, Content: text})
	} else {
		s.pending = append(s.pending, checkpoint.Input{MessageID: id, Content: text})
	}
	return id, nil
}

// StartQueued starts a turn with the oldest queued input while the session
// is idle: the queue waits after a turn that did not complete (canceled,
// failed, over budget). Codes: RUNTIME_INVALID_INPUT (a turn is active,
// nothing is queued), SESS_CLOSED, RUNTIME_EVENT_APPEND_FAILED.
func (s *Session) StartQueued(ctx context.Context) (Sent, error) {
	if _, err := s.lockDecide(ctx, cmdStart, nil); err != nil {
		return Sent{}, err
	}
	t, err := s.startLocked(ctx, StartRequest{FromQueue: true})
	s.mu.Unlock()
	if err != nil {
		return Sent{}, err
	}
	return Sent{Kind: SentStarted, RunID: t.r.id, TurnID: t.r.turnID, MessageID: t.input.MessageID}, t.begin()
}

// Queued returns the inputs waiting for the next turn, oldest first.
func (s *Session) Queued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.next))
	for i, in := range s.next {
		out[i] = in.Content
	}
	return out
}

// Withdraw removes pending steering or a queued input before it is used
// (input.withdrawn). While the active turn is ending it waits for the end.
// Codes: RUNTIME_INVALID_INPUT (not pending: already applied, or unknown;
// SESS_CLOSED (a closed session), RUNTIME_EVENT_APPEND_FAILED.
func (s *Session) Withdraw(ctx context.Context, messageID string) error {
	if _, err := s.lockDecide(ctx, cmdWithdraw, nil); err != nil {
		return err
	}
	defer s.mu.Unlock()
	return s.withdrawLocked(ctx, messageID)
}

func (s *Session) withdrawLocked(ctx context.Context, messageID string) error {
	drop := func(q []checkpoint.Input) ([]checkpoint.Input, bool) {
		for i, in := range q {
			if in.MessageID == messageID {
				return slices.Delete(slices.Clone(q), i, i+1), true
			}
		}
		return q, false
	}
	pending, inPending := drop(s.pending)
	next, inNext := drop(s.next)
	if !inPending && !inNext {
		return errcode.Errorf(errcode.RuntimeInvalidInput, "withdraw %s: not pending (already applied or unknown)", messageID)
	}
	runID, turnID := s.lastIDs[0], s.lastIDs[1]
	if _, err := s.append(ctx, event.InputWithdrawn{RunID: runID, SessionID: s.id, TurnID: turnID, MessageID: messageID}); err != nil {
		return err
	}
	s.pending, s.next = pending, next
	return nil
}

// Cancel ends the active turn: the flag is set at once, the model stream
// or the running tool is aborted, a permission question is dropped, and
// the turn ends with status canceled (unless it had already reached its
// end). Inputs queued for the next turn stay queued. Cancel never waits
// on the session's lock; with no turn active it does nothing and reports
// false.
func (s *Session) Cancel() bool {
	r := s.cur.Load()
	if r == nil {
		return false
	}
	r.canceled.Store(true)
	r.cancel(errCanceled)
	return true
}

// Answer answers the permission question permissionID (asked by a
// permission.requested event). A reason reaches the model: with a denial
// in the tool's result, with an approval as steering for the next request.
// Codes: RUNTIME_INVALID_INPUT (no such question waits: unknown, already
// answered, or its turn ended; a note or reason that is too long or not
// UTF-8), SESS_CLOSED (a closed session).
func (s *Session) Answer(ctx context.Context, permissionID string, a PermissionAnswer) error {
	for what, text := range map[string]string{"note": a.Note, "reason": a.Reason} {
		if text != "" {
			if err := validText(what, text); err != nil {
				return err
			}
		}
	}
	switch a.Scope {
	case "":
		a.Scope = ScopeOnce
	case ScopeOnce, ScopeRun, ScopeSession:
	default:
		return errcode.Errorf(errcode.RuntimeInvalidInput, "answer %s: scope must be once, run or session, not %q", permissionID, a.Scope)
	}
	if _, err := s.lockDecide(ctx, cmdAnswer, nil); err != nil {
		return err
	}
	defer s.mu.Unlock()
	q, ok := s.questions[permissionID]
	if !ok {
		return errcode.Errorf(errcode.RuntimeInvalidInput, "answer %s: no such question is waiting", permissionID)
	}
	delete(s.questions, permissionID)
	q.reply <- a
	return nil
}

// SettingsChange names the settings to change; nil fields keep their
// value. System text, tools, provider options and the model timeout stay as
// the session was opened. BaseURL and Approve belong to the application
// (the model client, the policy; they are fixed per Runtime): the session
// only records them, so that the log says what was in force.
type SettingsChange struct {
	Model        *string
	MaxTokens    *int
	BudgetTokens *int64             // the session's model-token budget; 0: none
	Context      *compaction.Policy // the whole policy; zero: no compaction
	BaseURL      *string
	Approve      *string
}

// SetSettings changes the model and settings of the following requests.
// The change is recorded (settings.changed, naming what changed) before
// SetSettings returns and so before the next request; a running turn takes
// it at its next model request, whose model.request names the new model.
// While the active turn is ending it waits for the end. A change that
// changes nothing records nothing. It returns the settings now in force.
// Codes: RUNTIME_INVALID_INPUT (an empty model, a negative limit, an
// invalid context policy), SESS_CLOSED (a closed session),
// RUNTIME_EVENT_APPEND_FAILED.
func (s *Session) SetSettings(ctx context.Context, c SettingsChange) (checkpoint.Settings, error) {
	d, err := s.lockDecide(ctx, cmdSetSettings, nil)
	if err != nil {
		return checkpoint.Settings{}, err
	}
	defer s.mu.Unlock()
	return s.setSettingsLocked(ctx, d.act == actNextRequest, c)
}

// setSettingsLocked records c; atRequest: a turn runs, and takes it at
// its next request.
func (s *Session) setSettingsLocked(ctx context.Context, atRequest bool, c SettingsChange) (checkpoint.Settings, error) {
	set := s.settings
	if s.changed != nil {
		set = *s.changed
	}
	var changed []string
	note := func(name string, differs bool) {
		if differs {
			changed = append(changed, name)
		}
	}
	if c.Model != nil {
		note("model", *c.Model != set.Model)
		set.Model = *c.Model
	}
	if c.BaseURL != nil {
		note("baseUrl", *c.BaseURL != s.baseURL)
	}
	if c.Context != nil {
		p := *c.Context
		note("contextWindow", p.WindowTokens != set.Context.WindowTokens || p.ReserveTokens != set.Context.ReserveTokens)
		note("compactAt", p.ThresholdTokens != set.Context.ThresholdTokens)
		note("compactTail", p.TailMessages != set.Context.TailMessages)
		set.Context = p
	}
	if c.BudgetTokens != nil {
		note("budgetTokens", *c.BudgetTokens != set.Budget.MaxModelTokens)
		set.Budget.MaxModelTokens = *c.BudgetTokens
	}
	if c.Approve != nil {
		note("approve", *c.Approve != s.approve)
	}
	if c.MaxTokens != nil {
		note("maxTokens", *c.MaxTokens != set.MaxTokens)
		set.MaxTokens = *c.MaxTokens
	}
	if err := validSettings(set); err != nil {
		return checkpoint.Settings{}, err
	}
	if len(changed) == 0 {
		return set, nil
	}
	baseURL, approve := s.baseURL, s.approve
	if c.BaseURL != nil {
		baseURL = *c.BaseURL
	}
	if c.Approve != nil {
		approve = *c.Approve
	}
	p := set.Context
	data := event.SettingsChanged{SessionID: s.id, Changed: changed, Model: set.Model, BaseURL: baseURL,
		WindowTokens: p.WindowTokens, ThresholdTokens: p.ThresholdTokens, TailMessages: p.TailMessages, ReserveTokens: p.ReserveTokens,
		BudgetTokens: int(set.Budget.MaxModelTokens), MaxTokens: set.MaxTokens, Approve: approve}
	if _, err := s.append(ctx, data); err != nil {
		return checkpoint.Settings{}, err
	}
	s.baseURL, s.approve = baseURL, approve
	if atRequest {
		s.changed = &set
	} else {
		s.settings = set
	}
	return set, nil
}

func validSettings(set checkpoint.Settings) error {
	switch {
	case set.Model == "":
		return errcode.New(errcode.RuntimeInvalidInput, "settings: the model name is empty")
	case set.MaxTokens < 0, set.Budget.MaxModelTokens < 0:
		return errcode.Errorf(errcode.RuntimeInvalidInput, "settings: limits must not be negative (max tokens %d, budget tokens %d)",
			set.MaxTokens, set.Budget.MaxModelTokens)
	}
	if set.Context != (compaction.Policy{}) {
		return set.Context.Validate()
	}
	return nil
}

// takeSettingsLocked hands a recorded settings change to the running turn
// at a request boundary.
func (s *Session) takeSettingsLocked() {
	if s.changed != nil {
		s.settings, s.changed = *s.changed, nil
	}
}

// Compact compacts the context on demand (/compact [focus]); focus (may
// be empty) tells the summarizer what to keep in most detail and is cut at
// compaction.FocusBound.
//
// While no turn is active it starts a compaction turn and returns once the
// turn is admitted (Sent kind SentCompacting): agent.started and
// turn.started with compact (a compaction turn has no user message), then
// the one summary round of any compaction (context.accounted with
// summaryRequest, model.request, runtime.checkpoint of phase summary,
// message.delta*, model.response, context.checkpoint, context.compacted),
// then the terminal checkpoint, turn.completed and agent.stopped. The turn
// completes whether it compacted or found nothing to compact; its
// turn.completed note says which (and the Outcome's Message). It has the
// deadline, stream checks and budget of any summary round, and its
// terminal checkpoint carries the compacted state, so a resume and
// harness request rebuild the next request exactly. Text sent while it
// runs waits for its end and then starts a turn (it takes no steering);
// it does not start the queued inputs a turn that did not complete left.
//
// While a turn runs, that turn compacts before its next model request,
// whatever the occupancy (SentCompactAsked); this request lives in memory
// only, and a later one replaces it. While a turn is being admitted or is
// ending, Compact waits and decides again.
//
// Codes: RUNTIME_INVALID_INPUT (no context policy, a focus that is not
// valid text), SESS_CLOSED (a closed session), RUNTIME_EVENT_APPEND_FAILED,
// and the
// context's error when ctx ends while waiting.
func (s *Session) Compact(ctx context.Context, focus string) (Sent, error) {
	if focus != "" {
		if err := validText("focus", focus); err != nil {
			return Sent{}, err
		}
	}
	d, err := s.lockDecide(ctx, cmdCompact, func() error {
		set := s.settings
		if s.changed != nil {
			set = *s.changed
		}
		if set.Context == (compaction.Policy{}) {
			return errcode.New(errcode.RuntimeInvalidInput, "compact context: this session has no context policy")
		}
		return nil
	})
	if err != nil {
		return Sent{}, err
	}
	if d.act == actCompact {
		r := s.active
		s.compactAsked = &focus
		s.mu.Unlock()
		return Sent{Kind: SentCompactAsked, RunID: r.id, TurnID: r.turnID}, nil
	}
	t, err := s.startLocked(ctx, StartRequest{compact: &focus})
	s.mu.Unlock()
	if err != nil {
		return Sent{}, err
	}
	return Sent{Kind: SentCompacting, RunID: t.r.id, TurnID: t.r.turnID}, t.begin()
}

// takeCompaction returns and clears an on-demand compaction request.
func (s *Session) takeCompaction() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.compactAsked == nil {
		return "", false
	}
	f := *s.compactAsked
	s.compactAsked = nil
	return f, true
}

// Events returns the session's events after afterSeq (-1: all), those
// already stored first, then each one as it is appended, in log order,
// without gaps or repeats. Close the subscription when done. Codes:
// RUNTIME_INVALID_INPUT (the session's log cannot be read back), and the
// store's codes.
func (s *Session) Events(ctx context.Context, afterSeq int64) (*Subscription, error) {
	sub := s.bus.subscribe(afterSeq)
	rd, ok := s.log.(logReader)
	if !ok {
		sub.Close()
		return nil, errcode.Errorf(errcode.RuntimeInvalidInput, "events of session %s: its log cannot be read back", s.id)
	}
	var backlog []Published
	err := store.Each(ctx, logPages{rd}, s.id, afterSeq, func(rec store.Record) error {
		ev, err := event.Decode(rec.Body)
		if err != nil {
			return err
		}
		backlog = append(backlog, Published{Seq: rec.Seq, Event: ev, Body: rec.Body})
		return nil
	})
	if err != nil {
		sub.Close()
		return nil, err
	}
	sub.prepend(backlog)
	return sub, nil
}

// logReader is implemented by logs that read their own events back
// (store.SessionLog).
type logReader interface {
	ReadEvents(ctx context.Context, afterSeq int64, limit int) ([]store.Record, error)
}

// logPages reads a log's own events as store.Each reads a store's.
type logPages struct{ log logReader }

func (p logPages) ReadEvents(ctx context.Context, _ string, afterSeq int64, limit int) ([]store.Record, error) {
	return p.log.ReadEvents(ctx, afterSeq, limit)
}

// Idle returns a channel closed when no turn is active: at once when the
// session is idle, else when the current busy spell ends (the queued turns
// the session starts on its own included).
func (s *Session) Idle() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idle
}

// Wait blocks until no turn is active and returns how the last turn ended
// (the zero Outcome when none ran in this process).
func (s *Session) Wait(ctx context.Context) (Outcome, error) {
	for {
		s.mu.Lock()
		idle, last := s.idle, s.last
		s.mu.Unlock()
		if isClosed(idle) {
			return last, nil
		}
		if err := waitFor(ctx, idle); err != nil {
			return Outcome{}, err
		}
	}
}

// Close cancels the active turn, waits (bounded by ctx) until it has
// ended, so that the session stays resumable, and closes the session:
// later commands fail with SESS_CLOSED and queued inputs are not
// started. The session leaves its Runtime's registry, so its ID may be
// opened again there. The log itself belongs to the caller.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	s.transition(cmdClose)
	s.mu.Unlock()
	s.Cancel()
	_, err := s.Wait(ctx)
	s.rt.closeSession(s)
	return err
}

// releaseLocked ends t's hold on the session. When decide says so (after
// a completed turn) and an input is queued, it starts the next turn and returns it (to be admitted
// and driven by the caller once mu is released).
func (s *Session) releaseLocked(t *turn) *turn {
	s.active = nil
	s.cur.Store(nil)
	s.last = t.r.outcome
	s.takeSettingsLocked()
	for id, q := range s.questions {
		if q.run == t.r {
			delete(s.questions, id)
		}
	}
	c := cmdRelease
	if t.status == StatusCompleted && t.compactOnly == nil {
		c = cmdReleaseCompleted
	}
	if d := s.transition(c); d.act == actNext {
		if len(s.next) > 0 {
			if next, err := s.startLocked(t.ctx, StartRequest{FromQueue: true}); err == nil {
				return next
			}
		}
		s.setState(StateIdle) // nothing is queued, or its turn could not be made
	}
	close(s.idle)
	return nil
}
