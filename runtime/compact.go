package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/tools"
)

// view is what the next request sends: the whole history, or after a
// compaction the prefix's system messages, the summary, the pinned first
// request, the current turn's request when it is not in the tail, and the
// tail (compaction.ViewTurn). Large tool results before
// compact.ElideBefore are elided (see elide).
func (st *state) view() []model.Message {
	msgs := st.messages
	if e := st.compact.ElideBefore; e > 0 {
		msgs = compaction.Elide(msgs, st.compact.TailStart, e)
	}
	if st.compact.Compactions == 0 {
		return msgs
	}
	v, err := compaction.ViewTurn(msgs, st.compact.TailStart, st.compact.Summary, st.firstUser, st.turnUser)
	if err != nil {
		// The state was validated when it was committed or parsed; a view
		// that cannot be built means the history under it is broken.
		return msgs
	}
	for i := range v {
		if compaction.IsSummary(v[i]) {
			v[i].ID = st.compact.SummaryMessageID
			break
		}
	}
	return v
}

func summaryRequest(settings checkpoint.Settings, requestID string, maxTokens int, prefix []model.Message, focus string) model.Request {
	return model.Request{
		RequestID:       requestID,
		Model:           settings.Model,
		Messages:        compaction.SummaryRequestFocus(prefix, focus),
		MaxTokens:       maxTokens,
		ProviderOptions: settings.ProviderOptions,
	}
}

// maybeCompact runs a compaction round when the occupancy has reached the
// policy's threshold. A failed compaction commits nothing; its usage is
// still charged.
func (t *turn) maybeCompact() error {
	s := t.s
	p := s.settings.Context
	if p == (compaction.Policy{}) {
		return nil
	}
	if focus, ok := s.takeCompaction(); ok {
		err := t.compact(focus)
		if errcode.Of(err) == errcode.RuntimeContextOverflow && !compaction.Due(p, s.Occupancy()) {
			// Asked for, not needed: nothing (more) to summarize is no
			// reason to end the turn.
			return nil
		}
		if errcode.Of(err) == errcode.RuntimeContextOverflow {
			return t.elide()
		}
		return err
	}
	if t.summaryRefused {
		// A summary spent in this turn did not make the view smaller or
		// fit: another one would most likely do no better, and each costs
		// a model request. Elision keeps the requests within the window
		// until the next turn tries again.
		return nil
	}
	before, _ := s.estimate(s.state.meter.Tokens())
	if !compaction.Due(p, before) {
		return nil
	}
	if err := t.compact(""); errcode.Of(err) == errcode.RuntimeContextOverflow {
		// Nothing (more) to summarize, or a summary that does not make
		// the request fit: elide large old tool results instead.
		return t.elide()
	} else if err != nil {
		return err
	}
	return nil
}

// recoverLength answers a server's refusal of the last request as longer
// than its window (MODEL_CONTEXT_LENGTH, err): recorded as model.retry,
// the calibration dropped (it counted too few tokens), and one compaction,
// whatever the estimate says. RUNTIME_CONTEXT_OVERFLOW when there is
// nothing to compact (then the caller ends the turn with err), or the
// compaction's own error.
func (t *turn) recoverLength(err error) error {
	s, r := t.s, t.r
	if s.settings.Context == (compaction.Policy{}) {
		return errcode.New(errcode.RuntimeContextOverflow, "no context policy")
	}
	if _, aerr := t.append(event.ModelRetry{RequestID: t.lastRequestID, Attempt: 1, Code: string(errcode.ModelContextLength),
		Message: errcode.Message(err) + "; compacting the context and sending the request once more",
		RunID:   r.id, SessionID: s.id, TurnID: r.turnID}); aerr != nil {
		return aerr
	}
	s.state.compact.Calibration = nil
	return t.compact("")
}

