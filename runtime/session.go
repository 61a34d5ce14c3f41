package runtime

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/store"
)

// Session is one conversation: its log, defaults and state, and the one
// owner of everything that decides what happens next in it (see the package
// doc and commands.go for the command surface).
type Session struct {
	rt       *Runtime
	cfg      SessionConfig // as validated by OpenSession; never changed after
	provider string        // cfg.Model's provider identity (providerNamer), "" when it names none
	log      EventLog
	id       string
	bus      bus // this session's ordered event stream

	// settings and state are owned by the turn goroutine while a turn runs
	// and are at rest between turns. settings changes only under mu (at a
	// request boundary of the running turn, or between turns).
	settings checkpoint.Settings
	state    state
	// distrust is set by an implausible usage report (owned like state):
	// the byte count applies until a plausible one.
	distrust bool

	// mu is the session's owner: every command takes it, and it is held
	// across each append that changes the fields below, so the queue and
	// the log agree on order. Methods named …Locked expect it held.
	mu        sync.Mutex
	owner     SessionState         // guarded by mu: changed only by setState (decide.go)
	active    *run                 // guarded by mu: the turn being admitted, running or ending, or nil
	pending   []checkpoint.Input   // guarded by mu: steering for the next model request, FIFO
	next      []checkpoint.Input   // guarded by mu: inputs queued for the next turn, FIFO
	questions map[string]*question // guarded by mu: permission questions awaiting Answer, by ID
	changed   *checkpoint.Settings // guarded by mu: recorded settings the running turn has not taken yet
	idle      chan struct{}        // guarded by mu: closed while no turn is active
	last      Outcome              // guarded by mu: how the last turn ended
	lastIDs   [2]string            // guarded by mu: run and turn ID of the last turn, for events between turns
	baseURL   string               // guarded by mu: as last recorded by SetSettings
	approve   string               // guarded by mu: as last recorded by SetSettings
	granted   map[string]bool      // guarded by mu: tools allowed for the session (grants.go)

	// compactAsked holds the focus of an on-demand compaction asked while
	// a turn runs (see Compact) until its next model request takes it;
	// guarded by mu.
	compactAsked *string

	// cur is the active run, readable without mu so that Cancel is never
	// held up behind an append.
	cur atomic.Pointer[run]
	// told is owner as setState last published it, readable without mu
	// so that State is never held up behind an append either.
	told atomic.Pointer[toldState]

	// appendMu orders append-then-publish, so subscribers see events in
	// seq order. It is always taken after mu, never before.
	appendMu sync.Mutex
}

// state is the part of a session a checkpoint carries.
type state struct {
	turns          []string        // turn IDs, oldest first
	messages       []model.Message // the whole history, originals never removed
	rawMsgs        [][]byte        // canonical bytes of each message, for checkpoints
	revision       int             // bumped at every change of messages
	usage          model.Usage     // cumulative, summaries included, never refunded
	modelRequests  int             // cumulative
	toolCalls      int             // cumulative
	transcript     int64           // bytes of message content, cumulative
	seenCalls      map[string]bool // model tool-call IDs seen in this session: those of the history, and seenExtra
	seenExtra      []string        // seen IDs an old checkpoint listed that the history does not hold (sorted), checkpointed
	warned         map[string]bool // budget metrics warned about
	compact        checkpoint.Compaction
	firstUser      *model.Message // the session's first user request, pinned after compaction
	turnUser       *model.Message // the current turn's request, pinned after compaction too; nil: none
	turnAt         int            // turnUser's index in messages
	meter          *compaction.Meter
	checkpointMsgs int            // messages in the last runtime.checkpoint event of the log
	row            checkpoint.Row // what the store's checkpoint row holds
}

