package headless_test

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/apptest"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/headless"
)

// The front-end contract, played against the headless runner as harness
// exec drives it: lines on stdin, interrupts, the JSON lines on stdout.
func TestContract(t *testing.T) {
	apptest.Run(t, func(t *testing.T, a *app.App) apptest.Driver { return newExecDriver(t, a) })
}

// execDriver plays a user at headless.Run: lines typed on stdin (">>"
// queues), ctrl+c as an interrupt, and reads its JSON output.
type execDriver struct {
	t          *testing.T
	a          *app.App
	in         *lineFeed
	out        *jsonOut
	errOut     *asked
	interrupts chan struct{}
	done       chan struct{} // closed when Run returned
	sid        string
	answered   int // questions answered
}

func newExecDriver(t *testing.T, a *app.App) *execDriver {
	grew := make(chan struct{}, 1)
	d := &execDriver{t: t, a: a, in: newLineFeed(), out: &jsonOut{grew: grew}, errOut: &asked{grew: grew},
		interrupts: make(chan struct{}, 1)}
	t.Cleanup(func() {
		d.in.close()
		if d.done != nil {
			<-d.done
		}
	})
	return d
}

func (d *execDriver) Start(req app.OpenRequest, prompt string) {
	ctx := d.t.Context()
	req.Defer = true // as harness exec opens
	sess, err := d.a.Open(ctx, req)
	if err != nil {
		d.t.Fatalf("open: %v", err)
	}
	d.sid = sess.ID()
	d.done = make(chan struct{})
	go func() {
		defer close(d.done)
		headless.Run(ctx, sess, sess.Before(), prompt, headless.Options{
			JSON: true, Stdin: d.in, Stdout: d.out, Stderr: d.errOut, Interrupts: d.interrupts,
			Fail: func(err error) { d.t.Errorf("the run failed: %v", err) },
		})
	}()
}

func (d *execDriver) Type(line string) <-chan struct{} { return d.in.send(line) }

func (d *execDriver) Queue(line string) <-chan struct{} { return d.in.send(">> " + line) }

// Answer types the answer once the question is on screen (a line typed
// before it would be steering).
func (d *execDriver) Answer(allow bool) {
	d.t.Helper()
	d.answered++
	apptest.Until(d.t, d.out.grew, "the question asked", func() bool { return d.errOut.questions() >= d.answered },
		func() string { return "stderr: " + d.errOut.String() })
	line := "n"
	if allow {
		line = "y"
	}
	d.in.send(line)
}

func (d *execDriver) Cancel() { d.interrupts <- struct{}{} }

func (d *execDriver) Shown() []event.Event { return d.out.events() }

func (d *execDriver) Grew() <-chan struct{} { return d.out.grew }

// Unrecorded reads the outcome lines on stderr of turns whose end the
// store could not record: "turn ID: STATUS · … · CODE: NOTE".
func (d *execDriver) Unrecorded() []event.TurnCompleted {
	var out []event.TurnCompleted
	for _, l := range strings.Split(d.errOut.String(), "\n") {
		head, rest, ok := strings.Cut(strings.TrimPrefix(l, "turn "), ": ")
		if !strings.HasPrefix(l, "turn ") || !ok || !strings.Contains(l, app.UnrecordedNote) {
			continue
		}
		parts := strings.Split(rest, " · ")
		tc := event.TurnCompleted{TurnID: head, Status: parts[0], Note: parts[len(parts)-1]}
		if code, note, ok := strings.Cut(tc.Note, ": "); ok && code == strings.ToUpper(code) && !strings.Contains(code, " ") {
			tc.ErrorCode, tc.Note = code, note
		}
		out = append(out, tc)
	}
	return out
}

// End waits for Run to return (it returns once the session is idle, and
// closes it).
func (d *execDriver) End(t *testing.T, turns int) string {
	t.Helper()
	apptest.Await(t, d.done, "the run's end")
	d.out.mu.Lock()
	if err := d.out.err; err != nil {
		t.Errorf("a JSON line on stdout does not decode: %v", err)
	}
	d.out.mu.Unlock()
	if n := len(apptest.Of[event.TurnCompleted](d.Shown())); n < turns {
		t.Errorf("the run showed %d turns' ends, want %d", n, turns)
	}
	return d.sid
}

// Rewind is harness rewind between two runs.
func (d *execDriver) Rewind(t *testing.T, id, turn string) {
	t.Helper()
	if _, err := d.a.Rewind(t.Context(), id, app.RewindRequest{Turn: turn}); err != nil {
		t.Fatalf("rewind: %v", err)
	}
}

// lineFeed is stdin: the lines the driver types, one per Read. A line is
// taken (its channel closed) when the reader asks for the next one: Run
// reads a line, hands it on, then reads again.
type lineFeed struct {
	lines chan typed
	done  chan struct{}
	once  sync.Once
	rest  []byte        // the line being read (one reader)
	taken chan struct{} // the line being read's
}

type typed struct {
	text  string
	taken chan struct{}
}

func newLineFeed() *lineFeed {
	return &lineFeed{lines: make(chan typed, 64), done: make(chan struct{})}
}

func (f *lineFeed) send(line string) <-chan struct{} {
	c := make(chan struct{})
	f.lines <- typed{line + "\n", c}
	return c
}

func (f *lineFeed) close() { f.once.Do(func() { close(f.done) }) }

func (f *lineFeed) Read(p []byte) (int, error) {
	if len(f.rest) == 0 {
		if f.taken != nil {
			close(f.taken)
			f.taken = nil
		}
		select {
		case l := <-f.lines:
			f.rest, f.taken = []byte(l.text), l.taken
		case <-f.done:
			return 0, io.EOF
		}
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// jsonOut is stdout: the JSON lines, decoded as they come.
type jsonOut struct {
	grew chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer  // guarded by mu: a line not yet whole
	evs  []event.Event // guarded by mu
	err  error         // guarded by mu
}

func (o *jsonOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	o.buf.Write(p)
	for {
		line, err := o.buf.ReadBytes('\n')
		if err != nil {
			o.buf.Write(line) // not whole yet
			break
		}
		ev, err := event.Decode(bytes.TrimSpace(line))
		if err != nil && o.err == nil {
			o.err = err
		}
		o.evs = append(o.evs, ev)
	}
	o.mu.Unlock()
	signal(o.grew)
	return len(p), nil
}

func (o *jsonOut) events() []event.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]event.Event(nil), o.evs...)
}

// asked is stderr, where a question is asked ("? tool wants to …").
type asked struct {
	grew chan struct{}
	mu   sync.Mutex
	b    strings.Builder // guarded by mu
}

func (a *asked) Write(p []byte) (int, error) {
	a.mu.Lock()
	a.b.Write(p)
	a.mu.Unlock()
	signal(a.grew)
	return len(p), nil
}

func (a *asked) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.b.String()
}

// questions counts the questions asked so far.
func (a *asked) questions() int {
	n := 0
	for _, l := range strings.Split(a.String(), "\n") {
		if strings.HasPrefix(l, "? ") {
			n++
		}
	}
	return n
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
