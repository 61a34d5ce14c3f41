package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/tools"
)

// turn is the state of one running turn, owned by its goroutine.
type turn struct {
	s   *Session
	r   *run
	ctx context.Context
	// input is the user's message the turn was admitted with; compactOnly,
	// for a compaction turn (Session.Compact), its focus instead.
	input       checkpoint.Input
	compactOnly *string

	status    Status
	err       error  // the error that ended the turn, if any
	note      string // what a completed turn says in turn.completed (a compaction turn: what it did)
	outputID  string
	usage     model.Usage
	requests  int
	toolCalls int
	steps     int

	truncated       bool                    // the latest answer was cut by the output limit
	summaryBoundary int                     // the view index a summary round cuts at, while one runs
	summaryFocus    string                  // the focus of an on-demand summary round, while one runs
	summaryRefused  bool                    // a summary of this turn was spent but not committed: no automatic one again
	compacted       *event.ContextCompacted // the last compaction this turn committed
	loops           repeats                 // the model's latest identical tool calls
	lengthRetried   bool                    // a context-length refusal was answered by a compaction in this turn
	lastRequestID   string                  // the latest model or summary request sent
	wsState         *checkpoint.Workspace   // set for the terminal checkpoint
}

func (t *turn) append(data event.Data) (store.Record, error) {
	// Appends outlive cancellation: what was decided is recorded.
	return t.s.append(context.WithoutCancel(t.ctx), data)
}

func (t *turn) fail(err error) {
	if t.status != "" {
		return
	}
	if t.r.canceled.Load() && !isAppendFailure(err) {
		t.status = StatusCanceled
		return
	}
	if errcode.Of(err) == errcode.RuntimeBudgetExceeded {
		t.status = StatusBudgetExceeded
	} else {
		t.status = StatusFailed
	}
	t.err = err
}

func isAppendFailure(err error) bool {
	return errcode.Of(err) == errcode.RuntimeEventAppendFailed
}

// run is the turn loop: model rounds and tool calls until the model answers
// without tool calls and no steering is pending, or something ends it.
func (t *turn) run() {
	s := t.s
	if t.compactOnly != nil {
		t.compactTurn(*t.compactOnly)
		return
	}
	if done, err := t.userCalls(t.input.Content, t.input.MessageID); err != nil || done {
		if err != nil {
			t.fail(err)
		}
		return
	}
	for {
		if t.r.canceled.Load() {
			t.status = StatusCanceled
			return
		}
		if b := s.settings.Budget.MaxSteps; b > 0 && t.steps >= b {
			t.fail(errcode.Errorf(errcode.RuntimeBudgetExceeded, "step budget of %d reached", b))
			return
		}
		if b := s.cfg.MaxRounds; b > 0 && t.steps >= b {
			t.fail(errcode.Errorf(errcode.RuntimeRoundLimit,
				"the turn reached its limit of %d model rounds with the model still calling tools; to go on, send a follow-up (e.g. \"continue\"), or start with a higher --max-rounds", b))
			return
		}
		// A session whose token budget an earlier turn spent makes no
		// request at all: the budget is cumulative and never refunded.
		if err := t.checkTokenBudget(true); err != nil {
			t.fail(err)
			return
		}
		if err := t.applySteering(); err != nil {
			t.fail(err)
			return
		}
		if err := t.maybeCompact(); err != nil {
			t.fail(err)
			return
		}
		t.steps++
		t.warn("steps", int64(t.steps), int64(s.settings.Budget.MaxSteps))
		asst, err := t.modelRound()
		if errcode.Of(err) == errcode.ModelContextLength && !t.lengthRetried {
			// The server counts more than the estimate did: compact once
			// and send the round again.
			t.lengthRetried = true
			if rerr := t.recoverLength(err); rerr == nil {
				continue
			} else if errcode.Of(rerr) != errcode.RuntimeContextOverflow {
				err = rerr
			}
		}
		if err != nil {
			t.fail(err)
			return
		}
		if err := t.checkTokenBudget(len(asst.ToolCalls) > 0); err != nil {
			t.abandon(asst.ToolCalls, asst.requestID, "not run: the token budget is exhausted")
			t.fail(err)
			return
		}
		if len(asst.ToolCalls) == 0 {
			// Decide atomically with Steer: either steering arrived during
			// the answer (another round) or the turn is completing and no
			// more steering is accepted.
			s.mu.Lock()
			c := cmdFinalAnswer
			if len(s.pending) > 0 {
				c = cmdSteeredAnswer
			}
			d := s.transition(c)
			s.mu.Unlock()
			if d.act != actEnd {
				continue // another round takes the steering
			}
			t.outputID = asst.ID
			t.status = StatusCompleted
			if strings.TrimSpace(asst.Content) == "" {
				t.note = joinNote(t.note, EmptyAnswerNote) // else nothing shows that it answered at all
			}
			return
		}
		for i, call := range asst.ToolCalls {
			if t.r.canceled.Load() {
				t.abandon(asst.ToolCalls[i:], asst.requestID, "not run: the turn was canceled")
				t.status = StatusCanceled
				return
			}
			if b := s.settings.Budget.MaxToolCalls; b > 0 && t.toolCalls >= b {
				t.abandon(asst.ToolCalls[i:], asst.requestID, "not run: the tool-call budget is exhausted")
				t.fail(errcode.Errorf(errcode.RuntimeBudgetExceeded, "tool-call budget of %d reached", b))
				return
			}
			res, err := t.callTool(call, asst.requestID, true)
			if err == nil {
				err = t.loops.see(call, res, s.cfg.LoopRepeats)
			}
			if err != nil {
				t.abandon(asst.ToolCalls[i+1:], asst.requestID, "not run: the turn ended")
				t.fail(err)
				return
			}
		}
	}
}

