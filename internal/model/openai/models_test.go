package openai

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
)

func TestModelsReadsIDsAndWindows(t *testing.T) {
	// One list with each server's way of stating the window.
	body := `{"object":"list","data":[
		{"id":"vllm-model","object":"model","max_model_len":32768},
		{"id":"llama-model","object":"model","meta":{"n_ctx":8192,"n_ctx_train":131072}},
		{"id":"ollama-model","details":{"context_length":40960}},
		{"id":"ollama-show","model_info":{"qwen3.context_length":65536}},
		{"id":"openai-model","object":"model","owned_by":"system"},
		{"id":"odd-model","max_model_len":"big"},
		{"object":"model"}
	]}`
	s := newServer(t, reply{status: http.StatusOK, body: body})
	c := newClient(t, s)
	list, err := c.Models(context.Background())
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	want := []ModelInfo{
		{ID: "vllm-model", ContextWindow: 32768, WindowKey: "max_model_len"},
		{ID: "llama-model", ContextWindow: 8192, WindowKey: "meta.n_ctx", TrainedWindow: 131072},
		{ID: "ollama-model", ContextWindow: 40960, WindowKey: "details.context_length"},
		{ID: "ollama-show", ContextWindow: 65536, WindowKey: "model_info.qwen3.context_length"},
		{ID: "openai-model", OwnedBy: "system"},
		{ID: "odd-model"},
	}
	if len(list) != len(want) {
		t.Fatalf("got %d models %+v, want %d", len(list), list, len(want))
	}
	for i := range want {
		if list[i] != want[i] {
			t.Errorf("model %d = %+v, want %+v", i, list[i], want[i])
		}
	}
	reqs := s.requests()
	if len(reqs) != 1 || reqs[0].path != "/v1/models" || reqs[0].header.Get("Authorization") != "Bearer "+testKey {
		t.Fatalf("request = %+v", reqs)
	}
	if m, ok := FindModel(list, "llama-model"); !ok || m.ContextWindow != 8192 {
		t.Fatalf("FindModel = %+v %v", m, ok)
	}
	if _, ok := FindModel(list, "absent"); ok {
		t.Fatal("FindModel found an absent model")
	}
}

func TestModelsErrorsAreCoded(t *testing.T) {
	cases := []struct {
		name string
		rep  reply
		code errcode.Code
	}{
		{"unauthorized", reply{status: http.StatusUnauthorized, body: `{"error":{"message":"bad key ` + testKey + `"}}`}, errcode.ModelAuthError},
		{"not found", reply{status: http.StatusNotFound, body: `not here`}, errcode.ModelHTTPError},
		{"rate limited", reply{status: http.StatusTooManyRequests}, errcode.ModelRateLimited},
		{"not a list", reply{status: http.StatusOK, body: `{"models":[]}`}, errcode.ModelInvalidResponse},
		{"not json", reply{status: http.StatusOK, body: `<html>`}, errcode.ModelInvalidResponse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.rep)
			_, err := newClient(t, s).Models(context.Background())
			if errcode.Of(err) != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			checkNoSecret(t, err)
		})
	}
}

func TestModelsUnreachableIsTransportError(t *testing.T) {
	s := newServer(t, reply{status: http.StatusOK})
	c := newClient(t, s)
	s.srv.Close()
	if _, err := c.Models(context.Background()); errcode.Of(err) != errcode.ModelTransportError {
		t.Fatalf("err = %v, want MODEL_TRANSPORT_ERROR", err)
	}
}

func TestModelsHonoursCancel(t *testing.T) {
	s := newServer(t, reply{stall: stallBeforeHeaders})
	c := newClient(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-s.stalled; cancel() }()
	if _, err := c.Models(ctx); errcode.Of(err) != errcode.ModelAborted {
		t.Fatalf("err = %v, want MODEL_ABORTED", err)
	}
}

// route serves fixed answers by method and path, and records what it was
// asked (method, path and query).
type route struct {
	answers map[string]string // "GET /v1/models" → testdata/window file
	mu      sync.Mutex
	asked   []string // guarded by mu
}

func (rt *route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.Path
	rt.mu.Lock()
	rt.asked = append(rt.asked, key+"?"+r.URL.RawQuery)
	rt.mu.Unlock()
	file, ok := rt.answers[key]
	if !ok {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	if r.Method == http.MethodPost {
		var body struct {
			Model string `json:"model"`
		}
		if json.NewDecoder(r.Body).Decode(&body) != nil || body.Model == "" {
			http.Error(w, `{"error":"model is required"}`, http.StatusBadRequest)
			return
		}
	}
	b, err := os.ReadFile(filepath.Join("testdata", "window", file))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (rt *route) requests() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.asked)
}

