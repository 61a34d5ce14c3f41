package headless

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/tools"
)

// A write's question says what the write does to the workspace file: its
// +N −M against the real contents, and the head of both sides of the
// change, so that an overwrite is not approved unseen.
func TestAskTextShowsTheWrite(t *testing.T) {
	root := t.TempDir()
	var readme strings.Builder
	for i := range 140 {
		readme.WriteString("line " + strconv.Itoa(i+1) + " of a long README\n")
	}
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte(readme.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.OpenLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close(t.Context()) })

	// The question as the runtime records it: the diff is tools.Preview's,
	// against the file as it is.
	write := func(path, contents string) question {
		in, _ := json.Marshal(map[string]string{"path": path, "contents": contents})
		call, rerr := tools.Parse("fs.write", in)
		if rerr != nil {
			t.Fatal(rerr.Code)
		}
		patch, lines := tools.Preview(t.Context(), ws, call)
		if lines == nil {
			t.Fatalf("no preview of the write to %s", path)
		}
		return question{id: "perm-1", tool: "fs.write", subject: path, input: in, patch: patch}
	}
	for _, c := range []struct {
		name string
		q    question
		want []string
		not  []string
	}{
		{"overwrite", write("README.md", "# Short\nthree lines\nnow\n"),
			[]string{"? fs.write wants to write README.md  +3 −140\n", "│ -line 1 of a long README", "│ … 135 more removed lines", "│ +# Short", "│ +now", "y allow once"},
			[]string{"line 9 of"}},
		{"new file", write("docs/new.md", "hello\n"),
			[]string{"? fs.write wants to write docs/new.md  +1 −0\n", "│ +hello"}, nil},
		{"command", question{id: "perm-2", tool: "process.exec", input: json.RawMessage(`{"argv":["rm","-rf","build dir"]}`)},
			[]string{"? process.exec wants to run rm -rf 'build dir'\n", "a allow process.exec for this turn · s for this session"}, []string{"│", "+"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := askText(c.q)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("the question lacks %q:\n%s", w, got)
				}
			}
			for _, w := range c.not {
				if strings.Contains(got, w) {
					t.Errorf("the question holds %q:\n%s", w, got)
				}
			}
		})
	}
}

// Typed answers: y once, a the turn, s the session; n or nothing denies;
// any other text denies with it as the reason.
func TestLineAnswer(t *testing.T) {
	for _, c := range []struct {
		line  string
		allow bool
		scope runtime.Scope
	}{
		{"y\n", true, runtime.ScopeOnce}, {"a", true, runtime.ScopeRun}, {"S\n", true, runtime.ScopeSession},
		{"session", true, runtime.ScopeSession}, {"n", false, runtime.ScopeOnce}, {"", false, runtime.ScopeOnce},
		{"use go vet instead", false, runtime.ScopeOnce},
	} {
		a := lineAnswer(c.line)
		if a.Allow != c.allow || a.Scope != c.scope {
			t.Errorf("lineAnswer(%q) = %+v", c.line, a)
		}
	}
}

// exec's live output keeps stdout and stderr in the order their events
// came, a line each: a line of one stream left unfinished (the sandbox
// may hold its newline) ends when the other stream's output comes, and
// its late newline adds no empty line.
func TestLiveOutputInterleaved(t *testing.T) {
	for _, c := range []struct {
		name string
		evs  []event.ToolOutput
		want string
	}{
		{"stderr between", []event.ToolOutput{
			{Stream: event.StreamStdout, Text: "first-line\n"}, {Stream: event.StreamStderr, Text: "second-line"},
			{Stream: event.StreamStdout, Text: "third-line\n"}, {Stream: event.StreamStderr, Text: "\n"}},
			"    │ first-line\n    │ second-line\n    │ third-line\n"},
		{"stderr first", []event.ToolOutput{
			{Stream: event.StreamStderr, Text: "warn"}, {Stream: event.StreamStdout, Text: "out-1\nout-2\n"},
			{Stream: event.StreamStderr, Text: "\nwarn-2\n"}},
			"    │ warn\n    │ out-1\n    │ out-2\n    │ warn-2\n"},
		{"one stream split", []event.ToolOutput{
			{Stream: event.StreamStdout, Text: "hal"}, {Stream: event.StreamStdout, Text: "f\nnext\n"}},
			"    │ half\n    │ next\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p printer
			var b strings.Builder
			for _, e := range c.evs {
				e.CallID = "call-1"
				p.output(&b, e)
			}
			p.endOutput(&b)
			if b.String() != c.want {
				t.Errorf("printed %q, want %q", b.String(), c.want)
			}
		})
	}
}