// applySteering is the request boundary: a settings change recorded since
// the last request takes effect, and pending steering moves into the
// history, oldest first. The files its messages mention (@path) are then
// attached, oldest message first, through the policy and approvals of any
// tool call (attach); a question asked for one waits with the session
// unlocked.
func (t *turn) applySteering() error {
	applied, err := t.takeSteering()
	if err != nil {
		return err
	}
	for _, in := range applied {
		if t.r.canceled.Load() {
			return errCanceledTurn
		}
		if err := t.attach(in.Content, in.MessageID); err != nil {
			return err
		}
	}
	return nil
}

// takeSteering records and moves pending steering into the history and
// returns it.
func (t *turn) takeSteering() ([]checkpoint.Input, error) {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.takeSettingsLocked()
	if len(s.pending) == 0 {
		return nil, nil
	}
	ids := make([]string, len(s.pending))
	for i, in := range s.pending {
		ids[i] = in.MessageID
	}
	if _, err := t.append(event.SteeringApplied{RunID: t.r.id, SessionID: s.id, TurnID: t.r.turnID, MessageIDs: ids, MessageRevision: s.state.revision + len(ids)}); err != nil {
		return nil, err
	}
	for _, in := range s.pending {
		s.state.addQuiet(model.Message{ID: in.MessageID, Role: model.RoleUser, Content: in.Content})
	}
	applied := s.pending
	s.pending = nil
	return applied, nil
}

// addQuiet adds a message already recorded by another event.
func (st *state) addQuiet(m model.Message) {
	st.addRecorded(m, nil, event.MessageCompleted{})
}

// addRecorded is addQuiet with the frame of m's message.completed, when
// the store returned it (see pushEncoded).
func (st *state) addRecorded(m model.Message, frame []byte, d event.MessageCompleted) {
	st.pushEncoded(m, frame, d)
	st.transcript += int64(len(m.Content))
	if st.rawMsgs != nil {
		st.meter.AddRaw(st.rawMsgs[len(st.rawMsgs)-1])
	} else {
		st.meter.Add(m)
	}
}

// push appends a message and its canonical bytes.
func (st *state) push(m model.Message) {
	st.pushEncoded(m, nil, event.MessageCompleted{})
}

// pushEncoded is push for a message whose message.completed frame the
// store returned: its content, already escaped there, is not escaped
// again (see encodedMessage).
func (st *state) pushEncoded(m model.Message, frame []byte, d event.MessageCompleted) {
	raw := encodedMessage(m, frame, d)
	if raw == nil {
		var err error
		if raw, err = model.MarshalCanonical(m); err != nil {
			raw = nil // checkpoint.History falls back to a full encode
		}
	}
	st.messages = append(st.messages, m)
	st.rawMsgs = append(st.rawMsgs, raw)
	if raw == nil {
		st.rawMsgs = nil
	}
	st.revision++
}

// encodedMessage returns model.MarshalCanonical(m) built from the
// content's escaped form in frame, m's message.completed frame, or nil
// when m's content is short or frame does not hold it. Escaping a tool
// result of tens of KiB once more cost as much as the rest of a round.
func encodedMessage(m model.Message, frame []byte, d event.MessageCompleted) []byte {
	if len(m.Content) < 512 || d.Content != m.Content {
		return nil
	}
	content := event.MessageContent(frame, d)
	if content == nil {
		return nil
	}
	c := m
	c.Content = ""
	rest, err := model.MarshalCanonical(c)
	if err != nil {
		return nil
	}
	// Only id and role, both strings, come before it: the first such
	// key is the content's.
	const empty = `"content":""`
	i := bytes.Index(rest, []byte(empty))
	if i < 0 {
		return nil
	}
	out := make([]byte, 0, len(rest)+len(content))
	out = append(out, rest[:i+len(`"content":`)]...)
	out = append(out, content...)
	return append(out, rest[i+len(empty):]...)
}