// The window each server runs a model with, from the answers it gives
// (hand-made fixtures in testdata/window, shaped after: vLLM's ModelCard
// in its OpenAI-compatible server, with max_model_len; llama.cpp's
// tools/server/README.md examples of GET /v1/models, whose meta holds
// n_ctx_train, and GET /props, whose default_generation_settings holds
// n_ctx; Ollama's docs for GET /v1/models, owned_by "library", and POST
// /api/show, parameters text and model_info
// "<general.architecture>.context_length"). Only the endpoints a server
// may serve are asked.
func TestWindowOfEachServer(t *testing.T) {
	tests := []struct {
		name    string
		model   string
		answers map[string]string
		remote  bool // the base URL is not on loopback
		want    Window
		asked   []string
	}{
		{name: "vLLM", model: "Qwen/Qwen3-8B", answers: map[string]string{"GET /v1/models": "vllm_models.json"},
			want:  Window{40960, "max_model_len in GET /v1/models"},
			asked: []string{"GET /v1/models?"}},
		{name: "llama.cpp", model: "qwen3-8b-q4_k_m.gguf",
			answers: map[string]string{"GET /v1/models": "llamacpp_models.json", "GET /props": "llamacpp_props.json"},
			want:    Window{8192, "llama.cpp's default_generation_settings.n_ctx in GET /props"},
			asked:   []string{"GET /v1/models?", "GET /props?model=qwen3-8b-q4_k_m.gguf"}},
		{name: "llama.cpp without /props", model: "qwen3-8b-q4_k_m.gguf",
			answers: map[string]string{"GET /v1/models": "llamacpp_models.json"},
			want:    Window{40960, "llama.cpp's meta.n_ctx_train in GET /v1/models (the model's training window; the server may run a smaller one)"},
			asked:   []string{"GET /v1/models?", "GET /props?model=qwen3-8b-q4_k_m.gguf"}},
		{name: "llama.cpp, not on loopback", model: "qwen3-8b-q4_k_m.gguf", remote: true,
			answers: map[string]string{"GET /v1/models": "llamacpp_models.json", "GET /props": "llamacpp_props.json"},
			want:    Window{8192, "llama.cpp's default_generation_settings.n_ctx in GET /props"},
			asked:   []string{"GET /v1/models?", "GET /props?model=qwen3-8b-q4_k_m.gguf"}},
		{name: "Ollama", model: "llama3.2:latest",
			answers: map[string]string{"GET /v1/models": "ollama_models.json", "POST /api/show": "ollama_show.json"},
			want:    Window{131072, "Ollama's model_info llama.context_length in POST /api/show"},
			asked:   []string{"GET /v1/models?", "POST /api/show?"}},
		{name: "Ollama with num_ctx", model: "qwen3:8b",
			answers: map[string]string{"GET /v1/models": "ollama_models.json", "POST /api/show": "ollama_show_num_ctx.json"},
			want:    Window{16384, "Ollama's num_ctx in parameters in POST /api/show"},
			asked:   []string{"GET /v1/models?", "POST /api/show?"}},
		{name: "a local server stating nothing", model: "gpt-4o",
			answers: map[string]string{"GET /v1/models": "plain_models.json"},
			asked:   []string{"GET /v1/models?", "GET /props?model=gpt-4o", "POST /api/show?"}},
		{name: "a hosted API stating nothing", model: "gpt-4o", remote: true,
			answers: map[string]string{"GET /v1/models": "plain_models.json", "GET /props": "llamacpp_props.json", "POST /api/show": "ollama_show.json"},
			asked:   []string{"GET /v1/models?"}},
		{name: "a model not listed", model: "llama3.2:latest",
			answers: map[string]string{"GET /v1/models": "vllm_models.json"},
			asked:   []string{"GET /v1/models?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &route{answers: tt.answers}
			c := windowClient(t, rt, tt.remote)
			got, err := c.Window(t.Context(), tt.model)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("window = %+v, want %+v", got, tt.want)
			}
			if diff := cmp.Diff(tt.asked, rt.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// windowClient is a client of h: on loopback, or (remote) at a host name
// that is not, with every connection dialed to h over TLS.
func windowClient(t *testing.T, h http.Handler, remote bool) *Client {
	t.Helper()
	if !remote {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tr.TLSClientConfig.ServerName = "example.com" // the test server's certificate names it
	c, err := New(Config{BaseURL: "https://api.example.com/v1", APIKey: testKey, Model: "m", Timeout: 10 * time.Second,
		HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
