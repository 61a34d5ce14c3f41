package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// stream is one streamed request, retried as a whole while nothing of the
// response reached the caller. Recv is called by one goroutine at a time;
// Close may be called from any goroutine, also during Recv.
type stream struct {
	ctx context.Context
	c   *Client
	req *wireRequest

	// Owned by the goroutine calling Recv.
	attempt   int           // attempts started
	wait      time.Duration // pause before the next attempt
	dec       *sseDecoder   // nil while not connected
	body      io.Closer
	timer     *time.Timer
	actx      context.Context
	asm       *assembler
	chunks    int           // chunks of the current attempt
	emitted   bool          // a delta reached the caller: no more retries
	pending   []model.Chunk // chunks ready to hand out
	stripped  bool          // a refused reasoning field was taken off and the request sent again
	err       error         // terminal
	eof       bool
	held      string // streamed text held back: it may begin the API key
	heldThink string // streamed reasoning held back, likewise

	mu       sync.Mutex
	cancel   context.CancelCauseFunc // guarded by mu: the current attempt's
	closed   bool                    // guarded by mu
	closedCh chan struct{}
}

func newStream(ctx context.Context, c *Client, req *wireRequest) *stream {
	return &stream{ctx: ctx, c: c, req: req, closedCh: make(chan struct{})}
}

// Recv returns the next chunk: ChunkRetry before a retried attempt,
// ChunkDelta as text arrives, every ChunkToolCall once the response is
// complete, then one ChunkCompletion, then io.EOF.
func (s *stream) Recv() (model.Chunk, error) {
	for {
		if len(s.pending) > 0 {
			c := s.pending[0]
			s.pending = s.pending[1:]
			return c, nil
		}
		if s.err != nil {
			return model.Chunk{}, s.err
		}
		if s.eof {
			return model.Chunk{}, io.EOF
		}
		if s.dec == nil {
			if err := s.connect(); err != nil {
				s.fail(err)
			}
			continue
		}
		c, ok, err := s.read()
		if err != nil {
			s.fail(err)
			continue
		}
		if ok {
			return c, nil
		}
	}
}

// Close aborts the stream; a pending or later Recv fails with MODEL_ABORTED
// unless the stream already ended.
func (s *stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.closedCh)
		if s.cancel != nil {
			s.cancel(errClosed)
		}
	}
	return nil
}

// connect waits out a retry pause, then starts one attempt and leaves it
// ready to be read.
func (s *stream) connect() error {
	if s.wait > 0 {
		t := time.NewTimer(s.wait)
		s.wait = 0
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			return s.c.red.canceled(s.ctx, s.ctx)
		case <-s.closedCh:
			t.Stop()
			return &errcode.Error{Code: errcode.ModelAborted, Op: op, Message: "stream closed"}
		}
	}
	actx, cancel := context.WithCancelCause(s.ctx)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel(errClosed)
		return &errcode.Error{Code: errcode.ModelAborted, Op: op, Message: "stream closed"}
	}
	s.cancel = cancel
	s.mu.Unlock()

	s.attempt++
	got := &atomic.Int64{}
	got.Store(-1)
	timer := time.AfterFunc(s.c.timeout, func() { cancel(&timeoutCause{after: s.c.timeout, got: got.Load()}) })
	raw, err := s.c.post(actx, s.req.body)
	if err == nil && raw.StatusCode >= 400 {
		err = errStatus
	}
	if err != nil {
		timer.Stop()
		e := s.c.red.classify(actx, s.ctx, err, raw)
		if raw != nil {
			_ = raw.Body.Close()
		}
		cancel(nil)
		return e
	}
	if isHTML(raw.Header.Get("Content-Type")) {
		timer.Stop()
		_ = raw.Body.Close()
		cancel(nil)
		return htmlAnswer(raw.StatusCode)
	}
	got.Store(0)
	raw.Body = &activityBody{rc: raw.Body, timer: timer, d: s.c.timeout, got: got}
	s.dec = newSSEDecoder(raw.Body)
	s.chunks = 0
	s.body = raw.Body
	s.timer = timer
	s.actx = actx
	s.asm = newAssembler(s.req.names)
	return nil
}

// errStatus marks an answer with an error status, which classify reads.
var errStatus = errors.New("error status")

// post sends one attempt's request: the body as built, the key (if any) in
// the Authorization header and nowhere else. The response is the caller's
// to close.
func (c *Client) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.chatURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("User-Agent", userAgent)
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	return c.hc.Do(req)
}

