package openai

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
)

// Retry bounds.
const (
	maxBackoff    = 10 * time.Second // longest computed pause between attempts
	maxRetryAfter = 60 * time.Second // longest server-requested pause honored
)

// errClosed is the cause of an attempt canceled by Close.
var errClosed = errors.New("stream closed")

// timeoutCause is the cause of an attempt canceled by Config.Timeout: no
// answer at all (got < 0: no response yet; 0: a status but no body), or a
// stream that stalled after got bytes.
type timeoutCause struct {
	after time.Duration
	got   int64
}

func (e *timeoutCause) Error() string {
	if e.got > 0 {
		return fmt.Sprintf("stalled after %s, nothing for %s", byteCount(e.got), e.after)
	}
	return "no answer within " + e.after.String()
}

// byteCount is n in the units a user reads.
func byteCount(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// redactor removes secrets from text that may end up in an error message:
// the configured key, anything shaped like an OpenAI key, bearer tokens,
// Authorization headers and URL query values.
type redactor struct {
	key    string
	base   string // the base URL, credentials and query removed: named in transport and timeout errors
	keyEnv string // the variable the key comes from: named when the server refuses it
}

// displayURL is u without user information, query or fragment, for
// messages. (New refuses base URLs that have them; this holds anyway.)
func displayURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

var (
	skPattern     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`sk-[A-Za-z0-9_\-*.]{4,}`) })
	bearerPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bbearer\s+[^\s"',;]+`) })
	authPattern   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(authorization|api[-_]?key|x-api-key)(["']?\s*[:=]\s*["']?)(?:bearer\s+)?[^\s"',;&]+`)
	})
	queryPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([?&][^=\s"'&]+=)[^&\s"']+`) })
)

const redacted = "[REDACTED]"

func (r redactor) redact(s string) string {
	if r.key != "" {
		s = strings.ReplaceAll(s, r.key, redacted)
	}
	s = skPattern().ReplaceAllString(s, "sk-"+redacted)
	s = bearerPattern().ReplaceAllString(s, "Bearer "+redacted)
	s = authPattern().ReplaceAllString(s, "${1}${2}"+redacted)
	s = queryPattern().ReplaceAllString(s, "${1}"+redacted)
	return s
}

// safeError carries a cause whose text was redacted; errors.Is and As
// still see the original.
type safeError struct {
	text string
	err  error
}

func (e *safeError) Error() string { return e.text }
func (e *safeError) Unwrap() error { return e.err }

func (r redactor) wrap(err error) error {
	if err == nil {
		return nil
	}
	return &safeError{text: r.redact(err.Error()), err: err}
}

// attemptError is a failed attempt with what the retry policy needs.
type attemptError struct {
	err        error         // coded, redacted
	retryable  bool          // 429, 5xx, transport
	retryAfter time.Duration // what the server asked for; valid when hasAfter
	hasAfter   bool
	status     int    // the HTTP status, 0 for none
	server     string // the server's error message, whole (for refusedField)
	unreached  bool   // no server took the connection: refused, no such host, no route
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

const op = "openai: stream chat completion"

// classify turns the failure of an attempt into a coded error. actx is the
// attempt's context, parent the stream's; raw is the response, if any.
func (r redactor) classify(actx, parent context.Context, err error, raw *http.Response) *attemptError {
	if actx.Err() != nil {
		return &attemptError{err: r.canceled(actx, parent)}
	}
	status := 0
	if raw != nil {
		status = raw.StatusCode
	}
	if status >= 400 {
		return r.statusError(status, serverMessage(raw), raw)
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return &attemptError{err: &errcode.Error{Code: errcode.ModelInvalidResponse, Op: op, Message: "read stream: an event line is too long"}}
	}
	cause, unreached := transportCause(err)
	return &attemptError{
		err:       &errcode.Error{Code: errcode.ModelTransportError, Op: op, Message: "reach " + r.base + ": " + cause, Err: r.wrap(err)},
		retryable: !tlsFailure(err), // a certificate or a plain server does not change in a second
		unreached: unreached,
	}
}

// unreachedRetries bounds the retries of an attempt that reached no
// server (unreached): a server that is down, or a mistyped host or port,
// rarely comes back within the pauses an overloaded one is given.
const unreachedRetries = 2

// tlsFailure reports a TLS handshake that failed: a certificate not
// accepted, or a server that does not speak TLS.
func tlsFailure(err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	return errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) || errors.As(err, &invalid) ||
		errors.As(err, &recordErr) || errors.Is(err, http.ErrSchemeMismatch)
}

// transportCause names why a connection failed, in the user's terms, and
// whether no server took it at all (unreached: no such host, refused, no
// route).
func transportCause(err error) (cause string, unreached bool) {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr):
		return "the host name " + dnsErr.Name + " does not resolve (DNS)", true
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (is the server running, on this port?)", true
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalid):
		return "the TLS certificate was not accepted", false
	case errors.As(err, &recordErr), errors.Is(err, http.ErrSchemeMismatch):
		return "the TLS handshake failed: the server answers plain http (use http://, allowed on loopback)", false
	case errors.As(err, &netErr) && netErr.Timeout():
		return "the connection timed out", false
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the server closed the connection", false
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to the host (network unreachable)", true
	}
	return "the connection failed", false
}

