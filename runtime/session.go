package runtime

import (
	"context"
	"slices"
	"sync"

	"github.com/harness-dev/harness/checkpoint"
	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
	"github.com/harness-dev/harness/store"
)

// Session is one conversation: its log, defaults and state. Between turns
// the state is at rest; during a turn the turn goroutine owns it.
type Session struct {
	rt       *Runtime
	log      EventLog
	id       string
	settings Settings

	// Owned by the turn goroutine while a turn runs, else at rest.
	state state

	// mu guards the fields below and is held across every append that
	// changes them, so the queue and the log agree on order.
	mu      sync.Mutex
	active  *run    // the running turn, or nil
	pending []input // steering for the next model request, FIFO
	next    []input // inputs queued for the next turn, FIFO
	// compactAsked holds the focus of an on-demand compaction (see
	// RequestCompaction) until the next model request takes it.
	compactAsked *string

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
	seenCalls      map[string]bool // model tool-call IDs seen in this session
	warned         map[string]bool // budget metrics warned about
	compact        compactState
	firstUser      *model.Message // the session's first user request, pinned after compaction
	meter          *compaction.Meter
	checkpointMsgs int            // messages in the last runtime.checkpoint event of the log
	row            checkpoint.Row // what the store's checkpoint row holds
}

// OpenSession starts a new, empty session on log with the given defaults.
func (rt *Runtime) OpenSession(ctx context.Context, log EventLog, settings Settings) (*Session, error) {
	if log == nil {
		return nil, errcode.New(errcode.RuntimeInvalidInput, "open session: no event log")
	}
	if settings.Tools == nil {
		return nil, errcode.New(errcode.RuntimeInvalidInput, "open session: no tools")
	}
	if settings.Context != (compaction.Policy{}) {
		if err := settings.Context.Validate(); err != nil {
			return nil, err
		}
	}
	s := &Session{rt: rt, log: log, id: log.SessionID(), settings: settings}
	s.state = newState(settings)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if _, ok := rt.sessions[s.id]; ok {
		return nil, errcode.Errorf(errcode.RuntimeInvalidInput, "open session %s: already open in this process", s.id)
	}
	rt.sessions[s.id] = s
	return s, nil
}

func newState(settings Settings) state {
	return state{
		seenCalls: map[string]bool{},
		warned:    map[string]bool{},
		meter:     compaction.NewMeter(settings.System, settings.Tools),
	}
}

// ID returns the session ID.
func (s *Session) ID() string { return s.id }

// Settings returns the session's defaults.
func (s *Session) Settings() Settings { return s.settings }

// Usage returns the cumulative usage. Only meaningful between turns.
func (s *Session) Usage() model.Usage { return s.state.usage }

// Occupancy returns the current context occupancy in tokens, as the next
// context.accounted will count it.
func (s *Session) Occupancy() int {
	occ, _ := s.state.estimate(s.settings.Model, s.state.meter.Tokens())
	return occ
}

// estimate converts an occupancy in bytes into tokens for model, with the
// rule used (compaction.Algorithm or compaction.AlgorithmReported).
func (st *state) estimate(mdl string, bytes int) (int, string) {
	var c compaction.Calibration
	if st.compact.Calibration != nil {
		c = *st.compact.Calibration
	}
	return c.Estimate(mdl, bytes)
}

// calibrate records what a usage report teaches: a plausible one replaces
// the calibration, an implausible or estimated one removes it (the
// byte-count bound applies until the next plausible report).
func (st *state) calibrate(mdl string, bytes int, u model.Usage) {
	if c, ok := compaction.Calibrate(mdl, bytes, u.PromptTokens); ok && !u.Estimated {
		st.compact.Calibration = &c
		return
	}
	st.compact.Calibration = nil
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
			Message: "append " + string(ev.Type) + ": " + string(errcode.Of(err)),
			Err:     err,
		}
	}
	s.rt.bus.publish(Published{Seq: rec.Seq, Event: ev, Body: rec.Body})
	return rec, nil
}

// enqueue validates and durably records steering (next=false) or an input
// for the next turn (next=true).
func (s *Session) enqueue(ctx context.Context, r *run, text string, next bool) (string, error) {
	if err := validText("steering", text); err != nil {
		return "", err
	}
	if r.canceled.Load() {
		// Cancel is visible at once, even while another steering append
		// holds the queue.
		return "", errcode.Errorf(errcode.RuntimeRunTerminal, "steer run %s: the turn was canceled", r.id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.canceled.Load() || r.completing {
		return "", errcode.Errorf(errcode.RuntimeRunTerminal, "steer run %s: the turn is ending", r.id)
	}
	if len(s.pending)+len(s.next) >= MaxQueue {
		return "", errcode.Errorf(errcode.RuntimeInvalidInput, "steer run %s: queue is full (%d)", r.id, MaxQueue)
	}
	id := s.rt.cfg.NewID("msg")
	var data event.Data = event.SteeringQueued{RunID: r.id, SessionID: s.id, TurnID: r.turnID, MessageID: id, Content: text}
	if next {
		data = event.InputQueued{RunID: r.id, SessionID: s.id, TurnID: r.turnID, MessageID: id, Content: text}
	}
	// The lock is held across the durable append so that the queue and the
	// log agree on order: the turn drains the queue under the same lock.
	if _, err := s.append(ctx, data); err != nil {
		return "", err
	}
	if next {
		s.next = append(s.next, input{MessageID: id, Content: text})
	} else {
		s.pending = append(s.pending, input{MessageID: id, Content: text})
	}
	return id, nil
}

func (s *Session) withdraw(ctx context.Context, r *run, messageID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	drop := func(q []input) ([]input, bool) {
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
	if _, err := s.append(ctx, event.InputWithdrawn{RunID: r.id, SessionID: s.id, TurnID: r.turnID, MessageID: messageID}); err != nil {
		return err
	}
	s.pending, s.next = pending, next
	return nil
}

// HasQueued reports whether an input waits for the next turn.
func (s *Session) HasQueued() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.next) > 0
}

// RequestCompaction asks for the context to be compacted before the next
// model request, whatever the occupancy: at the next round of the running
// turn, or before the first request of the next turn. focus (may be empty)
// tells the summarizer what to keep in most detail; it is cut at
// compaction.FocusBound. The compaction is recorded as any other
// (context.accounted with summaryRequest, context.checkpoint,
// context.compacted); when there is nothing to summarize it is skipped
// and nothing is recorded. A later request replaces an earlier one not yet
// run. It is not persisted: a session resumed in another process does not
// inherit it. RUNTIME_INVALID_INPUT when the session has no context policy.
func (s *Session) RequestCompaction(focus string) error {
	if s.settings.Context == (compaction.Policy{}) {
		return errcode.New(errcode.RuntimeInvalidInput, "compact context: this session has no context policy")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compactAsked = &focus
	return nil
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
