package main

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/model/openai"
	"github.com/harness-dev/harness/internal/quirks"
)

// Provider input never ends a turn with an internal code, through the
// binary and a loopback server: tool arguments null (a recorded server's
// stream, its argument fragments rewritten) are answered TOOL_BAD_INPUT and
// the turn goes on; bytes that are not UTF-8 in delta.content and in the
// arguments are replaced with U+FFFD, the turn completes and its note says
// so.
func TestExecProviderInputGoesOn(t *testing.T) {
	t.Run("null arguments", func(t *testing.T) {
		t.Parallel()
		f, err := quirks.Load(filepath.Join(quirks.Dir(t), "openai-gpt4o-tool.sse"))
		if err != nil {
			t.Fatal(err)
		}
		srv := quirks.NewServer(t, f, openai.WireName("fs.read"), "null")
		u := newUser(t)
		u.write("README.md", "# input\n")
		r := u.run("", "exec", "--json", "--workspace", "local", "--base-url", srv.URL, "--model", "m", "read the README")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		res := ofType[event.ToolResult](r.events)
		if len(res) != 1 || res[0].OK || res[0].Error.Code != string(errcode.ToolBadInput) {
			t.Fatalf("tool results %+v, want one TOOL_BAD_INPUT", res)
		}
		tc := ofType[event.TurnCompleted](r.events)
		if len(tc) != 1 || tc[0].Status != event.StatusCompleted || len(srv.Requests()) != 2 {
			t.Fatalf("turn.completed %+v after %d requests, want completed after 2", tc, len(srv.Requests()))
		}
	})
	t.Run("null arguments in fragments", func(t *testing.T) {
		t.Parallel()
		open := chunkJSON(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"`+alias("git.diff")+`","arguments":"nu"}}]}`, "")
		rest := chunkJSON(`{"tool_calls":[{"index":0,"function":{"arguments":"ll"}}]}`, "tool_calls")
		srv := &chatServer{streams: []string{sse(open, rest), sse(chunkJSON(`{"role":"assistant","content":"Done."}`, "stop"))}}
		hs := httptest.NewServer(srv)
		defer hs.Close()
		u := newUser(t)
		u.write("README.md", "# input\n")
		r := u.run("", "exec", "--json", "--workspace", "local", "--base-url", hs.URL+"/v1", "--model", "m", "diff")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		res := ofType[event.ToolResult](r.events)
		if len(res) != 1 || res[0].OK || res[0].Error.Code != string(errcode.ToolBadInput) {
			t.Fatalf("tool results %+v, want one TOOL_BAD_INPUT", res)
		}
	})
	t.Run("invalid UTF-8", func(t *testing.T) {
		t.Parallel()
		// Raw bytes, not JSON escapes: what a server that cuts tokens
		// mid-character sends.
		call := chunkJSON(`{"role":"assistant","content":"look `+"\xff"+`","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"`+
			alias("fs.read")+`","arguments":"{\"path\": \"READ`+"\xff"+`ME.md\"}"}}]}`, "tool_calls")
		// A character cut between two chunks comes back whole.
		answer := sse(chunkJSON(`{"role":"assistant","content":"do`+"\xe2\x82"+`"}`, ""), chunkJSON(`{"content":"`+"\xac"+`ne `+"\xc0"+`"}`, "stop"))
		srv := &chatServer{streams: []string{sse(call), answer}}
		hs := httptest.NewServer(srv)
		defer hs.Close()
		u := newUser(t)
		u.write("README.md", "# input\n")
		r := u.run("", "exec", "--json", "--workspace", "local", "--base-url", hs.URL+"/v1", "--model", "m", "read the README")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		var asst []string
		for _, m := range ofType[event.MessageCompleted](r.events) {
			if m.Role == model.RoleAssistant {
				asst = append(asst, m.Content)
			}
		}
		if len(asst) != 2 || asst[0] != "look \uFFFD" || asst[1] != "do€ne \uFFFD" {
			t.Fatalf("assistant messages %q", asst)
		}
		calls := ofType[event.ToolCall](r.events)
		if len(calls) != 1 || !strings.Contains(string(calls[0].Input), "READ\uFFFDME.md") {
			t.Fatalf("tool.call %+v, want the arguments with U+FFFD", calls)
		}
		tc := ofType[event.TurnCompleted](r.events)
		if len(tc) != 1 || tc[0].Status != event.StatusCompleted || tc[0].Note == "" {
			t.Fatalf("turn.completed %+v, want completed with a note", tc)
		}
	})
}

// Bad flag values are usage errors (exit 2) before anything runs, not
// defaults run silently or an error blamed on something else; flags
// accepted by every command are accepted by every command.
func TestBadFlagValuesAreUsageErrors(t *testing.T) {
	u := newUser(t)
	s := u.script(`[{"content":"hello"}]`)
	for name, args := range map[string][]string{
		"negative window":        {"--context-window", "-1"},
		"negative tail":          {"--compact-tail", "-3"},
		"compact-at over 100":    {"--compact-at", "101"},
		"host id with newline":   {"--host-id", "a\nb"},
		"host id with control":   {"--host-id", "a\x1bb"},
		"host id only spaces":    {"--host-id", "   "},
		"tiny workspace quota":   {"--max-workspace-bytes", "1"},
		"whitespace-only prompt": {"--prompt", " \t\n "},
	} {
		t.Run(name, func(t *testing.T) {
			prompt := "hi"
			if args[0] == "--prompt" {
				prompt, args = args[1], nil
			}
			r := u.run("", append([]string{"exec", "--workspace", "local", "--fake-model", s, prompt}, args...)...)
			if r.code != exitUsage {
				t.Fatalf("exit %d, want %d (usage)\n%s", r.code, exitUsage, r.stderr)
			}
		})
	}
	t.Run("bad HARNESS_SPARE", func(t *testing.T) {
		v := newUser(t)
		v.extra = append(v.extra, "HARNESS_SPARE=maybe")
		r := v.run("", "exec", "--workspace", "local", "--fake-model", v.script(`[{"content":"hello"}]`), "hi")
		if r.code != exitUsage {
			t.Fatalf("exit %d, want %d (usage)\n%s", r.code, exitUsage, r.stderr)
		}
	})
	t.Run("discard --json", func(t *testing.T) {
		r := u.run("", "discard", "--json", "sess-00000000-0000-7000-8000-000000000000")
		if r.code == exitUsage {
			t.Fatalf("--json refused by discard: exit %d\n%s", r.code, r.stderr)
		}
	})
	// --config and --db naming a directory: the code of what failed.
	dir := t.TempDir()
	for name, c := range map[string]struct {
		args []string
		code errcode.Code
	}{
		"config dir": {[]string{"--config", dir}, errcode.ModelInvalidConfig},
		"db dir":     {[]string{"--db", dir}, errcode.SessClosed},
	} {
		t.Run(name, func(t *testing.T) {
			r := u.run("", append([]string{"sessions"}, c.args...)...)
			if r.code != exitFailed || !strings.HasPrefix(r.stderr, "harness: "+string(c.code)+": ") {
				t.Fatalf("exit %d, want %d with %s\n%s", r.code, exitFailed, c.code, r.stderr)
			}
		})
	}
}
