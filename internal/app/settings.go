package app

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/model/fake"
	"github.com/harness-dev/harness/internal/model/openai"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/tools"
)

// Session metadata keys: what a session records of how it was started,
// beyond the settings its checkpoints carry.
const (
	metaRoot       = "root"       // the directory the session works in (where it was started)
	metaProject    = "project"    // ProjectRoot of root: the project it belongs to
	metaModel      = "model"      // the model's ID: a provider model, fake:FILE or demo
	metaBaseURL    = "baseUrl"    // the provider's base URL, when one was given
	metaApprove    = "approve"    // ask, or absent for auto
	metaForkedFrom = "forkedFrom" // the session a fork continues
)

// built is a model and the ID sessions record for it.
type built struct {
	model   model.Model
	id      string
	baseURL string
	demo    bool
}

// buildModel builds the model new sessions start with: a scripted one, a
// provider's (flags > environment > config file), else the demo.
func (a *App) buildModel() (built, error) {
	r := a.Conf
	switch {
	case a.Opts.FakeModel != "":
		return loadFake(a.Opts.FakeModel)
	case r.Model != "" || r.BaseURL != "" || r.APIKey != "":
		if r.Model == "" {
			return built{}, usageErr("a provider is configured but no model: pass --model or set HARNESS_MODEL")
		}
		return provider(r.Model, r.BaseURL, r.APIKey, r.KeyEnv, r.ProviderTimeout)
	default:
		return built{model: fake.NewDemo(), id: demoModelName, demo: true}, nil
	}
}

// rebuildModel builds the model of a resumed session: the one it recorded,
// unless --fake-model, --model or --base-url say otherwise. A recorded model
// that cannot be rebuilt is MODEL_INVALID_CONFIG naming what to pass.
func (a *App) rebuildModel(sessionID string, md map[string]string, o Options) (built, error) {
	saved, savedBase := md[metaModel], md[metaBaseURL]
	switch {
	case o.FakeModel != "":
		return loadFake(o.FakeModel)
	case o.Model != "" || o.BaseURL != "":
		name := o.Model
		if name == "" && saved != demoModelName && !strings.HasPrefix(saved, "fake:") {
			name = saved
		}
		if name == "" {
			return built{}, usageErr("--base-url on session %s, which ran on %s: pass --model too", sessionID, saved)
		}
		base := o.BaseURL
		if base == "" {
			base = savedBase // --model alone switches the model on the same provider
		}
		return provider(name, base, a.Conf.APIKey, a.Conf.KeyEnv, a.Conf.ProviderTimeout)
	}
	switch {
	case saved == "" || saved == demoModelName:
		return built{model: fake.NewDemo(), id: demoModelName, demo: true}, nil
	case strings.HasPrefix(saved, "fake:"):
		return built{}, errcode.Errorf(errcode.ModelInvalidConfig,
			"session %s ran on the scripted model %s: pass --fake-model with that file again (or --model NAME to switch models)", sessionID, strings.TrimPrefix(saved, "fake:"))
	}
	b, err := provider(saved, savedBase, a.Conf.APIKey, a.Conf.KeyEnv, a.Conf.ProviderTimeout)
	if err != nil {
		where := savedBase
		if where == "" {
			where = openai.DefaultBaseURL
		}
		return built{}, &errcode.Error{Code: errcode.Of(err), Err: err, Message: "rebuild the model " + saved + " at " + where + " that session " + sessionID + " ran on: " +
			errcode.Message(err) + " (or pass --model, --base-url or --fake-model to switch models)"}
	}
	return b, nil
}

func loadFake(file string) (built, error) {
	m, err := fake.Load(file)
	if err != nil {
		return built{}, err
	}
	return built{model: m, id: "fake:" + filepath.Base(file)}, nil
}

func provider(name, baseURL, key, keyEnv string, timeout time.Duration) (built, error) {
	base := baseURL
	if base == "" {
		base = openai.DefaultBaseURL
	}
	m, err := openai.New(openai.Config{BaseURL: base, APIKey: key, KeyEnv: keyEnv, Model: name, Timeout: timeout})
	if err != nil {
		return built{}, err
	}
	return built{model: m, id: name, baseURL: baseURL}, nil
}

