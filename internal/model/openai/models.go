package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
)

// ModelInfo is one model a server lists on GET /models.
type ModelInfo struct {
	ID string
	// ContextWindow is the window in tokens the server states for the
	// model: vLLM's max_model_len, n_ctx, LM Studio's and OpenRouter's
	// context_length (also nested under meta, details or model_info).
	// 0 when the server states none.
	ContextWindow int
	// WindowKey is where ContextWindow was read (max_model_len,
	// meta.n_ctx, …); "" when the server states none.
	WindowKey string
	// TrainedWindow is llama.cpp's meta.n_ctx_train: the window the model
	// was trained for, which the server may run smaller (its running
	// window is in GET /props). 0 when absent.
	TrainedWindow int
	// OwnedBy is the entry's owned_by ("llamacpp", Ollama's "library", …).
	OwnedBy string
}

// maxModelsBytes bounds the /models answer.
const maxModelsBytes = 4 << 20

const modelsOp = "openai: list models"

// Models asks the server which models it serves (GET {base}/models) in
// one attempt bounded by Config.Timeout and ctx. The answer is the
// server's list in its order. Codes: MODEL_AUTH_ERROR (401, 403),
// MODEL_RATE_LIMITED (429), MODEL_HTTP_ERROR (any other status ≥ 400),
// MODEL_TRANSPORT_ERROR (no connection), MODEL_TIMEOUT, MODEL_ABORTED,
// MODEL_INVALID_RESPONSE (not a {"data":[…]} list, over 4 MiB).
func (c *Client) Models(ctx context.Context) ([]ModelInfo, error) {
	actx, cancel := context.WithTimeoutCause(ctx, c.timeout, &timeoutCause{after: c.timeout, got: -1})
	defer cancel()
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/models"
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &errcode.Error{Code: errcode.ModelInvalidConfig, Op: modelsOp, Message: "build the request", Err: c.red.wrap(err)}
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, withOp(c.red.classify(actx, ctx, err, nil).err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return nil, withOp(c.red.statusError(resp.StatusCode, serverMessage(resp), resp).err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBytes+1))
	if err != nil {
		return nil, withOp(c.red.classify(actx, ctx, err, nil).err)
	}
	if len(body) > maxModelsBytes {
		return nil, &errcode.Error{Code: errcode.ModelInvalidResponse, Op: modelsOp, Message: "read the model list: larger than 4 MiB"}
	}
	return parseModels(body)
}

// withOp relabels a coded error built for the chat stream.
func withOp(err error) error {
	if e, ok := err.(*errcode.Error); ok {
		e.Op = modelsOp
	}
	return err
}

// parseModels reads {"data":[{"id":…, …}, …]}. Entries without an id are
// skipped; a window that is not a positive integer counts as none.
func parseModels(body []byte) ([]ModelInfo, error) {
	var top struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &top) != nil || top.Data == nil {
		return nil, &errcode.Error{Code: errcode.ModelInvalidResponse, Op: modelsOp, Message: `read the model list: want a JSON object {"data":[…]}`}
	}
	out := make([]ModelInfo, 0, len(top.Data))
	for _, entry := range top.Data {
		var id string
		if json.Unmarshal(entry["id"], &id) != nil || id == "" {
			continue
		}
		m := ModelInfo{ID: id}
		m.ContextWindow, m.WindowKey = window(entry, "")
		var meta struct {
			NCtxTrain json.RawMessage `json:"n_ctx_train"`
		}
		if json.Unmarshal(entry["meta"], &meta) == nil {
			m.TrainedWindow = positive(meta.NCtxTrain)
		}
		_ = json.Unmarshal(entry["owned_by"], &m.OwnedBy)
		out = append(out, m)
	}
	return out, nil
}

// windowKeys are the fields servers state a model's running window in,
// first found wins. (llama.cpp's n_ctx_train is not one: the server may
// run a smaller window.)
var windowKeys = []string{"max_model_len", "n_ctx", "context_length", "context_window"}

// window finds a positive window in entry or one level of its nested
// objects (meta, details, model_info; Ollama prefixes the key with the
// architecture: llama.context_length), and the key it was found at.
func window(entry map[string]json.RawMessage, prefix string) (int, string) {
	for _, k := range windowKeys {
		if n := positive(entry[k]); n > 0 {
			return n, prefix + k
		}
	}
	for _, k := range slices.Sorted(maps.Keys(entry)) {
		if strings.HasSuffix(k, ".context_length") {
			if n := positive(entry[k]); n > 0 {
				return n, prefix + k
			}
		}
	}
	if prefix != "" {
		return 0, ""
	}
	for _, k := range []string{"meta", "details", "model_info"} {
		var nested map[string]json.RawMessage
		if json.Unmarshal(entry[k], &nested) == nil {
			if n, key := window(nested, k+"."); n > 0 {
				return n, key
			}
		}
	}
	return 0, ""
}

// maxWindow bounds a stated window (a larger one is not believed).
const maxWindow = 1 << 30

func positive(raw json.RawMessage) int {
	var f float64
	if len(raw) == 0 || json.Unmarshal(raw, &f) != nil || f < 1 || f > maxWindow || f != float64(int(f)) {
		return 0
	}
	return int(f)
}