// read takes one event off the wire. ok reports a chunk for the caller.
func (s *stream) read() (model.Chunk, bool, error) {
	ev, err := s.dec.next()
	switch {
	case errors.Is(err, errEventTooLong):
		return model.Chunk{}, false, &errcode.Error{Code: errcode.ModelInvalidResponse, Op: op, Message: "read stream: " + err.Error()}
	case err != nil && (!errors.Is(err, io.EOF) || s.actx.Err() != nil):
		return model.Chunk{}, false, s.c.red.classify(s.actx, s.ctx, err, nil)
	case err != nil && s.dec.html:
		return model.Chunk{}, false, htmlAnswer(http.StatusOK)
	case err != nil:
		return model.Chunk{}, false, s.finish(false)
	}
	data := bytes.TrimSpace(ev.data)
	if ev.errField {
		return model.Chunk{}, false, s.c.red.streamError(data)
	}
	if bytes.Equal(data, []byte("[DONE]")) {
		if s.chunks == 0 {
			return model.Chunk{}, false, &errcode.Error{Code: errcode.ModelInvalidResponse, Op: op,
				Message: "read stream: the server sent [DONE] before any chunk (an empty answer)"}
		}
		return model.Chunk{}, false, s.finish(true)
	}
	if _, isErr := errorText(data); isErr {
		return model.Chunk{}, false, s.c.red.streamError(data)
	}
	s.chunks++
	text, reasoning, err := s.asm.add(data)
	if err != nil {
		return model.Chunk{}, false, err
	}
	began := text != ""
	text = s.keyText(&s.held, text)
	reasoning = s.keyText(&s.heldThink, reasoning)
	if began && s.heldThink != "" {
		// The answer began, so the reasoning is over: what was held
		// back of it cannot begin the key any more.
		reasoning += s.heldThink
		s.heldThink = ""
	}
	if reasoning != "" {
		s.emitted = true
		if text != "" {
			s.pending = append(s.pending, model.Chunk{Kind: model.ChunkDelta, Delta: text})
		}
		return model.Chunk{Kind: model.ChunkReasoning, Delta: reasoning}, true, nil
	}
	if text == "" {
		return model.Chunk{}, false, nil
	}
	s.emitted = true
	return model.Chunk{Kind: model.ChunkDelta, Delta: text}, true, nil
}

// isHTML reports an HTML content type.
func isHTML(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// htmlAnswer names a web page where an event stream was expected: a base
// URL pointing at a website, a proxy's login page, a captive portal.
func htmlAnswer(status int) error {
	return &errcode.Error{Code: errcode.ModelInvalidResponse, Op: op, Message: fmt.Sprintf(
		"the server answered %d with an HTML page, not an event stream: check the base URL (an API's usually ends in /v1)", status)}
}

// keyText redacts the API key in streamed text or reasoning, should the
// server echo it: a key split across deltas is caught by holding back in
// *held a tail of the text that could begin it, released with the next
// delta or at the end. The completion's content and reasoning are redacted
// the same way, so the deltas still add up to them.
func (s *stream) keyText(held *string, text string) string {
	key := s.c.echoKey
	if key == "" {
		return text
	}
	buf := strings.ReplaceAll(*held+text, key, redacted)
	*held = ""
	for n := min(len(key)-1, len(buf)); n > 0; n-- {
		if strings.HasPrefix(key, buf[len(buf)-n:]) {
			buf, *held = buf[:len(buf)-n], buf[len(buf)-n:]
			break
		}
	}
	return buf
}

// redactJSON redacts key in JSON text: in its bytes as they are, and in
// every string literal, where the key may arrive escaped (\u0073k-…); a
// literal holding it is re-encoded, every other byte is kept. quoted says
// raw is one JSON string holding text that is not JSON (BadArguments):
// that text is redacted the same way and quoted again.
func redactJSON(raw json.RawMessage, key string, quoted bool) json.RawMessage {
	if quoted {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			return bytes.ReplaceAll(raw, []byte(key), []byte(redacted))
		}
		out, _ := model.MarshalCanonical(string(redactJSON(json.RawMessage(text), key, false)))
		return out
	}
	b := bytes.ReplaceAll(raw, []byte(key), []byte(redacted))
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(b) && b[j] != '"' {
			if b[j] == '\\' {
				j++
			}
			j++
		}
		lit, open := b[i:min(j+1, len(b))], j >= len(b)
		if open {
			// Unterminated (text that is not JSON): read it as if closed.
			lit = append(bytes.Clone(lit), '"')
		}
		var dec string
		if bytes.IndexByte(lit, '\\') >= 0 && json.Unmarshal(lit, &dec) == nil && strings.Contains(dec, key) {
			enc, _ := model.MarshalCanonical(strings.ReplaceAll(dec, key, redacted))
			if open {
				enc = enc[:len(enc)-1]
			}
			out = append(append(out, b[last:i]...), enc...)
			last = min(j+1, len(b))
		}
		i = j
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// finish closes the response: tool calls, then the completion.
func (s *stream) finish(sawDone bool) error {
	comp, usage, err := s.asm.result(sawDone)
	if err != nil {
		return err
	}
	s.release(nil)
	if key := s.c.echoKey; key != "" {
		if s.heldThink != "" {
			s.emitted = true
			s.pending = append(s.pending, model.Chunk{Kind: model.ChunkReasoning, Delta: s.heldThink})
			s.heldThink = ""
		}
		if s.held != "" {
			s.emitted = true
			s.pending = append(s.pending, model.Chunk{Kind: model.ChunkDelta, Delta: s.held})
			s.held = ""
		}
		comp.Content = strings.ReplaceAll(comp.Content, key, redacted)
		comp.Reasoning = strings.ReplaceAll(comp.Reasoning, key, redacted)
		for i := range comp.ToolCalls {
			tc := &comp.ToolCalls[i]
			tc.Arguments = redactJSON(tc.Arguments, key, tc.BadArguments)
			if len(tc.Extra) > 0 {
				tc.Extra = redactJSON(tc.Extra, key, false)
			}
		}
	}
	if usage != nil {
		comp.Usage = *usage
	} else {
		// Conservative: about three bytes per token undercounts no real
		// tokenizer's output by much, and overcounts English and code.
		p, c := ceilDiv(len(s.req.body), 3), ceilDiv(responseBytes(comp), 3)
		comp.Usage = model.Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c, Estimated: true}
	}
	for i := range comp.ToolCalls {
		tc := comp.ToolCalls[i]
		tc.Arguments = bytes.Clone(tc.Arguments)
		s.pending = append(s.pending, model.Chunk{Kind: model.ChunkToolCall, ToolCall: &tc})
	}
	s.pending = append(s.pending, model.Chunk{Kind: model.ChunkCompletion, Completion: &comp})
	s.eof = true
	return nil
}

