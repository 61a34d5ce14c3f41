package runtime

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// StartRequest starts a turn on a session: the first, or a follow-up that
// inherits messages, pending steering, usage, compaction state and defaults.
type StartRequest struct {
	RunID  string // optional; generated when empty
	TurnID string // optional; generated when empty; never reused
	Input  string // the user's message; empty with FromQueue
	// FromQueue takes the oldest input queued for the next turn as Input.
	FromQueue bool
	// Log, when set, must be the session's own log: a turn cannot move a
	// session to another store.
	Log EventLog
	// Messages would replace the inherited context; it is always refused on
	// a follow-up (history is append-only).
	Messages []model.Message

	compact *string // a compaction turn with this focus (Session.Compact)
}

// Start admits a turn when the session is idle: it appends agent.started,
// turn.started and the user message durably, then runs the turn in its own
// goroutine. The turn is bound to ctx's values but not its cancellation:
// use Cancel. Send is the front ends' command; Start is for callers that
// choose the run and turn IDs.
//
// A session runs one turn at a time: while one is active (being admitted,
// running or ending), Start fails with RUNTIME_INVALID_INPUT, so two
// turns' events never interleave in the log.
func (s *Session) Start(ctx context.Context, req StartRequest) (string, error) {
	if req.Log != nil && req.Log != s.log {
		return "", errcode.New(errcode.RuntimeInvalidInput, "start turn: a different event store than the session's")
	}
	if req.Messages != nil {
		return "", errcode.New(errcode.RuntimeInvalidInput, "start turn: a replacement context is not accepted; history is append-only")
	}
	if !req.FromQueue {
		if err := validText("input", req.Input); err != nil {
			return "", err
		}
	}
	if _, err := s.lockDecide(ctx, cmdStart, nil); err != nil {
		return "", err
	}
	t, err := s.startLocked(ctx, req)
	s.mu.Unlock()
	if err != nil {
		return "", err
	}
	return t.r.id, t.begin()
}

// startLocked makes a new run the active turn and takes its input (from
// the queue with req.FromQueue). The caller admits it with begin after
// releasing mu; until the admission is durable, commands that need a
// running turn wait on r.admitted.
func (s *Session) startLocked(ctx context.Context, req StartRequest) (*turn, error) {
	rt := s.rt
	if req.RunID == "" {
		req.RunID = rt.cfg.NewID("run")
	}
	if req.TurnID == "" {
		req.TurnID = rt.cfg.NewID("turn")
	}
	if slices.Contains(s.state.turns, req.TurnID) {
		return nil, errcode.Errorf(errcode.RuntimeInvalidInput, "start turn: turn id %s was already used", req.TurnID)
	}
	var in checkpoint.Input
	switch {
	case req.compact != nil:
	case req.FromQueue:
		if len(s.next) == 0 {
			return nil, errcode.New(errcode.RuntimeInvalidInput, "start turn: nothing is queued")
		}
		in = s.next[0]
	default:
		in = checkpoint.Input{MessageID: rt.cfg.NewID("msg"), Content: req.Input}
	}
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r := &run{sess: s, id: req.RunID, turnID: req.TurnID, agentID: rt.cfg.NewID("agent"), cancel: cancel,
		done: make(chan struct{}), admitted: make(chan struct{}), grants: map[string]bool{}}
	if err := rt.register(r); err != nil {
		cancel(nil)
		return nil, err
	}
	// Cancel never takes mu: the owner decides on it as soon as the
	// turn's context ends (a no-op once the turn has released the
	// session).
	context.AfterFunc(runCtx, func() {
		s.mu.Lock()
		s.stateLocked()
		s.mu.Unlock()
	})
	if req.FromQueue {
		s.next = s.next[1:]
	}
	s.active = r
	s.setState(StateAdmitting)
	s.cur.Store(r)
	s.lastIDs = [2]string{r.id, r.turnID}
	select {
	case <-s.idle:
		s.idle = make(chan struct{})
	default:
	}
	return &turn{s: s, r: r, ctx: runCtx, input: in, compactOnly: req.compact}, nil
}

