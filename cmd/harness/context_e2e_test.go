package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// usageServer is an OpenAI-compatible server on loopback that reports
// realistic usage: prompt tokens are the request's bytes / 4. Each chat
// request is answered by next; GET /models lists one model, with the
// window in max_model_len when window > 0.
type usageServer struct {
	t      *testing.T
	srv    *httptest.Server
	window int
	next   func(req wireRequest) string // the SSE answer, without usage

	mu     sync.Mutex
	bodies [][]byte
	usage  []int // prompt tokens reported, per request
}

// wireRequest is the part of a chat request the scripts look at.
type wireRequest struct {
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`
}

// summary reports whether the request is a summary round (it offers no tools).
func (w wireRequest) summary() bool { return len(w.Tools) == 0 }

func newUsageServer(t *testing.T, window int, next func(wireRequest) string) *usageServer {
	s := &usageServer{t: t, window: window, next: next}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *usageServer) url() string { return s.srv.URL + "/v1" }

func (s *usageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		entry := map[string]any{"id": "m", "object": "model"}
		if s.window > 0 {
			entry["max_model_len"] = s.window
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{entry}})
		return
	}
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"unexpected path"}}`, http.StatusNotFound)
		return
	}
	var req wireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	prompt := len(body) / 4
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.usage = append(s.usage, prompt)
	s.mu.Unlock()
	if s.window > 0 && prompt > s.window {
		http.Error(w, `{"error":{"message":"This model's maximum context length is exceeded"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, s.next(req))
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n",
		fmt.Sprintf(`{"id":"u","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":20,"total_tokens":%d}}`, prompt, prompt+20))
}

func (s *usageServer) requests() ([][]byte, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...), append([]int(nil), s.usage...)
}

// chunk is one SSE data line of a chat completion chunk.
func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return fmt.Sprintf("data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, f)
}

// textAnswer is an answer of plain text.
func textAnswer(text string) string {
	d, _ := json.Marshal(map[string]string{"role": "assistant", "content": text})
	return chunk(string(d), "stop")
}

// readAnswer asks for fs.read of each path, in one assistant message.
func readAnswer(round int, paths ...string) string {
	var calls []any
	for i, p := range paths {
		args, _ := json.Marshal(map[string]string{"path": p})
		calls = append(calls, map[string]any{"index": i, "id": fmt.Sprintf("call_%d_%d", round, i), "type": "function",
			"function": map[string]string{"name": alias("fs.read"), "arguments": string(args)}})
	}
	d, _ := json.Marshal(map[string]any{"role": "assistant", "tool_calls": calls})
	return chunk(string(d), "tool_calls")
}

// sourceFiles copies n real Go files of this repository of about size
// bytes each into the project as src/<i>.go and returns their paths.
func sourceFiles(t *testing.T, u *userEnv, n, size int) []string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var picked []string
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || len(picked) == n {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Size() >= int64(size) {
			picked = append(picked, p)
		}
		return nil
	})
	if err != nil || len(picked) < n {
		t.Fatalf("found %d Go files of %d bytes, want %d: %v", len(picked), size, n, err)
	}
	out := make([]string, n)
	for i, p := range picked {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = fmt.Sprintf("src/%02d.go", i)
		u.write(out[i], string(b[:size]))
	}
	return out
}
