// Package quirks replays recorded streams of real OpenAI-compatible
// servers to tests, over a loopback HTTP server.
//
// The recordings live outside the repository, in ../shared/quirks/streams/
// beside the module root (present for every developer and in CI; never
// committed): Dir skips a test where the folder is absent, or fails it when
// HARNESS_REQUIRE_QUIRKS is 1. The same Server also replays the hand-made
// streams committed beside the tests, in the same format:
//
//   - header lines "# key: value" (server, source, special, require2, …);
//   - sections "#=== response N" and "#=== reject N status=S", each a raw
//     body as the server sent it.
//
// Server answers the n-th request with response n, its tool calls renamed
// to the wire name the request advertised and given the arguments the test
// chose, in as many fragments as the recording had; every other byte is
// served as recorded. From the second request on it checks what the real
// server demands (the tool call's id and result, require2 fields such as
// reasoning_content) and answers with the reject section, or a 400, when
// something is missing.
package quirks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/testenv"
)

// RequireQuirks is the variable that turns a missing recordings folder from
// a skip into a failure (CI sets it).
const RequireQuirks = "HARNESS_REQUIRE_QUIRKS"

// Dir returns the recordings folder, ../shared/quirks/streams from the
// module root, or skips t (fails it under RequireQuirks=1) when it is
// absent.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			dir := filepath.Join(d, "..", "shared", "quirks", "streams")
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				testenv.Unavailable(t, RequireQuirks, "recorded server streams",
					dir+" is absent (they are test data kept outside the repository; the hand-made streams in testdata/ still run)")
			}
			return dir
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", wd)
		}
	}
}

// Files returns the .sse files of dir, sorted.
func Files(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.sse"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .sse files in %s: %v", dir, err)
	}
	return files
}

// File is one parsed recording.
type File struct {
	Name      string
	Header    map[string]string
	Responses []string       // response 1, 2, …: raw bodies
	Rejects   map[int]Reject // by request number
}

// Reject is what a server answers to a request that lacks what it requires.
type Reject struct {
	Status int
	Body   string
}

var sectionRE = regexp.MustCompile(`^#=== (response|reject) (\d+)(?: status=(\d+))?\s*$`)

