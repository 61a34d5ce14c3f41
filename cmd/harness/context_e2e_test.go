package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// usageServer is an OpenAI-compatible server on loopback that reports
// realistic usage: prompt tokens are the request's bytes / 4. Each chat
// request is answered by next; GET /models lists one model, with the
// window in max_model_len when window > 0.
type usageServer struct {
	t       *testing.T
	srv     *httptest.Server
	window  int
	noUsage bool                         // report no usage at all, as some servers do
	refuse  map[int]bool                 // requests (1-based) refused as over the context window
	next    func(req wireRequest) string // the SSE answer, without usage

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
	return startUsageServer(t, &usageServer{t: t, window: window, next: next})
}

// startUsageServer serves s, configured before it starts.
func startUsageServer(t *testing.T, s *usageServer) *usageServer {
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
	if s.refuse[len(s.bodies)] {
		http.Error(w, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`, http.StatusBadRequest)
		return
	}
	if s.window > 0 && prompt > s.window {
		http.Error(w, `{"error":{"message":"This model's maximum context length is exceeded"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, s.next(req))
	if s.noUsage {
		io.WriteString(w, "data: [DONE]\n\n")
		return
	}
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
		cut := size // on a character boundary: the file stays UTF-8
		for cut > 0 && cut < len(b) && !utf8.RuneStart(b[cut]) {
			cut--
		}
		out[i] = fmt.Sprintf("src/%02d.go", i)
		u.write(out[i], string(b[:cut]))
	}
	return out
}

// sourceChunks writes n distinct files of size bytes cut from the
// concatenated Go sources of this repository as src/<i>.go.
func sourceChunks(t *testing.T, u *userEnv, n, size int) []string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || len(all) >= n*size {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			all = append(all, b...)
		}
		return nil
	})
	if err != nil || len(all) < n*size {
		t.Fatalf("%d bytes of Go source, want %d: %v", len(all), n*size, err)
	}
	// Cut on character boundaries, so that every file is UTF-8 text (the
	// sources hold "…" and "→"): each chunk starts where the previous one
	// ended and is size bytes, less a cut character's first bytes.
	out := make([]string, n)
	start := 0
	for i := range out {
		end := start + size
		for end < len(all) && end > start && !utf8.RuneStart(all[end]) {
			end--
		}
		out[i] = fmt.Sprintf("src/%02d.go", i)
		u.write(out[i], string(all[start:end]))
		start = end
	}
	return out
}

// contextRun is one scripted exec through the built binary against a
// usageServer at default context settings.
type contextRun struct {
	srv    *usageServer
	res    result
	bodies [][]byte
	usage  []int
}

// readsThenDone answers model request k (1-based, summary rounds not
// counted) with reads[k-1], then with a text answer; summary rounds get a
// short summary.
func readsThenDone(reads [][]string) func(wireRequest) string {
	var mu sync.Mutex
	k := 0
	return func(req wireRequest) string {
		if req.summary() {
			return textAnswer("Summary: the user asked to read source files; the files so far were read and looked fine. Next: read the remaining files.")
		}
		mu.Lock()
		k++
		n := k
		mu.Unlock()
		if n <= len(reads) {
			return readAnswer(n, reads[n-1]...)
		}
		return textAnswer("All files are read.")
	}
}

func execContext(t *testing.T, u *userEnv, srv *usageServer, args ...string) contextRun {
	t.Helper()
	base := []string{"exec", "--json", "--workspace", "local", "--base-url", srv.url(), "--model", "m"}
	r := u.run("", append(base, args...)...)
	bodies, usage := srv.requests()
	return contextRun{srv: srv, res: r, bodies: bodies, usage: usage}
}

