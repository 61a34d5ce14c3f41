package tools_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/tools"
)

// A write's line counts are recorded against the file's previous
// contents whatever the size of its diff: overwriting a 6000-line file
// with 3 lines is +3 −6000, its patch (over MaxPatchBytes) left out.
func TestWriteCountsWithoutItsPatch(t *testing.T) {
	var big strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&big, "line %d of a generated file long enough to matter\n", i+1)
	}
	for _, c := range []struct {
		name      string
		old       string
		missing   bool
		want      tools.LineCounts
		wantPatch bool
	}{
		{"large overwrite", big.String(), false, tools.LineCounts{Added: 3, Deleted: 6000}, false},
		{"small overwrite", "a\nold\nc\n", false, tools.LineCounts{Added: 1, Deleted: 1}, true},
		{"new file", "", true, tools.LineCounts{Added: 3}, true},
		{"unchanged", "a\nb\nc\n", false, tools.LineCounts{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{read: func(context.Context, string) ([]byte, error) {
				if c.missing {
					return nil, errcode.New(errcode.WorkspaceNotFound, "no such file")
				}
				return []byte(c.old), nil
			}}
			register(t, r)
			res, err := tools.Execute(t.Context(), r, mustCall(t, "fs.write", `{"path":"gen.txt","contents":"a\nb\nc\n"}`))
			if err != nil || !res.OK {
				t.Fatalf("write: %+v, %v", res, err)
			}
			if res.Lines == nil || *res.Lines != c.want {
				t.Errorf("lines = %+v, want %+v", res.Lines, c.want)
			}
			if got := res.Patch != ""; got != c.wantPatch {
				t.Errorf("patch kept %v (%d bytes), want %v", got, len(res.Patch), c.wantPatch)
			}
			if len(res.Patch) > tools.MaxPatchBytes {
				t.Errorf("patch of %d bytes, over %d", len(res.Patch), tools.MaxPatchBytes)
			}
		})
	}
}
