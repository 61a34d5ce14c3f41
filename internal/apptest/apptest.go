// Package apptest is the front-end contract suite: what every front end
// that drives an app.Session (the TUI's engine, internal/tuiengine, alone
// and under the TUI's model, whose outbox and busy() guards stand between
// the keys and the engine; the headless runner of harness exec,
// internal/headless) must do the same way, run against each of them as
// store/storetest runs against the stores. A front end's test supplies a
// FrontEnd that plays a user at it (typing, queueing, answering,
// canceling) and reports what it showed; Run plays the cases. The kernel
// decisions the front ends share are app's (app.Rebuild for a lost
// workspace, app.Unrecorded for a turn's end the store could not record):
// the cases hold each front end to them.
//
// Everything is real but the model: a SQLite file under a temporary home,
// the local workspace on a temporary project (--workspace local) where the
// Docker workspace is not the point, the Docker workspace (image
// harness-busybox) where a case needs writes, and a scripted model
// (internal/model/fake) read from a file. Interleavings are forced by holding one store append until the
// case lets it go (Gate), never by sleeping. Run the suite under -race.
package apptest

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/store"
)

// Bound is how long a case waits for a condition before it fails.
const Bound = 30 * time.Second

// FrontEnd starts the front end under test on a (one process's app). A
// case may start several, on the same store, one after the other or side
// by side.
type FrontEnd func(t *testing.T, a *app.App) Driver

// Driver is one front end as a user drives it: it opens one session and
// shows its events. Its methods return at once; what the session made of
// an input shows in the events.
type Driver interface {
	// Start opens req's session and sends prompt as its first turn.
	Start(req app.OpenRequest, prompt string)
	// Type sends a line as the user types it: steering for the running
	// turn, or a new turn when none runs (or once the ending one ended).
	// The channel is closed once the front end took the line (harness exec
	// reads no line while its first turn is admitted: a case that holds
	// the admission does not wait for it).
	Type(line string) <-chan struct{}
	// Queue queues a line as the turn after the running one; the channel
	// is as Type's.
	Queue(line string) <-chan struct{}
	// Answer answers the question on screen: allow once, or deny.
	Answer(allow bool)
	// Cancel cancels the running turn (esc, ctrl+c).
	Cancel()
	// Shown is every event the front end showed of the session since
	// Start, in order.
	Shown() []event.Event
	// Grew is signaled (a channel of capacity 1) when Shown grows.
	Grew() <-chan struct{}
	// Unrecorded is every turn's end the front end told that the store
	// could not record (app.Unrecorded), in order.
	Unrecorded() []event.TurnCompleted
	// End waits until the front end has shown turns turn.completed events
	// and is done with the session (closed it), and returns the session's
	// ID.
	End(t *testing.T, turns int) string
}

// Withdrawer is a front end that can take back a queued message (the
// TUI); harness exec has no such command.
type Withdrawer interface {
	// QueueID is Queue, returning the queued message's ID.
	QueueID(line string) string
	// Withdraw takes the message back.
	Withdraw(messageID string)
}

// Rewinder is a front end that can rewind a session to the end of one of
// its turns: the TUI's /rewind on the open session, or harness rewind
// between two runs.
type Rewinder interface {
	// Rewind rewinds session id to the end of turn (its number from 1),
	// the session not open.
	Rewind(t *testing.T, id, turn string)
}

// Holder is a front end that holds a session open between turns (the
// TUI): a take-over by another process must be told at once, with
// nothing typed.
type Holder interface {
	// Hold opens req's session and runs no turn.
	Hold(req app.OpenRequest) string
	// Told waits until the front end told the user that another process
	// took the session over.
	Told(t *testing.T)
	// Notes are the notes the front end showed as it took typed lines
	// (the one of a rebuilt workspace), in order.
	Notes() []string
}

// Switcher is a front end that can leave its session for a new one (the
// TUI's /new).
type Switcher interface {
	// New asks for a new session as the user does; the channel is closed
	// once the front end took the request.
	New() <-chan struct{}
}

