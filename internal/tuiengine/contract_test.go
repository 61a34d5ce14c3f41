package tuiengine

import (
	"context"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/apptest"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/tui"
)

// The front-end contract, played against the TUI's engine as the screen
// drives it: tui.Engine's commands in, Next's updates out.
func TestContract(t *testing.T) {
	apptest.Run(t, func(t *testing.T, a *app.App) apptest.Driver { return newTUIDriver(t, a) })
}

// tuiDriver plays a user at an Engine: each command as the screen sends
// it, and a loop reading Next as the screen does.
type tuiDriver struct {
	t      *testing.T
	a      *app.App
	eng    *Engine
	ctx    context.Context
	stop   context.CancelFunc
	loop   sync.WaitGroup // the Next loop
	ops    sync.WaitGroup // commands sent in the background
	grew   chan struct{}
	closed bool

	mu       sync.Mutex
	sid      string
	shown    []event.Event         // guarded by mu
	approval *tui.Approval         // guarded by mu: the last question shown
	lost     string                // guarded by mu
	told     []event.TurnCompleted // guarded by mu: the unrecorded ends
	notes    []string              // guarded by mu: the notes of sent lines
}

func newTUIDriver(t *testing.T, a *app.App) *tuiDriver {
	ctx, stop := context.WithCancel(t.Context())
	d := &tuiDriver{t: t, a: a, eng: New(a, &Held{}), ctx: ctx, stop: stop, grew: make(chan struct{}, 1)}
	t.Cleanup(d.close)
	return d
}

// close stops the Next loop, then closes the engine (and its session).
func (d *tuiDriver) close() {
	if d.closed {
		return
	}
	d.closed = true
	d.ops.Wait()
	d.stop()
	d.loop.Wait()
	d.eng.Close()
}

// open opens req's session and starts reading Next; what it shows is
// the events after those stored before the open.
func (d *tuiDriver) open(req app.OpenRequest) {
	from := int64(-1)
	if req.ResumeID != "" {
		if s, err := d.a.Store.Session(d.ctx, req.ResumeID); err == nil {
			from = s.LastSeq
		}
	}
	s, err := d.eng.Open(d.ctx, tui.OpenRequest{ID: req.ResumeID, Fork: req.Fork})
	if err != nil {
		d.t.Fatalf("open: %v", err)
	}
	d.mu.Lock()
	d.sid = s.ID
	for _, r := range s.History {
		if r.Seq > from {
			d.shown = append(d.shown, r.Event)
		}
	}
	d.mu.Unlock()
	d.loop.Add(1)
	go func() {
		defer d.loop.Done()
		for {
			u, err := d.eng.Next(d.ctx)
			if err != nil {
				return
			}
			d.mu.Lock()
			for _, r := range u.Events {
				d.shown = append(d.shown, r.Event)
			}
			if u.Approval != nil {
				d.approval = u.Approval
			}
			if u.Lost != "" {
				d.lost = u.Lost
			}
			if u.Unrecorded != nil {
				d.told = append(d.told, *u.Unrecorded)
			}
			d.mu.Unlock()
			select {
			case d.grew <- struct{}{}:
			default:
			}
		}
	}()
}

// background runs a command as the screen does (in a tea.Cmd, off the
// update loop); the channel is closed as it is sent.
func (d *tuiDriver) background(what string, f func() error) <-chan struct{} {
	taken := make(chan struct{})
	d.ops.Add(1)
	go func() {
		defer d.ops.Done()
		close(taken)
		if err := f(); err != nil {
			d.t.Errorf("%s: %v", what, err)
		}
	}()
	return taken
}

func (d *tuiDriver) Start(req app.OpenRequest, prompt string) {
	d.open(req)
	d.background("send the prompt", func() error { _, err := d.eng.Send(d.ctx, prompt); return err })
}

func (d *tuiDriver) Type(line string) <-chan struct{} {
	return d.background("send", func() error {
		s, err := d.eng.Send(d.ctx, line)
		if s.Note != "" {
			d.mu.Lock()
			d.notes = append(d.notes, s.Note)
			d.mu.Unlock()
		}
		return err
	})
}

func (d *tuiDriver) Notes() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.notes...)
}

func (d *tuiDriver) Unrecorded() []event.TurnCompleted {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]event.TurnCompleted(nil), d.told...)
}

func (d *tuiDriver) Queue(line string) <-chan struct{} {
	return d.background("queue", func() error { _, err := d.eng.Queue(d.ctx, line); return err })
}

func (d *tuiDriver) Answer(allow bool) {
	d.mu.Lock()
	q := d.approval
	d.mu.Unlock()
	if q == nil {
		d.t.Fatal("answer: no question shown")
	}
	if err := d.eng.Answer(d.ctx, q.PermissionID, tui.Answer{Allow: allow}); err != nil {
		d.t.Errorf("answer: %v", err)
	}
}

func (d *tuiDriver) Cancel() {
	if err := d.eng.Cancel(d.ctx); err != nil {
		d.t.Errorf("cancel: %v", err)
	}
}

func (d *tuiDriver) Shown() []event.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]event.Event(nil), d.shown...)
}

func (d *tuiDriver) Grew() <-chan struct{} { return d.grew }

func (d *tuiDriver) End(t *testing.T, turns int) string {
	t.Helper()
	apptest.Until(t, d.grew, "the turns' ends", func() bool {
		return len(apptest.Of[event.TurnCompleted](d.Shown())) >= turns
	}, func() string { return "" })
	d.close()
	return d.sid
}

// QueueID queues line and returns its message ID.
func (d *tuiDriver) QueueID(line string) string {
	s, err := d.eng.Queue(d.ctx, line)
	if err != nil || s.Kind != "queued" {
		d.t.Fatalf("queue = %+v, %v", s, err)
	}
	return s.MessageID
}

func (d *tuiDriver) Withdraw(messageID string) {
	if err := d.eng.Withdraw(d.ctx, messageID); err != nil {
		d.t.Errorf("withdraw: %v", err)
	}
}

// Hold opens req's session, as the screen does, and sends nothing.
func (d *tuiDriver) Hold(req app.OpenRequest) string {
	d.open(req)
	return d.sid
}

// Told waits for the update that says the session was taken over.
func (d *tuiDriver) Told(t *testing.T) {
	t.Helper()
	apptest.Until(t, d.grew, "the take-over told", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.lost != ""
	}, func() string { return "" })
}

// Rewind opens session id, rewinds it with /rewind's command and closes
// it.
func (d *tuiDriver) Rewind(t *testing.T, id, turn string) {
	t.Helper()
	d.open(app.OpenRequest{ResumeID: id})
	if _, _, err := d.eng.Rewind(d.ctx, turn, false); err != nil {
		t.Fatalf("rewind: %v", err)
	}
	d.close()
}
