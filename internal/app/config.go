package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/model/openai"
	"github.com/harness-dev/harness/store"
)

// Defaults when neither flags, environment nor the config file say.
const (
	DefaultImage         = "harness-sandbox"
	DefaultContextWindow = 128000
	DefaultCompactAt     = 80
	DefaultCompactTail   = 12
	defaultModelTimeout  = 5 * time.Minute
	demoModelName        = "demo"
)

// Options are the settings a front end passes, usually from its flags
// (DESIGN §12). Zero values mean "not given".
type Options struct {
	DB                    string
	Model                 string
	BaseURL               string
	FakeModel             string
	Image                 string
	Workspace             string // docker or local
	Approve               string // auto or ask
	BudgetTokens          int64
	ContextWindow         int
	CompactAt             int
	CompactTail           int
	Config                string
	Exclude               []string // paths left out of either workspace (gitignore-like patterns)
	MaxFiles              int
	MaxFileBytes          int64
	MaxTotalBytes         int64
	MaxWorkspaceBytes     int64 // the workspace's quota (dockerws.Options)
	MaxCacheBytes         int64 // the bound of the project's build cache (dockerws.Options.CacheBytes)
	MaxJobs               int   // background jobs running at once per session (dockerws.Options.MaxJobs); 0: the default
	TakeOver              bool
	HostID                string // this machine's name in leases (default store.HostID)
	MaxTokens             int    // output tokens per model request; 0: min(8192, window/8)
	NoProjectInstructions bool   // do not read AGENTS.md / CLAUDE.md
	// MaxRounds is the most model rounds of one turn
	// (runtime.Config.MaxRounds); 0: runtime.DefaultMaxRounds.
	MaxRounds int
	// ProviderTimeout bounds the wait for the provider's first byte and
	// every silence of a stream (openai.Config.Timeout); 0: its default.
	ProviderTimeout time.Duration
	// NoSpare (--no-spare) turns warm spare containers off
	// (OpenRequest.Spare), as HARNESS_SPARE=0 does.
	NoSpare bool
}

// Env is the process environment, read by the caller.
type Env map[string]string

// Resolved is the configuration after flags > environment > config file >
// defaults.
type Resolved struct {
	DB, Model, BaseURL, APIKey, Image, Workspace string
	HostID                                       string
	// KeyEnv is the variable the API key is read from (the config file's
	// apiKeyEnv, else OPENAI_API_KEY): host processes never see it.
	KeyEnv                         string
	Window, CompactAt, CompactTail int
	Budget                         int64
	// Spares is whether warm spare containers may be used (--no-spare,
	// HARNESS_SPARE).
	Spares bool
	// WindowSource says where Window came from: WindowFromConfig (the
	// --context-window flag or the config file), WindowFromServer or
	// WindowFromDefault.
	WindowSource string
	WindowOrigin string // with WindowFromServer: where the server states it (openai.Window.Source)
	MaxTokens    int    // 0: not set
	// ProviderTimeout is openai.Config.Timeout; 0: its default.
	ProviderTimeout time.Duration
}