// Guarded is a front end with commands that work only between turns (the
// TUI: /apply, /fork, /rewind, /new, enter on an empty input, which starts
// the turn a queued input waits for, and a choice in the lists of
// /sessions and /rewind, which may have opened before the turn started).
// While it is busy — a turn
// active, or a typed message still on its way to the session, not yet
// admitted — it refuses them itself: it says so (BusyRefusal), asks the
// session nothing, and nothing is recorded. harness exec has no such
// commands.
type Guarded interface {
	Driver
	// Settled waits until the front end has taken in all the session told
	// it, that a turn is active (busy) or not included, and has no typed
	// message on its way.
	Settled(t *testing.T, busy bool)
	// Command types line (a command; "" is enter on an empty input) and
	// returns, once the front end took it, what it made of it.
	Command(line string) Response
	// List types command (the TUI's /sessions, /rewind), which opens a
	// list to choose from, and waits until the list shows its rows.
	List(t *testing.T, command string)
	// Choose chooses the row down rows below the list's first, and
	// returns what the front end made of the choice.
	Choose(down int) Response
	// AllowForSession answers the question on screen: its tool is allowed
	// for the rest of the session.
	AllowForSession()
	// Late holds back what the session tells the front end (its events,
	// its state) until release is called, as a loaded machine delays it:
	// meanwhile the front end acts on what it was told last.
	Late() (release func())
}

// Response is what a Guarded front end made of a typed command.
type Response struct {
	// Screen is what the front end showed once it took the command: its
	// text, without styling, white space folded.
	Screen string
	// Asked: it set work going for the command (the only way it reaches
	// the session or the store).
	Asked bool
}

// BusyRefusal is what a Guarded front end says when it refuses a command
// while busy.
const BusyRefusal = "A turn is running"

// Env is one case's machine: a home (the store) and a project.
type Env struct {
	Home, Project string
}

// NewEnv makes a case's home and project (a.txt in it) and changes to the
// project (the local workspace works on the current directory).
func NewEnv(t *testing.T) Env {
	t.Helper()
	e := Env{Home: t.TempDir(), Project: t.TempDir()}
	if err := os.WriteFile(filepath.Join(e.Project, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(e.Project)
	return e
}

// App opens an app on the env's store with the scripted model script (a
// JSON array, DESIGN §11) and the local workspace unless o.Workspace says
// docker; o sets the rest.
func (e Env) App(t *testing.T, script string, o app.Options) *app.App {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if o.Workspace == "" {
		o.Workspace = "local"
	}
	o.DB, o.FakeModel = filepath.Join(e.Home, "h.db"), path
	env := app.Env{"HOME": e.Home, "XDG_DATA_HOME": filepath.Join(e.Home, "data"), "XDG_CONFIG_HOME": filepath.Join(e.Home, "config")}
	a, err := app.New(t.Context(), o, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// Gate is a store whose first append of one event type waits until the
// case opens it: Reached is closed when that append arrives.
type Gate struct {
	store.Store
	typ     event.Type
	Reached chan struct{}
	open    chan struct{}
	once    sync.Once
	opened  sync.Once
}

// NewGate holds a's first append of typ (a's store is replaced).
func NewGate(t *testing.T, a *app.App, typ event.Type) *Gate {
	g := &Gate{Store: a.Store, typ: typ, Reached: make(chan struct{}), open: make(chan struct{})}
	a.Store = g
	t.Cleanup(g.Open) // a failed case does not leave the turn held
	return g
}

// Open lets the held append (and every later one) through.
func (g *Gate) Open() { g.opened.Do(func() { close(g.open) }) }

func (g *Gate) Append(ctx context.Context, id string, who store.Owner, ev store.EventIn) (store.Record, error) {
	if ev.Type == string(g.typ) {
		first := false
		g.once.Do(func() { first = true })
		if first {
			close(g.Reached)
			<-g.open
		}
	}
	return g.Store.Append(ctx, id, who, ev)
}

// NeedDocker skips the case (or fails it, with HARNESS_REQUIRE_DOCKER=1)
// when no Docker daemon answers or the image is missing.
func NeedDocker(t *testing.T) {
	t.Helper()
	if err := dockerws.Ping(t.Context(), ""); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "no Docker daemon answers: "+err.Error())
	}
	if err := exec.CommandContext(t.Context(), "docker", "image", "inspect", DockerImage).Run(); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "no image "+DockerImage+" (make sandbox-image)")
	}
}

