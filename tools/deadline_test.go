package tools_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
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

// A workspace whose open failed in the background fails every call with
// the open's own code, as a result the model sees and as an error that
// ends the turn; fs.read does not take its WORKSPACE_LIMIT (a tree over
// the copy limit) for a file too large to return.
func TestOpenFailureEndsTheCall(t *testing.T) {
	refused := &errcode.Error{Code: errcode.WorkspaceLimit, Message: "the project has more than 1 text files",
		Err: errors.Join(workspace.ErrOpenFailed, errors.New("scan"))}
	ws := &recorder{
		read: func(context.Context, string) ([]byte, error) { return nil, refused },
		list: func(context.Context, string) ([]string, error) { return nil, refused },
	}
	for _, tc := range []struct{ tool, args string }{
		{"fs.read", `{"path":"a.txt"}`},
		{"fs.list", `{"path":"."}`},
	} {
		c, rerr := tools.Parse(tc.tool, []byte(tc.args))
		if rerr != nil {
			t.Fatal(rerr)
		}
		res, err := tools.Execute(t.Context(), ws, c)
		if res.OK || res.Error.Code != errcode.WorkspaceLimit || errcode.Of(err) != errcode.WorkspaceLimit {
			t.Errorf("%s: result %+v, err %v; want WORKSPACE_LIMIT as both", tc.tool, res.Error, err)
		}
	}
	// A file over the read limit is still the model's TOOL_OUTPUT_LIMIT.
	ws.read = func(context.Context, string) ([]byte, error) {
		return nil, errcode.New(errcode.WorkspaceLimit, "file a.txt is larger than 16 MiB")
	}
	c, _ := tools.Parse("fs.read", []byte(`{"path":"a.txt"}`))
	if res, err := tools.Execute(t.Context(), ws, c); err != nil || res.Error.Code != errcode.ToolOutputLimit {
		t.Errorf("large file: result %+v, err %v", res.Error, err)
	}
}