// compactTurn is the whole of a compaction turn (Session.Compact): one
// compaction with the user's focus, whatever the occupancy. It completes
// with a note saying what it did, or why nothing was compacted (nothing
// before the newest round to summarize, or a summary that did not make
// the context smaller, charged all the same); a failed summary fails the
// turn with RUNTIME_SUMMARY_FAILED, a budget already spent ends it
// budget_exceeded before any request.
func (t *turn) compactTurn(focus string) {
	s := t.s
	if s.settings.Context == (compaction.Policy{}) {
		t.fail(errcode.New(errcode.RuntimeInvalidInput, "compact context: this session has no context policy"))
		return
	}
	if b := s.settings.Budget.MaxModelTokens; b > 0 && int64(s.state.usage.TotalTokens) >= b {
		t.fail(errcode.Errorf(errcode.RuntimeBudgetExceeded, "token budget of %d exhausted (%d used): no summary round", b, s.state.usage.TotalTokens))
		return
	}
	err := t.compact(focus)
	switch {
	case err == nil:
		c := t.compacted
		t.status = StatusCompleted
		t.note = fmt.Sprintf("compacted: %d messages into %d, %d tokens into %d", c.BeforeMessages, c.AfterMessages, c.BeforeTokens, c.AfterTokens)
	case errcode.Of(err) == errcode.RuntimeContextOverflow && t.summaryRefused:
		t.status = StatusCompleted
		t.note = "not compacted (the summary was charged): " + errcode.Message(err)
	case errcode.Of(err) == errcode.RuntimeContextOverflow:
		t.status = StatusCompleted
		t.note = "nothing to compact: " + errcode.Message(err)
	default:
		t.fail(err)
	}
}

// elide makes the next request fit the window by eliding large tool
// results of the uncompacted history in the view, oldest first, never the
// newest message: it sets compact.ElideBefore to the smallest index that
// makes the request fit, and the checkpoint of the next request records
// it, so the view stays a function of what the checkpoint holds. The
// originals stay in the history and the log. It does nothing when the
// request fits already; RUNTIME_CONTEXT_OVERFLOW when it does not fit even
// with every tool result before the newest message elided (the system
// text, the pinned first request and the newest message alone exceed the
// window).
//
// Its cost is linear in the messages it walks: the meter holds the
// occupancy of the current view, in which every message from the range's
// start on is shown whole, so eliding one more changes the figure by the
// difference of its two encodings (compaction.Elision gives the elided
// one), without encoding the view again per candidate.
func (t *turn) elide() error {
	s := t.s
	p := s.settings.Context
	st := &s.state
	whole := st.meter.Tokens()
	bytes := whole
	occ, _ := s.estimate(bytes)
	if compaction.Fits(p, occ) {
		return nil
	}
	msgs := st.messages
	c := st.compact
	start := max(c.ElideBefore, c.TailStart)
	el := compaction.NewElision(msgs, start)
	for i := start; i < len(msgs)-1; i++ {
		m, elided := el.At(i)
		if !elided {
			continue
		}
		bytes -= st.encodedLen(i) - compaction.MessageLen(m)
		c.ElideBefore = i + 1
		if occ, _ = s.estimate(bytes); compaction.Fits(p, occ) {
			st.compact = c
			st.meter.Shrink(whole - bytes)
			return nil
		}
	}
	return errcode.Errorf(errcode.RuntimeContextOverflow,
		"the system text, the pinned first request and the newest message need %d tokens plus a reserve of %d, over the window of %d, with every older tool result elided",
		occ, p.ReserveTokens, p.WindowTokens)
}

// resultRoom is the most bytes of output one result of call may bring and
// still fit the context window at all: beside the system text, the tools,
// the pinned requests (the session's first, the turn's), the call itself
// and the reserve, every other message elided or summarized away, by the
// session's own estimate of tokens. A larger result could only end the
// turn with RUNTIME_CONTEXT_OVERFLOW at the next request; bounded (the
// tools refuse a file over it and cut a command's output to it, keeping
// its exit code: tools.WithMaxOutput), the model learns it should ask for
// less. 0 means no bound beyond the tools' own: no context policy, room
// for the tools' own bound, or a window too small for the request's fixed
// part, which the next request reports as an overflow anyway.
func (t *turn) resultRoom(call model.ToolCall) int {
	s := t.s
	p := s.settings.Context
	if p == (compaction.Policy{}) {
		return 0
	}
	st := &s.state
	m := st.meter.Clone()
	m.Reset(nil)
	if st.firstUser != nil {
		m.Add(*st.firstUser)
	}
	if u := st.turnUser; u != nil && (st.firstUser == nil || u.ID != st.firstUser.ID) {
		m.Add(*u)
	}
	m.Add(model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call}})
	fixed := m.Tokens() + resultEnvelope
	free := p.WindowTokens - p.ReserveTokens
	fits := func(n int) bool {
		occ, _ := s.estimate(fixed + n)
		return occ <= free
	}
	if fits(tools.MaxOutputBytes) || !fits(minResultRoom) {
		return 0
	}
	lo, hi := minResultRoom, tools.MaxOutputBytes
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// resultEnvelope is room for a tool result's message around its output
// (role, call ID, separators); minResultRoom the least bound worth giving:
// below it the window cannot hold the request's fixed part and a
// meaningful result.
const (
	resultEnvelope = 256
	minResultRoom  = 1024
)

