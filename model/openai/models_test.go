package openai

import (
	"context"
	"net/http"
	"testing"

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
	want := []ModelInfo{{"vllm-model", 32768}, {"llama-model", 8192}, {"ollama-model", 40960}, {"ollama-show", 65536}, {"openai-model", 0}, {"odd-model", 0}}
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
