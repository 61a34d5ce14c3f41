package dockerws

import (
	"context"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/tools"
)

// git.diff and process.exec through a real workspace end at their tool
// deadline when the workspace does not answer in time (here it is busy
// with a long command): a result with TOOL_EXECUTION_FAILED, not an error
// that ends the turn, and no wait for the command. The workspace goes on.
func TestToolDeadlinesThroughTheWorkspace(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a\n"})
	before := treeDigest(t, root)
	w := open(t, root, busyboxImage)
	oldDiff, oldGrace := tools.DiffDeadline, tools.ExecGrace
	tools.DiffDeadline, tools.ExecGrace = 300*time.Millisecond, 300*time.Millisecond
	t.Cleanup(func() { tools.DiffDeadline, tools.ExecGrace = oldDiff, oldGrace })

	ctx, stop := context.WithCancel(t.Context())
	held := make(chan error, 1)
	go func() {
		_, err := w.Exec(ctx, workspace.ExecRequest{Argv: []string{"sh", "-c", "touch holding; sleep 120"}, Timeout: 3 * time.Minute})
		held <- err
	}()
	waitFile(t, w, "holding") // the long command holds the workspace now
	for _, tc := range []struct{ tool, args string }{
		{"git.diff", `{}`},
		{"process.exec", `{"argv":["true"],"timeoutMs":1}`},
	} {
		c, rerr := tools.Parse(tc.tool, []byte(tc.args))
		if rerr != nil {
			t.Fatal(rerr)
		}
		// Without its deadline the call would wait for the command (two
		// minutes) and then succeed.
		res, err := tools.Execute(t.Context(), w, c)
		if err != nil || res.OK || res.Error.Code != errcode.ToolExecutionFailed {
			t.Errorf("%s: result %+v, err %v; want TOOL_EXECUTION_FAILED at its deadline", tc.tool, res.Error, err)
		}
	}
	stop()
	wantCode(t, <-held, errcode.ToolCanceled)
	if res := mustExec(t, w, "cat", "a.txt"); res.Stdout != "a\n" {
		t.Fatalf("after the deadlines: %+v", res)
	}
	if got := treeDigest(t, root); got != before {
		t.Error("the host tree changed")
	}
}
