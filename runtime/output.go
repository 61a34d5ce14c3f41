package runtime

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/event"
)

const (
	// outputFlush is how often a running command's output is recorded.
	outputFlush = 100 * time.Millisecond
	// outputChunk is how much waiting output records at once, without
	// waiting for the next flush.
	outputChunk = 8 << 10
)

// outputRecorder records a running command's output as tool.output events
// (STYLE 13: live, coalesced, bounded). The workspace's copying goroutines
// write; one goroutine of the recorder appends, every outputFlush or when
// outputChunk bytes wait, up to event.MaxToolOutputBytes per call. stop
// records what is left before the call's tool.result. Output waits in the
// order it came: a run of one stream is one event, and stdout and stderr
// are recorded interleaved as they arrived, so a card or exec shows a
// warning where it came, not after the whole flush's stdout.
type outputRecorder struct {
	t      *turn
	callID string

	mu        sync.Mutex
	pending   []outputRun // not yet recorded, in arrival order; guarded by mu
	waiting   int         // bytes in pending; guarded by mu
	carry     [2][]byte   // per stream, an unfinished UTF-8 sequence waiting for its next bytes; guarded by mu
	offset    [2]int      // bytes recorded per stream; guarded by mu
	total     int         // bytes accepted; guarded by mu
	truncated bool        // output went past the bound; guarded by mu
	marked    bool        // the truncated flag was recorded; guarded by mu

	kick    chan struct{}
	done    chan struct{}
	stopped chan struct{}
}

// outputRun is output of one stream that came without the other between.
type outputRun struct {
	stream int // index in streams
	b      []byte
}

var streams = [2]string{event.StreamStdout, event.StreamStderr}

func newOutputRecorder(t *turn, callID string) *outputRecorder {
	o := &outputRecorder{t: t, callID: callID, kick: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	go o.loop()
	return o
}

// write takes output as it comes; it never blocks on the store.
func (o *outputRecorder) write(stream string, p []byte) {
	i := 0
	if stream == event.StreamStderr {
		i = 1
	}
	o.mu.Lock()
	n := min(len(p), event.MaxToolOutputBytes-o.total)
	if o.truncated {
		n = 0 // past the bound: nothing more is recorded
	}
	cut := n < len(p) && !o.truncated
	o.total += n
	// Whole runes wait in pending; an unfinished one at the end waits in
	// carry for the rest of it (the same stream's next write). The bound
	// never cuts a rune: it falls before one it would split, in this
	// write or begun in the last one.
	data := append(o.carry[i], p[:n]...)
	keep := validPrefix(data)
	if cut {
		o.truncated = true
		for keep > 0 && keep < len(data) && !utf8.RuneStart(data[keep]) {
			keep--
		}
		o.carry[i] = nil
	} else {
		o.carry[i] = append([]byte(nil), data[keep:]...)
	}
	if data = data[:keep]; len(data) > 0 {
		if k := len(o.pending) - 1; k >= 0 && o.pending[k].stream == i {
			o.pending[k].b = append(o.pending[k].b, data...)
		} else {
			o.pending = append(o.pending, outputRun{stream: i, b: append([]byte(nil), data...)})
		}
		o.waiting += len(data)
	}
	full := o.waiting >= outputChunk || (o.truncated && !o.marked)
	o.mu.Unlock()
	if full {
		select {
		case o.kick <- struct{}{}:
		default:
		}
	}
}

func (o *outputRecorder) loop() {
	defer close(o.stopped)
	tick := time.NewTicker(outputFlush)
	defer tick.Stop()
	for {
		select {
		case <-o.kick:
			o.flush(false)
		case <-tick.C:
			o.flush(false)
		case <-o.done:
			o.flush(true)
			return
		}
	}
}

// stop records the rest and returns once it is recorded.
func (o *outputRecorder) stop() {
	close(o.done)
	<-o.stopped
}

// flush records what waits, in the order it came. Unless final, an
// unfinished UTF-8 sequence at the end of a stream waits for its next
// bytes; final records it too (as U+FFFD).
func (o *outputRecorder) flush(final bool) {
	var evs []event.ToolOutput
	o.mu.Lock()
	if final {
		for i, c := range o.carry {
			if len(c) > 0 {
				o.pending = append(o.pending, outputRun{stream: i, b: c})
				o.carry[i] = nil
			}
		}
	}
	for _, run := range o.pending {
		i, b := run.stream, run.b
		for start := 0; start < len(b); {
			end := min(start+outputChunk, len(b))
			if end < len(b) {
				if e := start + validPrefix(b[start:end]); e > start {
					end = e
				}
			}
			evs = append(evs, event.ToolOutput{CallID: o.callID, Stream: streams[i], Offset: o.offset[i],
				Text: strings.ToValidUTF8(string(b[start:end]), "\uFFFD")})
			o.offset[i] += end - start
			start = end
		}
	}
	o.pending, o.waiting = o.pending[:0], 0
	if o.truncated && !o.marked {
		o.marked = true
		if len(evs) > 0 {
			evs[len(evs)-1].Truncated = true
		} else {
			evs = append(evs, event.ToolOutput{CallID: o.callID, Stream: event.StreamStdout, Offset: o.offset[0], Truncated: true})
		}
	}
	o.mu.Unlock()
	for _, e := range evs {
		if _, err := o.t.append(e); err != nil {
			return // the store failed: the turn's next append reports it
		}
	}
}

// validPrefix is the length of b without an unfinished UTF-8 sequence at
// its end (b itself when it ends on a whole rune or is not UTF-8).
func validPrefix(b []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(b); k++ {
		r := b[len(b)-k]
		if r < utf8.RuneSelf {
			return len(b)
		}
		if utf8.RuneStart(r) {
			if utf8.FullRune(b[len(b)-k:]) {
				return len(b)
			}
			return len(b) - k
		}
	}
	return len(b)
}