// measure resets m (its system text and tools kept) to the occupancy of
// view, counting each message the state holds, unchanged, by the length of
// its cached encoding: a compaction measures views of the whole history,
// and encoding them again cost more than the rest of a round. The figure
// is exactly compaction.Occupancy's for the same request.
func (st *state) measure(m *compaction.Meter, view []model.Message) *compaction.Meter {
	m.Reset(nil)
	var at map[string]int
	if st.rawMsgs != nil {
		at = make(map[string]int, len(st.messages))
		for i, msg := range st.messages {
			at[msg.ID] = i
		}
	}
	for _, v := range view {
		// DeepEqual compares strings with ==, which a shared backing
		// array answers at once.
		if i, ok := at[v.ID]; ok && reflect.DeepEqual(v, st.messages[i]) {
			m.AddRaw(st.rawMsgs[i])
		} else {
			m.Add(v)
		}
	}
	return m
}

// encodedLen is the length of message i's canonical encoding, as the
// meter counted it.
func (st *state) encodedLen(i int) int {
	if st.rawMsgs != nil {
		return len(st.rawMsgs[i])
	}
	return compaction.MessageLen(st.messages[i])
}

// compact summarizes the oldest part of the current view, inside the
// current turn too: the kept tail is the longest one of at most
// TailMessages messages that leaves something new to summarize and whose
// compacted view stays under the threshold, down to the newest complete
// round (an assistant message with its tool results, or the newest
// message). focus, if any, is passed to the summarizer. The summary is
// charged to the budget; a summary that exhausts it is committed and ends
// the turn at once.
func (t *turn) compact(focus string) error {
	s, r := t.s, t.r
	p := s.settings.Context
	before, _ := s.estimate(s.state.meter.Tokens())
	view := s.state.view()
	head := len(view) - (len(s.state.messages) - s.state.compact.TailStart)
	b, err := t.boundary(view, head, before)
	if err != nil {
		return err
	}
	requestID := s.rt.cfg.NewID("req")
	req := summaryRequest(s.settings, requestID, t.outputLimit(), view[:b], focus)
	reqBytes := s.state.measure(compaction.NewMeter(req.System, req.Tools), req.Messages).Tokens()
	occ, rule := s.estimate(reqBytes)
	if _, err := t.append(event.ContextAccounted{RunID: r.id, SessionID: s.id, TurnID: r.turnID, RequestID: requestID,
		OccupancyTokens: occ, WindowTokens: p.WindowTokens, ReserveTokens: p.ReserveTokens,
		Algorithm: rule, SummaryRequest: true}); err != nil {
		return err
	}
	t.summaryFocus = focus
	comp, summaryID, err := t.streamSummary(req, b)
	t.summaryFocus = ""
	if err != nil {
		return err
	}
	// The summary round's usage calibrates too: after a resume it is the
	// first report (a session stored before calibration was recorded
	// would otherwise count its next request in bytes).
	s.calibrate(reqBytes, comp.Usage)
	tailStart := s.state.compact.TailStart + (b - head)
	next := checkpoint.Compaction{
		Summary:          comp.Content,
		SummaryMessageID: summaryID,
		TailStart:        tailStart,
		ThroughRevision:  s.state.revision,
		Compactions:      s.state.compact.Compactions + 1,
		ElideBefore:      s.state.compact.ElideBefore,
		Calibration:      s.state.compact.Calibration,
	}
	trial := state{messages: s.state.messages, compact: next, firstUser: s.state.firstUser, turnUser: s.state.turnUser}
	if _, err := compaction.ViewTurn(trial.messages, next.TailStart, next.Summary, trial.firstUser, trial.turnUser); err != nil {
		return t.spentInVain(err)
	}
	newView := trial.view()
	meter := s.state.measure(s.state.meter.Clone(), newView)
	after, _ := s.estimate(meter.Tokens())
	if err := compaction.Check(p, before, after); err != nil {
		return t.spentInVain(err)
	}
	tail := s.state.messages[tailStart:]
	if _, err := t.append(event.ContextCheckpoint{RunID: r.id, SessionID: s.id, TurnID: r.turnID, Version: 1,
		Summary: comp.Content, TailStart: tailStart, ThroughRevision: next.ThroughRevision, Tail: nonNil(tail)}); err != nil {
		return err
	}
	done := event.ContextCompacted{RunID: r.id, SessionID: s.id, TurnID: r.turnID, SummaryMessageID: summaryID,
		Summary: comp.Content, BeforeMessages: len(view), AfterMessages: len(newView), BeforeTokens: before, AfterTokens: after}
	if _, err := t.append(done); err != nil {
		return err
	}
	t.compacted = &done
	s.state.compact = next
	s.state.meter = meter
	if s.state.stubPrefix() {
		s.state.row = checkpoint.Row{} // its message lines changed: the next save writes it whole
	}
	// The summary was charged: a budget it exhausted ends the turn now,
	// before another model request.
	return t.checkTokenBudget(true)
}