// freshSettings are the settings of a session that has none recorded.
func freshSettings(r Resolved, modelID string) (checkpoint.Settings, error) {
	policy, err := compaction.PolicyFor(r.Window, r.CompactAt, r.CompactTail, reserveFor(r.Window, r.MaxTokens))
	if err != nil {
		return checkpoint.Settings{}, usageErr("context settings: %s", errcode.Message(err))
	}
	return checkpoint.Settings{
		Model:          modelID,
		System:         openai.DefaultSystemPrompt,
		MaxTokens:      r.MaxTokens,
		ModelTimeoutMs: defaultModelTimeout.Milliseconds(),
		Tools:          tools.ModelSpecs(),
		Budget:         checkpoint.Budget{MaxModelTokens: r.Budget},
		Context:        policy,
	}, nil
}

// reserveFor is the room kept in the window for one answer: --max-tokens
// when given, else min(8192, window/8).
func reserveFor(window, maxTokens int) int {
	if maxTokens > 0 {
		return maxTokens
	}
	return min(compaction.DefaultReserveCap, window/8)
}

// withInstructions appends the project's instruction files (AGENTS.md, else
// CLAUDE.md) to a new session's system text and records them, unless
// --no-project-instructions.
func (a *App) withInstructions(set checkpoint.Settings, root string) (checkpoint.Settings, error) {
	if a.Opts.NoProjectInstructions {
		return set, nil
	}
	in, err := ReadInstructions(ProjectRoot(root), root)
	if err != nil || in.Text == "" {
		return set, err
	}
	set.System += "\n\n" + in.Text
	set.Instructions = in.Files
	return set, nil
}

// override compares the flags given explicitly with what the session
// recorded (its settings, its metadata) and returns the change to record,
// or nil when nothing changed. Flags not given keep the recorded value.
func (a *App) override(saved checkpoint.Settings, md map[string]string, b built, o Options) (*event.SettingsChanged, error) {
	var changed []string
	if b.id != saved.Model {
		changed = append(changed, "model")
	}
	if b.baseURL != md[metaBaseURL] && (o.BaseURL != "" || o.Model != "" || o.FakeModel != "") {
		changed = append(changed, "baseUrl")
	}
	p := saved.Context
	window, pct, tail := p.WindowTokens, compaction.DefaultCompactAtPercent, p.TailMessages
	if window > 0 {
		pct = (p.ThresholdTokens*100 + window/2) / window
	} else {
		window, tail = a.Conf.Window, a.Conf.CompactTail
	}
	if tail < 1 {
		tail = DefaultCompactTail
	}
	n := len(changed)
	if o.ContextWindow > 0 && o.ContextWindow != p.WindowTokens {
		window = o.ContextWindow
		changed = append(changed, "contextWindow")
	}
	if o.CompactAt != 0 && o.CompactAt != pct {
		pct = o.CompactAt
		changed = append(changed, "compactAt")
	}
	if o.CompactTail > 0 && o.CompactTail != p.TailMessages {
		tail = o.CompactTail
		changed = append(changed, "compactTail")
	}
	maxTokens := saved.MaxTokens
	if o.MaxTokens > 0 && o.MaxTokens != saved.MaxTokens {
		maxTokens = o.MaxTokens
		changed = append(changed, "maxTokens")
	}
	policy := p
	if p.WindowTokens == 0 || len(changed) > n {
		var err error
		policy, err = compaction.PolicyFor(window, pct, tail, reserveFor(window, maxTokens))
		if err != nil {
			return nil, usageErr("context settings: %s", errcode.Message(err))
		}
	}
	budget := saved.Budget.MaxModelTokens
	if o.BudgetTokens > 0 && o.BudgetTokens != budget {
		budget = o.BudgetTokens
		changed = append(changed, "budgetTokens")
	}
	approve := md[metaApprove]
	if o.Approve != "" && o.Approve != approveOr(approve) {
		approve = o.Approve
		changed = append(changed, "approve")
	}
	if len(changed) == 0 {
		return nil, nil
	}
	return &event.SettingsChanged{
		Changed: changed, Model: b.id, BaseURL: b.baseURL,
		WindowTokens: policy.WindowTokens, ThresholdTokens: policy.ThresholdTokens,
		TailMessages: policy.TailMessages, ReserveTokens: policy.ReserveTokens,
		BudgetTokens: int(budget), MaxTokens: maxTokens, Approve: approveOr(approve),
	}, nil
}

