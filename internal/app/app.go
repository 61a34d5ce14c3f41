package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// App is one harness process's wiring: the resolved configuration, the
// store and the runtime. Every session opened through it runs in that one
// runtime, with the model and the workspace it builds for the session;
// commands that only read the store never build a model. End-to-end tests
// build it too. Nothing in it changes after New.
type App struct {
	Opts Options
	Conf Resolved
	Root string // the current directory
	Warn io.Writer

	Store store.Store
	owner store.Owner
	rt    *runtime.Runtime // the process's: every open session is registered in it

	closers []func()
}

// New resolves the configuration, opens the store and builds the
// runtime. Warnings (a changed project tree, a lost lease) go to warn.
func New(ctx context.Context, o Options, e Env, warn io.Writer) (*App, error) {
	r, err := Resolve(o, e)
	if err != nil {
		return nil, err
	}
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	st, err := OpenStore(ctx, r.DB, r.HostID)
	if err != nil {
		return nil, err
	}
	a := &App{Opts: o, Conf: r, Root: root, Warn: warn, Store: st, owner: NewOwner(r.HostID), rt: runtime.New(runtime.Config{})}
	a.closers = append(a.closers, func() { _ = st.Close() })
	return a, nil
}

// NewOwner is this process, on the machine named host (Resolved.HostID),
// as a session's lease holder.
func NewOwner(host string) store.Owner {
	return store.Owner{ID: "proc-" + fmt.Sprint(os.Getpid()) + "-" + fmt.Sprint(time.Now().UnixNano()), Host: host, PID: os.Getpid()}
}

// HostRoot is the host directory a session works on, decided here once:
// the directory it was started in, recorded in its metadata ("root") when
// it started, so that a session resumed, diffed, recovered or applied
// from another directory still works on its own project and never on
// whatever directory the command runs in; with no record (a session being
// created, whose metadata is nil, or one stored before the record) it is
// this process's directory. A recorded directory that is gone stays the
// answer: resuming it is SESS_PROJECT_MISSING, and applying to it fails
// there, rather than on the wrong tree.
func (a *App) HostRoot(md map[string]string) string {
	if r := md[metaRoot]; r != "" {
		return r
	}
	return a.Root
}

// SecretEnv names the environment variables, beyond those
// workspace.HostEnv drops by their names, that host processes (git) must
// not inherit: the one the API key is configured in.
func (a *App) SecretEnv() []string { return []string{a.Conf.KeyEnv} }

// Close releases everything in reverse order of opening.
func (a *App) Close() {
	runClosers(a.closers)
	a.closers = nil
}

func runClosers(cs []func()) {
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}