// DockerImage is the image of the cases that need writes.
const DockerImage = "harness-busybox"

// Await waits for c, failing the case after Bound.
func Await(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(Bound):
		t.Fatalf("%s: not within %s", what, Bound)
	}
}

// Shows waits until d has shown an event for which ok holds (nil: any of
// type T), and returns it.
func Shows[T event.Data](t *testing.T, d Driver, what string, ok func(T) bool) T {
	t.Helper()
	var found T
	Until(t, d.Grew(), what, func() bool {
		for _, e := range d.Shown() {
			if v, is := e.Data.(T); is && (ok == nil || ok(v)) {
				found = v
				return true
			}
		}
		return false
	}, func() string { return "shown: " + types(d.Shown()) })
	return found
}

// Until waits until cond holds, checking it again each time grew is
// signaled; after Bound it fails the case with what and say().
func Until(t *testing.T, grew <-chan struct{}, what string, cond func() bool, say func() string) {
	t.Helper()
	deadline := time.After(Bound)
	for !cond() {
		select {
		case <-grew:
		case <-deadline:
			t.Fatalf("%s: not within %s; %s", what, Bound, say())
		}
	}
}

func types(evs []event.Event) string {
	b, _ := json.Marshal(slices.Collect(func(yield func(string) bool) {
		for _, e := range evs {
			if !yield(string(e.Type)) {
				return
			}
		}
	}))
	return string(b)
}

// Of returns the data of the events of type T in evs.
func Of[T event.Data](evs []event.Event) []T {
	var out []T
	for _, e := range evs {
		if d, ok := e.Data.(T); ok {
			out = append(out, d)
		}
	}
	return out
}

// Log reads session id's stored log.
func Log(t *testing.T, r store.Reader, id string) []event.Event {
	t.Helper()
	var out []event.Event
	err := store.Each(t.Context(), r, id, -1, func(rec store.Record) error {
		ev, err := event.Decode(rec.Body)
		out = append(out, ev)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// userInputs are the user messages the log holds, in order.
func userInputs(evs []event.Event) []string {
	var out []string
	for _, d := range Of[event.MessageCompleted](evs) {
		if d.Role == "user" {
			out = append(out, d.Content)
		}
	}
	return out
}

// Refuse is a store that refuses every append of one event type with an
// error of its code, as a full disk does: the append fails, nothing is
// written.
type Refuse struct {
	store.Store
	typ event.Type
	err error
}

// NewRefuse refuses a's appends of typ with err (a's store is replaced).
func NewRefuse(a *app.App, typ event.Type, err error) *Refuse {
	r := &Refuse{Store: a.Store, typ: typ, err: err}
	a.Store = r
	return r
}

func (r *Refuse) Append(ctx context.Context, id string, who store.Owner, ev store.EventIn) (store.Record, error) {
	if ev.Type == string(r.typ) {
		return store.Record{}, r.err
	}
	return r.Store.Append(ctx, id, who, ev)
}

// Container is the ID of session id's running Docker container.
func Container(t *testing.T, id string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "docker", "ps", "-q", "--filter", "label="+dockerws.LabelSession+"="+id).Output()
	ids := strings.Fields(string(out))
	if err != nil || len(ids) != 1 {
		t.Fatalf("session %s's running containers: %q, %v", id, ids, err)
	}
	return ids[0]
}