func ceilDiv(n, d int) int { return (n + d - 1) / d }

// release ends the current attempt.
func (s *stream) release(cause error) {
	if s.timer != nil {
		s.timer.Stop()
	}
	if s.body != nil {
		_ = s.body.Close()
	}
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel(cause)
		s.cancel = nil
	}
	s.mu.Unlock()
	s.dec, s.body, s.timer, s.actx, s.asm = nil, nil, nil, nil, nil
}

// fail ends the current attempt with err and either schedules a retry
// (announced by a ChunkRetry) or makes err terminal.
func (s *stream) fail(err error) {
	s.release(errClosed)
	s.held, s.heldThink = "", ""
	var ae *attemptError
	if !errors.As(err, &ae) {
		s.err = err
		return
	}
	s.err = ae.err
	if s.emitted || s.ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	if field := refusedField(ae, s.req.sent); field != "" && !s.stripped {
		// The server refuses reasoning under that name (Groq, Cerebras):
		// the same request once more without it, and none of the client's
		// later requests carry it.
		if w, err := s.req.without(field); err == nil {
			s.c.refused.add(field)
			s.req, s.stripped, s.err, s.wait = w, true, nil, 0
			s.pending = append(s.pending, model.Chunk{Kind: model.ChunkRetry, Retry: &model.Retry{
				Attempt: s.attempt, Code: string(errcode.Of(ae.err)), Message: truncate(errcode.Message(ae.err), 600)}})
			return
		}
	}
	if n := s.attempt - s.strips(); !ae.retryable || n > s.c.maxRetries || (ae.unreached && n > unreachedRetries) {
		return
	}
	delay, ok := s.c.backoff(s.attempt, ae)
	if !ok {
		return
	}
	if dl, has := s.ctx.Deadline(); has && time.Until(dl) < delay {
		return // the deadline would pass while waiting
	}
	s.err = nil
	s.wait = delay
	s.pending = append(s.pending, model.Chunk{Kind: model.ChunkRetry, Retry: &model.Retry{
		Attempt: s.attempt,
		Code:    string(errcode.Of(ae.err)),
		DelayMs: int(delay / time.Millisecond),
		Message: truncate(errcode.Message(ae.err), 600),
	}})
}

// strips is how many attempts were spent on a refused field (not counted
// against MaxRetries).
func (s *stream) strips() int {
	if s.stripped {
		return 1
	}
	return 0
}

// activityBody re-arms the attempt's timer whenever bytes arrive, so the
// timeout bounds the wait for the first byte and every silence after it;
// it counts the bytes, for the timeout's message.
type activityBody struct {
	rc    io.ReadCloser
	timer *time.Timer
	d     time.Duration
	got   *atomic.Int64
}

func (b *activityBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.got.Add(int64(n))
		b.timer.Reset(b.d)
	}
	return n, err
}

func (b *activityBody) Close() error { return b.rc.Close() }
