package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
	"github.com/harness-dev/harness/model/fake"
	"github.com/harness-dev/harness/model/openai"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/sqlite"
	"github.com/harness-dev/harness/tools"
	"github.com/harness-dev/harness/workspace"
)

// Defaults when neither flags, environment nor the config file say.
const (
	defaultImage         = "harness-sandbox"
	defaultContextWindow = 128000
	defaultCompactAt     = 80
	defaultModelTimeout  = 5 * time.Minute
	demoModelName        = "demo"
)

// app is the wiring of one harness process: store → workspace → tools →
// model → runtime. End-to-end tests build it too. It holds no logic of its
// own beyond choosing and connecting the pieces.
type app struct {
	opts   options
	env    env
	stdout io.Writer
	stderr io.Writer
	root   string // the project directory

	store store.Store
	owner store.Owner

	ws      workspace.Workspace
	wsNote  string // why the workspace is read-only, when it is
	model   model.Model
	modelID string
	demo    bool // no provider configured: the built-in demo model
	rt      *runtime.Runtime

	settings          runtime.Settings
	resolvedImage     string
	resolvedWorkspace string
	closers           []func()
	printedSeq        int64 // exec: the last event printed
}

// resolved configuration: flags > environment > config file > defaults.
type resolved struct {
	db, model, baseURL, apiKey, image, workspace string
	window, compactAt, compactTail               int
	budget                                       int64
}

func resolve(o options, e env) (resolved, error) {
	var r resolved
	cfgPath := o.Config
	if cfgPath == "" {
		cfgPath = defaultConfigPath(e)
	}
	fc, err := openai.LoadConfigFile(cfgPath)
	if err != nil {
		return r, err
	}
	first := func(vals ...string) string {
		for _, v := range vals {
			if v != "" {
				return v
			}
		}
		return ""
	}
	r.db = first(o.DB, e["HARNESS_DB"], defaultDBPath(e))
	r.model = first(o.Model, e["HARNESS_MODEL"], fc.Model)
	r.baseURL = first(o.BaseURL, e["OPENAI_BASE_URL"], fc.BaseURL)
	keyEnv := first(fc.APIKeyEnv, "OPENAI_API_KEY")
	r.apiKey = e[keyEnv]
	r.image = first(o.Image, e["HARNESS_IMAGE"], fc.Image, defaultImage)
	r.workspace = o.Workspace
	r.window = defaultContextWindow
	if fc.ContextWindow > 0 {
		r.window = fc.ContextWindow
	}
	if o.ContextWindow > 0 {
		r.window = o.ContextWindow
	}
	r.compactAt = defaultCompactAt
	if o.CompactAt != 0 {
		r.compactAt = o.CompactAt
	}
	r.compactTail = 12
	if o.CompactTail > 0 {
		r.compactTail = o.CompactTail
	}
	r.budget = int64(fc.BudgetTokens)
	if o.BudgetTokens > 0 {
		r.budget = o.BudgetTokens
	}
	switch r.workspace {
	case "", "docker", "local":
	default:
		return r, usageErr("--workspace must be docker or local, not %q", r.workspace)
	}
	switch o.Approve {
	case "", "auto", "ask":
	default:
		return r, usageErr("--approve must be auto or ask, not %q", o.Approve)
	}
	return r, nil
}

// usageError marks a bad command line (exit 2).
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usageErr(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// openStore opens the SQLite file or, for a postgres:// URL, Postgres.
func openStore(ctx context.Context, dsn string) (store.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return openPostgres(ctx, dsn)
	}
	if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
		return nil, errcode.Wrap(errcode.SessInvalidRecord, "create the store directory", err)
	}
	st, err := sqlite.Open(dsn, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	return st, nil
}

