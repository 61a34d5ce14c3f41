package runtime_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// gatedLog holds appends of one event type until released; it delegates to
// the real session log.
type gatedLog struct {
	*store.SessionLog
	block   event.Type
	entered chan struct{}
	release chan struct{}
}

func (g *gatedLog) Append(ctx context.Context, e event.Event) (store.Record, error) {
	if e.Type == g.block {
		close(g.entered)
		<-g.release
	}
	return g.SessionLog.Append(ctx, e)
}

// swapLog reopens the fixture's session on another log over the same store.
func (f *fixture) swapLog(l runtime.EventLog, m model.Model, edit ...func(*runtime.SessionConfig)) {
	f.t.Helper()
	c := runtime.SessionConfig{Model: m, Workspace: mustLocal(f.t, f.root)}
	for _, e := range edit {
		e(&c)
	}
	rt := runtime.New(runtime.Config{})
	sess, err := rt.OpenSession(f.t.Context(), l, c, f.sess.Settings())
	if err != nil {
		f.t.Fatal(err)
	}
	f.rt, f.sess = rt, sess
}

func mustLocal(t testing.TB, root string) workspace.Workspace {
	t.Helper()
	ws, err := workspace.OpenLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func writeFile(t testing.TB, root, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func assertNoFile(t *testing.T, root, name string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, name)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists or cannot be checked: %v", name, err)
	}
}
