package tools_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/tools"
)

// jstr returns s as a JSON string literal.
func jstr(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// argvOf returns a JSON array of n copies of s.
func argvOf(n int, s string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = jstr(s)
	}
	return "[" + strings.Join(items, ",") + "]"
}

type parseCase struct {
	name  string
	tool  string
	args  string
	code  errcode.Code // "" means accepted
	field string       // for TOOL_BAD_INPUT: the field the message must name
	input any          // for accepted calls
	subj  string
}

func TestParse(t *testing.T) {
	long := strings.Repeat("a", tools.MaxPathBytes)
	arg := strings.Repeat("x", tools.MaxArgBytes)
	contents := strings.Repeat("é", tools.MaxWriteBytes/2) // 131072 bytes of 2-byte runes
	tests := []parseCase{
		// Names.
		{name: "unknown tool", tool: "fs.delete", args: `{}`, code: errcode.ToolNotFound},
		{name: "tool name case", tool: "FS.READ", args: `{"path":"a"}`, code: errcode.ToolNotFound},
		{name: "wire alias is not a name", tool: "harness_66732e72656164", args: `{"path":"a"}`, code: errcode.ToolNotFound},
		{name: "empty tool name", tool: "", args: `{}`, code: errcode.ToolNotFound},
		// A tool name is shown whole up to 64 bytes, cut after.
		{name: "tool name of 64 bytes", tool: strings.Repeat("t", 64), args: `{}`, code: errcode.ToolNotFound},
		{name: "tool name of 65 bytes", tool: strings.Repeat("t", 65), args: `{}`, code: errcode.ToolNotFound},

		// The object itself.
		{name: "empty args", tool: "fs.read", args: ``, code: errcode.ToolBadInput, field: "arguments"},
		{name: "null args", tool: "fs.read", args: `null`, code: errcode.ToolBadInput, field: "arguments"},
		{name: "array args", tool: "fs.read", args: `["a"]`, code: errcode.ToolBadInput, field: "arguments"},
		{name: "string args", tool: "fs.read", args: `"a"`, code: errcode.ToolBadInput, field: "arguments"},
		{name: "invalid json", tool: "fs.read", args: `{"path":}`, code: errcode.ToolBadInput, field: "arguments"},
		{name: "unterminated", tool: "fs.read", args: `{"path":"a"`, code: errcode.ToolBadInput, field: "arguments"},
		{name: "trailing comma", tool: "fs.read", args: `{"path":"a",}`, code: errcode.ToolBadInput, field: "arguments"},
		{name: "trailing garbage", tool: "fs.read", args: `{"path":"a"} x`, code: errcode.ToolBadInput, field: "arguments"},
		{name: "second object", tool: "fs.read", args: `{"path":"a"}{"path":"b"}`, code: errcode.ToolBadInput, field: "arguments"},
		{name: "trailing number", tool: "git.diff", args: `{} 1`, code: errcode.ToolBadInput, field: "arguments"},
		{name: "surrounding whitespace", tool: "fs.read", args: " \n\t{\"path\" : \"a\"}\r\n ", input: tools.ReadInput{Path: "a"}, subj: "a"},
		{name: "invalid utf8", tool: "fs.read", args: "{\"path\":\"a\xff\"}", code: errcode.ToolBadInput, field: "arguments"},
		// Arguments of MaxArgsBytes are decoded (and fail their field's
		// bound); one byte more are refused unread.
		{name: "args at the size bound", tool: "fs.read", args: `{"path":"` + strings.Repeat("a", tools.MaxArgsBytes-len(`{"path":""}`)) + `"}`,
			code: errcode.ToolBadInput, field: "path"},
		{name: "args over the size bound", tool: "fs.read", args: `{"path":"` + strings.Repeat("a", tools.MaxArgsBytes+1-len(`{"path":""}`)) + `"}`,
			code: errcode.ToolBadInput, field: "arguments"},

		// fs.read keys and types.
		{name: "read ok", tool: "fs.read", args: `{"path":"cmd/main.go"}`, input: tools.ReadInput{Path: "cmd/main.go"}, subj: "cmd/main.go"},
		{name: "read escaped key", tool: "fs.read", args: `{"pat\u0068":"a"}`, input: tools.ReadInput{Path: "a"}, subj: "a"},
		{name: "read key case", tool: "fs.read", args: `{"PATH":"a"}`, code: errcode.ToolBadInput, field: "PATH"},
		{name: "read key case and right key", tool: "fs.read", args: `{"path":"a","Path":"b"}`, code: errcode.ToolBadInput, field: "Path"},
		{name: "read duplicate key", tool: "fs.read", args: `{"path":"a","path":"b"}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read extra key", tool: "fs.read", args: `{"path":"a","offset":1}`, code: errcode.ToolBadInput, field: "offset"},
		// An unknown key is shown whole up to 64 bytes, cut after.
		{name: "read unknown key of 64 bytes", tool: "fs.read", args: `{"` + strings.Repeat("k", 64) + `":1}`, code: errcode.ToolBadInput, field: strings.Repeat("k", 64)},
		{name: "read unknown key of 65 bytes", tool: "fs.read", args: `{"` + strings.Repeat("k", 65) + `":1}`, code: errcode.ToolBadInput, field: strings.Repeat("k", 64) + "…"},
		{name: "read missing", tool: "fs.read", args: `{}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read null", tool: "fs.read", args: `{"path":null}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read number", tool: "fs.read", args: `{"path":1}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read array", tool: "fs.read", args: `{"path":["a"]}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read object", tool: "fs.read", args: `{"path":{"p":"a"}}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read bool", tool: "fs.read", args: `{"path":true}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read empty path", tool: "fs.read", args: `{"path":""}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read max path", tool: "fs.read", args: `{"path":"` + long + `"}`, input: tools.ReadInput{Path: long}, subj: long},
		{name: "read path too long", tool: "fs.read", args: `{"path":"` + long + `a"}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read lone high surrogate", tool: "fs.read", args: `{"path":"a\ud800"}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read lone low surrogate", tool: "fs.read", args: `{"path":"\udc00a"}`, code: errcode.ToolBadInput, field: "path"},
		{name: "read surrogate pair", tool: "fs.read", args: `{"path":"\ud83d\ude00"}`, input: tools.ReadInput{Path: "😀"}, subj: "😀"},
		{name: "read escaped backslash-u", tool: "fs.read", args: `{"path":"a\\ud800"}`, code: errcode.WorkspacePath},

		// Path rules.
		{name: "read dotdot", tool: "fs.read", args: `{"path":"../x"}`, code: errcode.WorkspacePath},
		{name: "read inner dotdot", tool: "fs.read", args: `{"path":"a/../../x"}`, code: errcode.WorkspacePath},
		{name: "read absolute", tool: "fs.read", args: `{"path":"/etc/passwd"}`, code: errcode.WorkspacePath},
		{name: "read dot segment", tool: "fs.read", args: `{"path":"./a"}`, code: errcode.WorkspacePath},
		{name: "read root", tool: "fs.read", args: `{"path":"."}`, code: errcode.WorkspacePath},
		{name: "read empty segment", tool: "fs.read", args: `{"path":"a//b"}`, code: errcode.WorkspacePath},
		{name: "read trailing slash", tool: "fs.read", args: `{"path":"a/"}`, code: errcode.WorkspacePath},
		{name: "read git", tool: "fs.read", args: `{"path":".git/config"}`, code: errcode.WorkspacePath},
		{name: "read nested git", tool: "fs.read", args: `{"path":"sub/.git/HEAD"}`, code: errcode.WorkspacePath},
		{name: "read control char", tool: "fs.read", args: `{"path":"a\nb"}`, code: errcode.WorkspacePath},
		{name: "read nul", tool: "fs.read", args: `{"path":"a\u0000b"}`, code: errcode.WorkspacePath},
		{name: "read backslash", tool: "fs.read", args: `{"path":"..\\x"}`, code: errcode.WorkspacePath},

		// fs.list.
		{name: "list root", tool: "fs.list", args: `{"path":"."}`, input: tools.ListInput{Path: "."}, subj: "."},
		{name: "list dir", tool: "fs.list", args: `{"path":"cmd"}`, input: tools.ListInput{Path: "cmd"}, subj: "cmd"},
		{name: "list missing path", tool: "fs.list", args: `{}`, code: errcode.ToolBadInput, field: "path"},
		{name: "list extra", tool: "fs.list", args: `{"path":".","recursive":true}`, code: errcode.ToolBadInput, field: "recursive"},
		{name: "list dotdot", tool: "fs.list", args: `{"path":".."}`, code: errcode.WorkspacePath},
		{name: "list dot slash", tool: "fs.list", args: `{"path":"./"}`, code: errcode.WorkspacePath},
		{name: "list git", tool: "fs.list", args: `{"path":".git"}`, code: errcode.WorkspacePath},
		{name: "list absolute", tool: "fs.list", args: `{"path":"/"}`, code: errcode.WorkspacePath},

		// fs.write.
		{name: "write ok", tool: "fs.write", args: `{"path":"a.go","contents":"package a\n"}`,
			input: tools.WriteInput{Path: "a.go", Contents: "package a\n"}, subj: "a.go"},
		{name: "write empty contents", tool: "fs.write", args: `{"contents":"","path":"a"}`,
			input: tools.WriteInput{Path: "a", Contents: ""}, subj: "a"},
		{name: "write max contents", tool: "fs.write", args: `{"path":"a","contents":` + jstr(contents) + `}`,
			input: tools.WriteInput{Path: "a", Contents: contents}, subj: "a"},
		{name: "write contents too big", tool: "fs.write", args: `{"path":"a","contents":` + jstr(contents+"x") + `}`,
			code: errcode.ToolBadInput, field: "contents"},
		{name: "write extra field", tool: "fs.write", args: `{"path":"a","contents":"x","mode":"0755"}`,
			code: errcode.ToolBadInput, field: "mode"},
		{name: "write append field", tool: "fs.write", args: `{"path":"a","contents":"x","append":true}`,
			code: errcode.ToolBadInput, field: "append"},
		{name: "write content singular", tool: "fs.write", args: `{"path":"a","content":"x"}`,
			code: errcode.ToolBadInput, field: "content"},
		{name: "write missing contents", tool: "fs.write", args: `{"path":"a"}`, code: errcode.ToolBadInput, field: "contents"},
		{name: "write null contents", tool: "fs.write", args: `{"path":"a","contents":null}`, code: errcode.ToolBadInput, field: "contents"},
		{name: "write contents as array", tool: "fs.write", args: `{"path":"a","contents":["x"]}`, code: errcode.ToolBadInput, field: "contents"},
		{name: "write contents lone surrogate", tool: "fs.write", args: `{"path":"a","contents":"\udfff"}`, code: errcode.ToolBadInput, field: "contents"},
		{name: "write contents invalid utf8", tool: "fs.write", args: "{\"path\":\"a\",\"contents\":\"\xc3\"}", code: errcode.ToolBadInput, field: "arguments"},
		{name: "write dotdot", tool: "fs.write", args: `{"path":"../a","contents":"x"}`, code: errcode.WorkspacePath},
		{name: "write git hook", tool: "fs.write", args: `{"path":".git/hooks/pre-commit","contents":"x"}`, code: errcode.WorkspacePath},
		{name: "write root", tool: "fs.write", args: `{"path":".","contents":"x"}`, code: errcode.WorkspacePath},

		// process.exec.
		{name: "exec ok", tool: "process.exec", args: `{"argv":["go","test","./..."]}`,
			input: tools.ExecInput{Argv: []string{"go", "test", "./..."}, TimeoutMs: tools.DefaultTimeoutMs}, subj: "go test ./..."},
		{name: "exec all fields", tool: "process.exec", args: `{"argv":["ls","-la"],"cwd":"sub/dir","timeoutMs":1}`,
			input: tools.ExecInput{Argv: []string{"ls", "-la"}, Cwd: "sub/dir", TimeoutMs: 1}, subj: "ls -la"},
		{name: "exec cwd root", tool: "process.exec", args: `{"argv":["ls"],"cwd":"."}`,
			input: tools.ExecInput{Argv: []string{"ls"}, Cwd: ".", TimeoutMs: tools.DefaultTimeoutMs}, subj: "ls"},
		{name: "exec null optionals", tool: "process.exec", args: `{"argv":["ls"],"cwd":null,"timeoutMs":null}`,
			input: tools.ExecInput{Argv: []string{"ls"}, TimeoutMs: tools.DefaultTimeoutMs}, subj: "ls"},
		{name: "exec max timeout", tool: "process.exec", args: `{"argv":["ls"],"timeoutMs":600000}`,
			input: tools.ExecInput{Argv: []string{"ls"}, TimeoutMs: tools.MaxTimeoutMs}, subj: "ls"},
		{name: "exec subject quotes", tool: "process.exec", args: `{"argv":["sh","-c","echo hi > f",""]}`,
			input: tools.ExecInput{Argv: []string{"sh", "-c", "echo hi > f", ""}, TimeoutMs: tools.DefaultTimeoutMs}, subj: `sh -c 'echo hi > f' ''`},
		{name: "exec max argv", tool: "process.exec", args: `{"argv":` + argvOf(tools.MaxArgs, "a") + `}`,
			input: tools.ExecInput{Argv: strings.Split(strings.Repeat("a", tools.MaxArgs), ""), TimeoutMs: tools.DefaultTimeoutMs},
			subj:  strings.TrimSpace(strings.Repeat("a ", tools.MaxArgs))},
		// The subject is argv as typed, up to 4096 bytes whole, cut after.
		{name: "exec subject of 4096 bytes", tool: "process.exec", args: `{"argv":["echo","` + arg[:4096-len("echo ")] + `"]}`,
			input: tools.ExecInput{Argv: []string{"echo", arg[:4096-len("echo ")]}, TimeoutMs: tools.DefaultTimeoutMs}, subj: "echo " + arg[:4096-len("echo ")]},
		{name: "exec max arg", tool: "process.exec", args: `{"argv":["echo","` + arg + `"]}`,
			input: tools.ExecInput{Argv: []string{"echo", arg}, TimeoutMs: tools.DefaultTimeoutMs}, subj: ("echo " + arg)[:4096] + "…"},
		{name: "exec shell cmd", tool: "process.exec", args: `{"cmd":"ls -la"}`, code: errcode.ToolBadInput, field: "cmd"},
		{name: "exec shell command", tool: "process.exec", args: `{"command":"rm -rf /"}`, code: errcode.ToolBadInput, field: "command"},
		{name: "exec shell with argv", tool: "process.exec", args: `{"argv":["ls"],"shell":true}`, code: errcode.ToolBadInput, field: "shell"},
		{name: "exec argv string", tool: "process.exec", args: `{"argv":"ls -la"}`, code: errcode.ToolBadInput, field: "argv"},
		{name: "exec argv object", tool: "process.exec", args: `{"argv":{"0":"ls"}}`, code: errcode.ToolBadInput, field: "argv"},
		{name: "exec argv null", tool: "process.exec", args: `{"argv":null}`, code: errcode.ToolBadInput, field: "argv"},
		{name: "exec argv empty", tool: "process.exec", args: `{"argv":[]}`, code: errcode.ToolBadInput, field: "argv"},
		{name: "exec argv too many", tool: "process.exec", args: `{"argv":` + argvOf(tools.MaxArgs+1, "a") + `}`, code: errcode.ToolBadInput, field: "argv"},
		{name: "exec arg too long", tool: "process.exec", args: `{"argv":["echo","` + arg + `x"]}`, code: errcode.ToolBadInput, field: "argv[1]"},
		{name: "exec arg nul", tool: "process.exec", args: `{"argv":["echo","a\u0000b"]}`, code: errcode.ToolBadInput, field: "argv[1]"},
		{name: "exec arg number", tool: "process.exec", args: `{"argv":["sleep",1]}`, code: errcode.ToolBadInput, field: "argv[1]"},
		{name: "exec arg null", tool: "process.exec", args: `{"argv":["ls",null]}`, code: errcode.ToolBadInput, field: "argv[1]"},
		{name: "exec arg nested", tool: "process.exec", args: `{"argv":[["ls"]]}`, code: errcode.ToolBadInput, field: "argv[0]"},
		{name: "exec argv key case", tool: "process.exec", args: `{"Argv":["ls"]}`, code: errcode.ToolBadInput, field: "Argv"},
		{name: "exec timeout zero", tool: "process.exec", args: `{"argv":["ls"],"timeoutMs":0}`, code: errcode.ToolBadInput, field: "timeoutMs"},
		{name: "exec timeout negative", tool: "process.exec", args: `{"argv":["ls"],"timeoutMs":-5}`, code: errcode.ToolBadInput, field: "timeoutMs"},
		{name: "exec timeout over", tool: "process.exec", args: `{"argv":["ls"],"timeoutMs":600001}`, code: errcode.ToolBadInput, field: "timeoutMs"},
		{name: "exec timeout huge", tool: "process.exec", args: `{"argv":["ls"],"timeoutMs":99999999999999999999}`, code: errcode.ToolBadInput, field: "timeoutMs"},
		{name: "exec timeout fraction", tool: "process.exec", args: `{"argv":["ls"],"timeoutMs":1.5}`, code: errcode.ToolBadInput, field: "timeoutMs"},
		{name: "exec timeout point zero", tool: "process.exec", args: `{"argv":["ls"],"timeoutMs":100.0}`, code: errcode.ToolBadInput, field: "timeoutMs"},
		{name: "exec timeout exponent", tool: "process.exec", args: `{"argv":["ls"],"timeoutMs":1e3}`, code: errcode.ToolBadInput, field: "timeoutMs"},
		{name: "exec timeout string", tool: "process.exec", args: `{"argv":["ls"],"timeoutMs":"100"}`, code: errcode.ToolBadInput, field: "timeoutMs"},
		{name: "exec timeout seconds key", tool: "process.exec", args: `{"argv":["ls"],"timeout":100}`, code: errcode.ToolBadInput, field: "timeout"},
		{name: "exec cwd empty", tool: "process.exec", args: `{"argv":["ls"],"cwd":""}`, code: errcode.ToolBadInput, field: "cwd"},
		{name: "exec cwd number", tool: "process.exec", args: `{"argv":["ls"],"cwd":1}`, code: errcode.ToolBadInput, field: "cwd"},
		{name: "exec cwd dotdot", tool: "process.exec", args: `{"argv":["ls"],"cwd":"../.."}`, code: errcode.WorkspacePath},
		{name: "exec cwd absolute", tool: "process.exec", args: `{"argv":["ls"],"cwd":"/tmp"}`, code: errcode.WorkspacePath},
		{name: "exec cwd git", tool: "process.exec", args: `{"argv":["ls"],"cwd":".git"}`, code: errcode.WorkspacePath},

		// process.exec: background jobs.
		{name: "job start", tool: "process.exec", args: `{"argv":["python3","-m","http.server"],"background":true}`,
			input: tools.ExecInput{Argv: []string{"python3", "-m", "http.server"}, TimeoutMs: tools.DefaultTimeoutMs, Background: true},
			subj:  "python3 -m http.server (in the background: it stays running until stopped)"},
		{name: "job start false", tool: "process.exec", args: `{"argv":["ls"],"background":false}`,
			input: tools.ExecInput{Argv: []string{"ls"}, TimeoutMs: tools.DefaultTimeoutMs}, subj: "ls"},
		{name: "job list", tool: "process.exec", args: `{"action":"list"}`, input: tools.ExecInput{Action: "list"}, subj: "jobs: list"},
		{name: "job output", tool: "process.exec", args: `{"action":"output","job":"job-1","offset":42}`,
			input: tools.ExecInput{Action: "output", Job: "job-1", Offset: 42}, subj: "job job-1: output"},
		{name: "job stop", tool: "process.exec", args: `{"job":"job-1","action":"stop"}`,
			input: tools.ExecInput{Action: "stop", Job: "job-1"}, subj: "job job-1: stop"},
		{name: "job status ignores timeout", tool: "process.exec", args: `{"action":"status","job":"job-1","timeoutMs":5}`,
			input: tools.ExecInput{Action: "status", Job: "job-1"}, subj: "job job-1: status"},
		{name: "job background string", tool: "process.exec", args: `{"argv":["ls"],"background":"yes"}`, code: errcode.ToolBadInput, field: "background"},
		{name: "job background number", tool: "process.exec", args: `{"argv":["ls"],"background":1}`, code: errcode.ToolBadInput, field: "background"},
		{name: "job background without argv", tool: "process.exec", args: `{"background":true}`, code: errcode.ToolBadInput, field: "argv"},
		{name: "job unknown action", tool: "process.exec", args: `{"action":"kill","job":"job-1"}`, code: errcode.ToolBadInput, field: "action"},
		{name: "job action case", tool: "process.exec", args: `{"action":"STOP","job":"job-1"}`, code: errcode.ToolBadInput, field: "action"},
		{name: "job action with argv", tool: "process.exec", args: `{"argv":["ls"],"action":"list"}`, code: errcode.ToolBadInput, field: "action"},
		{name: "job action with background", tool: "process.exec", args: `{"action":"list","background":true}`, code: errcode.ToolBadInput, field: "background"},
		{name: "job action with cwd", tool: "process.exec", args: `{"action":"list","cwd":"a"}`, code: errcode.ToolBadInput, field: "cwd"},
		{name: "job stop without job", tool: "process.exec", args: `{"action":"stop"}`, code: errcode.ToolBadInput, field: "job"},
		{name: "job list with job", tool: "process.exec", args: `{"action":"list","job":"job-1"}`, code: errcode.ToolBadInput, field: "job"},
		{name: "job without action", tool: "process.exec", args: `{"argv":["ls"],"job":"job-1"}`, code: errcode.ToolBadInput, field: "job"},
		{name: "job offset without output", tool: "process.exec", args: `{"action":"stop","job":"job-1","offset":3}`, code: errcode.ToolBadInput, field: "offset"},
		{name: "job offset with argv", tool: "process.exec", args: `{"argv":["ls"],"offset":3}`, code: errcode.ToolBadInput, field: "offset"},
		{name: "job offset negative", tool: "process.exec", args: `{"action":"output","job":"job-1","offset":-1}`, code: errcode.ToolBadInput, field: "offset"},
		{name: "job id empty", tool: "process.exec", args: `{"action":"output","job":""}`, code: errcode.ToolBadInput, field: "job"},
		{name: "job id too long", tool: "process.exec", args: `{"action":"output","job":"` + strings.Repeat("j", 65) + `"}`, code: errcode.ToolBadInput, field: "job"},
		{name: "job id number", tool: "process.exec", args: `{"action":"output","job":1}`, code: errcode.ToolBadInput, field: "job"},
		{name: "job unknown key", tool: "process.exec", args: `{"action":"list","jobs":true}`, code: errcode.ToolBadInput, field: "jobs"},
		// git.diff.
		{name: "diff ok", tool: "git.diff", args: `{}`, input: tools.DiffInput{}, subj: ""},
		{name: "diff whitespace", tool: "git.diff", args: ` { } `, input: tools.DiffInput{}, subj: ""},
		{name: "diff extra", tool: "git.diff", args: `{"path":"a"}`, code: errcode.ToolBadInput, field: "path"},
		{name: "diff null", tool: "git.diff", args: `null`, code: errcode.ToolBadInput, field: "arguments"},
		{name: "diff array", tool: "git.diff", args: `[]`, code: errcode.ToolBadInput, field: "arguments"},
	}
	// What the model reads when a call is refused changes only through a
	// reviewed diff: the messages are pinned in testdata/refusals.golden
	// (go test ./tools -run TestParse -update).
	var refusals bytes.Buffer
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, rerr := tools.Parse(tt.tool, json.RawMessage(tt.args))
			if tt.code != "" {
				if rerr == nil {
					t.Fatalf("Parse accepted %s: %+v", tt.args, c)
				}
				fmt.Fprintf(&refusals, "%s: %s: %s\n", tt.name, rerr.Code, rerr.Message)
				if rerr.Code != tt.code {
					t.Fatalf("code = %s (%s), want %s", rerr.Code, rerr.Message, tt.code)
				}
				// The contract requires the message to name the offending
				// field; that is the one property of the text checked here.
				if tt.field != "" && !strings.Contains(rerr.Message, tt.field) {
					t.Errorf("message %q does not name %q", rerr.Message, tt.field)
				}
				if diff := cmp.Diff(tools.Call{}, c); diff != "" {
					t.Errorf("a refused Parse returned a call: %s", diff)
				}
				return
			}
			if rerr != nil {
				t.Fatalf("Parse(%s) = %+v", tt.args, rerr)
			}
			want := tools.Call{Tool: tt.tool, Input: tt.input, Subject: tt.subj}
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("call (-want +got):\n%s", diff)
			}
		})
	}
	checkGolden(t, "refusals.golden", refusals.Bytes())
}

// TestParseSubjectBounded keeps the display subject short for a huge argv.
func TestParseSubjectBounded(t *testing.T) {
	args := `{"argv":` + argvOf(tools.MaxArgs, strings.Repeat("y", tools.MaxArgBytes)) + `}`
	c, rerr := tools.Parse("process.exec", json.RawMessage(args))
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(c.Subject) > 4096+len("…") {
		t.Errorf("subject is %d bytes", len(c.Subject))
	}
	if len(c.Input.(tools.ExecInput).Argv) != tools.MaxArgs {
		t.Error("argv lost items")
	}
}
