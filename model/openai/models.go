package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
)

// ModelInfo is one model a server lists on GET /models.
type ModelInfo struct {
	ID string
	// ContextWindow is the window in tokens the server states for the
	// model: vLLM's max_model_len, llama.cpp's n_ctx, Ollama's
	// context_length (also nested under meta, details or model_info).
	// 0 when the server states none.
	ContextWindow int
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
		return nil, withOp(c.red.statusError(resp.StatusCode, serverMessage(nil, resp), resp).err)
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
		out = append(out, ModelInfo{ID: id, ContextWindow: window(entry, 0)})
	}
	return out, nil
}

// windowKeys are the fields servers state a model's window in, first
// found wins.
var windowKeys = []string{"max_model_len", "n_ctx", "context_length", "context_window"}

// window finds a positive window in entry or one level of its nested
// objects (meta, details, model_info; Ollama prefixes the key with the
// architecture: llama.context_length).
func window(entry map[string]json.RawMessage, depth int) int {
	for _, k := range windowKeys {
		if n := positive(entry[k]); n > 0 {
			return n
		}
	}
	for k, v := range entry {
		if strings.HasSuffix(k, ".context_length") {
			if n := positive(v); n > 0 {
				return n
			}
		}
	}
	if depth > 0 {
		return 0
	}
	for _, k := range []string{"meta", "details", "model_info"} {
		var nested map[string]json.RawMessage
		if json.Unmarshal(entry[k], &nested) == nil {
			if n := window(nested, depth+1); n > 0 {
				return n
			}
		}
	}
	return 0
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
