package runtime

import (
	"sync"

	"github.com/harness-dev/harness/event"
)

// Published is one event as appended: its per-session sequence number, the
// decoded event and its stored canonical bytes.
type Published struct {
	Seq   int64
	Event event.Event
	Body  []byte
}

// bus fans the ordered stream of appended events out to subscribers. It
// never drops an event: each subscriber has an unbounded queue, so a slow
// reader delays only itself. Readers drain whole batches at once.
type bus struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{} // guarded by mu
}

// Subscription receives every event appended after Subscribe, in log order.
type Subscription struct {
	b      *bus
	mu     sync.Mutex
	queue  []Published   // guarded by mu
	closed bool          // guarded by mu
	ready  chan struct{} // signaled (non-blocking, capacity 1) when queue grows
}

func (b *bus) subscribe() *Subscription {
	s := &Subscription{b: b, ready: make(chan struct{}, 1)}
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
		select {
		case s.ready <- struct{}{}:
		default:
		}
	}
}

// Ready is signaled when events may be waiting; call Drain after it fires.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Drain returns and clears everything queued so far.
func (s *Subscription) Drain() []Published {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
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
