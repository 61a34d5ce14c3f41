package tuiengine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/apptest"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/tui"
)

// The front-end contract, played against the TUI's model on the engine:
// keys typed into tui.Model, its commands run as Bubble Tea runs them
// (each off the update loop, its message back into Update, one at a
// time). What the model itself decides — its outbox, which sends typed
// messages one at a time in order, and its busy() guards — is then held
// to the same cases as the engine alone.
func TestContractModel(t *testing.T) {
	apptest.Run(t, func(t *testing.T, a *app.App) apptest.Driver { return newModelDriver(t, a) })
}

// seenEngine is the engine, recording what its Next and Send gave the
// model.
type seenEngine struct {
	*Engine
	d *modelDriver
}

func (e seenEngine) Next(ctx context.Context) (tui.Update, error) {
	d := e.d
	d.mu.Lock()
	d.waiting = true // the model folded every update before this one
	d.mu.Unlock()
	signalGrew(d.grew)
	u, err := e.Engine.Next(ctx)
	d.mu.Lock()
	late := d.late
	d.mu.Unlock()
	if late != nil {
		select {
		case <-late:
		case <-ctx.Done():
		}
	}
	d.mu.Lock()
	d.waiting = false
	if u.State != "" {
		d.state = u.State
	}
	d.mu.Unlock()
	if err == nil {
		d.mu.Lock()
		for _, r := range u.Events {
			d.shown = append(d.shown, r.Event)
			if _, ok := r.Event.Data.(event.PermissionRequested); ok {
				d.asked++
			}
		}
		if u.Unrecorded != nil {
			d.told = append(d.told, *u.Unrecorded)
		}
		if u.Lost != "" {
			d.lost = u.Lost
		}
		d.mu.Unlock()
		signalGrew(d.grew)
	}
	return u, err
}

// Open records the events the open stored (a resume's settings.changed):
// the session's history after what was stored before it.
func (e seenEngine) Open(ctx context.Context, req tui.OpenRequest) (tui.Session, error) {
	from := int64(-1)
	if req.ID != "" {
		if s, err := e.d.a.Store.Session(ctx, req.ID); err == nil {
			from = s.LastSeq
		}
	}
	s, err := e.Engine.Open(ctx, req)
	if err == nil {
		e.d.mu.Lock()
		for _, r := range s.History {
			if r.Seq > from {
				e.d.shown = append(e.d.shown, r.Event)
			}
		}
		e.d.mu.Unlock()
		signalGrew(e.d.grew)
	}
	return s, err
}

// Send records the note the model shows with the sent message (a rebuilt
// workspace's).
func (e seenEngine) Send(ctx context.Context, text string) (tui.Sent, error) {
	s, err := e.Engine.Send(ctx, text)
	if s.Note != "" {
		e.d.mu.Lock()
		e.d.notes = append(e.d.notes, s.Note)
		e.d.mu.Unlock()
	}
	return s, err
}

func signalGrew(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// modelDriver plays a user at a tui.Model on an Engine.
type modelDriver struct {
	t    *testing.T
	a    *app.App
	eng  *Engine
	ctx  context.Context
	stop context.CancelFunc
	msgs chan keyed // into the update loop
	loop sync.WaitGroup
	cmds sync.WaitGroup // commands running
	grew chan struct{}
	m    *tui.Model // owned by the update loop once started
	done bool

	mu    sync.Mutex
	shown []event.Event         // guarded by mu
	told  []event.TurnCompleted // guarded by mu
	asked int                   // guarded by mu: questions shown
	lost  string                // guarded by mu: the take-over told
	notes []string              // guarded by mu: the notes of sent messages
	// waiting: the model waits in Next, every update before folded.
	waiting bool          // guarded by mu
	state   tui.State     // guarded by mu: the owner's state Next last told
	screen  string        // guarded by mu: the view after the last Update
	late    chan struct{} // guarded by mu: Next returns once it is closed (Late)
	answrd  int           // questions answered (the case's goroutine)
}

// keyed is a message for Update, and a channel closed once Update took
// it (nil for none), and where to say what Update made of it (nil for
// nowhere).
type keyed struct {
	msg   tea.Msg
	taken chan struct{}
	res   *apptest.Response
}

func newModelDriver(t *testing.T, a *app.App) *modelDriver {
	ctx, stop := context.WithCancel(t.Context())
	d := &modelDriver{t: t, a: a, eng: New(a, &Held{}), ctx: ctx, stop: stop, msgs: make(chan keyed, 64), grew: make(chan struct{}, 1)}
	t.Cleanup(d.close)
	return d
}

// run runs cmd off the update loop, as Bubble Tea does, and hands its
// message to Update (a batch's commands each on their own).
func (d *modelDriver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	d.cmds.Add(1)
	go func() {
		defer d.cmds.Done()
		msg := cmd()
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				d.run(c)
			}
		default:
			select {
			case d.msgs <- keyed{msg: msg}:
			case <-d.ctx.Done():
			}
		}
	}()
}

