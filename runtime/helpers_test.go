package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/model/fake"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/memstore"
	"github.com/harness-dev/harness/tools"
)

// gatedModel signals each request on started and waits for a value on
// release before answering through the scripted model. Only the model is a
// test double; everything else is real.
type gatedModel struct {
	inner   model.Model
	started chan int
	release chan struct{}
	mu      sync.Mutex
	n       int
	gate    map[int]bool // which requests (1-based) are gated
}

func (g *gatedModel) Name() string { return g.inner.Name() }

func (g *gatedModel) Stream(ctx context.Context, req model.Request) (model.Stream, error) {
	g.mu.Lock()
	g.n++
	n := g.n
	g.mu.Unlock()
	if g.gate[n] {
		g.started <- n
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, errcode.New(errcode.ModelAborted, "aborted")
		}
	}
	return g.inner.Stream(ctx, req)
}

// gatedWorkspace blocks ReadFile until released, to hold a turn in its
// tool phase. It wraps the real local workspace.
type gatedWorkspace struct {
	workspace.Workspace
	started chan string
	release chan struct{}
}

func (g *gatedWorkspace) ReadFile(ctx context.Context, p string) ([]byte, error) {
	g.started <- p
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Workspace.ReadFile(ctx, p)
}

type fixture struct {
	t     testing.TB
	st    *memstore.Store
	log   *store.SessionLog
	rt    *runtime.Runtime
	sess  *runtime.Session
	model *fake.Model
	root  string
}

func script(t testing.TB, js string) *fake.Model {
	t.Helper()
	m, err := fake.Parse([]byte(js))
	if err != nil {
		t.Fatalf("parse script: %v", err)
	}
	return m
}

// newFixture builds a runtime over a real in-memory store, a real local
// workspace on a temp dir, and the given model (wrapped or not).
func newFixture(t testing.TB, m model.Model, fm *fake.Model, cfg func(*runtime.SessionConfig, *checkpoint.Settings)) *fixture {
	t.Helper()
	root := t.TempDir()
	for name, body := range map[string]string{"README.md": "# demo\n", "main.go": "package main\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.OpenLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureWS(t, m, fm, ws, root, cfg)
}

// memLog is a new in-memory store holding session id, held by owner, and
// that session's log.
func memLog(t testing.TB, id, owner string) (*memstore.Store, *store.SessionLog) {
	t.Helper()
	ctx := t.Context()
	st := memstore.New(memstore.Options{})
	if _, err := st.CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
		t.Fatal(err)
	}
	who, err := st.Acquire(ctx, id, store.Owner{ID: owner}, store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	log, err := store.NewSessionLog(ctx, st, id, who)
	if err != nil {
		t.Fatal(err)
	}
	return st, log
}

func newFixtureWS(t testing.TB, m model.Model, fm *fake.Model, ws workspace.Workspace, root string, cfg func(*runtime.SessionConfig, *checkpoint.Settings)) *fixture {
	t.Helper()
	ctx := t.Context()
	st, log := memLog(t, event.NewID("sess"), "test-owner")
	c := runtime.SessionConfig{Model: m, Workspace: ws}
	settings := checkpoint.Settings{Model: "fake", System: "you are a test", Tools: tools.ModelSpecs()}
	if cfg != nil {
		cfg(&c, &settings)
	}
	rt := runtime.New(runtime.Config{})
	sess, err := rt.OpenSession(ctx, log, c, settings)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, st: st, log: log, rt: rt, sess: sess, model: fm, root: root}
}

func (f *fixture) start(input string) string {
	f.t.Helper()
	id, err := f.sess.Start(f.t.Context(), runtime.StartRequest{Input: input})
	if err != nil {
		f.t.Fatalf("start: %v", err)
	}
	return id
}

func (f *fixture) wait(runID string) runtime.Outcome {
	f.t.Helper()
	out, err := f.rt.Wait(f.t.Context(), runID)
	if err != nil {
		f.t.Fatalf("wait: %v", err)
	}
	return out
}

// events returns every stored event of the session, decoded.
func (f *fixture) events() []event.Event {
	f.t.Helper()
	recs, err := f.st.ReadEvents(f.t.Context(), f.sess.ID(), -1, store.MaxPage)
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([]event.Event, len(recs))
	for i, r := range recs {
		ev, err := event.Decode(r.Body)
		if err != nil {
			f.t.Fatalf("stored event %d does not decode: %v", i, err)
		}
		out[i] = ev
	}
	return out
}

func (f *fixture) rawEvents() [][]byte {
	f.t.Helper()
	recs, err := f.st.ReadEvents(f.t.Context(), f.sess.ID(), -1, store.MaxPage)
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([][]byte, len(recs))
	for i, r := range recs {
		out[i] = r.Body
	}
	return out
}

func types(evs []event.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Type)
	}
	return out
}

func count(evs []event.Event, ty event.Type) int {
	n := 0
	for _, e := range evs {
		if e.Type == ty {
			n++
		}
	}
	return n
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

func mustCode(t *testing.T, err error, want errcode.Code) {
	t.Helper()
	if got := errcode.Of(err); got != want {
		t.Fatalf("code = %s, want %s (err: %v)", got, want, err)
	}
}

// waitEvent drains sub until an event of type T arrives and returns it.
func waitEvent[T event.Data](t testing.TB, sub *runtime.Subscription) T {
	t.Helper()
	for {
		select {
		case <-sub.Ready():
		case <-t.Context().Done():
			t.Fatal("no event before the test ended")
		}
		for _, p := range sub.Drain() {
			if d, ok := p.Event.Data.(T); ok {
				return d
			}
		}
	}
}
