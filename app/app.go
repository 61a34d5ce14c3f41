package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
	"github.com/harness-dev/harness/model/fake"
	"github.com/harness-dev/harness/model/openai"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/tools"
)

// App is one harness process's wiring: the store, the model and the
// settings new sessions start with. End-to-end tests build it too.
type App struct {
	Opts Options
	Conf Resolved
	Root string // the project directory: where the process runs
	Warn io.Writer

	Store store.Store
	owner store.Owner

	Model    model.Model
	ModelID  string
	Demo     bool // no provider configured: the built-in demo model
	Settings runtime.Settings

	closers []func()
}

// New resolves the configuration, opens the store and builds the model.
// Warnings (a changed project tree, a failed lease renewal) go to warn.
func New(ctx context.Context, o Options, e Env, warn io.Writer) (*App, error) {
	r, err := Resolve(o, e)
	if err != nil {
		return nil, err
	}
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	a := &App{Opts: o, Conf: r, Root: root, Warn: warn}
	st, err := OpenStore(ctx, r.DB, r.HostID)
	if err != nil {
		return nil, err
	}
	a.Store = st
	a.closers = append(a.closers, func() { _ = st.Close() })
	a.owner = NewOwner(r.HostID)

	if err := a.openModel(r); err != nil {
		a.Close()
		return nil, err
	}
	if c, ok := a.Model.(*openai.Client); ok {
		r = WithServerWindow(r, ServerWindow(ctx, c, r.Model))
		a.Conf = r
	}
	policy, err := compaction.PolicyFor(r.Window, r.CompactAt, r.CompactTail, min(8192, r.Window/8))
	if err != nil {
		a.Close()
		return nil, usageErr("context settings: %s", errcode.Message(err))
	}
	a.Settings = runtime.Settings{
		Model:          a.ModelID,
		System:         openai.DefaultSystemPrompt,
		ModelTimeoutMs: defaultModelTimeout.Milliseconds(),
		Tools:          tools.ModelSpecs(),
		Budget:         runtime.Budget{MaxModelTokens: r.Budget},
		Context:        policy,
	}
	return a, nil
}

func (a *App) openModel(r Resolved) error {
	switch {
	case a.Opts.FakeModel != "":
		m, err := fake.Load(a.Opts.FakeModel)
		if err != nil {
			return err
		}
		a.Model, a.ModelID = m, "fake:"+filepath.Base(a.Opts.FakeModel)
	case r.Model != "" || r.BaseURL != "" || r.APIKey != "":
		if r.Model == "" {
			return usageErr("a provider is configured but no model: pass --model or set HARNESS_MODEL")
		}
		base := r.BaseURL
		if base == "" {
			base = openai.DefaultBaseURL
		}
		m, err := openai.New(openai.Config{BaseURL: base, APIKey: r.APIKey, Model: r.Model})
		if err != nil {
			return err
		}
		a.Model, a.ModelID = m, r.Model
	default:
		a.Model, a.ModelID, a.Demo = fake.NewDemo(), demoModelName, true
	}
	return nil
}

// NewOwner is this process, on the machine named host (Resolved.HostID),
// as a session's lease holder.
func NewOwner(host string) store.Owner {
	return store.Owner{ID: "proc-" + fmt.Sprint(os.Getpid()) + "-" + fmt.Sprint(time.Now().UnixNano()), Host: host, PID: os.Getpid()}
}

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