func (d *modelDriver) Start(req app.OpenRequest, prompt string) {
	d.start(req)
	d.Type(prompt) // typed ahead of the open: sent once it is open
}

// Hold starts the model on req's session and types nothing.
func (d *modelDriver) Hold(req app.OpenRequest) string {
	d.start(req)
	apptest.Until(d.t, d.grew, "the session open", func() bool { return d.eng.SessionID() != "" }, func() string { return "" })
	return d.eng.SessionID()
}

// Told waits for the update that says the session was taken over.
func (d *modelDriver) Told(t *testing.T) {
	t.Helper()
	apptest.Until(t, d.grew, "the take-over told", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.lost != ""
	}, func() string { return "" })
}

func (d *modelDriver) Notes() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.notes...)
}

// start starts the model on req's session: Init, a window size, and the
// update loop.
func (d *modelDriver) start(req app.OpenRequest) {
	d.m = tui.New(d.ctx, seenEngine{d.eng, d}, tui.Options{Open: tui.OpenRequest{ID: req.ResumeID, Fork: req.Fork}})
	init := d.m.Init()
	d.loop.Add(1)
	go func() {
		defer d.loop.Done()
		for {
			select {
			case k := <-d.msgs:
				_, cmd := d.m.Update(k.msg)
				screen := strings.Join(strings.Fields(ansi.Strip(d.m.View().Content)), " ")
				d.mu.Lock()
				d.screen = screen
				d.mu.Unlock()
				if k.res != nil {
					*k.res = apptest.Response{Screen: screen, Asked: cmd != nil}
				}
				if k.taken != nil {
					close(k.taken)
				}
				signalGrew(d.grew)
				d.run(cmd)
			case <-d.ctx.Done():
				return
			}
		}
	}()
	d.run(init)
	d.keys(tea.WindowSizeMsg{Width: 100, Height: 40})
}

// keys hands msgs to Update in order; the channel is closed once Update
// took the last.
func (d *modelDriver) keys(msgs ...tea.Msg) <-chan struct{} {
	return d.keysSaying(nil, msgs...)
}

// keysSaying is keys, saying in res what Update made of the last.
func (d *modelDriver) keysSaying(res *apptest.Response, msgs ...tea.Msg) <-chan struct{} {
	taken := make(chan struct{})
	for i, msg := range msgs {
		k := keyed{msg: msg}
		if i == len(msgs)-1 {
			k.taken, k.res = taken, res
		}
		d.msgs <- k
	}
	return taken
}