// canceled explains why an attempt's context ended; a timeout names the
// server and what it did (nothing, or stalled mid-stream).
func (r redactor) canceled(actx, parent context.Context) error {
	cause := context.Cause(actx)
	if tc, ok := errors.AsType[*timeoutCause](cause); ok {
		verb := "reach "
		if tc.got > 0 {
			verb = "read the stream from "
		}
		return &errcode.Error{Code: errcode.ModelTimeout, Op: op, Message: verb + r.base + ": " + tc.Error() +
			" (the server may be overloaded or still loading the model)", Err: cause}
	}
	switch {
	case errors.Is(cause, errClosed):
		return &errcode.Error{Code: errcode.ModelAborted, Op: op, Message: "stream closed"}
	case errors.Is(parent.Err(), context.DeadlineExceeded):
		return &errcode.Error{Code: errcode.ModelTimeout, Op: op, Message: "request to " + r.base + ": the model round's deadline passed", Err: context.Cause(parent)}
	default:
		return &errcode.Error{Code: errcode.ModelAborted, Op: op, Message: "request canceled", Err: context.Cause(parent)}
	}
}

// statusError maps an HTTP status: 401 and 403 are MODEL_AUTH_ERROR, 429
// MODEL_RATE_LIMITED (retryable), 5xx MODEL_HTTP_ERROR (retryable), any
// other MODEL_HTTP_ERROR.
func (r redactor) statusError(status int, server string, raw *http.Response) *attemptError {
	msg := fmt.Sprintf("server answered %d %s", status, http.StatusText(status))
	if server != "" {
		msg += ": " + truncate(r.redact(server), 300)
	}
	e := &attemptError{status: status, server: server}
	code := errcode.ModelHTTPError
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		code = errcode.ModelAuthError
		if r.key == "" {
			msg += "; no API key was sent: set " + r.keyEnv
		} else {
			msg += "; check the API key in " + r.keyEnv
		}
	case status == http.StatusTooManyRequests:
		code = errcode.ModelRateLimited
		e.retryable = true
	case status >= 500:
		e.retryable = true
	case contextLength(status, server):
		code = errcode.ModelContextLength
	}
	if e.retryable && raw != nil {
		e.retryAfter, e.hasAfter = retryAfter(raw.Header, time.Now())
	}
	e.err = &errcode.Error{Code: code, Op: op, Message: msg}
	return e
}

// contextPattern matches what servers say of a request over the context
// window: OpenAI's context_length_exceeded ("This model's maximum context
// length is …"), vLLM's ("… is longer than the model's context length",
// "maximum context length"), llama.cpp's exceed_context_size_error ("the
// request exceeds the available context size"), and the "prompt is too
// long" / "too many tokens" of others.
var contextPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)context[_ ]length|context[_ ]size|context window|maximum context|maximum model length|prompt is too long|too many (input )?tokens`)
})

// contextLength reports whether a status and the server's text say the
// request is longer than the context window.
func contextLength(status int, server string) bool {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return contextPattern().MatchString(server)
	}
	return false
}

// serverMessage is the error text a server sent, if any.
func serverMessage(raw *http.Response) string {
	if raw == nil || raw.Body == nil {
		return ""
	}
	body, _ := io.ReadAll(io.LimitReader(raw.Body, 4096))
	if m, ok := errorText(body); ok {
		return oneLine(m)
	}
	if json.Valid(body) {
		return ""
	}
	return oneLine(string(body))
}

// errorText reads the error shapes servers send, in a body or as a stream
// event: {"error":{"message":…}} and {"error":"…"} (OpenAI, Ollama), the
// same wrapped in an array (Gemini), and a flat {"object":"error",
// "message":…} (vLLM). ok reports whether body is one of them.
func errorText(body []byte) (string, bool) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(body, &arr) != nil || len(arr) == 0 {
			return "", false
		}
		return errorText(arr[0])
	}
	var top struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(body, &top) != nil {
		return "", false
	}
	if top.Object == "error" {
		return flatMessage(top.Message), true
	}
	if len(top.Error) == 0 || string(top.Error) == "null" {
		return "", false
	}
	var obj struct {
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(top.Error, &obj) == nil {
		return flatMessage(obj.Message), true
	}
	var str string
	if json.Unmarshal(top.Error, &str) == nil {
		return str, true
	}
	return "", true
}

// flatMessage is a message field: a string, or anything else as its JSON.
func flatMessage(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ToValidUTF8(s, "?")), " ")
}

// retryAfter reads retry-after-ms or Retry-After (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e6 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// streamError reads an error event inside a 200 stream: one of errorText's
// shapes, a flat {"message":…} under an "error:" field (llama.cpp), or bare
// text. The server's message is kept.
func (r redactor) streamError(data []byte) error {
	msg, ok := errorText(data)
	if !ok {
		var flat struct {
			Message json.RawMessage `json:"message"`
		}
		if json.Unmarshal(data, &flat) == nil {
			msg = flatMessage(flat.Message)
		} else if !json.Valid(data) {
			msg = string(data)
		}
	}
	text := "server reported an error mid-stream"
	if msg = oneLine(msg); msg != "" {
		text += ": " + truncate(r.redact(msg), 300)
	}
	return &errcode.Error{Code: errcode.ModelHTTPError, Op: op, Message: text}
}

// Words that make a 400 naming a field about a field that is missing, not
// one that was refused (DeepSeek: "Missing reasoning_content field …").
var missingPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(missing|required)\b`) })

// refusedField returns the field of sent that a 400 or 422 answer names as
// refused (Groq and Cerebras: "property 'reasoning_content' is
// unsupported"), or "". A field is named when it stands as a word of its
// own: reasoning in reasoning_effort is not named.
func refusedField(e *attemptError, sent map[string][]int) string {
	if (e.status != http.StatusBadRequest && e.status != http.StatusUnprocessableEntity) || missingPattern().MatchString(e.server) {
		return ""
	}
	for _, field := range slices.Sorted(maps.Keys(sent)) {
		if regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(field) + `([^A-Za-z0-9_]|$)`).MatchString(e.server) {
			return field
		}
	}
	return ""
}
