package runtime

import (
	"sync"

	"github.com/harness-dev/harness/internal/event"
)

// Published is one event as appended: its per-session sequence number, the
// decoded event and its stored canonical bytes.
type Published struct {
	Seq   int64
	Event event.Event
	Body  []byte
}

// bus fans a session's ordered stream of appended events out to
// subscribers. It never drops an event: each subscriber has an unbounded queue, so a slow
// reader delays only itself. Readers drain whole batches at once.
type bus struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{} // guarded by mu
}

// Subscription receives a session's events in log order (Session.Events).
type Subscription struct {
	b      *bus
	mu     sync.Mutex
	queue  []Published   // guarded by mu
	after  int64         // guarded by mu: the last seq handed out; older ones are dropped
	closed bool          // guarded by mu
	ready  chan struct{} // signaled (non-blocking, capacity 1) when queue grows
}

func (b *bus) subscribe(after int64) *Subscription {
	s := &Subscription{b: b, after: after, ready: make(chan struct{}, 1)}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[*Subscription]struct{}{}
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

func (b *bus) publish(p Published) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.mu.Lock()
		if !s.closed {
			s.queue = append(s.queue, p)
		}
		s.mu.Unlock()
		s.signal()
	}
}

// prepend puts the events read from the store before those published
// since the subscription began; the overlap is dropped by Drain.
func (s *Subscription) prepend(backlog []Published) {
	if len(backlog) == 0 {
		return
	}
	s.mu.Lock()
	s.queue = append(backlog, s.queue...)
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Ready is signaled when events may be waiting; call Drain after it fires.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Drain returns and clears everything queued so far, each event once.
func (s *Subscription) Drain() []Published {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue[:0] // filtered in place
	for _, p := range s.queue {
		if p.Seq > s.after {
			q = append(q, p)
			s.after = p.Seq
		}
	}
	s.queue = nil
	return q
}

// Close stops delivery.
func (s *Subscription) Close() {
	s.b.mu.Lock()
	delete(s.b.subs, s)
	s.b.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.queue = nil
	s.mu.Unlock()
}
