package runtime

import (
	"context"
	"errors"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
)

// view is what the next request sends: the whole history, or after a
// compaction the prefix's system messages, the summary, the pinned first
// request and the tail.
func (st *state) view() []model.Message {
	if st.compact.Compactions == 0 {
		return st.messages
	}
	v, err := compaction.View(st.messages, st.compact.TailStart, st.compact.Summary, st.firstUser)
	if err != nil {
		// The state was validated when it was committed or parsed; a view
		// that cannot be built means the history under it is broken.
		return st.messages
	}
	for i := range v {
		if compaction.IsSummary(v[i]) {
			v[i].ID = st.compact.SummaryMessageID
			break
		}
	}
	return v
}

func summaryRequest(settings Settings, requestID string, maxTokens int, prefix []model.Message) model.Request {
	return model.Request{
		RequestID:       requestID,
		Model:           settings.Model,
		Messages:        compaction.SummaryRequest(prefix),
		MaxTokens:       maxTokens,
		ProviderOptions: settings.ProviderOptions,
	}
}

// maybeCompact runs a compaction round when the occupancy has reached the
// policy's threshold. A failed compaction commits nothing; its usage is
// still charged.
func (t *turn) maybeCompact() error {
	s, r := t.s, t.r
	p := s.settings.Context
	if p == (compaction.Policy{}) {
		return nil
	}
	before := s.state.meter.Tokens()
	if !compaction.Due(p, before) {
		return nil
	}
	view := s.state.view()
	b, err := compaction.Boundary(view, p.TailMessages)
	if err != nil {
		return err
	}
	head := len(view) - (len(s.state.messages) - s.state.compact.TailStart)
	if b < head {
		return errcode.Errorf(errcode.RuntimeContextOverflow, "compact context: nothing new before the last %d messages to summarize", p.TailMessages)
	}
	requestID := s.rt.cfg.NewID("req")
	req := summaryRequest(s.settings, requestID, t.outputLimit(), view[:b])
	occ := compaction.Occupancy(req.System, req.Tools, req.Messages)
	if _, err := t.append(event.ContextAccounted{RunID: r.id, SessionID: s.id, TurnID: r.turnID, RequestID: requestID,
		OccupancyTokens: occ, WindowTokens: p.WindowTokens, ReserveTokens: p.ReserveTokens,
		Algorithm: compaction.Algorithm, SummaryRequest: true}); err != nil {
		return err
	}
	comp, summaryID, err := t.streamSummary(req, b)
	if err != nil {
		return err
	}
	tailStart := s.state.compact.TailStart + (b - head)
	next := compactState{
		Summary:          comp.Content,
		SummaryMessageID: summaryID,
		TailStart:        tailStart,
		ThroughRevision:  s.state.revision,
		Compactions:      s.state.compact.Compactions + 1,
	}
	trial := state{messages: s.state.messages, compact: next, firstUser: s.state.firstUser}
	if _, err := compaction.View(trial.messages, next.TailStart, next.Summary, trial.firstUser); err != nil {
		return err
	}
	newView := trial.view()
	after := compaction.Occupancy(s.settings.System, s.settings.Tools, newView)
	if err := compaction.Check(p, before, after); err != nil {
		return err
	}
	tail := s.state.messages[tailStart:]
	if _, err := t.append(event.ContextCheckpoint{RunID: r.id, SessionID: s.id, TurnID: r.turnID, Version: 1,
		Summary: comp.Content, TailStart: tailStart, ThroughRevision: next.ThroughRevision, Tail: nonNil(tail)}); err != nil {
		return err
	}
	if _, err := t.append(event.ContextCompacted{RunID: r.id, SessionID: s.id, TurnID: r.turnID, SummaryMessageID: summaryID,
		Summary: comp.Content, BeforeMessages: len(view), AfterMessages: len(newView), BeforeTokens: before, AfterTokens: after}); err != nil {
		return err
	}
	s.state.compact = next
	s.state.meter.Reset(newView)
	return nil
}

// streamSummary runs the summary round; any failure other than cancel is
// RUNTIME_SUMMARY_FAILED.
func (t *turn) streamSummary(req model.Request, boundary int) (*model.Completion, string, error) {
	t.summaryBoundary = boundary
	defer func() { t.summaryBoundary = 0 }()
	comp, id, err := t.stream(req, phaseSummary)
	if err != nil {
		if t.r.canceled.Load() || errors.Is(err, context.Canceled) || isAppendFailure(err) {
			return nil, "", err
		}
		return nil, "", &errcode.Error{Code: errcode.RuntimeSummaryFailed, Message: "summary round failed: " + string(errcode.Of(err)), Err: err}
	}
	if len(comp.ToolCalls) > 0 {
		return nil, "", errcode.New(errcode.RuntimeSummaryFailed, "summary round asked for tool calls")
	}
	return comp, id, nil
}
