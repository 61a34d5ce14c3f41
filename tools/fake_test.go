package tools_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/harness-dev/harness/internal/workspace"
)

// recorder is a hand-written workspace that records every call it gets and
// answers through optional hooks. Tests use it to prove which workspace
// methods Execute called, and above all which it never called.
type recorder struct {
	read  func(ctx context.Context, path string) ([]byte, error)
	list  func(ctx context.Context, path string) ([]string, error)
	write func(ctx context.Context, path string, data []byte) error
	exec  func(ctx context.Context, req workspace.ExecRequest) (workspace.ExecResult, error)
	diff  func(ctx context.Context) (string, error)

	mu    sync.Mutex
	calls []string // guarded by mu
}

var _ workspace.Workspace = (*recorder)(nil)

func (r *recorder) record(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
}

// Calls returns what the workspace was asked to do, in order.
func (r *recorder) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func (r *recorder) Info() workspace.Info {
	return workspace.Info{ID: "docker-fake", Backend: workspace.BackendDocker}
}

func (r *recorder) ReadFile(ctx context.Context, path string) ([]byte, error) {
	r.record("ReadFile %s", path)
	if r.read == nil {
		return nil, nil
	}
	return r.read(ctx, path)
}

func (r *recorder) List(ctx context.Context, path string) ([]string, error) {
	r.record("List %s", path)
	if r.list == nil {
		return nil, nil
	}
	return r.list(ctx, path)
}

func (r *recorder) WriteFile(ctx context.Context, path string, data []byte) error {
	r.record("WriteFile %s %q", path, data)
	if r.write == nil {
		return nil
	}
	return r.write(ctx, path, data)
}

func (r *recorder) Exec(ctx context.Context, req workspace.ExecRequest) (workspace.ExecResult, error) {
	r.record("Exec %q cwd=%q timeout=%s max=%d", req.Argv, req.Cwd, req.Timeout, req.MaxOutput)
	if r.exec == nil {
		return workspace.ExecResult{}, nil
	}
	return r.exec(ctx, req)
}

func (r *recorder) Diff(ctx context.Context) (string, error) {
	r.record("Diff")
	if r.diff == nil {
		return "", nil
	}
	return r.diff(ctx)
}

func (r *recorder) Close(context.Context) error {
	r.record("Close")
	return nil
}

// forwarder wraps a workspace and forwards every method to it: exactly what
// a logging or metrics decorator would look like.
type forwarder struct{ inner workspace.Workspace }

func (f *forwarder) Info() workspace.Info { return f.inner.Info() }
func (f *forwarder) ReadFile(ctx context.Context, p string) ([]byte, error) {
	return f.inner.ReadFile(ctx, p)
}
func (f *forwarder) List(ctx context.Context, p string) ([]string, error) {
	return f.inner.List(ctx, p)
}
func (f *forwarder) WriteFile(ctx context.Context, p string, b []byte) error {
	return f.inner.WriteFile(ctx, p, b)
}
func (f *forwarder) Exec(ctx context.Context, req workspace.ExecRequest) (workspace.ExecResult, error) {
	return f.inner.Exec(ctx, req)
}
func (f *forwarder) Diff(ctx context.Context) (string, error) { return f.inner.Diff(ctx) }
func (f *forwarder) Close(ctx context.Context) error          { return f.inner.Close(ctx) }

// embedder gets every method of a registered workspace by embedding it.
type embedder struct{ *recorder }

// embedderValue embeds the interface instead of the pointer.
type embedderValue struct{ workspace.Workspace }

// Workspace imitates dockerws's type: same name, same methods, its own
// value. It also holds a map, so it cannot be a map key: Attested must
// refuse it rather than panic.
type Workspace struct {
	*recorder
	labels map[string]string
}