// OpenSession starts a new, empty session on log with the given defaults,
// run with cfg. Codes: RUNTIME_INVALID_INPUT (no log, no tools, an invalid
// context policy or cfg, or a session with log's ID already open in this
// Runtime).
func (rt *Runtime) OpenSession(ctx context.Context, log EventLog, cfg SessionConfig, settings checkpoint.Settings) (*Session, error) {
	if log == nil {
		return nil, errcode.New(errcode.RuntimeInvalidInput, "open session: no event log")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if settings.Tools == nil {
		return nil, errcode.New(errcode.RuntimeInvalidInput, "open session: no tools")
	}
	if settings.Context != (compaction.Policy{}) {
		if err := settings.Context.Validate(); err != nil {
			return nil, err
		}
	}
	s := &Session{rt: rt, cfg: cfg, log: log, id: log.SessionID(), settings: settings, questions: map[string]*question{}, idle: closedChan()}
	if p, ok := cfg.Model.(providerNamer); ok {
		s.provider = p.Provider()
	}
	s.told.Store(&toldState{st: StateIdle, changed: make(chan struct{})})
	s.state = newState(settings)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if _, ok := rt.sessions[s.id]; ok {
		return nil, errcode.Errorf(errcode.RuntimeInvalidInput, "open session %s: already open in this process", s.id)
	}
	rt.sessions[s.id] = s
	return s, nil
}

func newState(settings checkpoint.Settings) state {
	return state{
		seenCalls: map[string]bool{},
		warned:    map[string]bool{},
		meter:     compaction.NewMeter(settings.System, settings.Tools),
	}
}

// ID returns the session ID.
func (s *Session) ID() string { return s.id }

// Settings returns the session's settings: those of the running turn's
// next request, or of the next turn.
func (s *Session) Settings() checkpoint.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		return *s.changed
	}
	return s.settings
}

// Usage returns the cumulative usage. Only meaningful between turns.
func (s *Session) Usage() model.Usage { return s.state.usage }

// Occupancy returns the current context occupancy in tokens, as the next
// context.accounted will count it. Only meaningful between turns.
func (s *Session) Occupancy() int {
	occ, _ := s.estimate(s.state.meter.Tokens())
	return occ
}

// estimate converts an occupancy in bytes into tokens for the session's
// model at its provider, with the rule used
// (compaction.Algorithm, compaction.AlgorithmRatio or
// compaction.AlgorithmReported).
func (s *Session) estimate(bytes int) (int, string) {
	var c compaction.Calibration
	if s.state.compact.Calibration != nil {
		c = *s.state.compact.Calibration
	}
	occ, rule := c.Estimate(s.provider, s.settings.Model, bytes)
	if rule == compaction.Algorithm && s.cfg.Estimator == compaction.AlgorithmRatio && !s.distrust {
		// The figure at the conversation's own character mix.
		return s.state.meter.Scale(bytes), compaction.AlgorithmRatio
	}
	return occ, rule
}

// calibrate records what a usage report for a request of bytes teaches: a
// plausible one replaces the calibration, an implausible or estimated one
// removes it (the byte-count bound applies until the next plausible
// report). Model rounds and summary rounds both report.
func (s *Session) calibrate(bytes int, u model.Usage) {
	if c, ok := compaction.Calibrate(s.provider, s.settings.Model, bytes, u.PromptTokens); ok && !u.Estimated {
		s.state.compact.Calibration = &c
		s.distrust = false
		return
	}
	// A real count that is implausible (more tokens than bytes, or under
	// a tenth of them): no ratio is trusted until a plausible one.
	s.distrust = u.PromptTokens > 0 && !u.Estimated
	s.state.compact.Calibration = nil
}

// Messages returns a copy of the history. Only meaningful between turns.
func (s *Session) Messages() []model.Message { return slices.Clone(s.state.messages) }

// append writes one event and publishes it. It is the one path every event
// of the session takes.
func (s *Session) append(ctx context.Context, data event.Data) (store.Record, error) {
	ev := s.rt.newEvent(data)
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	rec, err := s.log.Append(ctx, ev)
	if err != nil {
		return store.Record{}, &errcode.Error{
			Code:    errcode.RuntimeEventAppendFailed,
			Message: "append " + string(ev.Type) + ": " + storeCause(err),
			Err:     err,
		}
	}
	s.bus.publish(Published{Seq: rec.Seq, Event: ev, Body: rec.Body})
	return rec, nil
}