// text is line as key presses, then the key that sends it.
func text(line string, send tea.KeyPressMsg) []tea.Msg {
	var msgs []tea.Msg
	for _, r := range line {
		msgs = append(msgs, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return append(msgs, send)
}

func (d *modelDriver) Type(line string) <-chan struct{} {
	return d.keys(text(line, tea.KeyPressMsg{Code: tea.KeyEnter})...)
}

func (d *modelDriver) Queue(line string) <-chan struct{} {
	return d.keys(text(line, tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt})...)
}

// Answer gives the question's box the keys (tab, the input empty) and
// answers y or n, once the question is on screen.
func (d *modelDriver) Answer(allow bool) {
	d.t.Helper()
	k := 'n'
	if allow {
		k = 'y'
	}
	d.answer(k)
}

// AllowForSession answers s.
func (d *modelDriver) AllowForSession() {
	d.t.Helper()
	d.answer('s')
}

// answer gives the question's box the keys and answers k, once the
// question is on screen.
func (d *modelDriver) answer(k rune) {
	d.t.Helper()
	d.answrd++
	apptest.Until(d.t, d.grew, "the question shown", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.asked >= d.answrd
	}, func() string { return "" })
	d.keys(tea.KeyPressMsg{Code: tea.KeyTab}, tea.KeyPressMsg{Code: k, Text: string(k)})
}

// Settled waits until the model waits in Next (it folded every update),
// the state Next last told it is busy or not as asked (none told yet is
// the idle one a session opens in), and its screen shows no message
// being sent (the outbox is empty: only keys fill it).
func (d *modelDriver) Settled(t *testing.T, busy bool) {
	t.Helper()
	apptest.Until(t, d.grew, "the model settled", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.waiting && d.state.Busy() == busy && !strings.Contains(d.screen, "[sending]")
	}, func() string {
		d.mu.Lock()
		defer d.mu.Unlock()
		return fmt.Sprintf("waiting in Next %v, state %q, screen:\n%s", d.waiting, d.state, d.screen)
	})
}

// List types command and enter, and waits until the list it opened has
// loaded.
func (d *modelDriver) List(t *testing.T, command string) {
	t.Helper()
	if r := d.Command(command); !r.Asked {
		t.Fatalf("%s opened no list; screen:\n%s", command, r.Screen)
	}
	apptest.Until(t, d.grew, command+"'s list loaded", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return !strings.Contains(d.screen, "loading…")
	}, func() string { return "" })
}

// Choose presses down down times, then enter, and says what Update made of
// the enter.
func (d *modelDriver) Choose(down int) apptest.Response {
	d.t.Helper()
	var keys []tea.Msg
	for range down {
		keys = append(keys, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	var res apptest.Response
	apptest.Await(d.t, d.keysSaying(&res, append(keys, tea.KeyPressMsg{Code: tea.KeyEnter})...), "the choice taken")
	return res
}

// Late makes Next return only once release is called.
func (d *modelDriver) Late() func() {
	late := make(chan struct{})
	d.mu.Lock()
	d.late = late
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		if d.late == late {
			d.late = nil
		}
		d.mu.Unlock()
		close(late)
	}
}

// Command types line and enter, and says what Update made of the enter.
func (d *modelDriver) Command(line string) apptest.Response {
	d.t.Helper()
	var res apptest.Response
	apptest.Await(d.t, d.keysSaying(&res, text(line, tea.KeyPressMsg{Code: tea.KeyEnter})...), "the command taken")
	return res
}

// New types /new.
func (d *modelDriver) New() <-chan struct{} { return d.Type("/new") }

func (d *modelDriver) Cancel() { d.keys(tea.KeyPressMsg{Code: tea.KeyEscape}) }

func (d *modelDriver) Shown() []event.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]event.Event(nil), d.shown...)
}

func (d *modelDriver) Unrecorded() []event.TurnCompleted {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]event.TurnCompleted(nil), d.told...)
}

func (d *modelDriver) Grew() <-chan struct{} { return d.grew }

func (d *modelDriver) End(t *testing.T, turns int) string {
	t.Helper()
	apptest.Until(t, d.grew, "the turns' ends", func() bool {
		return len(apptest.Of[event.TurnCompleted](d.Shown())) >= turns
	}, func() string { return "" })
	id := d.eng.SessionID()
	d.close()
	return id
}

// close stops the update loop and the commands, then closes the engine
// (and its session), as quitting does.
func (d *modelDriver) close() {
	if d.done {
		return
	}
	d.done = true
	d.stop()
	d.loop.Wait()
	d.cmds.Wait()
	d.eng.Close()
}
