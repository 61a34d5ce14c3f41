package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/errcode"
)

// FileConfig is the user's defaults file: a small JSON object. It never
// holds the API key itself, only the name of the variable to read it from.
type FileConfig struct {
	Provider      string `json:"provider,omitempty"`      // "openai" or "demo"
	Model         string `json:"model,omitempty"`         // default model
	BaseURL       string `json:"baseUrl,omitempty"`       // default base URL
	ContextWindow int    `json:"contextWindow,omitempty"` // tokens
	BudgetTokens  int    `json:"budgetTokens,omitempty"`  // per session
	Image         string `json:"image,omitempty"`         // sandbox image
	APIKeyEnv     string `json:"apiKeyEnv,omitempty"`     // variable holding the key; default OPENAI_API_KEY
	MaxTokens     int    `json:"maxTokens,omitempty"`     // output tokens per request
}

// Providers a config file may name.
const (
	ProviderOpenAI = "openai"
	ProviderDemo   = "demo"
)

// ConfigFileName is the file's name inside the user's config directory.
const ConfigFileName = "harness/config.json"

// maxConfigBytes bounds the config file.
const maxConfigBytes = 64 << 10

var (
	configKeys = []string{"provider", "model", "baseUrl", "contextWindow", "budgetTokens", "image", "apiKeyEnv", "maxTokens"}
	envName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	// secretKeys are keys that would hold a secret, compared lower-case
	// without - and _.
	secretKeys = []string{"apikey", "key", "openaiapikey", "token", "accesstoken", "secret", "password", "authorization", "bearer"}
)

// ConfigFilePath returns the config file's path under userConfigDir (the
// caller's os.UserConfigDir()).
func ConfigFilePath(userConfigDir string) string {
	return filepath.Join(userConfigDir, filepath.FromSlash(ConfigFileName))
}

// LoadConfigFile reads the config file at path. A missing file is not an
// error: it yields the zero FileConfig. Anything else wrong (not one JSON
// object, an unknown key or one in the wrong case, a wrong type, a field
// out of range, a key or key-looking value) is MODEL_INVALID_CONFIG; the
// message never repeats a secret.
func LoadConfigFile(path string) (FileConfig, error) {
	var fc FileConfig
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fc, nil
	}
	bad := func(msg string, cause error) (FileConfig, error) {
		return FileConfig{}, &errcode.Error{Code: errcode.ModelInvalidConfig, Op: "openai: load config file", Message: msg, Err: cause}
	}
	if err != nil {
		return bad("open "+path+": "+cause(err), err)
	}
	defer func() { _ = f.Close() }() // only read: a failed close loses nothing
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return bad("read "+path+": it is a directory; the config is a JSON file (default $XDG_CONFIG_HOME/harness/config.json)", nil)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return bad("read "+path+": "+cause(err), err)
	}
	if len(data) > maxConfigBytes {
		return bad("read "+path+": larger than 64 KiB", nil)
	}
	trimmed := bytes.TrimSpace(data)
	var m map[string]json.RawMessage
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &m) != nil {
		return bad("parse "+path+": not a JSON object", nil)
	}
	for k := range m {
		norm := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(k))
		if slices.Contains(secretKeys, norm) {
			return bad("parse "+path+": the file must not hold the API key; set OPENAI_API_KEY (or name another variable in apiKeyEnv)", nil)
		}
		if !slices.Contains(configKeys, k) {
			return bad("parse "+path+": unknown key "+truncate(k, 40)+" (known: "+strings.Join(configKeys, ", ")+")", nil)
		}
	}
	for _, raw := range m {
		if skPattern().Match(raw) {
			return bad("parse "+path+": a value looks like an API key; set OPENAI_API_KEY instead", nil)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return bad("parse "+path+": a field has the wrong type", nil)
	}
	if dec.More() {
		return bad("parse "+path+": data after the object", nil)
	}
	if err := fc.validate(); err != nil {
		return FileConfig{}, &errcode.Error{Code: errcode.ModelInvalidConfig, Op: "openai: load config file",
			Message: "check " + path + ": " + errcode.Message(err)}
	}
	return fc, nil
}

func (fc FileConfig) validate() error {
	bad := func(msg string) error { return errcode.New(errcode.ModelInvalidConfig, msg) }
	switch fc.Provider {
	case "", ProviderOpenAI, ProviderDemo:
	default:
		return bad("provider: want openai or demo")
	}
	if fc.ContextWindow < 0 || fc.BudgetTokens < 0 || fc.MaxTokens < 0 {
		return bad("contextWindow, budgetTokens and maxTokens: want non-negative numbers")
	}
	if fc.BaseURL != "" {
		if _, err := checkBaseURL(fc.BaseURL); err != nil {
			return bad("baseUrl: " + errcode.Message(err))
		}
	}
	if fc.APIKeyEnv != "" && !envName().MatchString(fc.APIKeyEnv) {
		return bad("apiKeyEnv: want the name of an environment variable")
	}
	return nil
}

// cause is what the system said about a file operation, without the path
// the message already names ("permission denied").
func cause(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