// pinned reports whether a compacted view keeps m word for word: the
// session's first request or the current turn's.
func (st *state) pinned(m model.Message) bool {
	if m.Role != model.RoleUser || m.ID == "" {
		return false
	}
	return (st.firstUser != nil && m.ID == st.firstUser.ID) || (st.turnUser != nil && m.ID == st.turnUser.ID)
}

// spentInVain ends a compaction whose summary was received and charged
// but is not committed (err: the view it gives is not smaller, or does not
// fit). The charge counts: a budget it exhausted ends the turn now, before
// another model request; else err is returned and no automatic summary is
// tried again in this turn.
func (t *turn) spentInVain(err error) error {
	if berr := t.checkTokenBudget(true); berr != nil {
		return berr
	}
	t.summaryRefused = true
	return err
}

// boundary chooses where the kept tail of view starts. head is the number
// of view messages before the uncompacted history (system messages, an
// earlier summary, the pinned request). It tries tails of TailMessages
// down to 1 message (Boundary keeps tool calls with their results, so the
// shortest tail is the newest complete round) and takes the longest one
// that leaves a message after head to summarize and whose view, with room
// for the summary, stays under the threshold and under half of before
// (the occupancy it replaces, so that a compaction buys room and an
// on-demand one of a short history summarizes more than its first
// message); when none does, the shortest one. RUNTIME_CONTEXT_OVERFLOW
// when nothing new lies before even the newest round (the pinned requests
// are not new: they stay word for word).
func (t *turn) boundary(view []model.Message, head, before int) (int, error) {
	s := t.s
	p := s.settings.Context
	fixed := compaction.Occupancy(s.settings.System, s.settings.Tools, nil)
	summaryRoom := t.outputLimit()
	if summaryRoom <= 0 {
		summaryRoom = p.ReserveTokens
	}
	// suffix[i] is the encoded length of view[i:] with its commas; the
	// uncompacted messages' bytes are cached already, except those of the
	// elided range, which the view shows shorter.
	suffix := make([]int, len(view)+1)
	for i := len(view) - 1; i >= 0; i-- {
		n := 0
		if j := s.state.compact.TailStart + i - head; i >= head && s.state.rawMsgs != nil && j < len(s.state.rawMsgs) && j >= s.state.compact.ElideBefore {
			n = len(s.state.rawMsgs[j])
		} else {
			n = compaction.MessageLen(view[i])
		}
		suffix[i] = suffix[i+1] + n + 1
	}
	pin := 0
	if s.state.firstUser != nil {
		pin = compaction.MessageLen(compaction.Pin(*s.state.firstUser)) + 1
	}
	// The current turn's request is pinned too when the tail leaves it
	// behind (and it is not the first request).
	turnPin := 0
	if u := s.state.turnUser; u != nil && (s.state.firstUser == nil || u.ID != s.state.firstUser.ID) {
		turnPin = compaction.MessageLen(compaction.PinTurn(*u)) + 1
	}
	// A prefix of nothing but the pinned requests (the first one, this
	// turn's) summarizes nothing they do not already say word for word:
	// the tail must leave at least one other message behind.
	lo := head
	for lo < len(view) && s.state.pinned(view[lo]) {
		lo++
	}
	best, bestTokens := -1, 0
	for k := p.TailMessages; k >= 1; k-- {
		b, err := compaction.Boundary(view, k)
		if err != nil || b <= lo {
			continue
		}
		kept := fixed + suffix[b] + pin
		if s.state.compact.TailStart+b-head > s.state.turnAt {
			kept += turnPin
		}
		tokens, _ := s.estimate(kept)
		best, bestTokens = b, tokens
		if tokens+summaryRoom < min(p.ThresholdTokens, before/2) {
			return b, nil
		}
	}
	if best < 0 {
		return 0, errcode.Errorf(errcode.RuntimeContextOverflow,
			"compact context: nothing to summarize before the newest round of %d messages but the requests kept word for word", len(view)-head)
	}
	if !compaction.Fits(p, bestTokens) {
		// A summary cannot make the newest round fit: no summary request
		// is spent on it (the caller elides old tool results instead).
		return 0, errcode.Errorf(errcode.RuntimeContextOverflow,
			"compact context: the newest round alone needs %d tokens plus a reserve of %d, over the window of %d",
			bestTokens, p.ReserveTokens, p.WindowTokens)
	}
	return best, nil
}

