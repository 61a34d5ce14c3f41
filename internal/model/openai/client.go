package openai

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/version"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// userAgent names the client in its requests.
var userAgent = func() string {
	v, _ := version.Linked()
	return "harness/" + cmp.Or(v, "devel")
}()

// Defaults of Config.
const (
	DefaultTimeout = 120 * time.Second
	// DefaultMaxRetries retries a failed attempt five times, after 0.5,
	// 1, 2, 4 and 8 s unless the server names its pause: an overloaded
	// server (503, 529) or a rate limit is given about 15 s to recover,
	// not the 1.5 s two retries gave.
	DefaultMaxRetries     = 5
	DefaultRetryBaseDelay = 500 * time.Millisecond
)

// Config configures a Client. The caller resolves flags, environment and
// config file; this package reads none of them.
type Config struct {
	BaseURL string // default DefaultBaseURL; http:// only for loopback hosts
	APIKey  string // may be empty only for a loopback server
	Model   string // required; a request's own Model wins
	// KeyEnv is the variable APIKey was read from, named in what a
	// missing or refused key says. Default DefaultKeyEnv.
	KeyEnv string
	// Timeout bounds each attempt until the first byte of the response
	// body, and then every silence between two bytes (a stalled stream).
	// Default DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a retryable failure (429, 5xx,
	// transport) is retried before any content was streamed. 0 means
	// DefaultMaxRetries; a negative value disables retries.
	MaxRetries int
	// HTTPClient sends the requests; nil means a client of its own. Its
	// Timeout, if set, also cuts long streams.
	HTTPClient *http.Client
	// RetryBaseDelay is the first pause between attempts, doubled for
	// each further one up to 10 s; a server's Retry-After (up to 60 s)
	// wins. Default DefaultRetryBaseDelay.
	RetryBaseDelay time.Duration
}

// DefaultKeyEnv is the variable the API key is read from unless the
// configuration names another.
const DefaultKeyEnv = "OPENAI_API_KEY"

// Client is an OpenAI-compatible Chat Completions model.
type Client struct {
	model      string
	timeout    time.Duration
	maxRetries int
	baseDelay  time.Duration
	red        redactor
	chatURL    string // {base}/chat/completions
	base       *url.URL
	hc         *http.Client
	key        string
	echoKey    string    // the key as replies are redacted of it (echoKeyOf)
	refused    *refusals // reasoning fields this server refused
}

// minEchoKeyBytes is the least length of a key that replies are redacted
// of. A shorter one is a placeholder that a local server (llama.cpp,
// Ollama) accepts whatever it says, such as "ollama" or "x", and no
// secret: replacing it in the model's text and tool arguments would change
// every file the model writes that holds the word. Error messages are
// redacted of any key.
const minEchoKeyBytes = 16

func echoKeyOf(key string) string {
	if len(key) < minEchoKeyBytes {
		return ""
	}
	return key
}

// refusals are the reasoning fields a server answered 400 to: once one is
// refused, later requests of the client leave it out from the start.
type refusals struct {
	mu     sync.Mutex
	fields []string // guarded by mu
}

func (r *refusals) add(field string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.fields, field) {
		r.fields = append(r.fields, field)
	}
}

func (r *refusals) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.fields)
}

var _ model.Model = (*Client)(nil)

// New validates cfg and returns a client. Every rejection is
// MODEL_INVALID_CONFIG and never quotes the key.
func New(cfg Config) (*Client, error) {
	bad := func(msg string) (*Client, error) {
		return nil, &errcode.Error{Code: errcode.ModelInvalidConfig, Op: "openai: configure", Message: msg}
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return bad("set the model (--model or HARNESS_MODEL)")
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := checkBaseURL(base)
	if err != nil {
		return nil, err
	}
	keyEnv := cfg.KeyEnv
	if keyEnv == "" {
		keyEnv = DefaultKeyEnv
	}
	loopback := isLoopback(u.Hostname())
	if cfg.APIKey == "" && !loopback {
		return bad("set " + keyEnv + ": only a loopback server may go without a key")
	}
	if strings.ContainsFunc(cfg.APIKey, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return bad("read the API key: it holds spaces or control characters")
	}
	c := &Client{
		model:      cfg.Model,
		timeout:    cfg.Timeout,
		maxRetries: cfg.MaxRetries,
		baseDelay:  cfg.RetryBaseDelay,
		red:        redactor{key: cfg.APIKey, base: displayURL(u), keyEnv: keyEnv},
		base:       u,
		key:        cfg.APIKey,
		echoKey:    echoKeyOf(cfg.APIKey),
		refused:    &refusals{},
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.baseDelay <= 0 {
		c.baseDelay = DefaultRetryBaseDelay
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	c.hc = hc
	chat := *u
	chat.Path = strings.TrimSuffix(chat.Path, "/") + "/chat/completions"
	c.chatURL = chat.String()
	return c, nil
}

// checkBaseURL parses a base URL: http or https with a host, no
// credentials, plain http only for loopback hosts.
func checkBaseURL(raw string) (*url.URL, error) {
	bad := func(msg string) (*url.URL, error) {
		return nil, &errcode.Error{Code: errcode.ModelInvalidConfig, Op: "openai: configure", Message: msg}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return bad("parse the base URL: want http(s)://host[:port]/path")
	}
	if u.User != nil {
		return bad("parse the base URL: it must not hold credentials; use OPENAI_API_KEY")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return bad("parse the base URL: it must not have a query or a fragment")
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return bad("check the base URL: plain http is allowed only for loopback hosts; use https")
	}
	return u, nil
}

// isLoopback reports whether host is localhost or a loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Name returns the configured model.
func (c *Client) Name() string { return c.model }

// Stream translates req for the wire and returns a stream that connects on
// its first Recv. A request that cannot be sent (an alias over 64
// characters or colliding, duplicate tools, unknown provider options, a
// malformed message) fails here with MODEL_INVALID_REQUEST; req itself is
// never modified.
func (c *Client) Stream(ctx context.Context, req model.Request) (model.Stream, error) {
	w, err := buildRequest(req, c.model, c.refused.list()...)
	if err != nil {
		if e, ok := errors.AsType[*errcode.Error](err); ok && e.Op == "" {
			e.Op = "openai: build request"
		}
		return nil, err
	}
	return newStream(ctx, c, w), nil
}

// backoff returns the pause before attempt+1 after a failed attempt
// (1-based), and false when the server asks for a longer pause than
// maxRetryAfter.
func (c *Client) backoff(attempt int, e *attemptError) (time.Duration, bool) {
	if e.hasAfter {
		if e.retryAfter > maxRetryAfter {
			return 0, false
		}
		return e.retryAfter, true
	}
	d := c.baseDelay
	for i := 1; i < attempt && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff), true
}