// begin admits the turn and, once its admission is durable, runs it in its
// own goroutine. A failed admission ends the turn at once (exactly once in
// the log if any of its admission events made it there) and is returned.
func (t *turn) begin() error {
	if err := t.admitNow(); err != nil {
		t.drive()
		return err
	}
	go t.drive()
	return nil
}

func (t *turn) admitNow() error {
	err := t.admit(t.input)
	if err != nil {
		t.fail(err)
	}
	s := t.s
	s.mu.Lock()
	// A compaction turn takes no steering (text sent while it runs waits
	// for its end and starts a turn); a failed admission ends the turn.
	c := cmdAdmitted
	if err != nil || t.compactOnly != nil {
		c = cmdAdmittedNoInput
	}
	s.transition(c)
	s.mu.Unlock()
	close(t.r.admitted) // after the state: a waiter woken decides on the new one
	return err
}

// drive runs the turn to its end, then each turn the session starts from
// its queue after it.
func (t *turn) drive() {
	for t != nil {
		if t.status == "" { // else its admission failed
			t.run()
		}
		if t = t.finish(); t != nil {
			_ = t.admitNow() // a failure is the turn's outcome
		}
	}
}

func (t *turn) admit(in checkpoint.Input) error {
	s, r := t.s, t.r
	s.state.turns = append(s.state.turns, r.turnID)
	clear(s.state.warned) // steps and tool calls are per turn; tokens re-warn only past a new 50 %
	if s.state.usage.TotalTokens*2 >= int(s.settings.Budget.MaxModelTokens) && s.settings.Budget.MaxModelTokens > 0 {
		s.state.warned["tokens"] = true
	}
	if _, err := t.append(event.AgentStarted{AgentID: r.agentID, SessionID: s.id, Model: s.settings.Model, RunID: r.id, TurnID: r.turnID}); err != nil {
		return err
	}
	if t.compactOnly != nil {
		// A compaction turn has no user message, and no request of its
		// own to pin.
		s.state.turnUser = nil
		_, err := t.append(event.TurnStarted{RunID: r.id, SessionID: s.id, TurnID: r.turnID, Compact: &event.CompactInput{Focus: *t.compactOnly}})
		return err
	}
	if _, err := t.append(event.TurnStarted{RunID: r.id, SessionID: s.id, TurnID: r.turnID, InputMessageID: in.MessageID}); err != nil {
		return err
	}
	msg := model.Message{ID: in.MessageID, Role: model.RoleUser, Content: in.Content}
	if err := t.addMessage(msg, ""); err != nil {
		return err
	}
	if s.state.firstUser == nil {
		first := msg
		s.state.firstUser = &first
	}
	s.state.turnUser, s.state.turnAt = &msg, len(s.state.messages)-1
	return nil
}

// addMessage records a completed message and adds it to the history.
func (t *turn) addMessage(m model.Message, requestID string, extra ...func(*event.MessageCompleted)) error {
	s, r := t.s, t.r
	data := event.MessageCompleted{RunID: r.id, SessionID: s.id, TurnID: r.turnID, MessageID: m.ID, Role: m.Role, Content: m.Content}
	switch m.Role {
	case model.RoleAssistant:
		data.RequestID = requestID
		data.ToolCalls = m.ToolCalls
		data.Reasoning = m.Reasoning
		data.ReasoningField = m.ReasoningField
	case model.RoleTool:
		data.Name = m.Name
		data.ToolCallID = m.ToolCallID
	}
	for _, f := range extra {
		f(&data)
	}
	rec, err := t.append(data)
	if err != nil {
		return err
	}
	s.state.addRecorded(m, rec.Body, data)
	return nil
}

func rawOrString(b []byte) json.RawMessage {
	if json.Valid(b) {
		if c, err := model.MarshalCanonical(json.RawMessage(b)); err == nil {
			return c
		}
	}
	c, _ := model.MarshalCanonical(string(b))
	return c
}