// streamSummary runs the summary round; any failure other than cancel is
// RUNTIME_SUMMARY_FAILED.
func (t *turn) streamSummary(req model.Request, boundary int) (*model.Completion, string, error) {
	t.summaryBoundary = boundary
	defer func() { t.summaryBoundary = 0 }()
	comp, id, err := t.stream(req, checkpoint.PhaseSummary)
	if err != nil {
		if t.r.canceled.Load() || errors.Is(err, context.Canceled) || isAppendFailure(err) {
			return nil, "", err
		}
		return nil, "", &errcode.Error{Code: errcode.RuntimeSummaryFailed, Message: "summary round failed: " + string(errcode.Of(err)) + ": " + errcode.Message(err), Err: err}
	}
	if len(comp.ToolCalls) > 0 {
		return nil, "", errcode.New(errcode.RuntimeSummaryFailed, "summary round asked for tool calls")
	}
	if comp.FinishReason == model.FinishError {
		return nil, "", errcode.New(errcode.RuntimeSummaryFailed, "summary round ended with finish reason error")
	}
	return comp, id, nil
}

// compactedNote is the content of a message a compaction left behind in
// the checkpoint's history (stubPrefix).
const compactedNote = "(compacted: in the session log)"

// stubPrefix empties the messages before the compacted view's tail that no
// view sends again: the view keeps of them only the system messages and
// the pinned requests (the session's first and the current turn's), and
// every later summary starts from the view. Their content, reasoning and
// call arguments become compactedNote, "" and {}; role, IDs, names and the
// calls they pair stay, so the history keeps its shape and seen call IDs.
// The originals stay in the log's message.completed events. Without this
// the checkpoint carried every tool result of the session and a long one
// outgrew its 16 MiB bound, after which no request could be checkpointed.
// It reports whether it changed a message (the store's row must then be
// written whole).
func (st *state) stubPrefix() bool {
	if st.compact.Compactions == 0 {
		return false
	}
	end := min(st.compact.TailStart, len(st.messages))
	firstUser := true
	changed := false
	for i := 0; i < end; i++ {
		m := st.messages[i]
		keep := m.ID == "" || m.Role == model.RoleSystem || (m.Role == model.RoleUser && (firstUser || st.pinned(m)))
		if m.Role == model.RoleUser {
			firstUser = false
		}
		if keep || isStub(m) {
			continue
		}
		m.Content, m.Reasoning, m.ReasoningField = compactedNote, "", ""
		if len(m.ToolCalls) > 0 {
			calls := slices.Clone(m.ToolCalls)
			for j := range calls {
				calls[j].Arguments = json.RawMessage(`{}`)
			}
			m.ToolCalls = calls
		}
		st.messages[i] = m
		if st.rawMsgs != nil {
			raw, err := model.MarshalCanonical(m)
			if err != nil {
				st.rawMsgs = nil // the checkpoint encodes the history in full
			} else {
				st.rawMsgs[i] = raw
			}
		}
		changed = true
	}
	return changed
}

// isStub reports whether stubPrefix already emptied m.
func isStub(m model.Message) bool {
	if m.Content != compactedNote || m.Reasoning != "" {
		return false
	}
	for _, c := range m.ToolCalls {
		if string(c.Arguments) != "{}" {
			return false
		}
	}
	return true
}