// checkAccounting: every request is at most the default window; the
// first is counted at the measured ratio (no report yet), the following
// ones from the reported usage, and every occupancy recorded before a
// request is within −5 % and +25 % of the prompt tokens the server then
// reported.
func checkAccounting(t *testing.T, run contextRun) {
	t.Helper()
	var acc []event.ContextAccounted
	for _, e := range run.res.events {
		if d, ok := e.Data.(event.ContextAccounted); ok {
			acc = append(acc, d)
		}
	}
	if len(acc) != len(run.usage) {
		t.Fatalf("%d context.accounted for %d requests", len(acc), len(run.usage))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, reported := range run.usage {
		if reported > 128000 {
			t.Errorf("request %d: %d prompt tokens, over the 128000 window", i+1, reported)
		}
		if acc[i].WindowTokens != 128000 {
			t.Errorf("request %d: window %d", i+1, acc[i].WindowTokens)
		}
		if i == 0 && acc[0].Algorithm != compaction.AlgorithmRatio {
			t.Errorf("request 1: algorithm %s before any usage report, want %s", acc[0].Algorithm, compaction.AlgorithmRatio)
		}
		if i > 0 && acc[i].Algorithm != compaction.AlgorithmReported {
			t.Errorf("request %d (summary %v): algorithm %s, want %s", i+1, acc[i].SummaryRequest, acc[i].Algorithm, compaction.AlgorithmReported)
		}
		est := acc[i].OccupancyTokens
		dev := 100 * (float64(est)/float64(reported) - 1)
		lo, hi = min(lo, dev), max(hi, dev)
		if dev < -5 || dev > 25 {
			t.Errorf("request %d (%s, summary %v): occupancy %d, reported %d (%+.1f %%)", i+1, acc[i].Algorithm, acc[i].SummaryRequest,
				est, reported, dev)
		}
	}
	if len(run.usage) > 1 {
		t.Logf("requests 2..%d: occupancy within %+.1f %% .. %+.1f %% of the reported prompt tokens", len(run.usage), lo, hi)
	}
}

func count2[T any](evs []event.Event) int {
	n := 0
	for _, e := range evs {
		if _, ok := e.Data.(T); ok {
			n++
		}
	}
	return n
}

func turnStatus(t *testing.T, evs []event.Event) event.TurnCompleted {
	t.Helper()
	var last *event.TurnCompleted
	for _, e := range evs {
		if d, ok := e.Data.(event.TurnCompleted); ok {
			last = &d
		}
	}
	if last == nil {
		t.Fatal("no turn.completed")
	}
	return *last
}

// Five 20 KB Go files read in one turn (the report of issue 13) fit the
// default window without compaction.
func TestContextFiveFilesNoCompaction(t *testing.T) {
	u := newUser(t)
	files := sourceFiles(t, u, 5, 20000)
	srv := newUsageServer(t, 0, readsThenDone([][]string{files}))
	run := execContext(t, u, srv, "Read the five files under src/ and tell me what they do.")
	if tc := turnStatus(t, run.res.events); run.res.code != 0 || tc.Status != "completed" {
		t.Fatalf("exit %d, turn %+v\n%s", run.res.code, tc, run.res.stderr)
	}
	if n := count2[event.ContextCompacted](run.res.events); n != 0 {
		t.Errorf("%d compactions", n)
	}
	if len(run.usage) != 2 {
		t.Errorf("%d requests", len(run.usage))
	}
	checkAccounting(t, run)
}

// One fs.read of a 100 KB file in a fresh turn completes.
func TestContextOneLargeRead(t *testing.T) {
	u := newUser(t)
	files := sourceChunks(t, u, 1, 100000)
	srv := newUsageServer(t, 0, readsThenDone([][]string{files}))
	run := execContext(t, u, srv, "Read src/00.go.")
	if tc := turnStatus(t, run.res.events); run.res.code != 0 || tc.Status != "completed" {
		t.Fatalf("exit %d, turn %+v\n%s", run.res.code, tc, run.res.stderr)
	}
	checkAccounting(t, run)
}

// A 60-round turn reading a distinct 20 KB file each round (1.2 MB in
// all) completes, compacting inside the turn; every original stays in the
// log, every model request carries the first request word for word, and
// none is over the window.
func TestContextSixtyRoundTurn(t *testing.T) {
	u := newUser(t)
	files := sourceChunks(t, u, 60, 20000)
	reads := make([][]string, len(files))
	for i, f := range files {
		reads[i] = []string{f}
	}
	first := "Read every file under src/, one per round, and then tell me \"what they share\" — all 60 of them."
	srv := newUsageServer(t, 0, readsThenDone(reads))
	run := execContext(t, u, srv, first)
	tc := turnStatus(t, run.res.events)
	if run.res.code != 0 || tc.Status != "completed" {
		t.Fatalf("exit %d, turn %+v\n%s", run.res.code, tc, run.res.stderr)
	}
	compactions := 0
	results := map[string]string{}
	for _, e := range run.res.events {
		switch d := e.Data.(type) {
		case event.ContextCompacted:
			compactions++
			if d.TurnID != tc.TurnID {
				t.Errorf("compaction in turn %s, want %s", d.TurnID, tc.TurnID)
			}
		case event.ToolResult:
			var out struct {
				Path    string `json:"path"`
				Content string `json:"content"`
			}
			if err := json.Unmarshal(d.Output, &out); err != nil || !d.OK {
				t.Fatalf("tool.result %+v: %v", d, err)
			}
			results[out.Path] = out.Content
		}
	}
	if compactions < 1 {
		t.Errorf("no compaction inside the turn")
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(u.project, f))
		if err != nil {
			t.Fatal(err)
		}
		if results[f] != string(want) {
			t.Errorf("the log does not hold %s whole (%d of %d bytes)", f, len(results[f]), len(want))
		}
	}
	quoted, _ := json.Marshal(first)
	for i, body := range run.bodies {
		var req wireRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		if req.summary() {
			continue
		}
		pinned := false
		for _, m := range req.Messages {
			if m.Role == "user" && m.Content == first {
				pinned = true
			}
		}
		if !pinned || !strings.Contains(string(body), string(quoted)) {
			t.Errorf("request %d does not carry the first request word for word", i+1)
		}
	}
	checkAccounting(t, run)
	t.Logf("%d requests, %d compactions, largest prompt %d tokens", len(run.usage), compactions, slicesMax(run.usage))
}

