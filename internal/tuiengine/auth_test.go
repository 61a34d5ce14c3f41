package tuiengine

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/tui"
)

// A server that refuses the key (401): the turn fails with
// MODEL_AUTH_ERROR, and what the TUI shows of it names the variable the
// key comes from, OPENAI_API_KEY or the one the config file's apiKeyEnv
// names.
func TestRefusedKeyNamesItsVariable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}`))
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct{ name, keyEnv, config string }{
		{"default", "OPENAI_API_KEY", ""},
		{"apiKeyEnv", "MY_PROVIDER_KEY", `{"apiKeyEnv": "MY_PROVIDER_KEY"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			e := app.Env{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_CONFIG_HOME": filepath.Join(home, "config"),
				c.keyEnv: "sk-wrong-key-0123456789abcdef"}
			if c.config != "" {
				p := app.DefaultConfigPath(e)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(c.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			held := &Held{}
			a, err := app.New(t.Context(), app.Options{DB: filepath.Join(home, "h.db"), Workspace: "local", Model: "gpt-test",
				BaseURL: srv.URL + "/v1", ContextWindow: 32000}, e, held)
			if err != nil {
				t.Fatal(err)
			}
			eng := New(a, held)
			t.Cleanup(func() {
				eng.Close()
				a.Close()
			})
			if _, err := eng.Open(t.Context(), tui.OpenRequest{}); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Send(t.Context(), "hi"); err != nil {
				t.Fatal(err)
			}
			evs, _ := collect(t, eng, nil)
			end := evs[len(evs)-1].Data.(event.TurnCompleted)
			if end.ErrorCode != string(errcode.ModelAuthError) || !strings.Contains(end.Note, "401") || !strings.Contains(end.Note, c.keyEnv) {
				t.Errorf("the turn ended %s %q, want MODEL_AUTH_ERROR naming 401 and %s", end.ErrorCode, end.Note, c.keyEnv)
			}
		})
	}
}