// sessionFlags are the options that override a resumed or forked
// session's recorded settings: those typed on the command line, or none
// when the open says so (OpenRequest.IgnoreFlags: the session's own settings,
// a /model switch included, carry on). The scripted model stays (its
// sessions cannot switch models, and a resume needs its file), and so
// does --approve (asking is never dropped silently).
func (a *App) sessionFlags(ignore bool) Options {
	o := a.Opts
	if ignore {
		o.Model, o.BaseURL = "", ""
		o.ContextWindow, o.CompactAt, o.CompactTail, o.MaxTokens, o.BudgetTokens = 0, 0, 0, 0, 0
	}
	return o
}

func approveOr(v string) string {
	if v == "" {
		return "auto"
	}
	return v
}

// SwitchModel makes name the model of s's following requests, on the same
// provider: recorded as settings.changed (runtime.Session.SetSettings; a
// running turn takes it at its next model request) and in the session's
// metadata, so a resume rebuilds it. A name with spaces or control
// characters is RUNTIME_INVALID_INPUT; a session on the demo or a scripted
// model cannot switch (MODEL_INVALID_CONFIG: start harness with --model).
// A server that lists its models (GET /models) is held to its list: a
// name it does not serve is MODEL_INVALID_CONFIG naming the closest ones,
// and nothing changes. Of a server that lists none, the name is taken
// unchecked, and the note returned says so.
func (a *App) SwitchModel(ctx context.Context, s *Session, name string) (note string, err error) {
	if name == "" || len(name) > 200 || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", errcode.Errorf(errcode.RuntimeInvalidInput, "switch model: %q is not a model name", name)
	}
	set := s.Settings()
	if s.Demo || set.Model == demoModelName || strings.HasPrefix(set.Model, "fake:") || s.models == nil {
		return "", errcode.Errorf(errcode.ModelInvalidConfig,
			"switch model: session %s runs on %s, not a provider; start harness with --model (and --base-url) to use one", s.ID(), set.Model)
	}
	list, lerr := s.ServerModels(ctx)
	switch {
	case lerr != nil:
		note = "not checked: " + errcode.Message(lerr)
	case !slices.Contains(list, name):
		return "", errcode.Errorf(errcode.ModelInvalidConfig,
			"switch model: the server does not serve %q; the closest it lists: %s (/model lists them all); the model stays %s", name, strings.Join(closest(name, list, 5), ", "), set.Model)
	}
	if _, err := s.rt.SetSettings(ctx, runtime.SettingsChange{Model: &name}); err != nil {
		return "", err
	}
	return note, a.Store.SetMetadata(ctx, s.ID(), s.owner, map[string]string{metaModel: name})
}

// ServerModels is the list of models s's server serves (GET /models), in
// its order. MODEL_INVALID_CONFIG for a session on no provider (the demo,
// a scripted model) or a server that lists none; those of the request.
func (s *Session) ServerModels(ctx context.Context) ([]string, error) {
	if s.models == nil {
		return nil, errcode.New(errcode.ModelInvalidConfig, "this session runs on no provider: it has no model list")
	}
	infos, err := s.models.Models(ctx)
	if err != nil {
		return nil, &errcode.Error{Code: errcode.Of(err), Err: err, Message: "the server did not list its models (GET /models: " + errcode.Message(err) + ")"}
	}
	if len(infos) == 0 {
		return nil, errcode.New(errcode.ModelInvalidConfig, "the server lists no models (GET /models)")
	}
	out := make([]string, len(infos))
	for i, m := range infos {
		out[i] = m.ID
	}
	return out, nil
}

// closest are at most n of list nearest to name: those that hold it (or
// that it holds) first, then by edit distance, ignoring case.
func closest(name string, list []string, n int) []string {
	type cand struct {
		id   string
		dist int
	}
	low := strings.ToLower(name)
	cs := make([]cand, len(list))
	for i, id := range list {
		l := strings.ToLower(id)
		d := editDistance(low, l)
		if strings.Contains(l, low) || strings.Contains(low, l) {
			d -= 1000
		}
		cs[i] = cand{id, d}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.dist - b.dist })
	out := make([]string, 0, n)
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.id)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