func newApp(ctx context.Context, o options, e env, stdout, stderr io.Writer) (*app, error) {
	r, err := resolve(o, e)
	if err != nil {
		return nil, err
	}
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	a := &app{opts: o, env: e, stdout: stdout, stderr: stderr, root: root, printedSeq: -1}
	st, err := openStore(ctx, r.db)
	if err != nil {
		return nil, err
	}
	a.store = st
	a.closers = append(a.closers, func() { st.Close() })
	host, _ := os.Hostname()
	a.owner = store.Owner{ID: "proc-" + fmt.Sprint(os.Getpid()) + "-" + fmt.Sprint(time.Now().UnixNano()), Host: host, PID: os.Getpid()}

	if err := a.openModel(r); err != nil {
		a.Close()
		return nil, err
	}
	policy, err := compaction.PolicyFor(r.window, r.compactAt, r.compactTail, min(8192, r.window/8))
	if err != nil {
		a.Close()
		return nil, usageErr("context settings: %s", errcode.Message(err))
	}
	a.settings = runtime.Settings{
		Model:          a.modelID,
		System:         openai.DefaultSystemPrompt,
		ModelTimeoutMs: defaultModelTimeout.Milliseconds(),
		Tools:          tools.ModelSpecs(),
		Budget:         runtime.Budget{MaxModelTokens: r.budget},
		Context:        policy,
	}
	a.resolvedImage = r.image
	a.resolvedWorkspace = r.workspace
	return a, nil
}

func (a *app) openModel(r resolved) error {
	switch {
	case a.opts.FakeModel != "":
		m, err := fake.Load(a.opts.FakeModel)
		if err != nil {
			return err
		}
		a.model, a.modelID = m, "fake:"+filepath.Base(a.opts.FakeModel)
	case r.model != "" || r.baseURL != "" || r.apiKey != "":
		if r.model == "" {
			return usageErr("a provider is configured but no model: pass --model or set HARNESS_MODEL")
		}
		base := r.baseURL
		if base == "" {
			base = openai.DefaultBaseURL
		}
		m, err := openai.New(openai.Config{BaseURL: base, APIKey: r.apiKey, Model: r.model})
		if err != nil {
			return err
		}
		a.model, a.modelID = m, r.model
	default:
		a.model, a.modelID, a.demo = fake.NewDemo(), demoModelName, true
	}
	return nil
}

// openWorkspace opens the Docker workspace, or the read-only local one when
// asked, or when Docker is not available and the user did not insist.
func (a *app) openWorkspace(ctx context.Context, sessionID string) error {
	if a.resolvedWorkspace != "local" {
		err := dockerws.Ping(ctx, "")
		if err == nil {
			ws, err := dockerws.Start(ctx, dockerws.Options{Root: a.root, Image: a.resolvedImage, SessionID: sessionID, Exclude: a.opts.Exclude,
				MaxFiles: a.opts.MaxFiles, MaxFileBytes: a.opts.MaxFileBytes, MaxTotalBytes: a.opts.MaxTotalBytes})
			if err != nil {
				return err
			}
			a.ws = ws
			a.closers = append(a.closers, func() {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				ws.Close(cctx)
			})
			return nil
		}
		if a.resolvedWorkspace == "docker" {
			return err
		}
		a.wsNote = "Docker is not available (" + errcode.Message(err) + "): this session is read-only; run scripts/docker.sh to start a daemon"
	} else {
		a.wsNote = "--workspace local: this session is read-only (writes and commands need the Docker workspace)"
	}
	ws, err := workspace.OpenLocal(a.root)
	if err != nil {
		return err
	}
	a.ws = ws
	a.closers = append(a.closers, func() { ws.Close(context.WithoutCancel(ctx)) })
	return nil
}

func (a *app) newRuntime(resolver runtime.Resolver) error {
	policy := runtime.Policy(runtime.AllowAll)
	if a.opts.Approve == "ask" {
		policy = runtime.AskForMutations
	}
	rt, err := runtime.New(runtime.Config{Model: a.model, Workspace: a.ws, Policy: policy, Resolver: resolver})
	if err != nil {
		return err
	}
	a.rt = rt
	return nil
}

// Close releases everything in reverse order of opening.
func (a *app) Close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}
