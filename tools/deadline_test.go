package tools_test

import (
	"context"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/tools"
)

// stuck is a workspace whose reads never finish on their own.
type stuck struct{ recorder }

func (*stuck) ReadFile(ctx context.Context, _ string) ([]byte, error) {
	<-ctx.Done()
	return nil, errcode.Wrap(errcode.ToolCanceled, "read file was canceled", ctx.Err())
}

// A call that the workspace never finishes ends at its deadline with
// TOOL_EXECUTION_FAILED, not when the turn is canceled; a canceled turn
// still reads TOOL_CANCELED.
func TestEveryCallHasADeadline(t *testing.T) {
	old := tools.CallDeadline
	tools.CallDeadline = 50 * time.Millisecond
	defer func() { tools.CallDeadline = old }()
	c, rerr := tools.Parse("fs.read", []byte(`{"path":"a.txt"}`))
	if rerr != nil {
		t.Fatal(rerr)
	}
	res, err := tools.Execute(t.Context(), &stuck{}, c)
	if err != nil || res.OK || res.Error.Code != errcode.ToolExecutionFailed {
		t.Fatalf("result = %+v, err %v", res, err)
	}
	tools.CallDeadline = time.Hour
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(10*time.Millisecond, cancel)
	res, _ = tools.Execute(ctx, &stuck{}, c)
	if res.OK || res.Error.Code != errcode.ToolCanceled {
		t.Fatalf("canceled: result = %+v", res)
	}
}