// assistantMessage is a completed model answer.
type assistantMessage struct {
	model.Message
	requestID string
}

// request builds the next model request from the session state.
func (t *turn) request(requestID string) (model.Request, error) {
	s := t.s
	view := s.state.view()
	if err := checkpoint.CheckMessages(view); err != nil {
		return model.Request{}, err
	}
	return roundRequest(s.settings, requestID, view, t.outputLimit()), nil
}

func (t *turn) outputLimit() int {
	s := t.s
	remaining := 0
	if b := s.settings.Budget.MaxModelTokens; b > 0 {
		remaining = max(int(b)-s.state.usage.TotalTokens, 1)
	}
	return compaction.OutputLimit(s.settings.MaxTokens, remaining, s.settings.Context.ReserveTokens)
}

func (t *turn) modelRound() (assistantMessage, error) {
	s, r := t.s, t.r
	if s.settings.Context != (compaction.Policy{}) {
		if err := t.elide(); err != nil {
			return assistantMessage{}, err
		}
	}
	requestID := s.rt.cfg.NewID("req")
	req, err := t.request(requestID)
	if err != nil {
		return assistantMessage{}, err
	}
	bytes := s.state.meter.Tokens()
	occ, rule := s.estimate(bytes)
	if p := s.settings.Context; p != (compaction.Policy{}) {
		if !compaction.Fits(p, occ) {
			return assistantMessage{}, errcode.Errorf(errcode.RuntimeContextOverflow,
				"the next request needs %d tokens plus a reserve of %d, over the window of %d", occ, p.ReserveTokens, p.WindowTokens)
		}
	}
	if _, err := t.append(event.ContextAccounted{RunID: r.id, SessionID: s.id, TurnID: r.turnID, RequestID: requestID,
		OccupancyTokens: occ, WindowTokens: s.settings.Context.WindowTokens, ReserveTokens: s.settings.Context.ReserveTokens,
		Algorithm: rule, SummaryRequest: false}); err != nil {
		return assistantMessage{}, err
	}
	comp, msgID, err := t.stream(req, checkpoint.PhaseModel)
	if err != nil {
		return assistantMessage{}, err
	}
	s.calibrate(bytes, comp.Usage)
	m := model.Message{ID: msgID, Role: model.RoleAssistant, Content: comp.Content, ToolCalls: comp.ToolCalls, Reasoning: comp.Reasoning}
	if m.Reasoning != "" {
		m.ReasoningField = comp.ReasoningField
	}
	if err := t.addMessage(m, requestID, func(d *event.MessageCompleted) { d.FinishReason = comp.FinishReason }); err != nil {
		return assistantMessage{}, err
	}
	t.truncated = comp.FinishReason == model.FinishLength
	for _, c := range comp.ToolCalls {
		s.state.seenCalls[c.ID] = true
	}
	return assistantMessage{Message: m, requestID: requestID}, nil
}

// stream sends one request (model or summary phase), records it, streams
// the answer and validates it. It returns the completion and the ID of the
// message the deltas belong to.
func (t *turn) stream(req model.Request, phase string) (*model.Completion, string, error) {
	s, r := t.s, t.r
	t.requests++
	s.state.modelRequests++
	t.lastRequestID = req.RequestID
	if _, err := t.append(event.ModelRequest{RequestID: req.RequestID, Model: req.Model, MessageCount: len(req.Messages),
		RunID: r.id, SessionID: s.id, TurnID: r.turnID, Step: t.steps, ContextVersion: 1, MessageRevision: s.state.revision}); err != nil {
		return nil, "", err
	}
	if err := t.checkpoint(phase, &checkpoint.NextRequest{RequestID: req.RequestID, MaxTokens: req.MaxTokens, Step: t.steps, Boundary: t.summaryBoundary, Focus: t.summaryFocus}, nil); err != nil {
		return nil, "", err
	}
	msgID := s.rt.cfg.NewID("msg")
	ctx, cancel := t.ctx, context.CancelFunc(func() {})
	if ms := s.settings.ModelTimeoutMs; ms > 0 {
		ctx, cancel = context.WithTimeoutCause(t.ctx, time.Duration(ms)*time.Millisecond, errModelDeadline)
	}
	defer cancel()
	comp, err := t.read(ctx, req, msgID)
	if err != nil {
		if t.r.canceled.Load() {
			return nil, "", errCanceledTurn
		}
		if errors.Is(context.Cause(ctx), errModelDeadline) {
			return nil, "", errcode.Errorf(errcode.RuntimeModelTimeout, "model round passed its deadline of %d ms", s.settings.ModelTimeoutMs)
		}
		return nil, "", err
	}
	t.usage = t.usage.Add(comp.Usage)
	s.state.usage = s.state.usage.Add(comp.Usage)
	t.warn("tokens", int64(s.state.usage.TotalTokens), s.settings.Budget.MaxModelTokens)
	if _, err := t.append(event.ModelResponse{RequestID: req.RequestID, Model: req.Model, FinishReason: comp.FinishReason,
		Usage: comp.Usage, RunID: r.id, SessionID: s.id, TurnID: r.turnID}); err != nil {
		return nil, "", err
	}
	return comp, msgID, nil
}

