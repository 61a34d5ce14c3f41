package app

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

// /model NAME is held to the server's list (GET /models): a name it does
// not serve is MODEL_INVALID_CONFIG naming the closest ones, and nothing
// changes; /model lists them. Of a server without /models the name is
// taken, said unchecked. It checked nothing and offered no list.
func TestSwitchModelChecksTheServersList(t *testing.T) {
	var unlisted atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") && !unlisted.Load() {
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"qwen2.5-coder-7b"},{"id":"qwen2.5-coder-32b"},{"id":"llama-3.1-8b"},{"id":"gpt-oss-20b"}]}`)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	e := Env{"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	a, err := New(t.Context(), Options{DB: filepath.Join(dir, "h.db"), Workspace: "local", Model: "qwen2.5-coder-7b", BaseURL: srv.URL + "/v1"}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	s, err := a.Open(t.Context(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())

	list, err := s.ServerModels(t.Context())
	if err != nil || len(list) != 4 || list[3] != "gpt-oss-20b" {
		t.Fatalf("ServerModels = %q, %v", list, err)
	}
	_, err = s.SwitchModel(t.Context(), "qwen2.5-coder-14b")
	if errcode.Of(err) != errcode.ModelInvalidConfig {
		t.Fatalf("switch to a model the server does not serve: %v, want %s", err, errcode.ModelInvalidConfig)
	}
	if msg := errcode.Message(err); !strings.Contains(msg, "qwen2.5-coder-7b, qwen2.5-coder-32b") {
		t.Errorf("refusal %q does not name the closest models first", msg)
	}
	if got := s.Settings().Model; got != "qwen2.5-coder-7b" {
		t.Errorf("model after a refused switch: %s", got)
	}
	if note, err := s.SwitchModel(t.Context(), "llama-3.1-8b"); err != nil || note != "" || s.Settings().Model != "llama-3.1-8b" {
		t.Fatalf("switch to a listed model: note %q, %v, model %s", note, err, s.Settings().Model)
	}
	unlisted.Store(true)
	note, err := s.SwitchModel(t.Context(), "anything-goes")
	if err != nil || !strings.Contains(note, "not checked") || s.Settings().Model != "anything-goes" {
		t.Fatalf("switch on a server without /models: note %q, %v, model %s", note, err, s.Settings().Model)
	}
	if _, err := s.ServerModels(t.Context()); err == nil {
		t.Error("a server without /models gave a list")
	}
}
