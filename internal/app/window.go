package app

import (
	"context"
	"time"

	"github.com/harness-dev/harness/internal/model/openai"
)

// Where a context window came from (Resolved.WindowSource).
const (
	WindowFromServer  = "server"
	WindowFromConfig  = "config"
	WindowFromDefault = "default"
)

// windowLookupTimeout bounds the whole lookup at start-up: GET /models
// and, for llama.cpp and Ollama, their own endpoints (openai.Client.Window).
const windowLookupTimeout = 5 * time.Second

// ServerWindow returns the context window the server states for model
// (openai.Client.Window: vLLM max_model_len in GET /models, llama.cpp's
// GET /props n_ctx, Ollama's POST /api/show), Tokens 0 when it states none
// or cannot be asked within windowLookupTimeout.
func ServerWindow(ctx context.Context, c *openai.Client, model string) openai.Window {
	ctx, cancel := context.WithTimeout(ctx, windowLookupTimeout)
	defer cancel()
	w, err := c.Window(ctx, model)
	if err != nil {
		return openai.Window{}
	}
	return w
}

// WithServerWindow applies a window the server states: it wins over the
// default, and a window the user gave (flag or config file) may only
// lower it, since the model cannot hold more than its server allows.
// WindowOrigin says where the server states it.
func WithServerWindow(r Resolved, server openai.Window) Resolved {
	if server.Tokens <= 0 {
		return r
	}
	if r.WindowSource == WindowFromConfig && r.Window < server.Tokens {
		return r
	}
	r.Window, r.WindowSource, r.WindowOrigin = server.Tokens, WindowFromServer, server.Source
	return r
}
