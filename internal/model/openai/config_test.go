package openai

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/harness-dev/harness/internal/errcode"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		wantCode errcode.Code
	}{
		{"openai default", Config{APIKey: testKey, Model: "gpt-x"}, ""},
		{"https with key", Config{BaseURL: "https://llm.example.com/v1", APIKey: testKey, Model: "m"}, ""},
		{"loopback http without key", Config{BaseURL: "http://127.0.0.1:8080/v1", Model: "m"}, ""},
		{"localhost http without key", Config{BaseURL: "http://localhost:11434/v1", Model: "m"}, ""},
		{"ipv6 loopback", Config{BaseURL: "http://[::1]:8000/v1", Model: "m"}, ""},
		{"missing model", Config{APIKey: testKey}, errcode.ModelInvalidConfig},
		{"blank model", Config{APIKey: testKey, Model: "  "}, errcode.ModelInvalidConfig},
		{"http off loopback", Config{BaseURL: "http://llm.example.com/v1", APIKey: testKey, Model: "m"}, errcode.ModelInvalidConfig},
		{"http on a private address", Config{BaseURL: "http://192.168.1.5:8080/v1", APIKey: testKey, Model: "m"}, errcode.ModelInvalidConfig},
		{"no key off loopback", Config{BaseURL: "https://llm.example.com/v1", Model: "m"}, errcode.ModelInvalidConfig},
		{"not a URL", Config{BaseURL: "::nope", APIKey: testKey, Model: "m"}, errcode.ModelInvalidConfig},
		{"no host", Config{BaseURL: "https:///v1", APIKey: testKey, Model: "m"}, errcode.ModelInvalidConfig},
		{"other scheme", Config{BaseURL: "ftp://127.0.0.1/v1", APIKey: testKey, Model: "m"}, errcode.ModelInvalidConfig},
		{"credentials in the URL", Config{BaseURL: "https://user:" + testKey + "@llm.example.com/v1", APIKey: testKey, Model: "m"}, errcode.ModelInvalidConfig},
		{"query in the URL", Config{BaseURL: "https://llm.example.com/v1?api-key=" + testKey, APIKey: testKey, Model: "m"}, errcode.ModelInvalidConfig},
		{"key with a newline", Config{APIKey: testKey + "\nX-Evil: 1", Model: "m"}, errcode.ModelInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if code := errcode.Of(err); code != tt.wantCode {
				t.Fatalf("code = %q, want %q (%v)", code, tt.wantCode, err)
			}
			checkNoSecret(t, err)
			if err == nil && c.Name() != tt.cfg.Model {
				t.Errorf("Name = %q, want %q", c.Name(), tt.cfg.Model)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.timeout, c.maxRetries, c.baseDelay}
	want := []any{DefaultTimeout, DefaultMaxRetries, DefaultRetryBaseDelay}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	c, err = New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if c.maxRetries != 0 {
		t.Errorf("MaxRetries -1 gave %d retries, want none", c.maxRetries)
	}
}

func TestBackoff(t *testing.T) {
	c := &Client{baseDelay: time.Second}
	tests := []struct {
		name    string
		attempt int
		e       attemptError
		want    time.Duration
		wantOK  bool
	}{
		{"first pause", 1, attemptError{}, time.Second, true},
		{"doubles", 3, attemptError{}, 4 * time.Second, true},
		{"capped", 30, attemptError{}, maxBackoff, true},
		{"server asks", 1, attemptError{retryAfter: 7 * time.Second, hasAfter: true}, 7 * time.Second, true},
		{"server asks for zero", 2, attemptError{hasAfter: true}, 0, true},
		{"server asks too much", 1, attemptError{retryAfter: maxRetryAfter + time.Second, hasAfter: true}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := c.backoff(tt.attempt, &tt.e)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("backoff = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 20, 41, 23, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		wantOK bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{"milliseconds win", map[string]string{"Retry-After": "3", "Retry-After-Ms": "250"}, 250 * time.Millisecond, true},
		{"http date", map[string]string{"Retry-After": now.Add(20 * time.Second).Format(http.TimeFormat)}, 20 * time.Second, true},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"negative", map[string]string{"Retry-After": "-4"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("retryAfter = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	r := redactor{key: "my-local-key-42"}
	tests := []struct{ in, want string }{
		{"key my-local-key-42 leaked", "key [REDACTED] leaked"},
		{"Incorrect API key provided: sk-proj-AbCd1234efgh", "Incorrect API key provided: sk-[REDACTED]"},
		{"masked sk-proj-****************abcd", "masked sk-[REDACTED]"},
		{"header Authorization: Bearer abc.def", "header Authorization: [REDACTED]"},
		{"sent bearer xyz123 to it", "sent Bearer [REDACTED] to it"},
		{`{"api_key":"zzz"}`, `{"api_key":"[REDACTED]"}`},
		{`Post "http://127.0.0.1:9/v1/chat/completions?api-version=1&key=zz": dial tcp`, `Post "http://127.0.0.1:9/v1/chat/completions?api-version=[REDACTED]&key=[REDACTED]": dial tcp`},
		{"nothing secret here", "nothing secret here"},
	}
	for _, tt := range tests {
		if got := r.redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLoadConfigFile(t *testing.T) {
	tests := []struct {
		name     string
		content  string
		want     FileConfig
		wantCode errcode.Code
	}{
		{
			name: "full",
			content: `{"provider":"openai","model":"gpt-x","baseUrl":"http://127.0.0.1:8080/v1","contextWindow":128000,
				"budgetTokens":2000000,"image":"harness-sandbox","apiKeyEnv":"MY_OPENAI_KEY"}`,
			want: FileConfig{Provider: "openai", Model: "gpt-x", BaseURL: "http://127.0.0.1:8080/v1", ContextWindow: 128000,
				BudgetTokens: 2000000, Image: "harness-sandbox", APIKeyEnv: "MY_OPENAI_KEY"},
		},
		{name: "empty object", content: `{}`},
		{name: "demo provider", content: `{"provider":"demo"}`, want: FileConfig{Provider: "demo"}},
		{name: "api key", content: `{"apiKey":"` + testKey + `"}`, wantCode: errcode.ModelInvalidConfig},
		{name: "api_key", content: `{"api_key":"whatever"}`, wantCode: errcode.ModelInvalidConfig},
		{name: "token", content: `{"token":"whatever"}`, wantCode: errcode.ModelInvalidConfig},
		{name: "key-shaped value", content: `{"model":"` + testKey + `"}`, wantCode: errcode.ModelInvalidConfig},
		{name: "unknown key", content: `{"modle":"x"}`, wantCode: errcode.ModelInvalidConfig},
		{name: "wrong case", content: `{"Model":"x"}`, wantCode: errcode.ModelInvalidConfig},
		{name: "wrong type", content: `{"contextWindow":"big"}`, wantCode: errcode.ModelInvalidConfig},
		{name: "negative window", content: `{"contextWindow":-1}`, wantCode: errcode.ModelInvalidConfig},
		{name: "unknown provider", content: `{"provider":"anthropic"}`, wantCode: errcode.ModelInvalidConfig},
		{name: "plain http off loopback", content: `{"baseUrl":"http://llm.example.com/v1"}`, wantCode: errcode.ModelInvalidConfig},
		{name: "bad env name", content: `{"apiKeyEnv":"MY KEY"}`, wantCode: errcode.ModelInvalidConfig},
		{name: "not an object", content: `["model"]`, wantCode: errcode.ModelInvalidConfig},
		{name: "two objects", content: `{} {}`, wantCode: errcode.ModelInvalidConfig},
		{name: "empty file", content: ``, wantCode: errcode.ModelInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadConfigFile(p)
			if code := errcode.Of(err); code != tt.wantCode {
				t.Fatalf("code = %q, want %q (%v)", code, tt.wantCode, err)
			}
			checkNoSecret(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		got, err := LoadConfigFile(filepath.Join(t.TempDir(), "none", "config.json"))
		if err != nil || got != (FileConfig{}) {
			t.Errorf("LoadConfigFile = %+v, %v; want the zero config", got, err)
		}
	})
	t.Run("path", func(t *testing.T) {
		if got := ConfigFilePath("/home/u/.config"); got != filepath.Join("/home/u/.config", "harness", "config.json") {
			t.Errorf("ConfigFilePath = %q", got)
		}
	})
}

func TestDefaultSystemPrompt(t *testing.T) {
	for _, s := range []string{"fs.read", "fs.list", "fs.write", "process.exec", "git.diff",
		"exactly five tools", "isolated copy", "without network", "review", "summary"} {
		if !strings.Contains(DefaultSystemPrompt, s) {
			t.Errorf("DefaultSystemPrompt lacks %q", s)
		}
	}
}
