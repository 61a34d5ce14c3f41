package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/tools"
)

// A bound from WithMaxOutput (what the session's context window holds of
// one result) below MaxOutputBytes: a file over it is refused with a way
// to read part of it, a command's output is cut keeping its exit code,
// a listing stops early, and a larger bound than the tools' own changes
// nothing.
func TestWithMaxOutput(t *testing.T) {
	root := t.TempDir()
	mustWrite(t, root, "big.txt", strings.Repeat("line of text\n", 800)) // 10,400 bytes
	for i := range 300 {
		mustWrite(t, root, "d/"+strings.Repeat("n", 20)+string(rune('a'+i%26))+strings.Repeat("x", i/26)+".txt", "x")
	}
	l := mustLocal(t, root)
	ctx := tools.WithMaxOutput(t.Context(), 4096)

	res, err := tools.Execute(ctx, l, mustCall(t, "fs.read", `{"path":"big.txt"}`))
	if err != nil || res.OK || res.Error.Code != errcode.ToolOutputLimit ||
		!strings.Contains(res.Error.Message, "over the 4096 bytes one result may take in this session's context window") ||
		!strings.Contains(res.Error.Message, "sed -n") {
		t.Fatalf("fs.read of 10 KB under a 4 KB bound = %+v, %v", res, err)
	}
	if res, err := tools.Execute(t.Context(), l, mustCall(t, "fs.read", `{"path":"big.txt"}`)); err != nil || !res.OK {
		t.Fatalf("fs.read without the bound = %+v, %v", res, err)
	}
	if res, err := tools.Execute(tools.WithMaxOutput(t.Context(), 1<<30), l, mustCall(t, "fs.read", `{"path":"big.txt"}`)); err != nil || !res.OK {
		t.Fatalf("fs.read under a bound above the tools' own = %+v, %v", res, err)
	}

	res, err = tools.Execute(ctx, l, mustCall(t, "fs.list", `{"path":"d"}`))
	var list struct {
		Entries   []string
		Total     int
		Truncated bool
	}
	if err != nil || !res.OK || json.Unmarshal(res.Output, &list) != nil || !list.Truncated || list.Total != 300 || len(res.Output) > 4096 {
		t.Fatalf("fs.list of 300 entries under a 4 KB bound = %d bytes, %d entries, truncated %v, %v", len(res.Output), len(list.Entries), list.Truncated, err)
	}

	r := &recorder{exec: func(context.Context, workspace.ExecRequest) (workspace.ExecResult, error) {
		return workspace.ExecResult{ExitCode: 3, Stdout: strings.Repeat("out\n", 5000), Stderr: "boom\n"}, nil
	}}
	register(t, r)
	res, err = tools.Execute(ctx, r, mustCall(t, "process.exec", `{"argv":["make"]}`))
	var out workspace.ExecResult
	if err != nil || !res.OK || json.Unmarshal(res.Output, &out) != nil || len(res.Output) > 4096 ||
		out.ExitCode != 3 || !out.StdoutTruncated || !strings.HasPrefix(out.Stdout, "out\n") || !strings.HasSuffix(out.Stdout, "out\n") {
		t.Fatalf("process.exec of 20 KB output under a 4 KB bound = %d bytes %+v, %v", len(res.Output), out, err)
	}
}