// Load parses a recording.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := &File{Name: filepath.Base(path), Header: map[string]string{}, Rejects: map[int]Reject{}}
	var cur *strings.Builder
	var kind string
	var num, status int
	flush := func() error {
		if cur == nil {
			return nil
		}
		body := strings.TrimLeft(cur.String(), "\n")
		switch kind {
		case "response":
			if num != len(f.Responses)+1 {
				return fmt.Errorf("%s: response %d out of order", path, num)
			}
			f.Responses = append(f.Responses, body)
		case "reject":
			f.Rejects[num] = Reject{Status: status, Body: strings.TrimSpace(body)}
		}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := sectionRE.FindStringSubmatch(line); m != nil {
			if err := flush(); err != nil {
				return nil, err
			}
			kind = m[1]
			num, _ = strconv.Atoi(m[2])
			status, _ = strconv.Atoi(m[3])
			cur = &strings.Builder{}
			continue
		}
		if cur == nil {
			if k, v, ok := strings.Cut(strings.TrimPrefix(line, "# "), ": "); ok && strings.HasPrefix(line, "# ") {
				f.Header[k] = v
			}
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(f.Responses) == 0 {
		return nil, fmt.Errorf("%s: no response section", path)
	}
	return f, nil
}

// Requires reports whether the recording's server demands field back on
// the next request (the require2 header).
func (f *File) Requires(field string) bool {
	for _, r := range strings.Split(f.Header["require2"], ",") {
		if strings.TrimSpace(r) == field {
			return true
		}
	}
	return false
}

// Call is the tool call a response carries, as the client will see it
// after the rewrite. ID is empty when the recording's call had none.
type Call struct {
	ID string
}

// Round1 summarises response 1: its tool call (nil for a text answer), the
// reasoning text it streamed and the usage it reported (nil for none).
type Round1 struct {
	Call      *Call
	Reasoning string
	Usage     *Usage
}

// Usage is a reported usage: the last one of the response, top-level or
// in x_groq.
type Usage struct {
	Prompt, Completion, Total, Reasoning int
}

// Summary reads response 1, for the replay server's own checks of round
// two (the id and reasoning it must get back). Tests take what they expect
// from Expected, written by hand, not from this reading.
func (f *File) Summary() Round1 {
	var r Round1
	for _, data := range dataLines(f.Responses[0]) {
		var c struct {
			Choices []struct {
				Delta struct {
					ReasoningContent *string `json:"reasoning_content"`
					ToolCalls        []struct {
						ID string `json:"id"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *wireUsage `json:"usage"`
			XGroq *struct {
				Usage *wireUsage `json:"usage"`
			} `json:"x_groq"`
		}
		if json.Unmarshal([]byte(data), &c) != nil {
			continue
		}
		for _, ch := range c.Choices {
			if ch.Delta.ReasoningContent != nil {
				r.Reasoning += *ch.Delta.ReasoningContent
			}
			for _, tc := range ch.Delta.ToolCalls {
				if r.Call == nil {
					r.Call = &Call{}
				}
				if tc.ID != "" {
					r.Call.ID = tc.ID
				}
			}
		}
		switch {
		case c.Usage != nil:
			r.Usage = c.Usage.usage()
		case c.XGroq != nil && c.XGroq.Usage != nil && r.Usage == nil:
			r.Usage = c.XGroq.Usage.usage()
		}
	}
	return r
}

type wireUsage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
	Details    *struct {
		Reasoning int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (w *wireUsage) usage() *Usage {
	u := &Usage{Prompt: w.Prompt, Completion: w.Completion, Total: max(w.Total, w.Prompt+w.Completion)}
	if w.Details != nil {
		u.Reasoning = w.Details.Reasoning
	}
	return u
}

func dataLines(body string) []string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
			out = append(out, d)
		} else if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "[DONE]" {
			out = append(out, d)
		}
	}
	return out
}

var (
	nameRE = regexp.MustCompile(`"name":\s*"(?:[^"\\]|\\.)*"`)
	argsRE = regexp.MustCompile(`"arguments":\s*"(?:[^"\\]|\\.)*"`)
)

// Rewrite renames every tool call of body to wire and replaces its
// argument fragments, in order, with pieces of args: as many non-empty
// pieces as the recording had non-empty fragments. Everything else keeps
// its bytes.
func Rewrite(body, wire, args string) string {
	n := 0
	for _, m := range argsRE.FindAllString(body, -1) {
		if !isEmptyArgs(m) {
			n++
		}
	}
	if len(args) < n {
		args += strings.Repeat(" ", n-len(args)) // JSON allows trailing space
	}
	pieces := split(args, n)
	body = nameRE.ReplaceAllString(body, `"name":`+quote(wire))
	i := 0
	return argsRE.ReplaceAllStringFunc(body, func(m string) string {
		if isEmptyArgs(m) || i >= len(pieces) {
			return m
		}
		i++
		return `"arguments":` + quote(pieces[i-1])
	})
}

func isEmptyArgs(m string) bool {
	_, v, _ := strings.Cut(m, ":")
	return strings.TrimSpace(v) == `""`
}

// split cuts s into n pieces of about the same length, none empty.
func split(s string, n int) []string {
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	size := len(s) / n
	for i := range n {
		if i == n-1 {
			out = append(out, s)
			break
		}
		out = append(out, s[:size])
		s = s[size:]
	}
	return out
}

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// FinalAnswer is served for a request past the recording's last response:
// a short text answer.
const FinalAnswer = `data: {"id":"chatcmpl-quirks-final","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":"stop"}]}

data: {"id":"chatcmpl-quirks-final","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}

data: [DONE]

`

// Server replays a File.
type Server struct {
	URL  string // base URL, ending in /v1
	f    *File
	wire string
	args string

	mu       sync.Mutex
	requests [][]byte // guarded by mu
	problems []string // guarded by mu: what a round-two request lacked
}

// NewServer starts a loopback server replaying f; every tool call becomes
// a call of the tool with wire name wire and arguments args.
func NewServer(t testing.TB, f *File, wire, args string) *Server {
	t.Helper()
	s := &Server{f: f, wire: wire, args: args}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	s.URL = hs.URL + "/v1"
	return s
}

// Requests returns the bodies received so far.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.requests...)
}

// Problems returns what later requests lacked, one line each.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/chat/completions" {
		// GET /models and the like: not served, not counted.
		http.Error(w, `{"error":{"message":"unexpected path `+r.URL.Path+`"}}`, http.StatusNotFound)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, body)
	n := len(s.requests)
	s.mu.Unlock()
	if p := s.check(n, body); p != "" {
		s.mu.Lock()
		s.problems = append(s.problems, fmt.Sprintf("request %d: %s", n, p))
		s.mu.Unlock()
		rej, ok := s.f.Rejects[n]
		if !ok {
			rej = Reject{Status: http.StatusBadRequest, Body: `{"error":{"message":` + quote(p) + `,"type":"invalid_request_error"}}`}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rej.Status)
		_, _ = io.WriteString(w, rej.Body)
		return
	}
	reply := FinalAnswer
	if n <= len(s.f.Responses) {
		reply = Rewrite(s.f.Responses[n-1], s.wire, s.args)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, reply)
}

// wireRequest is the part of a request body the checks read.
type wireRequest struct {
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Messages []struct {
		Role             string  `json:"role"`
		ReasoningContent *string `json:"reasoning_content"`
		ToolCallID       string  `json:"tool_call_id"`
		ToolCalls        []struct {
			ID       string `json:"id"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

// check returns what request n lacks, or "".
func (s *Server) check(n int, body []byte) string {
	var req wireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return "the body is not JSON: " + err.Error()
	}
	advertised := false
	for _, t := range req.Tools {
		advertised = advertised || t.Function.Name == s.wire
	}
	if !advertised {
		return "the request does not advertise " + s.wire
	}
	if n < 2 {
		return ""
	}
	prev := s.f.Summary()
	if n > len(s.f.Responses) && n > 2 {
		return ""
	}
	if prev.Call == nil {
		return ""
	}
	// The assistant message of round one, with its call, then the result.
	for i, m := range req.Messages {
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		tc := m.ToolCalls[0]
		switch {
		case prev.Call.ID != "" && tc.ID != prev.Call.ID:
			return fmt.Sprintf("the assistant tool call has id %q, the server sent %q", tc.ID, prev.Call.ID)
		case tc.ID == "":
			return "the assistant tool call has no id"
		case tc.Function.Name != s.wire:
			return fmt.Sprintf("the assistant tool call is named %q, want %q", tc.Function.Name, s.wire)
		}
		if s.f.Requires("reasoning_content") && (m.ReasoningContent == nil || *m.ReasoningContent != prev.Reasoning) {
			return fmt.Sprintf("Missing reasoning_content field in the assistant message at message index %d", i)
		}
		for _, r := range req.Messages[i+1:] {
			if r.Role == "tool" && r.ToolCallID == tc.ID {
				return ""
			}
		}
		return "no tool message answers call " + tc.ID
	}
	return "no assistant message with the tool call of round one"
}