func slicesMax(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// A session stored by the code before issue 13 in the wedged state (its
// history over the old threshold with nothing before the 12-message tail)
// continues on its next message: counted at the measured ratio
// (char-mix/v1), its 105 KB are about 30k tokens of the 128k
// window, so the answer comes without a compaction.
func TestWedgedSessionContinues(t *testing.T) {
	u := newUser(t)
	b, err := os.ReadFile("testdata/wedged/harness.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(u.db, b, 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := os.ReadFile("testdata/wedged/session")
	if err != nil {
		t.Fatal(err)
	}
	// The session recorded the fixture maker's project directory, long
	// gone: bind it to this test's project, as a user would move it back.
	rebindProject(t, u.db, strings.TrimSpace(string(id)), u.project)
	srv := newUsageServer(t, 0, readsThenDone(nil))
	run := execContext(t, u, srv, "--resume", strings.TrimSpace(string(id)), "Now summarize what the five files do.")
	tc := turnStatus(t, run.res.events)
	if run.res.code != 0 || tc.Status != "completed" {
		t.Fatalf("exit %d, turn %+v\n%s", run.res.code, tc, run.res.stderr)
	}
	if n := count2[event.ContextCompacted](run.res.events); n != 0 {
		t.Errorf("%d compactions, want none", n)
	}
	if len(run.usage) != 1 {
		t.Errorf("%d requests, want the answer only", len(run.usage))
	}
	checkAccounting(t, run)
}

// The window a server states in GET /models is the session's window, and
// doctor shows it; a smaller --context-window lowers it.
func TestContextWindowFromServer(t *testing.T) {
	u := newUser(t)
	srv := newUsageServer(t, 32768, readsThenDone(nil))
	run := execContext(t, u, srv, "hello")
	if run.res.code != 0 {
		t.Fatalf("exit %d\n%s", run.res.code, run.res.stderr)
	}
	for _, e := range run.res.events {
		if d, ok := e.Data.(event.ContextAccounted); ok && d.WindowTokens != 32768 {
			t.Errorf("window %d, want the server's 32768", d.WindowTokens)
		}
	}
	lower := execContext(t, u, srv, "--context-window", "16000", "hello")
	for _, e := range lower.res.events {
		if d, ok := e.Data.(event.ContextAccounted); ok && d.WindowTokens != 16000 {
			t.Errorf("window %d, want the flag's 16000", d.WindowTokens)
		}
	}
	doc := u.run("", "doctor", "--workspace", "local", "--base-url", srv.url(), "--model", "m")
	if !strings.Contains(doc.stdout, "context window: 32768 tokens (stated by the server)") {
		t.Errorf("doctor does not show the server's window:\n%s", doc.stdout)
	}
}

// One round reading six 100 KB files (more than the default window) ends
// the turn normally: the older results are elided in the request with a
// note naming the path, the newest is sent whole, no request is over the
// window, the originals stay in the log, and harness request shows the
// elided request.
func TestContextRoundOverWindowElides(t *testing.T) {
	u := newUser(t)
	files := sourceChunks(t, u, 6, 100000)
	srv := newUsageServer(t, 0, readsThenDone([][]string{files}))
	run := execContext(t, u, srv, "Read the six files under src/.")
	if tc := turnStatus(t, run.res.events); run.res.code != 0 || tc.Status != "completed" {
		t.Fatalf("exit %d, turn %+v\n%s", run.res.code, tc, run.res.stderr)
	}
	if len(run.bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(run.bodies))
	}
	var second wireRequest
	if err := json.Unmarshal(run.bodies[1], &second); err != nil {
		t.Fatal(err)
	}
	var notes []string
	var whole int
	for _, m := range second.Messages {
		if c, _ := m.Content.(string); m.Role == "tool" {
			if strings.HasPrefix(c, compaction.ElidedPrefix) {
				notes = append(notes, c)
			} else if len(c) > 50000 {
				whole++
			}
		}
	}
	if len(notes) == 0 || whole == 0 || len(notes)+whole != 6 || !strings.Contains(notes[0], files[0]) {
		t.Errorf("second request: %d elided, %d whole; notes %q", len(notes), whole, notes)
	}
	checkAccounting(t, run)
	id := sessionOf(t, run.res.events)
	req := u.run("", "request", id)
	if req.code != 0 || !strings.Contains(req.stdout, compaction.ElidedPrefix) {
		t.Fatalf("request: exit %d\n%.2000s\n%s", req.code, req.stdout, req.stderr)
	}
	results := 0
	for _, e := range run.res.events {
		if d, ok := e.Data.(event.MessageCompleted); ok && d.Role == "tool" && len(d.Content) > 50000 {
			results++
		}
	}
	if results != 6 {
		t.Errorf("%d whole tool results in the log, want 6", results)
	}
}

// A server that reports no usage leaves every request counted at the
// measured character mix (char-mix/v1): nothing calibrates it.
func TestContextNoUsageStaysRatio(t *testing.T) {
	u := newUser(t)
	files := sourceFiles(t, u, 2, 20000)
	srv := startUsageServer(t, &usageServer{t: t, noUsage: true, next: readsThenDone([][]string{files[:1], files[1:]})})
	run := execContext(t, u, srv, "Read the two files under src/, one at a time.")
	if tc := turnStatus(t, run.res.events); run.res.code != 0 || tc.Status != "completed" {
		t.Fatalf("exit %d, turn %+v\n%s", run.res.code, tc, run.res.stderr)
	}
	acc := ofType[event.ContextAccounted](run.res.events)
	if len(acc) != 3 || len(run.usage) != 3 {
		t.Fatalf("%d context.accounted for %d requests, want 3", len(acc), len(run.usage))
	}
	for i, a := range acc {
		if a.Algorithm != compaction.AlgorithmRatio {
			t.Errorf("request %d: algorithm %s, want %s", i+1, a.Algorithm, compaction.AlgorithmRatio)
		}
	}
}

// The calibration is the provider's: resumed on another server (another
// --base-url) with the same model name, the first request is counted in
// at the default ratio again; resumed on the same server, it keeps the
// calibration.
func TestContextCalibrationFollowsProvider(t *testing.T) {
	u := newUser(t)
	a := newUsageServer(t, 0, readsThenDone(nil))
	b := newUsageServer(t, 0, readsThenDone(nil))
	first := execContext(t, u, a, "hello")
	if first.res.code != 0 {
		t.Fatalf("exit %d\n%s", first.res.code, first.res.stderr)
	}
	id := sessionOf(t, first.res.events)
	algorithms := func(r contextRun) []string {
		var out []string
		for _, d := range ofType[event.ContextAccounted](r.res.events) {
			out = append(out, d.Algorithm)
		}
		return out
	}
	same := execContext(t, u, a, "--resume", id, "again")
	if got := algorithms(same); same.res.code != 0 || len(got) != 1 || got[0] != compaction.AlgorithmReported {
		t.Errorf("resumed on the same server: exit %d, algorithms %v, want [%s]\n%s", same.res.code, got, compaction.AlgorithmReported, same.res.stderr)
	}
	other := execContext(t, u, b, "--resume", id, "and on the other server")
	if got := algorithms(other); other.res.code != 0 || len(got) != 1 || got[0] != compaction.AlgorithmRatio {
		t.Errorf("resumed on another server: exit %d, algorithms %v, want [%s]\n%s", other.res.code, got, compaction.AlgorithmRatio, other.res.stderr)
	}
}

// A server that refuses a request as over its context window (400
// context_length_exceeded) gets one compaction and the request once more:
// both are recorded (model.retry with MODEL_CONTEXT_LENGTH, then
// context.compacted), and the turn completes.
func TestContextLengthErrorCompactsAndRetries(t *testing.T) {
	u := newUser(t)
	files := sourceFiles(t, u, 3, 4000)
	// Requests 1–3 read a file each; the 4th is refused; the 5th is the
	// summary, the 6th the same round again.
	srv := startUsageServer(t, &usageServer{t: t, refuse: map[int]bool{4: true},
		next: readsThenDone([][]string{files[:1], files[1:2], files[2:]})})
	run := execContext(t, u, srv, "--compact-tail", "2", "Read the three files under src/, one at a time.")
	if tc := turnStatus(t, run.res.events); run.res.code != 0 || tc.Status != "completed" {
		t.Fatalf("exit %d, turn %+v\n%s", run.res.code, tc, run.res.stderr)
	}
	var order []string
	for _, e := range run.res.events {
		switch d := e.Data.(type) {
		case event.ModelRetry:
			if d.Code == string(errcode.ModelContextLength) {
				order = append(order, "retry")
			}
		case event.ContextCompacted:
			order = append(order, "compacted")
		case event.ModelRequest:
			order = append(order, "request")
		}
	}
	want := []string{"request", "request", "request", "request", "retry", "request", "compacted", "request"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", order, want)
	}
	if len(run.usage) != 6 {
		t.Errorf("%d requests reached the server, want 6", len(run.usage))
	}
	// A second refusal in the same turn ends it with the server's code.
	u2 := newUser(t)
	files = sourceFiles(t, u2, 3, 4000)
	srv = startUsageServer(t, &usageServer{t: t, refuse: map[int]bool{4: true, 6: true},
		next: readsThenDone([][]string{files[:1], files[1:2], files[2:]})})
	run = execContext(t, u2, srv, "--compact-tail", "2", "Read the three files under src/, one at a time.")
	if tc := turnStatus(t, run.res.events); run.res.code != 1 || tc.ErrorCode != string(errcode.ModelContextLength) {
		t.Fatalf("exit %d, turn %+v\n%s", run.res.code, tc, run.res.stderr)
	}
}

// Two 105 KB files mentioned with @path in a fresh session fit the default
// 128k window at the measured ratio (about 60k tokens): the request goes
// out and the turn completes, no RUNTIME_CONTEXT_OVERFLOW.
func TestContextTwoLargeMentions(t *testing.T) {
	u := newUser(t)
	files := sourceChunks(t, u, 2, 105<<10)
	srv := newUsageServer(t, 0, readsThenDone(nil))
	run := execContext(t, u, srv, "Compare @"+files[0]+" and @"+files[1]+".")
	if tc := turnStatus(t, run.res.events); run.res.code != 0 || tc.Status != "completed" {
		t.Fatalf("exit %d, turn %+v\n%s", run.res.code, tc, run.res.stderr)
	}
	if len(run.usage) != 1 {
		t.Fatalf("%d requests, want 1", len(run.usage))
	}
	if !strings.Contains(string(run.bodies[0]), "func ") {
		t.Error("the request does not hold the files")
	}
	checkAccounting(t, run)
}
