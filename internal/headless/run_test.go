package headless_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/headless"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// These tests drive headless.Run in this process, with the race detector
// watching its goroutines: a real app (SQLite, the read-only local
// workspace) whose model is an OpenAI-compatible server on loopback that
// answers each request only when the test lets it, so the interleavings
// the tests are about happen in a known order.

// gatedChat is that server: request n waits for a value on release, then
// streams streams[n]; arrived receives n when request n comes in.
type gatedChat struct {
	streams []string
	release chan struct{}
	arrived chan int

	mu     sync.Mutex
	bodies []string // guarded by mu
}

func newGatedChat(t *testing.T, streams ...string) (*gatedChat, string) {
	c := &gatedChat{streams: streams, release: make(chan struct{}), arrived: make(chan int, len(streams)+1)}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return c, srv.URL + "/v1"
}

func (c *gatedChat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		http.NotFound(w, r) // GET /models: no context window stated
		return
	}
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, string(body))
	n := len(c.bodies) - 1
	c.mu.Unlock()
	c.arrived <- n
	select {
	case <-c.release:
	case <-r.Context().Done():
		return
	}
	if n >= len(c.streams) {
		http.Error(w, `{"error":{"message":"no more answers"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, c.streams[n])
}

func (c *gatedChat) body(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bodies[n]
}

// answer lets the next request through once it has arrived, and returns
// its number.
func (c *gatedChat) answer(t *testing.T) int {
	t.Helper()
	select {
	case n := <-c.arrived:
		c.release <- struct{}{}
		return n
	case <-time.After(30 * time.Second):
		t.Fatal("no model request arrived")
		return -1
	}
}

func (c *gatedChat) await(t *testing.T) int {
	t.Helper()
	select {
	case n := <-c.arrived:
		return n
	case <-time.After(30 * time.Second):
		t.Fatal("no model request arrived")
		return -1
	}
}

func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func textAnswer(text string) string {
	return sse(fmt.Sprintf(`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, text),
		`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
}

// readAnswer is a tool call of fs.read on path (sent under its wire alias).
func readAnswer(id, path string) string {
	args, _ := json.Marshal(map[string]string{"path": path})
	return sse(fmt.Sprintf(`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":"harness_66732e72656164","arguments":%q}}]},"finish_reason":"tool_calls"}]}`, id, string(args)),
		`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
}

// watched is stdout as Run writes it: the test waits for lines in it.
type watched struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	grew chan struct{}
}

func newWatched() *watched { return &watched{grew: make(chan struct{}, 1)} }

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	select {
	case w.grew <- struct{}{}:
	default:
	}
	return n, err
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor blocks until the output holds s.
func (w *watched) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(w.String(), s) {
		select {
		case <-w.grew:
		case <-deadline:
			t.Fatalf("no %q in the output in 30 s:\n%s", s, w.String())
		}
	}
}

func (w *watched) events(t *testing.T) []event.Event {
	t.Helper()
	var out []event.Event
	for _, line := range strings.Split(strings.TrimSpace(w.String()), "\n") {
		ev, err := event.Decode([]byte(line))
		if err != nil {
			t.Fatalf("output line does not decode: %v\n%s", err, line)
		}
		out = append(out, ev)
	}
	return out
}

// gate is a store whose first append of one event type waits until the
// test opens it; reached is closed when that append arrives.
type gate struct {
	store.Store
	typ     string
	reached chan struct{}
	open    chan struct{}
	once    sync.Once
}

func (g *gate) Append(ctx context.Context, id string, who store.Owner, ev store.EventIn) (store.Record, error) {
	if ev.Type == g.typ {
		first := false
		g.once.Do(func() { first = true })
		if first {
			close(g.reached)
			<-g.open
		}
	}
	return g.Store.Append(ctx, id, who, ev)
}

// diffCounter counts the diffs of the workspace the front end holds.
type diffCounter struct {
	workspace.Workspace
	mu    sync.Mutex
	diffs int // guarded by mu
}

func (d *diffCounter) Diff(ctx context.Context) (string, error) {
	d.mu.Lock()
	d.diffs++
	d.mu.Unlock()
	return d.Workspace.Diff(ctx)
}

// newApp is an app on a SQLite file under a temp home, the local workspace
// on a project holding a.txt, and the model at baseURL.
func newApp(t *testing.T, baseURL string) *app.App {
	t.Helper()
	home, project := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(project)
	e := app.Env{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	a, err := app.New(t.Context(), app.Options{DB: filepath.Join(home, "h.db"), Workspace: "local", Model: "m", BaseURL: baseURL}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

type ran struct {
	out runtime.Outcome
	ok  bool
}

// start runs prompt through headless.Run on sess in the background, JSON
// on out, stdin from the returned writer.
func start(t *testing.T, sess *app.Session, prompt string, out *watched) (io.WriteCloser, <-chan ran) {
	t.Helper()
	in, stdin := io.Pipe()
	done := make(chan ran, 1)
	go func() {
		o, ok := headless.Run(t.Context(), sess, -1, prompt, headless.Options{
			JSON: true, Stdin: in, Stdout: out, Stderr: io.Discard,
			Fail: func(err error) { t.Errorf("run failed: %v", err) },
		})
		done <- ran{o, ok}
	}()
	t.Cleanup(func() { stdin.Close() })
	return stdin, done
}

func finished(t *testing.T, done <-chan ran) ran {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
		return ran{}
	}
}

func ofType[T event.Data](evs []event.Event) []T {
	var out []T
	for _, e := range evs {
		if d, ok := e.Data.(T); ok {
			out = append(out, d)
		}
	}
	return out
}

// A ">>" line while a turn runs queues the next turn, which the session
// starts once the running one completes, and Run returns after both. The
// end of the run does not diff the workspace again (the last turn's diff
// is read back).
func TestQueuedTurnStartsAfterCompletion(t *testing.T) {
	chat, url := newGatedChat(t, textAnswer("first done"), textAnswer("second done"))
	a := newApp(t, url)
	sess, err := a.Open(t.Context(), app.OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	counted := &diffCounter{Workspace: sess.Workspace}
	sess.Workspace = counted
	out := newWatched()
	stdin, done := start(t, sess, "first", out)

	chat.await(t) // the first turn's request is in flight
	if _, err := io.WriteString(stdin, ">> then this\n"); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, `"type":"input.queued"`)
	chat.release <- struct{}{}
	if n := chat.answer(t); !strings.Contains(chat.body(n), "then this") {
		t.Errorf("the queued turn's request lacks its input:\n%s", chat.body(n))
	}
	r := finished(t, done)
	if !r.ok || r.out.Status != runtime.StatusCompleted {
		t.Fatalf("Run = %+v", r)
	}
	evs := out.events(t)
	ends := ofType[event.TurnCompleted](evs)
	starts := ofType[event.TurnStarted](evs)
	if len(ends) != 2 || len(starts) != 2 || ends[0].Status != event.StatusCompleted || ends[1].Status != event.StatusCompleted {
		t.Fatalf("turns: started %+v, completed %+v", starts, ends)
	}
	order := []string{}
	for _, e := range evs {
		switch d := e.Data.(type) {
		case event.TurnStarted:
			order = append(order, "start "+d.TurnID)
		case event.TurnCompleted:
			order = append(order, "end "+d.TurnID)
		}
	}
	if want := []string{"start " + starts[0].TurnID, "end " + starts[0].TurnID, "start " + starts[1].TurnID, "end " + starts[1].TurnID}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("turn order %v, want %v", order, want)
	}
	if counted.diffs != 0 {
		t.Errorf("the end of the run diffed the workspace %d times again", counted.diffs)
	}
}

// Text typed while the turn is being admitted (its turn.started not yet
// stored) steers that turn: it is recorded, applied at the next model
// request and the session runs one turn.
func TestTextTypedWhileTheTurnIsAdmitted(t *testing.T) {
	chat, url := newGatedChat(t, readAnswer("c1", "a.txt"), textAnswer("done"))
	a := newApp(t, url)
	g := &gate{Store: a.Store, typ: string(event.TypeTurnStarted), reached: make(chan struct{}), open: make(chan struct{})}
	a.Store = g
	sess, err := a.Open(t.Context(), app.OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := newWatched()
	stdin, done := start(t, sess, "read a.txt", out)

	<-g.reached // admission is under way
	if _, err := io.WriteString(stdin, "and be quick\n"); err != nil {
		t.Fatal(err)
	}
	close(g.open)
	chat.await(t)
	out.waitFor(t, `"type":"steering.queued"`)
	chat.release <- struct{}{}
	if n := chat.answer(t); !strings.Contains(chat.body(n), "and be quick") {
		t.Errorf("the request after the steering lacks it:\n%s", chat.body(n))
	}
	r := finished(t, done)
	if !r.ok || r.out.Status != runtime.StatusCompleted {
		t.Fatalf("Run = %+v", r)
	}
	evs := out.events(t)
	if n := len(ofType[event.TurnCompleted](evs)); n != 1 {
		t.Errorf("%d turns, want the one the text steered", n)
	}
	if applied := ofType[event.SteeringApplied](evs); len(applied) != 1 || len(applied[0].MessageIDs) != 1 {
		t.Errorf("steering applied: %+v", applied)
	}
}
