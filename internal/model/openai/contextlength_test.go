package openai

import (
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

// A server that refuses a request as over its context window is
// MODEL_CONTEXT_LENGTH, whatever server says it (OpenAI, vLLM, llama.cpp),
// once and without retries; other 400s stay MODEL_HTTP_ERROR.
func TestContextLengthError(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   errcode.Code
	}{
		{"openai", 400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, errcode.ModelContextLength},
		{"vllm", 400, `{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, errcode.ModelContextLength},
		{"vllm newer", 400, `{"object":"error","message":"The decoder prompt (length 40000) is longer than the maximum model length of 32768. Make sure that max_model_len is no smaller than the number of text tokens.","type":"BadRequestError","code":400}`, errcode.ModelContextLength},
		{"llama.cpp", 400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`, errcode.ModelContextLength},
		{"too large", 413, `{"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum"}}`, errcode.ModelContextLength},
		{"other 400", 400, `{"error":{"message":"Invalid value for 'temperature'"}}`, errcode.ModelHTTPError},
		{"a 500 naming the context", 500, `{"error":{"message":"context length miscalculated"}}`, errcode.ModelHTTPError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, reply{status: c.status, body: c.body})
			cl := newClient(t, srv)
			s, err := cl.Stream(t.Context(), baseRequest())
			if err == nil {
				_, err = drain(t, s)
				_ = s.Close()
			}
			if got := errcode.Of(err); got != c.want {
				t.Fatalf("code %s, want %s (%v)", got, c.want, err)
			}
			if c.status < 500 && len(srv.requests()) != 1 {
				t.Errorf("%d requests, want 1", len(srv.requests()))
			}
		})
	}
}
