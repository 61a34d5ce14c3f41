package fake

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// Model is the scripted model: the n-th request gets the n-th step.
type Model struct {
	steps []Step // read-only after New

	mu   sync.Mutex
	reqs []model.Request // guarded by mu
	raws [][]byte        // guarded by mu
}

var _ model.Model = (*Model)(nil)

// New returns a scripted model answering with steps, in order. The steps
// are copied; a step that breaks the rules of Parse fails its request with
// MODEL_INVALID_CONFIG.
func New(steps []Step) *Model {
	cp := make([]Step, len(steps))
	for i, s := range steps {
		cp[i] = cloneStep(s)
	}
	return &Model{steps: cp}
}

// Name returns "fake".
func (m *Model) Name() string { return "fake" }

// Requests returns deep copies of the requests received so far, in order.
func (m *Model) Requests() []model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]model.Request, len(m.reqs))
	for i, r := range m.reqs {
		out[i] = cloneRequest(r)
	}
	return out
}

// RequestsJSON returns the requests received so far in model.MarshalCanonical
// form, as they were when received.
func (m *Model) RequestsJSON() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([][]byte, len(m.raws))
	for i, b := range m.raws {
		out[i] = bytes.Clone(b)
	}
	return out
}

// Stream records req and answers it with the next step.
func (m *Model) Stream(ctx context.Context, req model.Request) (model.Stream, error) {
	raw, err := model.MarshalCanonical(req)
	if err != nil {
		return nil, errcode.Wrap(errcode.ModelInvalidRequest, "fake: encode request", err)
	}
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, cloneRequest(req))
	m.raws = append(m.raws, raw)
	m.mu.Unlock()

	if n >= len(m.steps) {
		return nil, errcode.Errorf(errcode.RuntimeModelStreamInvalid,
			"script has %d steps; request %d has no answer", len(m.steps), n+1)
	}
	step := m.steps[n]
	if err := step.validate(); err != nil {
		return nil, errcode.Errorf(errcode.ModelInvalidConfig, "check step %d: %s", n+1, errcode.Message(err))
	}
	if step.Error != "" {
		return nil, errcode.Errorf(step.Error, "scripted failure of step %d", n+1)
	}
	return newStream(ctx, step), nil
}

// item is one scripted event of a stream.
type item struct {
	chunk model.Chunk
	err   error // ends the stream with this error
	hang  bool  // blocks until aborted
}

// plan turns a step into the items its stream yields before io.EOF.
func plan(s Step) []item {
	var items []item
	if s.Chunks != nil {
		for _, c := range s.Chunks {
			items = append(items, chunkItem(c))
		}
		if s.Hang {
			items = append(items, item{hang: true})
		}
		return items
	}
	deltas := s.Deltas
	if deltas == nil && s.Content != "" {
		deltas = []string{s.Content}
	}
	for _, d := range deltas {
		items = append(items, item{chunk: model.Chunk{Kind: model.ChunkDelta, Delta: d}})
	}
	if s.Hang {
		items = append(items, item{hang: true})
	}
	for _, c := range s.ToolCalls {
		tc := cloneCall(c)
		items = append(items, item{chunk: model.Chunk{Kind: model.ChunkToolCall, ToolCall: &tc}})
	}
	if s.OmitCompletion {
		return items
	}
	finish := s.FinishReason
	if finish == "" {
		finish = model.FinishStop
		if len(s.ToolCalls) > 0 {
			finish = model.FinishToolCalls
		}
	}
	items = append(items, item{chunk: model.Chunk{Kind: model.ChunkCompletion, Completion: &model.Completion{
		Content:      s.Content,
		ToolCalls:    cloneCalls(s.ToolCalls),
		FinishReason: finish,
		Usage:        s.Usage.model(),
	}}})
	return items
}

func chunkItem(c Chunk) item {
	switch {
	case c.Delta != nil:
		return item{chunk: model.Chunk{Kind: model.ChunkDelta, Delta: *c.Delta}}
	case c.ToolCall != nil:
		tc := cloneCall(*c.ToolCall)
		return item{chunk: model.Chunk{Kind: model.ChunkToolCall, ToolCall: &tc}}
	case c.Completion != nil:
		return item{chunk: model.Chunk{Kind: model.ChunkCompletion, Completion: &model.Completion{
			Content:      c.Completion.Content,
			ToolCalls:    cloneCalls(c.Completion.ToolCalls),
			FinishReason: c.Completion.FinishReason,
			Usage:        c.Completion.Usage.model(),
		}}}
	case c.Retry != nil:
		r := *c.Retry
		return item{chunk: model.Chunk{Kind: model.ChunkRetry, Retry: &r}}
	default:
		return item{err: errcode.Errorf(c.Error, "scripted failure mid-stream")}
	}
}