// Resolve resolves the configuration. A bad value is a *UsageError.
func Resolve(o Options, e Env) (Resolved, error) {
	var r Resolved
	cfgPath := o.Config
	if cfgPath == "" {
		cfgPath = DefaultConfigPath(e)
	}
	fc, err := openai.LoadConfigFile(cfgPath)
	if err != nil {
		return r, err
	}
	r.DB = first(o.DB, e["HARNESS_DB"], DefaultDBPath(e))
	r.HostID = first(o.HostID, e["HARNESS_HOST_ID"], store.HostID())
	if err := checkHostID(first(o.HostID, e["HARNESS_HOST_ID"])); err != nil {
		return r, err
	}
	if o.ContextWindow < 0 {
		return r, usageErr("--context-window must be a positive number of tokens, not %d", o.ContextWindow)
	}
	if o.CompactTail < 0 {
		return r, usageErr("--compact-tail must be a positive number of messages, not %d", o.CompactTail)
	}
	if o.CompactAt < 0 || o.CompactAt > 100 {
		return r, usageErr("--compact-at must be a percentage between 1 and 100, not %d", o.CompactAt)
	}
	r.Model = first(o.Model, e["HARNESS_MODEL"], fc.Model)
	r.BaseURL = first(o.BaseURL, e["OPENAI_BASE_URL"], fc.BaseURL)
	r.KeyEnv = first(fc.APIKeyEnv, "OPENAI_API_KEY")
	r.APIKey = e[r.KeyEnv]
	r.Image = first(o.Image, e["HARNESS_IMAGE"], fc.Image, DefaultImage)
	r.Workspace = o.Workspace
	switch v := strings.ToLower(e["HARNESS_SPARE"]); v {
	case "", "1", "on", "true", "yes":
		r.Spares = !o.NoSpare
	case "0", "off", "false", "no":
	default:
		return r, usageErr("HARNESS_SPARE must be 1 or 0 (on or off), not %q", e["HARNESS_SPARE"])
	}
	r.Window, r.WindowSource = DefaultContextWindow, WindowFromDefault
	if fc.ContextWindow > 0 {
		r.Window, r.WindowSource = fc.ContextWindow, WindowFromConfig
	}
	if o.ContextWindow > 0 {
		r.Window, r.WindowSource = o.ContextWindow, WindowFromConfig
	}
	r.CompactAt = DefaultCompactAt
	if o.CompactAt != 0 {
		r.CompactAt = o.CompactAt
	}
	r.CompactTail = DefaultCompactTail
	if o.CompactTail > 0 {
		r.CompactTail = o.CompactTail
	}
	r.MaxTokens = fc.MaxTokens
	if o.MaxTokens != 0 {
		r.MaxTokens = o.MaxTokens
	}
	if r.MaxTokens < 0 || (r.MaxTokens > 0 && r.MaxTokens >= r.Window) {
		return r, usageErr("--max-tokens must be between 1 and the context window (%d), not %d", r.Window-1, r.MaxTokens)
	}
	if o.ProviderTimeout < 0 {
		return r, usageErr("--provider-timeout must be a positive duration (e.g. 90s), not %s", o.ProviderTimeout)
	}
	r.ProviderTimeout = o.ProviderTimeout
	r.Budget = int64(fc.BudgetTokens)
	if o.MaxWorkspaceBytes < 0 {
		return r, usageErr("--max-workspace-bytes must be a positive number of bytes, not %d", o.MaxWorkspaceBytes)
	}
	if o.MaxCacheBytes < 0 {
		return r, usageErr("--max-cache-bytes must be a positive number of bytes, not %d", o.MaxCacheBytes)
	}
	if o.MaxJobs < 0 {
		return r, usageErr("--max-jobs must be a positive number of background jobs, not %d", o.MaxJobs)
	}
	if o.MaxRounds < 0 {
		return r, usageErr("--max-rounds must be a positive number of model rounds per turn, not %d", o.MaxRounds)
	}
	if o.MaxWorkspaceBytes > 0 && o.MaxWorkspaceBytes < MinWorkspaceBytes {
		return r, usageErr("--max-workspace-bytes %d is too small: the workspace and its $HOME need at least %d bytes (1 MiB) each", o.MaxWorkspaceBytes, MinWorkspaceBytes)
	}
	if o.BudgetTokens < 0 {
		return r, usageErr("--budget-tokens must be 0 (no budget) or a positive number of tokens, not %d", o.BudgetTokens)
	}
	if o.BudgetTokens > 0 {
		r.Budget = o.BudgetTokens
	}
	switch r.Workspace {
	case "", "docker", "local":
	default:
		return r, usageErr("--workspace must be docker or local, not %q", r.Workspace)
	}
	switch o.Approve {
	case "", "auto", "ask":
	default:
		return r, usageErr("--approve must be auto or ask, not %q", o.Approve)
	}
	return r, nil
}

// MinWorkspaceBytes is the smallest --max-workspace-bytes: below it the
// sandbox cannot set up its $HOME, and the start would fail on what looks
// like a broken image.
const MinWorkspaceBytes = 1 << 20

// maxHostIDBytes bounds a host ID given by flag or environment.
const maxHostIDBytes = 255

// checkHostID refuses a host ID the user gave that would garble the lease
// records and the messages that name it: control characters (a newline),
// only spaces, or over 255 bytes. "" (none given) passes.
func checkHostID(id string) error {
	switch {
	case id == "":
		return nil
	case strings.TrimSpace(id) == "", len(id) > maxHostIDBytes, !utf8.ValidString(id),
		strings.ContainsFunc(id, unicode.IsControl):
		return usageErr("--host-id (or HARNESS_HOST_ID) must be a printable name of at most %d bytes, not %q", maxHostIDBytes, id)
	}
	return nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// UsageError marks a bad command line (exit 2).
type UsageError struct{ Msg string }

func (u *UsageError) Error() string { return u.Msg }

func usageErr(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// DefaultDBPath is $XDG_DATA_HOME/harness/harness.db.
func DefaultDBPath(e Env) string {
	return filepath.Join(xdg(e, "XDG_DATA_HOME", ".local/share"), "harness", "harness.db")
}

// DefaultConfigPath is $XDG_CONFIG_HOME/harness/config.json.
func DefaultConfigPath(e Env) string {
	return filepath.Join(xdg(e, "XDG_CONFIG_HOME", ".config"), "harness", "config.json")
}

func xdg(e Env, key, underHome string) string {
	if dir := e[key]; dir != "" {
		return dir
	}
	home := e["HOME"]
	if home == "" {
		home = "."
	}
	return filepath.Join(home, underHome)
}
