package app

import (
	"context"
	"time"

	"github.com/harness-dev/harness/model/openai"
)

// Where a context window came from (Resolved.WindowSource).
const (
	WindowFromServer  = "server"
	WindowFromConfig  = "config"
	WindowFromDefault = "default"
)

// windowLookupTimeout bounds the GET /models asked at start-up.
const windowLookupTimeout = 5 * time.Second

// ServerWindow returns the context window the server states for model
// (GET /models: vLLM max_model_len, llama.cpp n_ctx, Ollama
// context_length), 0 when it states none or cannot be asked.
func ServerWindow(ctx context.Context, c *openai.Client, model string) int {
	ctx, cancel := context.WithTimeout(ctx, windowLookupTimeout)
	defer cancel()
	list, err := c.Models(ctx)
	if err != nil {
		return 0
	}
	m, _ := openai.FindModel(list, model)
	return m.ContextWindow
}

// WithServerWindow applies a window the server states: it wins over the
// default, and a window the user gave (flag or config file) may only
// lower it, since the model cannot hold more than its server allows.
func WithServerWindow(r Resolved, server int) Resolved {
	if server <= 0 {
		return r
	}
	if r.WindowSource == WindowFromConfig && r.Window < server {
		return r
	}
	r.Window, r.WindowSource = server, WindowFromServer
	return r
}