var (
	errModelDeadline = errors.New("model round deadline")
	errCanceledTurn  = errors.New("turn canceled")
)

// read consumes the stream, records deltas (coalescing those that arrive
// while an append is in flight) and validates the stream's shape.
func (t *turn) read(ctx context.Context, req model.Request, msgID string) (*model.Completion, error) {
	s, r := t.s, t.r
	st, err := s.cfg.Model.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	type item struct {
		c   model.Chunk
		err error
	}
	ch := make(chan item, 64)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		defer close(ch)
		for {
			c, err := st.Recv()
			select {
			case ch <- item{c, err}:
			case <-quit:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer st.Close()

	var (
		text      strings.Builder // as the provider sent it
		shown     strings.Builder // as recorded: U+FFFD for bytes that are not UTF-8
		hold      string          // an unfinished UTF-8 sequence, for the next delta
		reasoning strings.Builder
		calls     []model.ToolCall
		seq       int
		completed *model.Completion
		held      *item
		ids       = callIDs{seen: s.state.seenCalls}
	)
	next := func() (item, bool) {
		if held != nil {
			it := *held
			held = nil
			return it, true
		}
		select {
		case it, ok := <-ch:
			return it, ok
		case <-ctx.Done():
			st.Close()
			return item{err: context.Cause(ctx)}, true
		}
	}
	invalid := func(format string, args ...any) error {
		return errcode.Errorf(errcode.RuntimeModelStreamInvalid, format, args...)
	}
	for {
		it, ok := next()
		if !ok {
			break
		}
		if it.err == io.EOF {
			break
		}
		if it.err != nil {
			return nil, it.err
		}
		c := it.c
		if completed != nil {
			return nil, invalid("stream continued after its completion")
		}
		switch c.Kind {
		case model.ChunkDelta:
			if len(calls) > 0 {
				return nil, invalid("text after a tool call")
			}
			delta := c.Delta
			// Coalesce deltas that are already waiting.
		more:
			for {
				select {
				case it2, ok := <-ch:
					if !ok {
						break more
					}
					if it2.err == nil && it2.c.Kind == model.ChunkDelta {
						delta += it2.c.Delta
						continue
					}
					held = &it2
					break more
				default:
					break more
				}
			}
			text.WriteString(delta)
			delta = hold + delta
			cut := validPrefix([]byte(delta))
			delta, hold = delta[:cut], delta[cut:]
			if delta == "" {
				continue
			}
			if err := t.appendDelta(req.RequestID, msgID, seq, delta, &shown); err != nil {
				return nil, err
			}
			seq++
		case model.ChunkReasoning:
			// Interleaved-thinking servers reason between pieces of text
			// and tool calls: reasoning is kept, in order, wherever it
			// comes.
			reasoning.WriteString(c.Delta)
		case model.ChunkToolCall:
			if c.ToolCall == nil || c.ToolCall.ID == "" || c.ToolCall.Name == "" {
				return nil, invalid("tool call without id or name")
			}
			tc := *c.ToolCall
			tc.ID = ids.of(tc.ID)
			if slices.ContainsFunc(calls, func(x model.ToolCall) bool { return x.ID == tc.ID }) {
				return nil, invalid("tool-call id %s reused", excerpt(c.ToolCall.ID, 80))
			}
			calls = append(calls, tc)
		case model.ChunkCompletion:
			if c.Completion == nil {
				return nil, invalid("empty completion")
			}
			cp := *c.Completion
			completed = &cp
		case model.ChunkRetry:
			if c.Retry == nil {
				return nil, invalid("empty retry notice")
			}
			if seq > 0 || len(calls) > 0 {
				return nil, invalid("retry after content was streamed")
			}
			if _, err := t.append(event.ModelRetry{RequestID: req.RequestID, Attempt: c.Retry.Attempt, Code: c.Retry.Code,
				DelayMs: c.Retry.DelayMs, Message: c.Retry.Message, RunID: r.id, SessionID: s.id, TurnID: r.turnID}); err != nil {
				return nil, err
			}
		default:
			return nil, invalid("unknown chunk kind %d", c.Kind)
		}
	}
	if completed == nil {
		return nil, invalid("stream ended without a completion")
	}
	if text.Len() > 0 && completed.Content != text.String() {
		return nil, invalid("final content differs from the streamed text")
	}
	if hold != "" {
		// The stream ended inside a character: its bytes are the last delta.
		if err := t.appendDelta(req.RequestID, msgID, seq, hold, &shown); err != nil {
			return nil, err
		}
	}
	switch {
	case completed.Reasoning == "":
		completed.Reasoning = reasoning.String()
	case reasoning.Len() > 0 && completed.Reasoning != reasoning.String():
		return nil, invalid("final reasoning differs from the streamed reasoning")
	}
	var replaced [2]bool
	if text.Len() > 0 {
		completed.Content = shown.String()
	} else {
		completed.Content, replaced[0] = utf8Text(completed.Content)
	}
	completed.Reasoning, replaced[1] = utf8Text(completed.Reasoning)
	if replaced[0] || replaced[1] || shown.String() != text.String() {
		t.note = joinNote(t.note, NoteReplacedUTF8)
	}
	if len(calls) > 0 && len(completed.ToolCalls) == 0 {
		completed.ToolCalls = calls
	} else if len(completed.ToolCalls) > 0 {
		completed.ToolCalls = slices.Clone(completed.ToolCalls)
		for i := range completed.ToolCalls {
			completed.ToolCalls[i].ID = ids.of(completed.ToolCalls[i].ID)
		}
	}
	if len(calls) > 0 && !slices.EqualFunc(calls, completed.ToolCalls, sameCall) {
		return nil, invalid("final tool calls differ from the streamed ones")
	}
	seen := map[string]bool{}
	for _, c := range completed.ToolCalls {
		if c.ID == "" || c.Name == "" {
			return nil, invalid("tool call without id or name")
		}
		if !json.Valid(c.Arguments) || (c.BadArguments && c.Arguments[0] != '"') {
			return nil, invalid("tool call %s has arguments that are not JSON", excerpt(c.ID, 80))
		}
		if len(c.Extra) > 0 && (c.Extra[0] != '{' || !json.Valid(c.Extra)) {
			return nil, invalid("tool call %s has extra fields that are not a JSON object", excerpt(c.ID, 80))
		}
		if seen[c.ID] || s.state.seenCalls[c.ID] {
			return nil, invalid("tool-call id %s reused", excerpt(c.ID, 80))
		}
		seen[c.ID] = true
	}
	for i, c := range completed.ToolCalls {
		var replaced bool
		if completed.ToolCalls[i], replaced = fitCall(c); replaced {
			t.note = joinNote(t.note, NoteReplacedUTF8)
		}
	}
	switch completed.FinishReason {
	case model.FinishStop, model.FinishToolCalls, model.FinishLength, model.FinishError:
	case "":
		completed.FinishReason = model.FinishStop
		if len(completed.ToolCalls) > 0 {
			completed.FinishReason = model.FinishToolCalls
		}
	default:
		return nil, invalid("unknown finish reason %q", excerpt(completed.FinishReason, 40))
	}
	u := completed.Usage
	if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.ReasoningTokens < 0 {
		return nil, invalid("negative usage")
	}
	// A total above prompt + completion (reasoning counted apart) is kept
	// and charged; one below is raised.
	completed.Usage.TotalTokens = max(u.TotalTokens, u.PromptTokens+u.CompletionTokens)
	return completed, nil
}

// EmptyAnswerNote is the note of a turn whose answer had no text (and no
// tool call).
const EmptyAnswerNote = "the model's answer was empty: it sent no text and no tool call"

// callIDs gives the tool calls of one response their IDs. An ID an earlier
// response of the session already used gets a new one, the same for all
// its uses in this response: "<id>~2", or the next number free. Servers
// that number their calls per response ("call_0", "0") or replay fixed
// ones would otherwise end every turn after their first with
// RUNTIME_MODEL_STREAM_INVALID. The new ID is the one recorded (tool.call's
// modelCallId, the assistant message) and sent back to the provider, which
// takes any ID its tool results match. An ID used twice within one
// response is still invalid.
type callIDs struct {
	seen    map[string]bool   // the session's earlier calls
	renamed map[string]string // a reused ID → its new one
	taken   map[string]bool   // the new IDs given
}

func (c *callIDs) of(id string) string {
	if !c.seen[id] {
		return id
	}
	if n, ok := c.renamed[id]; ok {
		return n
	}
	if c.renamed == nil {
		c.renamed, c.taken = map[string]string{}, map[string]bool{}
	}
	for k := 2; ; k++ {
		if n := id + "~" + strconv.Itoa(k); !c.seen[n] && !c.taken[n] {
			c.renamed[id], c.taken[n] = n, true
			return n
		}
	}
}

func sameCall(a, b model.ToolCall) bool {
	return a.ID == b.ID && a.Name == b.Name && string(a.Arguments) == string(b.Arguments) &&
		a.BadArguments == b.BadArguments && string(a.Extra) == string(b.Extra)
}

// checkTokenBudget ends the turn when the cumulative tokens exceed the
// budget, or reach it while the answer asks for tool calls.
func (t *turn) checkTokenBudget(wantsTools bool) error {
	b := t.s.settings.Budget.MaxModelTokens
	if b <= 0 {
		return nil
	}
	used := int64(t.s.state.usage.TotalTokens)
	if used > b || (used == b && wantsTools) {
		return errcode.Errorf(errcode.RuntimeBudgetExceeded, "token budget of %d exhausted (%d used)", b, used)
	}
	return nil
}

// warn emits one budget.warning per metric when use reaches half the limit.
func (t *turn) warn(metric string, used, limit int64) {
	if limit <= 0 || used*2 < limit || t.s.state.warned[metric] {
		return
	}
	t.s.state.warned[metric] = true
	pct := int(used * 100 / limit)
	// A failed warning append surfaces at the next append; the turn goes on.
	_, _ = t.append(event.BudgetWarning{Metric: metric, Used: int(used), Limit: int(limit), Pct: pct})
}

// callTool runs one call through the policy, the permission exchange and
// the tool, and records it; toModel adds the tool message (false for a call
// the user made, whose result goes into the user's message).
func (t *turn) callTool(mc model.ToolCall, requestID string, toModel bool) (tools.Result, error) {
	s, r := t.s, t.r
	callID := s.rt.cfg.NewID("call")
	t.toolCalls++
	s.state.toolCalls++
	t.warn("tool_calls", int64(t.toolCalls), int64(s.settings.Budget.MaxToolCalls))
	if _, err := t.append(event.ToolCall{CallID: callID, Tool: mc.Name, Input: rawOrString(mc.Arguments), ModelCallID: mc.ID,
		RequestID: requestID, RunID: r.id, SessionID: s.id, TurnID: r.turnID}); err != nil {
		return tools.Result{}, err
	}
	call, perr := tools.Parse(mc.Name, mc.Arguments)
	if mc.BadArguments && (perr == nil || perr.Code == errcode.ToolBadInput) {
		// The model sent text that is not a JSON object: it sees why and
		// may retry.
		perr = &tools.ResultError{Code: errcode.ToolBadInput, Message: badArgsMessage(mc.Name, mc.Arguments)}
	}
	if perr != nil && perr.Code == errcode.ToolNotFound {
		perr = t.notFound(mc.Name)
	}
	if perr != nil {
		call = tools.Call{Tool: mc.Name}
	}
	d := s.cfg.Policy.Decide(call)
	pd := event.PolicyDecision{CallID: callID, Action: mc.Name, Subject: call.Subject, Effect: string(d.Effect), Reason: d.Reason,
		RuleID: d.RuleID, RunID: r.id, SessionID: s.id, TurnID: r.turnID}
	// A !command is the user's own decision: it is recorded and passes
	// the policy's denials and the tools' refusals, but nobody is asked.
	typed := !toModel && mc.ID == event.UserShellCallID(requestID)
	if d.Effect == Ask && perr == nil {
		// The log says why no question follows: the policy's answer
		// stands, and the user's earlier grant covers it.
		switch {
		case typed:
			pd.Reason = strings.TrimPrefix(pd.Reason+"; not asked: the user typed this command", "; ")
		case r.grants[mc.Name]:
			pd.Reason = strings.TrimPrefix(pd.Reason+"; not asked: the user allowed "+mc.Name+" for this turn", "; ")
		case s.grantedFor(mc.Name):
			pd.Reason = strings.TrimPrefix(pd.Reason+"; not asked: the user allowed "+mc.Name+" for this session", "; ")
		}
	}
	if _, err := t.append(pd); err != nil {
		return tools.Result{}, err
	}
	start := s.rt.cfg.Now()
	var res tools.Result
	switch {
	case d.Effect == Deny:
		res = failed(errcode.ToolPolicyDenied, "the policy denied this call: "+d.Reason)
	case perr != nil:
		// Arguments the tool refuses: nothing would run, so no one is
		// asked; the model sees why at once.
		res = tools.Result{Error: perr}
	case d.Effect == Ask && !typed && !r.grants[mc.Name] && !s.grantedFor(mc.Name):
		ans, err := t.askPermission(callID, call, mc)
		if err != nil {
			return tools.Result{}, err
		}
		if !ans.Allow {
			why := "the user denied this call"
			if ans.Reason != "" {
				why += "; they said: " + ans.Reason
			}
			res = failed(errcode.ToolPermissionDenied, why)
			break
		}
		fallthrough
	default:
		var err error
		ctx := t.ctx
		var out *outputRecorder
		if call.Tool == "process.exec" {
			out = newOutputRecorder(t, callID)
			ctx = tools.WithOutput(ctx, out.write)
			ctx = workspace.WithJobOrigin(ctx, t.r.turnID, callID) // a background job says what started it
		}
		if n := t.resultRoom(mc); n > 0 {
			ctx = tools.WithMaxOutput(ctx, n)
		}
		res, err = tools.Execute(ctx, s.cfg.Workspace, call)
		if out != nil {
			out.stop() // its output is recorded before its result
		}
		if err != nil {
			res = failed(errcode.Of(err), errcode.Message(err))
			if rerr := t.recordResult(callID, mc, res, start, toModel); rerr != nil {
				return res, rerr
			}
			return res, err
		}
	}
	// A tool that finished as cancel arrived keeps its real result: its
	// effect happened.
	return res, t.recordResult(callID, mc, res, start, toModel)
}

// notFound is TOOL_NOT_FOUND for name, listing the session's tools as
// the request advertised them (SessionConfig.WireName), with the
// canonical name beside an alias.
func (t *turn) notFound(name string) *tools.ResultError {
	shown := name
	if len(shown) > 64 {
		shown = strings.ToValidUTF8(shown[:64], "") + "…"
	}
	var list []string
	for _, spec := range t.s.settings.Tools {
		w := spec.Name
		if f := t.s.cfg.WireName; f != nil {
			w = f(spec.Name)
		}
		if w != spec.Name {
			w += " (" + spec.Name + ")"
		}
		list = append(list, w)
	}
	return &tools.ResultError{Code: errcode.ToolNotFound,
		Message: fmt.Sprintf("no tool named %q; the tools are %s", shown, strings.Join(list, ", "))}
}

// repeats counts the model's latest run of identical tool calls: the same
// tool, the same arguments and the same result.
type repeats struct {
	last [sha256.Size]byte
	n    int
	cyc  cycles // the calls going round in a longer cycle (cycle.go)
}

// see counts one call and its result; limit identical ones in a row end
// the turn with RUNTIME_LOOP_DETECTED (limit ≤ 0: never).
func (r *repeats) see(mc model.ToolCall, res tools.Result, limit int) error {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(mc.Name), mc.Arguments, res.Output, []byte(res.Patch)} {
		h.Write(strconv.AppendInt(nil, int64(len(part)), 10))
		h.Write([]byte{':'})
		h.Write(part)
	}
	if res.Error != nil {
		h.Write([]byte("error:" + string(res.Error.Code) + ":" + res.Error.Message))
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if r.n > 0 && key == r.last {
		r.n++
	} else {
		r.last, r.n = key, 1
	}
	if limit > 0 && r.n >= limit {
		return errcode.Errorf(errcode.RuntimeLoopDetected,
			"the model called %s with the same arguments %d times in a row and got the same result each time; to go on, send a follow-up that tells it what to do differently", mc.Name, r.n)
	}
	if limit > 0 {
		return r.cyc.see(mc.Name, key)
	}
	return nil
}

// badArgsExcerpt quotes the start of arguments kept as a JSON string.
func badArgsExcerpt(args json.RawMessage) string {
	var text string
	_ = json.Unmarshal(args, &text)
	if r := []rune(text); len(r) > 120 {
		text = string(r[:120]) + "…"
	}
	q, _ := model.MarshalCanonical(text)
	return "received " + string(q)
}

func failed(code errcode.Code, msg string) tools.Result {
	return tools.Result{Error: &tools.ResultError{Code: code, Message: msg}}
}

func (t *turn) recordResult(callID string, mc model.ToolCall, res tools.Result, start time.Time, toModel bool) error {
	s := t.s
	dur := res.Duration
	if dur == 0 {
		dur = s.rt.cfg.Now().Sub(start)
	}
	tr := event.ToolResult{CallID: callID, Tool: mc.Name, OK: res.Error == nil, DurationMs: int(dur.Milliseconds())}
	var content []byte
	if res.Error != nil {
		tr.Error = &event.ToolError{Code: string(res.Error.Code), Message: res.Error.Message}
		content, _ = model.MarshalCanonical(map[string]any{"error": res.Error})
	} else {
		tr.Output = res.Output
		tr.Patch = res.Patch
		if res.Lines != nil {
			tr.Lines = &event.LineCounts{Added: res.Lines.Added, Deleted: res.Lines.Deleted}
		}
		content = res.Output
	}
	if _, err := t.append(tr); err != nil {
		return err
	}
	if !toModel {
		return nil
	}
	msg := model.Message{ID: s.rt.cfg.NewID("msg"), Role: model.RoleTool, Content: string(content), ToolCallID: mc.ID, Name: mc.Name}
	return t.addMessage(msg, "")
}

// abandon records the calls the model asked for but that will not run, so
// that every tool call in the history has its result.
func (t *turn) abandon(calls []model.ToolCall, requestID, why string) {
	s, r := t.s, t.r
	for _, mc := range calls {
		callID := s.rt.cfg.NewID("call")
		if _, err := t.append(event.ToolCall{CallID: callID, Tool: mc.Name, Input: rawOrString(mc.Arguments), ModelCallID: mc.ID,
			RequestID: requestID, RunID: r.id, SessionID: s.id, TurnID: r.turnID}); err != nil {
			return
		}
		if err := t.recordResult(callID, mc, failed(errcode.ToolCanceled, why), s.rt.cfg.Now(), true); err != nil {
			return
		}
	}
}

// askPermission asks the session's front ends (permission.requested) and
// waits for Session.Answer, or for the turn to be canceled. The answer's
// reason reaches the model: with a denial in the call's result, with an
// approval as steering for the next request.
func (t *turn) askPermission(callID string, call tools.Call, mc model.ToolCall) (PermissionAnswer, error) {
	s, r := t.s, t.r
	permID := s.rt.cfg.NewID("perm")
	subject := call.Subject
	// The question carries its subject: the call's input and, for a
	// write, the diff the write's own record would compute (read before
	// the lock: it reads the workspace).
	req := event.PermissionRequested{PermissionID: permID, CallID: callID, Action: mc.Name, Subject: subject, Scope: string(ScopeOnce),
		Input: rawOrString(mc.Arguments)}
	if patch, lines := tools.Preview(t.ctx, s.cfg.Workspace, call); lines != nil {
		req.Patch, req.Lines = patch, &event.LineCounts{Added: lines.Added, Deleted: lines.Deleted}
	}
	q := &question{run: r, reply: make(chan PermissionAnswer, 1)}
	s.mu.Lock()
	s.questions[permID] = q
	_, err := t.append(req)
	if err != nil {
		delete(s.questions, permID)
	}
	s.mu.Unlock()
	if err != nil {
		return PermissionAnswer{}, err
	}
	var ans PermissionAnswer
	select {
	case ans = <-q.reply:
	case <-t.ctx.Done():
		s.mu.Lock()
		delete(s.questions, permID)
		s.mu.Unlock()
		ans = PermissionAnswer{Scope: ScopeOnce, Note: "turn canceled"}
	}
	if t.r.canceled.Load() {
		ans = PermissionAnswer{Scope: ScopeOnce, Note: "turn canceled"}
	}
	decision := "deny"
	if ans.Allow {
		decision = "allow"
	}
	pr := event.PermissionResolved{PermissionID: permID, CallID: callID, Action: mc.Name, Subject: subject, Scope: string(ans.Scope), Decision: decision, Note: ans.Note}
	if _, err := t.append(pr); err != nil {
		return PermissionAnswer{}, err
	}
	if ans.Allow && ans.Scope == ScopeRun {
		r.grants[mc.Name] = true
	}
	if ans.Allow && ans.Scope == ScopeSession {
		s.grant(mc.Name)
	}
	if ans.Allow && ans.Reason != "" {
		s.mu.Lock()
		_, err := s.enqueueLocked(context.WithoutCancel(t.ctx), r, "About the approved "+mc.Name+" call, the user said: "+ans.Reason, false)
		s.mu.Unlock()
		if err != nil {
			return PermissionAnswer{}, err
		}
	}
	return ans, nil
}
