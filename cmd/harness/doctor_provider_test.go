package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

// closedPort returns a loopback base URL nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// harness doctor asks the provider: a server refusing the key, a closed
// port and a good server get three different verdicts, each with the base
// URL and what to do.
func TestDoctorAsksTheProvider(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: sk-wrong***","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	t.Cleanup(refusing.Close)
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"object":"list","data":[{"id":"other"},{"id":"m","object":"model","max_model_len":32768}]}`)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(good.Close)
	noList := httptest.NewServer(&chatServer{streams: []string{sse(chunkJSON(`{"role":"assistant","content":"ok"}`, "length"))}})
	t.Cleanup(noList.Close)
	wrongModel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"data":[{"id":"llama3"},{"id":"qwen3"}]}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"message":"model \"m\" not found, try pulling it first"}}`)
	}))
	t.Cleanup(wrongModel.Close)
	closed := closedPort(t)

	cases := []struct {
		name string
		base string
		want []string
		ok   bool // every check passes: exit 0 (needs Docker and the image)
	}{
		{"key refused", refusing.URL + "/v1", []string{"✗ provider: model m at " + refusing.URL + "/v1: MODEL_AUTH_ERROR", "Incorrect API key", "check OPENAI_API_KEY"}, false},
		{"closed port", closed, []string{"✗ provider: model m at " + closed + ": MODEL_TRANSPORT_ERROR", "connection refused", "start the server"}, false},
		{"good server", good.URL + "/v1", []string{"✓ provider: model m at " + good.URL + "/v1: reachable, key accepted, model listed by GET /models",
			"context window: 32768 tokens (stated by the server), from max_model_len in GET /v1/models"}, true},
		{"no model list", noList.URL + "/v1", []string{"✓ provider: model m at " + noList.URL + "/v1: reachable, key accepted, model answered a one-token request"}, false},
		{"model not served", wrongModel.URL + "/v1", []string{"✗ provider: model m at " + wrongModel.URL + "/v1: MODEL_INVALID_CONFIG", "does not serve m (it lists llama3, qwen3)"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.ok {
				needDocker(t)
			}
			u := newUser(t)
			r := u.run("", "doctor", "--workspace", "local", "--image", "harness-busybox", "--base-url", c.base, "--model", "m")
			if c.ok && r.code != 0 {
				t.Errorf("exit %d, want 0: every check passes\n%s", r.code, r.stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("doctor does not say %q:\n%s", w, r.stdout)
				}
			}
			if strings.HasPrefix(c.want[0], "✗") && r.code != exitFailed {
				t.Errorf("exit %d for a failed check", r.code)
			}
			if strings.Contains(r.stdout, "sk-wrong") {
				t.Errorf("doctor shows a key:\n%s", r.stdout)
			}
		})
	}
}

// A transport failure in exec names the URL and the cause: a closed port,
// a host name that does not resolve, https:// to a plain http server, and
// a certificate no authority vouches for.
func TestExecNamesTransportFailure(t *testing.T) {
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)
	cases := []struct {
		name  string
		base  string
		cause string
	}{
		{"refused", closedPort(t), "connection refused"},
		{"DNS", "https://harness-test.invalid/v1", "the host name harness-test.invalid does not resolve (DNS)"},
		{"TLS handshake", "https://" + strings.TrimPrefix(plain.URL, "http://") + "/v1", "the TLS handshake failed"},
		{"untrusted certificate", untrusted.URL + "/v1", "the TLS certificate was not accepted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			u := newUser(t)
			u.extra = append(u.extra, "OPENAI_API_KEY=sk-harness-test-not-a-real-key")
			r := u.run("", "exec", "--workspace", "local", "--base-url", c.base, "--model", "m", "hi")
			if r.code != exitFailed || !strings.Contains(r.stderr, "MODEL_TRANSPORT_ERROR") ||
				!strings.Contains(r.stderr, c.base+": "+c.cause) {
				t.Errorf("exit %d; want MODEL_TRANSPORT_ERROR naming %s and %q; stderr:\n%s", r.code, c.base, c.cause, r.stderr)
			}
			if strings.Contains(r.stderr, "not-a-real-key") {
				t.Error("the key leaked")
			}
			if strings.HasPrefix(c.cause, "the TLS") && strings.Contains(r.stderr, "retrying") {
				t.Error("a TLS failure was retried: it does not change in a second")
			}
		})
	}
}

// The window of a llama.cpp or an Ollama server, which /v1/models does not
// state, is asked from the server's own endpoint: the session runs with
// it, and doctor shows it and where it came from.
func TestServerWindowOfLlamaCppAndOllama(t *testing.T) {
	answer := sse(chunkJSON(`{"role":"assistant","content":"ok"}`, "stop"))
	cases := []struct {
		name   string
		routes map[string]string // "METHOD /path" → JSON answer
		window int
		origin string
	}{
		{"llama.cpp", map[string]string{
			"GET /v1/models": `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp","meta":{"n_vocab":151936,"n_ctx_train":40960}}]}`,
			"GET /props":     `{"default_generation_settings":{"id":0,"n_ctx":8192,"params":{"n_predict":-1}},"total_slots":1}`,
		}, 8192, "llama.cpp's default_generation_settings.n_ctx in GET /props"},
		{"Ollama", map[string]string{
			"GET /v1/models": `{"object":"list","data":[{"id":"m","object":"model","created":1764441683,"owned_by":"library"}]}`,
			"POST /api/show": `{"parameters":"num_ctx                        16384\nstop                           \"<|im_start|>\"","model_info":{"general.architecture":"qwen3","qwen3.context_length":40960}}`,
		}, 16384, "Ollama's num_ctx in parameters in POST /api/show"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if body, ok := c.routes[r.Method+" "+r.URL.Path]; ok {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, body)
					return
				}
				if r.URL.Path == "/v1/chat/completions" {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, answer)
					return
				}
				http.NotFound(w, r)
			}))
			t.Cleanup(hs.Close)
			u := newUser(t)
			r := u.run("", "exec", "--json", "--workspace", "local", "--base-url", hs.URL+"/v1", "--model", "m", "hi")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			acc := ofType[event.ContextAccounted](r.events)
			if len(acc) == 0 || acc[0].WindowTokens != c.window {
				t.Errorf("context.accounted %+v, want window %d", acc, c.window)
			}
			doc := u.run("", "doctor", "--workspace", "local", "--image", "harness-busybox", "--base-url", hs.URL+"/v1", "--model", "m")
			want := fmt.Sprintf("context window: %d tokens (stated by the server), from %s", c.window, c.origin)
			if !strings.Contains(doc.stdout, want) {
				t.Errorf("doctor does not say %q:\n%s", want, doc.stdout)
			}
		})
	}
}
