package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
)

// diffFailing is a workspace whose end-of-turn diff fails (with err, or by
// blocking until its deadline when err is nil) and whose files can be kept.
type diffFailing struct {
	workspace.Workspace
	err  error
	kept int
}

func (d *diffFailing) Diff(ctx context.Context) (string, error) {
	if d.err != nil {
		return "", d.err
	}
	<-ctx.Done()
	return "", errcode.Wrap(errcode.ToolCanceled, "diff was canceled", ctx.Err())
}

func (d *diffFailing) Keep(context.Context) (string, error) {
	d.kept++
	return "harness-kept-test", nil
}

// A failed end-of-turn diff is a failed turn with the diff's code, recorded
// in the terminal checkpoint so that readers refuse the patch instead of
// taking it for "nothing changed"; the files are kept and the message says
// where. A diff that runs out of time fails the same way.
func TestFailedDiffFailsTheTurn(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want errcode.Code
	}{
		{"over the cap", errcode.New(errcode.WorkspaceLimit, "the workspace holds more than 256 MiB of text"), errcode.WorkspaceLimit},
		{"deadline", nil, errcode.WorkspaceLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer runtime.SetDiffTimeout(50 * time.Millisecond)()
			m := script(t, `[{"content":"done"}]`)
			local, err := workspace.OpenLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ws := &diffFailing{Workspace: local, err: tc.err}
			f := newFixtureWS(t, m, m, ws, "", nil)
			out := f.wait(f.start("work"))
			if out.Status != runtime.StatusFailed || out.ErrorCode != tc.want || !strings.Contains(out.Message, "harness-kept-test") {
				t.Fatalf("outcome = %+v", out)
			}
			if ws.kept != 1 {
				t.Errorf("Keep called %d times, want 1", ws.kept)
			}
			done := ofType[event.TurnCompleted](f.events())
			if len(done) != 1 || done[0].ErrorCode != string(tc.want) {
				t.Fatalf("turn.completed = %+v", done)
			}
			last, _, err := runtime.LastFinished(t.Context(), f.st, f.sess.ID())
			if err != nil || last == nil || last.Workspace == nil {
				t.Fatalf("LastFinished: %v %+v", err, last)
			}
			patch, err := last.Workspace.PatchOrError()
			if patch != "" {
				t.Errorf("patch = %q", patch)
			}
			mustCode(t, err, tc.want)
		})
	}
}