// stream replays a plan. Recv is called by one goroutine; Close may be
// called from any goroutine at any time.
type stream struct {
	ctx     context.Context
	items   []item
	first   time.Duration // before the first item
	between time.Duration // between two items

	next int   // owned by the Recv goroutine
	err  error // sticky terminal error; owned by the Recv goroutine
	eof  bool  // owned by the Recv goroutine

	closeOnce sync.Once
	closed    chan struct{}
}

func newStream(ctx context.Context, s Step) *stream {
	return &stream{
		ctx:     ctx,
		items:   plan(s),
		first:   time.Duration(s.DelayMs) * time.Millisecond,
		between: time.Duration(s.DelayBetweenMs) * time.Millisecond,
		closed:  make(chan struct{}),
	}
}

// Recv returns the next scripted chunk.
func (s *stream) Recv() (model.Chunk, error) {
	if s.err != nil {
		return model.Chunk{}, s.err
	}
	if s.eof {
		return model.Chunk{}, io.EOF
	}
	if err := s.aborted(); err != nil {
		s.err = err
		return model.Chunk{}, err
	}
	if s.next >= len(s.items) {
		s.eof = true
		return model.Chunk{}, io.EOF
	}
	d := s.between
	if s.next == 0 {
		d = s.first
	}
	if err := s.wait(d); err != nil {
		s.err = err
		return model.Chunk{}, err
	}
	it := s.items[s.next]
	s.next++
	switch {
	case it.hang:
		select {
		case <-s.ctx.Done():
		case <-s.closed:
		}
		s.err = s.aborted()
		return model.Chunk{}, s.err
	case it.err != nil:
		s.err = it.err
		return model.Chunk{}, s.err
	}
	return copyChunk(it.chunk), nil
}

// Close aborts the stream: a pending or later Recv fails with MODEL_ABORTED.
func (s *stream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}

// wait sleeps for d unless the context ends or the stream is closed first.
func (s *stream) wait(d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-s.ctx.Done():
	case <-s.closed:
	}
	return s.aborted()
}

// aborted returns the error for a closed stream or an ended context, or nil.
func (s *stream) aborted() error {
	select {
	case <-s.closed:
		return errcode.New(errcode.ModelAborted, "stream closed")
	default:
	}
	if err := s.ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return errcode.Wrap(errcode.ModelTimeout, "fake: stream", context.Cause(s.ctx))
		}
		return errcode.Wrap(errcode.ModelAborted, "fake: stream", context.Cause(s.ctx))
	}
	return nil
}

// copyChunk gives the caller its own copy of a planned chunk.
func copyChunk(c model.Chunk) model.Chunk {
	out := c
	if c.ToolCall != nil {
		tc := cloneCall(*c.ToolCall)
		out.ToolCall = &tc
	}
	if c.Completion != nil {
		comp := *c.Completion
		comp.ToolCalls = cloneCalls(c.Completion.ToolCalls)
		out.Completion = &comp
	}
	if c.Retry != nil {
		r := *c.Retry
		out.Retry = &r
	}
	return out
}

// cloneRequest deep-copies a request, keeping nil and empty slices apart.
func cloneRequest(r model.Request) model.Request {
	out := r
	out.ProviderOptions = bytes.Clone(r.ProviderOptions)
	if r.Messages != nil {
		out.Messages = make([]model.Message, len(r.Messages))
		for i, m := range r.Messages {
			m.ToolCalls = cloneCallsExact(m.ToolCalls)
			out.Messages[i] = m
		}
	}
	if r.Tools != nil {
		out.Tools = slices.Clone(r.Tools)
		for i := range out.Tools {
			out.Tools[i].Parameters = bytes.Clone(r.Tools[i].Parameters)
		}
	}
	return out
}

// cloneCallsExact deep-copies tool calls without defaulting their arguments.
func cloneCallsExact(cs []model.ToolCall) []model.ToolCall {
	if cs == nil {
		return nil
	}
	out := make([]model.ToolCall, len(cs))
	for i, c := range cs {
		out[i] = model.ToolCall{ID: c.ID, Name: c.Name, Arguments: bytes.Clone(c.Arguments)}
	}
	return out
}
