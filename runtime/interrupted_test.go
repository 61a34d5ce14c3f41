package runtime_test

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
)

// A session whose turn stopped mid-way (its process killed) says what was
// running: its log, read while the turn still runs, is what a killed
// process leaves. It said "during a model request" when a tool call ran,
// and nothing of what the turn had done.
func TestInterruptedSaysWhatRan(t *testing.T) {
	m := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.list","arguments":{"path":"."}}]},
		{"toolCalls":[{"id":"c2","name":"fs.read","arguments":{"path":"README.md"}}]},{"content":"read"}]`)
	root := t.TempDir()
	ws, err := workspace.OpenLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedWorkspace{Workspace: ws, started: make(chan string, 1), release: make(chan struct{})}
	writeFile(t, root, "README.md", "# demo\n")
	f := newFixtureWS(t, m, m, g, root, nil)
	run := f.start("read the readme")
	<-g.started // fs.read README.md runs
	_, err = runtime.LatestTerminal(t.Context(), f.st, f.sess.ID())
	mustCode(t, err, errcode.RuntimeCheckpointInterrupted)
	msg := errcode.Message(err)
	for _, want := range []string{"while its tool call fs.read ran (README.md)", "after 2 model requests and 2 tool calls"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	close(g.release)
	if out := f.wait(run); out.Status != runtime.StatusCompleted {
		t.Fatalf("turn = %+v", out)
	}
}