// FindModel returns the entry for id in list.
func FindModel(list []ModelInfo, id string) (ModelInfo, bool) {
	for _, m := range list {
		if m.ID == id {
			return m, true
		}
	}
	return ModelInfo{}, false
}

// Window is a context window a server states for a model, and where it
// was read.
type Window struct {
	Tokens int
	Source string // e.g. "max_model_len in GET /v1/models"
}

// Window asks the server which context window it runs model with.
//
// GET {base}/models comes first (vLLM's max_model_len and the like). When
// it lists the model without a window, two more servers are asked, each
// one attempt bounded by Config.Timeout and ctx, and only where they may
// be: when the base URL is on loopback, or the entry shows llama.cpp's
// meta (n_ctx_train) or Ollama's owned_by "library" — a hosted API is never
// sent requests it does not serve:
//
//   - llama.cpp: GET {root}/props, default_generation_settings.n_ctx (the
//     window each slot runs with);
//   - Ollama: POST {root}/api/show, num_ctx in parameters (the Modelfile's
//     window), else model_info's <architecture>.context_length (the
//     model's; Ollama may run a smaller one unless OLLAMA_CONTEXT_LENGTH
//     or num_ctx says otherwise);
//
// where {root} is the base URL without its /v1. Last, llama.cpp's
// n_ctx_train, the window the model was trained for. A window that cannot
// be learned is Tokens 0 and no error; the error is Models' (the list
// could not be had).
func (c *Client) Window(ctx context.Context, model string) (Window, error) {
	list, err := c.Models(ctx)
	if err != nil {
		return Window{}, err
	}
	m, ok := FindModel(list, model)
	if !ok {
		return Window{}, nil
	}
	return c.windowOf(ctx, m), nil
}

// windowOf is the window of m, a listed model: Window's fallbacks.
func (c *Client) windowOf(ctx context.Context, m ModelInfo) Window {
	list := strings.TrimSuffix(c.base.Path, "/") + "/models"
	if m.ContextWindow > 0 {
		return Window{Tokens: m.ContextWindow, Source: m.WindowKey + " in GET " + list}
	}
	llama := m.TrainedWindow > 0 || m.OwnedBy == "llamacpp"
	ollama := m.OwnedBy == "library" || m.OwnedBy == "ollama"
	if !llama && !ollama && !isLoopback(c.base.Hostname()) {
		return Window{}
	}
	if !ollama {
		if n := c.propsWindow(ctx, m.ID); n > 0 {
			return Window{Tokens: n, Source: "llama.cpp's default_generation_settings.n_ctx in GET /props"}
		}
	}
	if !llama {
		if n, key := c.showWindow(ctx, m.ID); n > 0 {
			return Window{Tokens: n, Source: "Ollama's " + key + " in POST /api/show"}
		}
	}
	if m.TrainedWindow > 0 {
		return Window{Tokens: m.TrainedWindow, Source: "llama.cpp's meta.n_ctx_train in GET " + list + " (the model's training window; the server may run a smaller one)"}
	}
	return Window{}
}

// root is the base URL without a trailing /v1: where llama.cpp and Ollama
// serve their own endpoints.
func (c *Client) root(path string) *url.URL {
	u := *c.base
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1") + path
	return &u
}

// ask sends one request to the server (one attempt, Config.Timeout) and
// decodes a JSON answer of at most 4 MiB into v; false for anything else.
func (c *Client) ask(ctx context.Context, method string, u *url.URL, body []byte, v any) bool {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBytes+1))
	return err == nil && len(data) <= maxModelsBytes && json.Unmarshal(data, v) == nil
}

// propsWindow reads llama.cpp's GET /props (model= names the model for a
// router serving several): the running window of a slot.
func (c *Client) propsWindow(ctx context.Context, model string) int {
	u := c.root("/props")
	u.RawQuery = url.Values{"model": {model}}.Encode()
	var props struct {
		Settings struct {
			NCtx json.RawMessage `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if !c.ask(ctx, http.MethodGet, u, nil, &props) {
		return 0
	}
	return positive(props.Settings.NCtx)
}

// showWindow reads Ollama's POST /api/show: num_ctx in the parameters
// text ("num_ctx 8192" lines) when the Modelfile sets it, else the
// architecture's context_length in model_info.
func (c *Client) showWindow(ctx context.Context, model string) (int, string) {
	body, _ := json.Marshal(map[string]string{"model": model})
	var show struct {
		Parameters string                     `json:"parameters"`
		ModelInfo  map[string]json.RawMessage `json:"model_info"`
	}
	if !c.ask(ctx, http.MethodPost, c.root("/api/show"), body, &show) {
		return 0, ""
	}
	for _, line := range strings.Split(show.Parameters, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "num_ctx" {
			if n := positive(json.RawMessage(f[1])); n > 0 {
				return n, "num_ctx in parameters"
			}
		}
	}
	var arch string
	_ = json.Unmarshal(show.ModelInfo["general.architecture"], &arch)
	if n := positive(show.ModelInfo[arch+".context_length"]); arch != "" && n > 0 {
		return n, "model_info " + arch + ".context_length"
	}
	return 0, ""
}
