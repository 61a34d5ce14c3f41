package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

// Without a terminal nobody can answer a question: exec refuses
// --approve ask with a usage error before it opens anything, instead of
// denying every write and command and reporting success.
func TestExecAskWithoutTerminalIsAUsageError(t *testing.T) {
	u := newUser(t)
	u.write("README.md", "# ask\n")
	s := u.script(`[{"content":"hello","usage":{"promptTokens":10,"completionTokens":3}}]`)
	r := u.run("", "exec", "--workspace", "local", "--approve", "ask", "--fake-model", s, "hi")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--approve ask") {
		t.Fatalf("exit %d, want %d with the flag named; stderr:\n%s", r.code, exitUsage, r.stderr)
	}
	if _, err := os.Stat(u.db); !os.IsNotExist(err) {
		t.Errorf("the refused run touched the store %s: %v", u.db, err)
	}
	if r := u.run("", "exec", "--workspace", "local", "--approve", "auto", "--fake-model", s, "hi"); r.code != 0 {
		t.Errorf("--approve auto without a terminal: exit %d\n%s", r.code, r.stderr)
	}
}

// A failing process.exec is not reported as ✓: exec's text mode prints
// the exit code and the last lines of the output.
func TestExecPrintsAFailedCommand(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# fail\n")
	s := u.script(`[{"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["sh","-c","i=1; while [ $i -le 15 ]; do echo line $i; i=$((i+1)); done; echo boom >&2; exit 3"]}}],"usage":{"promptTokens":10,"completionTokens":3}},
	  {"content":"The build failed.","usage":{"promptTokens":20,"completionTokens":5}}]`)
	r := u.run("", "exec", "--image", "harness-busybox", "--fake-model", s, "build it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"✗ exit 3", "stdout (last 10 of 15 lines)", "│ line 15", "│ line 6\n", "stderr:", "│ boom"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// The output came live (every line once), then the tail again under ✗.
	_, tail, _ := strings.Cut(r.stderr, "✗ exit 3")
	if strings.Contains(tail, "│ line 5\n") || strings.Count(r.stderr, "│ line 5\n") != 1 {
		t.Errorf("more than the tail printed at the end, or the output not live:\n%s", r.stderr)
	}
}

// On a terminal, exec --approve ask asks: y runs the command, a typed
// reason denies the next one and reaches the model.
func TestExecAskOnATerminal(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# ask\n")
	s := u.script(`[{"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["echo","hello from the box"]}}],"usage":{"promptTokens":10,"completionTokens":3}},
	  {"toolCalls":[{"id":"c2","name":"fs.write","arguments":{"path":"x.txt","contents":"x\n"}}],"usage":{"promptTokens":20,"completionTokens":3}},
	  {"content":"All done.","usage":{"promptTokens":30,"completionTokens":5}}]`)
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "exec", "--image", "harness-busybox", "--approve", "ask", "--fake-model", s, "go"))
	tm.waitFor("? process.exec wants to run echo 'hello from the box'", "y allow once")
	tm.line("y")
	tm.waitFor("✓ exit 0", "? fs.write wants to write x.txt  +1 −0", "│ +x")
	tm.line("not in this repo")
	scr := tm.waitFor("✗ TOOL_PERMISSION_DENIED", "All done.", "completed", prompt)
	if !strings.Contains(scr, "they said: not in this repo") {
		t.Errorf("the reason is not in the denial:\n%s", scr)
	}
	if _, err := os.Stat(filepath.Join(u.project, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("a denied write reached the host: %v", err)
	}
}

// exec --approve ask --json on a terminal: permission.requested holds the
// call's input and, for a write, the diff against the workspace file; the
// question exec prints shows that diff, not one it computed itself.
func TestExecAskJSONQuestionCarriesItsSubject(t *testing.T) {
	u := newUser(t)
	u.write("README.md", "# ask\nold line\n")
	s := u.script(`[{"toolCalls":[{"id":"c1","name":"fs.write","arguments":{"path":"README.md","contents":"# ask\nnew line\n"}}],"usage":{"promptTokens":10,"completionTokens":3}},
	  {"toolCalls":[{"id":"c2","name":"process.exec","arguments":{"argv":["echo","two words"]}}],"usage":{"promptTokens":20,"completionTokens":3}},
	  {"content":"All done.","usage":{"promptTokens":30,"completionTokens":5}}]`)
	out := filepath.Join(t.TempDir(), "events.jsonl")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "exec", "--workspace", "local", "--approve", "ask", "--json", "--fake-model", s, "go") + " >" + shellQuote(out))
	tm.waitFor("? fs.write wants to write README.md  +1 −1", "│ -old line", "│ +new line", "y allow once")
	tm.line("n")
	tm.waitFor("? process.exec wants to run echo 'two words'")
	tm.line("n")
	tm.waitUntil("exec to end", func(s string) bool {
		lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
		return strings.Count(s, "? ") >= 2 && strings.TrimSpace(lines[len(lines)-1]) == strings.TrimSpace(prompt)
	})
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var asked []event.PermissionRequested
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		e, err := event.Decode([]byte(line))
		if err != nil {
			t.Fatalf("decode %s: %v", line, err)
		}
		if d, ok := e.Data.(event.PermissionRequested); ok {
			asked = append(asked, d)
		}
	}
	if len(asked) != 2 {
		t.Fatalf("%d permission.requested events, want 2:\n%s", len(asked), b)
	}
	w, x := asked[0], asked[1]
	if w.Action != "fs.write" || string(w.Input) != `{"path":"README.md","contents":"# ask\nnew line\n"}` ||
		w.Patch != "--- a/README.md\n+++ b/README.md\n@@ -1,2 +1,2 @@\n # ask\n-old line\n+new line\n" ||
		w.Lines == nil || *w.Lines != (event.LineCounts{Added: 1, Deleted: 1}) {
		t.Errorf("the write's question = %+v (input %s, patch %q)", w, w.Input, w.Patch)
	}
	if x.Action != "process.exec" || string(x.Input) != `{"argv":["echo","two words"]}` || x.Patch != "" || x.Lines != nil {
		t.Errorf("the command's question = %+v (input %s)", x, x.Input)
	}
	if got, err := os.ReadFile(filepath.Join(u.project, "README.md")); err != nil || string(got) != "# ask\nold line\n" {
		t.Errorf("README.md after denied write = %q, %v", got, err)
	}
}
