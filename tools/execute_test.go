package tools_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/attest"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/tools"
)

const secret = "victim secret"

func mustWrite(t *testing.T, dir, name, contents string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(contents), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustLocal(t *testing.T, root string) *workspace.Local {
	t.Helper()
	l, err := workspace.OpenLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.WithoutCancel(t.Context())) })
	return l
}

// mustCall parses a call the model could have sent.
func mustCall(t *testing.T, tool, args string) tools.Call {
	t.Helper()
	c, rerr := tools.Parse(tool, json.RawMessage(args))
	if rerr != nil {
		t.Fatalf("Parse(%s, %s) = %+v", tool, args, rerr)
	}
	return c
}

// register attests r for the length of the test, as dockerws's constructor
// does for the values it builds.
func register(t *testing.T, r *recorder) {
	t.Helper()
	attest.Register(r)
	t.Cleanup(func() { attest.Revoke(r) })
}

// treeHash hashes every entry under each dir without following symlinks:
// name, mode, size, modification time, symlink target and contents.
func treeHash(t *testing.T, dirs ...string) string {
	t.Helper()
	h := sha256.New()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00%v\x00%d\x00%d\x00", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					return err
				}
				h.Write([]byte(target))
			case fi.Mode().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				h.Write(b)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("hash %s: %v", dir, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func resultCode(r tools.Result) errcode.Code {
	if r.Error == nil {
		return ""
	}
	return r.Error.Code
}

// TestExecuteLocal runs every tool on a real read-only local workspace,
// escapes included, and proves the whole table changed nothing on disk.
func TestExecuteLocal(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	mustWrite(t, root, "a.txt", "alpha\n")
	mustWrite(t, root, "sub/b.go", "package b\n")
	mustWrite(t, root, ".git/HEAD", "ref: refs/heads/main\n")
	mustWrite(t, root, "bin", "\x00\xff\xfe")
	mustWrite(t, root, "near", strings.Repeat("n", tools.MaxOutputBytes-64))
	mustWrite(t, root, "big", strings.Repeat("b", tools.MaxOutputBytes+1))
	mustWrite(t, root, "ctrl", strings.Repeat("\x01", tools.MaxOutputBytes/4)) // escapes to 6x
	mustWrite(t, outside, "victim", secret)
	mustSymlink(t, filepath.Join(outside, "victim"), filepath.Join(root, "abs-link"))
	mustSymlink(t, "../outside/victim", filepath.Join(root, "rel-link"))
	mustSymlink(t, "../outside", filepath.Join(root, "dir-link"))
	if err := os.Link(filepath.Join(outside, "victim"), filepath.Join(root, "hard")); err != nil {
		t.Fatal(err)
	}
	l := mustLocal(t, root)
	before := treeHash(t, root, outside)

	tests := []struct {
		name string
		tool string
		args string
		code errcode.Code
		out  string // exact canonical output when OK
	}{
		{name: "read", tool: "fs.read", args: `{"path":"a.txt"}`, out: `{"path":"a.txt","content":"alpha\n","size":6}`},
		{name: "read nested", tool: "fs.read", args: `{"path":"sub/b.go"}`, out: `{"path":"sub/b.go","content":"package b\n","size":10}`},
		{name: "read near limit", tool: "fs.read", args: `{"path":"near"}`,
			out: `{"path":"near","content":"` + strings.Repeat("n", tools.MaxOutputBytes-64) + `","size":131008}`},
		{name: "read over limit", tool: "fs.read", args: `{"path":"big"}`, code: errcode.ToolOutputLimit},
		{name: "read escapes over limit", tool: "fs.read", args: `{"path":"ctrl"}`, code: errcode.ToolOutputLimit},
		{name: "read binary", tool: "fs.read", args: `{"path":"bin"}`, code: errcode.ToolExecutionFailed},
		{name: "read missing", tool: "fs.read", args: `{"path":"nope"}`, code: errcode.WorkspaceNotFound},
		{name: "read directory", tool: "fs.read", args: `{"path":"sub"}`, code: errcode.WorkspaceNotFound},
		{name: "read absolute symlink out", tool: "fs.read", args: `{"path":"abs-link"}`, code: errcode.WorkspaceScope},
		{name: "read relative symlink out", tool: "fs.read", args: `{"path":"rel-link"}`, code: errcode.WorkspaceScope},
		{name: "read through symlinked dir out", tool: "fs.read", args: `{"path":"dir-link/victim"}`, code: errcode.WorkspaceScope},
		{name: "read hard link", tool: "fs.read", args: `{"path":"hard"}`, code: errcode.WorkspaceScope},
		{name: "list whole tree", tool: "fs.list", args: `{"path":"."}`,
			out: `{"path":".","entries":["a.txt","big","bin","ctrl","hard","near","sub/b.go"],"total":7}`},
		{name: "list sub", tool: "fs.list", args: `{"path":"sub"}`, out: `{"path":"sub","entries":["sub/b.go"],"total":1}`},
		{name: "list symlinked dir out", tool: "fs.list", args: `{"path":"dir-link"}`, code: errcode.WorkspaceScope},
		{name: "list missing", tool: "fs.list", args: `{"path":"nope"}`, code: errcode.WorkspaceNotFound},
		{name: "diff", tool: "git.diff", args: `{}`, out: `{"patch":""}`},
		{name: "write", tool: "fs.write", args: `{"path":"a.txt","contents":"pwned"}`, code: errcode.WorkspaceIsolationRequired},
		{name: "write new", tool: "fs.write", args: `{"path":"new/x","contents":""}`, code: errcode.WorkspaceIsolationRequired},
		{name: "write through link", tool: "fs.write", args: `{"path":"dir-link/victim","contents":"pwned"}`, code: errcode.WorkspaceIsolationRequired},
		{name: "exec", tool: "process.exec", args: `{"argv":["touch","` + filepath.Join(outside, "marker") + `"]}`, code: errcode.WorkspaceIsolationRequired},
		{name: "exec shell", tool: "process.exec", args: `{"argv":["sh","-c","rm -rf ` + root + `"]}`, code: errcode.WorkspaceIsolationRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tools.Execute(t.Context(), l, mustCall(t, tt.tool, tt.args))
			if err != nil {
				t.Fatalf("Execute returned a Go error: %v", err)
			}
			if got := resultCode(res); got != tt.code {
				t.Fatalf("code = %q (%+v), want %q", got, res.Error, tt.code)
			}
			if res.OK != (tt.code == "") {
				t.Errorf("OK = %v with code %q", res.OK, tt.code)
			}
			if tt.code == "" {
				if diff := cmp.Diff(tt.out, string(res.Output)); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
				return
			}
			if res.Output != nil {
				t.Errorf("a failed result has output %s", res.Output)
			}
			if strings.Contains(res.Error.Message, secret) {
				t.Errorf("the error shows the victim: %q", res.Error.Message)
			}
		})
	}
	if after := treeHash(t, root, outside); after != before {
		t.Error("the workspace or the victim changed")
	}
}

// TestExecuteSwapRace parses a path while it is a real directory, swaps the
// directory for a symlink to the outside before Execute, and proves the
// read is refused and the outside never shown or changed.
func TestExecuteSwapRace(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	mustWrite(t, root, "sub/file", "inside")
	mustWrite(t, outside, "file", secret)
	l := mustLocal(t, root)

	read := mustCall(t, "fs.read", `{"path":"sub/file"}`)
	list := mustCall(t, "fs.list", `{"path":"sub"}`)
	if res, err := tools.Execute(t.Context(), l, read); err != nil || !res.OK {
		t.Fatalf("before the swap: %+v, %v", res, err)
	}
	if err := os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "old")); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, outside, filepath.Join(root, "sub"))
	before := treeHash(t, root, outside)

	for _, c := range []tools.Call{read, list} {
		res, err := tools.Execute(t.Context(), l, c)
		if err != nil {
			t.Fatal(err)
		}
		if got := resultCode(res); got != errcode.WorkspaceScope {
			t.Errorf("%s after swap: code %q, want %q", c.Tool, got, errcode.WorkspaceScope)
		}
		if strings.Contains(string(res.Output), secret) {
			t.Errorf("%s after swap showed the victim", c.Tool)
		}
	}
	if after := treeHash(t, root, outside); after != before {
		t.Error("a file changed")
	}
}

// TestMutationsNeedAttestation proves that fs.write and process.exec reach a
// workspace only when it is the exact registered value, and that on
// anything else the workspace is never called at all.
func TestMutationsNeedAttestation(t *testing.T) {
	write := mustCall(t, "fs.write", `{"path":"a.txt","contents":"x"}`)
	exec := mustCall(t, "process.exec", `{"argv":["touch","marker"]}`)

	registered := &recorder{}
	register(t, registered)
	local := mustLocal(t, t.TempDir())

	tests := []struct {
		name string
		ws   workspace.Workspace
	}{
		{"unregistered fake", &recorder{}},
		{"forwarder of a registered workspace", &forwarder{inner: registered}},
		{"pointer embedding a registered workspace", &embedder{registered}},
		{"value embedding a registered workspace", embedder{registered}},
		{"interface embedding a registered workspace", embedderValue{registered}},
		{"look-alike named Workspace", Workspace{recorder: registered, labels: map[string]string{"harness": "1"}}},
		{"pointer to look-alike", &Workspace{recorder: registered}},
		{"local workspace", local},
		{"nil", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []tools.Call{write, exec} {
				res, err := tools.Execute(t.Context(), tt.ws, c)
				if err != nil {
					t.Fatalf("%s: Go error %v", c.Tool, err)
				}
				if got := resultCode(res); got != errcode.WorkspaceIsolationRequired {
					t.Errorf("%s: code %q, want %q", c.Tool, got, errcode.WorkspaceIsolationRequired)
				}
			}
			if calls := registered.Calls(); len(calls) != 0 {
				t.Errorf("the registered workspace was called: %q", calls)
			}
			if r, ok := tt.ws.(*recorder); ok && len(r.Calls()) != 0 {
				t.Errorf("the fake was called: %q", r.Calls())
			}
		})
	}

	t.Run("registered value", func(t *testing.T) {
		for _, c := range []tools.Call{write, exec} {
			res, err := tools.Execute(t.Context(), registered, c)
			if err != nil || !res.OK {
				t.Fatalf("%s: %+v, %v", c.Tool, res, err)
			}
		}
		want := []string{
			"ReadFile a.txt", // the previous contents, for the record's diff
			`WriteFile a.txt "x"`,
			`Exec ["touch" "marker"] cwd="" timeout=2m0s max=49152`,
		}
		if diff := cmp.Diff(want, registered.Calls()); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
	})

	t.Run("revoked value", func(t *testing.T) {
		r := &recorder{}
		attest.Register(r)
		attest.Revoke(r)
		res, err := tools.Execute(t.Context(), r, write)
		if err != nil || resultCode(res) != errcode.WorkspaceIsolationRequired {
			t.Errorf("revoked: %+v, %v", res, err)
		}
		if len(r.Calls()) != 0 {
			t.Errorf("the revoked workspace was called: %q", r.Calls())
		}
	})
}

// TestExecuteRevalidates hands Execute calls that Parse would have refused,
// on an attested workspace, and proves none reaches it.
func TestExecuteRevalidates(t *testing.T) {
	ws := &recorder{}
	register(t, ws)
	tests := []struct {
		name string
		call tools.Call
		code errcode.Code
	}{
		{"unknown tool", tools.Call{Tool: "fs.delete", Input: tools.ReadInput{Path: "a"}}, errcode.ToolNotFound},
		{"input of another tool", tools.Call{Tool: "fs.read", Input: tools.ListInput{Path: "a"}}, errcode.ToolBadInput},
		{"pointer input", tools.Call{Tool: "fs.read", Input: &tools.ReadInput{Path: "a"}}, errcode.ToolBadInput},
		{"nil input", tools.Call{Tool: "git.diff"}, errcode.ToolBadInput},
		{"read dotdot", tools.Call{Tool: "fs.read", Input: tools.ReadInput{Path: "../x"}}, errcode.WorkspacePath},
		{"read empty", tools.Call{Tool: "fs.read", Input: tools.ReadInput{}}, errcode.ToolBadInput},
		{"list git", tools.Call{Tool: "fs.list", Input: tools.ListInput{Path: ".git"}}, errcode.WorkspacePath},
		{"write root", tools.Call{Tool: "fs.write", Input: tools.WriteInput{Path: "."}}, errcode.WorkspacePath},
		{"write too big", tools.Call{Tool: "fs.write",
			Input: tools.WriteInput{Path: "a", Contents: strings.Repeat("x", tools.MaxWriteBytes+1)}}, errcode.ToolBadInput},
		{"write invalid utf8", tools.Call{Tool: "fs.write", Input: tools.WriteInput{Path: "a", Contents: "\xff"}}, errcode.ToolBadInput},
		{"exec no argv", tools.Call{Tool: "process.exec", Input: tools.ExecInput{TimeoutMs: 1}}, errcode.ToolBadInput},
		{"exec zero timeout", tools.Call{Tool: "process.exec", Input: tools.ExecInput{Argv: []string{"ls"}}}, errcode.ToolBadInput},
		{"exec nul", tools.Call{Tool: "process.exec", Input: tools.ExecInput{Argv: []string{"ls\x00"}, TimeoutMs: 1}}, errcode.ToolBadInput},
		{"exec cwd escape", tools.Call{Tool: "process.exec",
			Input: tools.ExecInput{Argv: []string{"ls"}, Cwd: "/", TimeoutMs: 1}}, errcode.WorkspacePath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tools.Execute(t.Context(), ws, tt.call)
			if err != nil {
				t.Fatal(err)
			}
			if got := resultCode(res); got != tt.code {
				t.Errorf("code = %q (%+v), want %q", got, res.Error, tt.code)
			}
		})
	}
	if calls := ws.Calls(); len(calls) != 0 {
		t.Errorf("the workspace was called: %q", calls)
	}
}

func TestExecuteCanceled(t *testing.T) {
	t.Run("before the call", func(t *testing.T) {
		ws := &recorder{}
		register(t, ws)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		for _, c := range []tools.Call{
			mustCall(t, "fs.read", `{"path":"a"}`),
			mustCall(t, "fs.list", `{"path":"."}`),
			mustCall(t, "fs.write", `{"path":"a","contents":""}`),
			mustCall(t, "process.exec", `{"argv":["true"]}`),
			mustCall(t, "git.diff", `{}`),
		} {
			res, err := tools.Execute(ctx, ws, c)
			if err != nil || resultCode(res) != errcode.ToolCanceled {
				t.Errorf("%s: %+v, %v; want %s", c.Tool, res, err, errcode.ToolCanceled)
			}
		}
		if calls := ws.Calls(); len(calls) != 0 {
			t.Errorf("the workspace was called: %q", calls)
		}
	})
	t.Run("during exec", func(t *testing.T) {
		started := make(chan struct{})
		ws := &recorder{exec: func(ctx context.Context, _ workspace.ExecRequest) (workspace.ExecResult, error) {
			close(started)
			<-ctx.Done()
			// What a Docker workspace reports when its request is cut off.
			return workspace.ExecResult{}, errcode.Wrap(errcode.WorkspaceContainerFailed, "exec", ctx.Err())
		}}
		register(t, ws)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		var res tools.Result
		var err error
		go func() {
			defer close(done)
			res, err = tools.Execute(ctx, ws, mustCall(t, "process.exec", `{"argv":["sleep","30"]}`))
		}()
		<-started
		cancel()
		<-done
		if err != nil {
			t.Errorf("a canceled call returned a Go error: %v", err)
		}
		if got := resultCode(res); got != errcode.ToolCanceled {
			t.Errorf("code = %q, want %q", got, errcode.ToolCanceled)
		}
	})
}

// TestExecuteWorkspaceErrors maps each kind of workspace failure: most are
// results the model sees; a dead or disposed workspace is also a Go error.
func TestExecuteWorkspaceErrors(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		code    errcode.Code
		goError bool
	}{
		{"not found", errcode.New(errcode.WorkspaceNotFound, "no such file"), errcode.WorkspaceNotFound, false},
		{"scope", errcode.New(errcode.WorkspaceScope, "outside"), errcode.WorkspaceScope, false},
		{"busy", errcode.New(errcode.WorkspaceBusy, "busy"), errcode.WorkspaceBusy, false},
		{"path", errcode.New(errcode.WorkspacePath, "bad path"), errcode.WorkspacePath, false},
		{"limit on read", errcode.New(errcode.WorkspaceLimit, "too big"), errcode.ToolOutputLimit, false},
		{"container failed", errcode.New(errcode.WorkspaceContainerFailed, "daemon gone"), errcode.WorkspaceContainerFailed, true},
		{"disposed", errcode.New(errcode.WorkspaceDisposed, "closed"), errcode.WorkspaceDisposed, true},
		{"wrapped disposed", fmt.Errorf("read: %w", errcode.New(errcode.WorkspaceDisposed, "closed")), errcode.WorkspaceDisposed, true},
		{"uncoded", errors.New("token=" + secret), errcode.ToolExecutionFailed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := &recorder{read: func(context.Context, string) ([]byte, error) { return nil, tt.err }}
			res, err := tools.Execute(t.Context(), ws, mustCall(t, "fs.read", `{"path":"a"}`))
			if got := resultCode(res); got != tt.code {
				t.Errorf("result code = %q, want %q", got, tt.code)
			}
			if (err != nil) != tt.goError {
				t.Errorf("Go error = %v, want one: %v", err, tt.goError)
			}
			if err != nil && errcode.Of(err) != tt.code {
				t.Errorf("Go error code = %q, want %q", errcode.Of(err), tt.code)
			}
			if res.Error != nil && strings.Contains(res.Error.Message, secret) {
				t.Errorf("a raw cause reached the model: %q", res.Error.Message)
			}
		})
	}
	t.Run("closed local workspace", func(t *testing.T) {
		l, err := workspace.OpenLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		res, err := tools.Execute(t.Context(), l, mustCall(t, "fs.list", `{"path":"."}`))
		if errcode.Of(err) != errcode.WorkspaceDisposed || resultCode(res) != errcode.WorkspaceDisposed {
			t.Errorf("got %+v, %v; want %s both ways", res, err, errcode.WorkspaceDisposed)
		}
	})
	t.Run("nil workspace", func(t *testing.T) {
		res, err := tools.Execute(t.Context(), nil, mustCall(t, "fs.read", `{"path":"a"}`))
		if err == nil || res.OK {
			t.Errorf("got %+v, %v; want a Go error", res, err)
		}
	})
}

// execOutput mirrors the process.exec output for decoding in tests.
type execOutput struct {
	ExitCode        int    `json:"exitCode"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	TimedOut        bool   `json:"timedOut"`
	StdoutTruncated bool   `json:"stdoutTruncated"`
	StderrTruncated bool   `json:"stderrTruncated"`
}

// TestExecOutputBounds feeds process.exec streams of every awkward shape and
// checks the result always fits, keeps the exit code, and says what it cut.
func TestExecOutputBounds(t *testing.T) {
	big := strings.Repeat("o", 200<<10)
	ctrl := strings.Repeat("\x01", tools.MaxStreamBytes) // 6 bytes each once escaped
	tests := []struct {
		name string
		res  workspace.ExecResult
		want execOutput
	}{
		{"small", workspace.ExecResult{ExitCode: 2, Stdout: "out", Stderr: "err"},
			execOutput{ExitCode: 2, Stdout: "out", Stderr: "err"}},
		{"timed out", workspace.ExecResult{ExitCode: 124, TimedOut: true},
			execOutput{ExitCode: 124, TimedOut: true}},
		{"workspace ignored MaxOutput", workspace.ExecResult{ExitCode: 1, Stdout: big, Stderr: big},
			execOutput{ExitCode: 1, StdoutTruncated: true, StderrTruncated: true}},
		{"workspace truncated", workspace.ExecResult{Stdout: "abc", StdoutTruncated: true},
			execOutput{Stdout: "abc", StdoutTruncated: true}},
		{"escapes inflate", workspace.ExecResult{ExitCode: 3, Stdout: ctrl, Stderr: ctrl}, execOutput{ExitCode: 3}},
		{"rune boundary", workspace.ExecResult{Stdout: "a" + strings.Repeat("é", tools.MaxStreamBytes) + "z"},
			execOutput{StdoutTruncated: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := &recorder{exec: func(context.Context, workspace.ExecRequest) (workspace.ExecResult, error) {
				return tt.res, nil
			}}
			register(t, ws)
			res, err := tools.Execute(t.Context(), ws, mustCall(t, "process.exec", `{"argv":["x"],"cwd":".","timeoutMs":1500}`))
			if err != nil || !res.OK {
				t.Fatalf("%+v, %v", res, err)
			}
			if len(res.Output) > tools.MaxOutputBytes {
				t.Fatalf("output is %d bytes", len(res.Output))
			}
			var got execOutput
			if err := json.Unmarshal(res.Output, &got); err != nil {
				t.Fatal(err)
			}
			// A cut stream keeps a start and an end of what the command
			// printed, around a line saying how much was left out.
			ends := func(stream, kept, full string, truncated bool) {
				t.Helper()
				if !truncated {
					if kept != full {
						t.Errorf("%s: %d of %d bytes kept, not flagged as truncated", stream, len(kept), len(full))
					}
					return
				}
				head, rest, ok := strings.Cut(kept, "[… ")
				_, tail, ok2 := strings.Cut(rest, " bytes of output left out here …]\n")
				head = strings.TrimSuffix(head, "\n")
				if !ok || !ok2 || !strings.HasPrefix(full, head) || !strings.HasSuffix(full, tail) || tail == "" ||
					len(kept) > tools.MaxStreamBytes || !utf8.ValidString(kept) {
					t.Errorf("%s: %d bytes kept of %d, not a start and an end of it around the mark", stream, len(kept), len(full))
				}
			}
			switch tt.name {
			case "escapes inflate", "workspace ignored MaxOutput", "rune boundary":
				ends("stdout", got.Stdout, tt.res.Stdout, got.StdoutTruncated)
				ends("stderr", got.Stderr, tt.res.Stderr, got.StderrTruncated)
				if got.ExitCode != tt.res.ExitCode || !(got.StdoutTruncated || got.StderrTruncated) {
					t.Errorf("got exit %d, truncated %v/%v", got.ExitCode, got.StdoutTruncated, got.StderrTruncated)
				}
				if tt.name == "rune boundary" && (!strings.HasPrefix(got.Stdout, "aé") || !strings.HasSuffix(got.Stdout, "éz")) {
					t.Errorf("stdout %q … %q", got.Stdout[:8], got.Stdout[len(got.Stdout)-8:])
				}
			default:
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
			}
			want := []string{`Exec ["x"] cwd="" timeout=1.5s max=49152`}
			if diff := cmp.Diff(want, ws.Calls()); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

type listOutput struct {
	Path      string   `json:"path"`
	Entries   []string `json:"entries"`
	Total     int      `json:"total"`
	Truncated bool     `json:"truncated"`
}

func TestListBounds(t *testing.T) {
	t.Run("entry cap on a real tree", func(t *testing.T) {
		root := t.TempDir()
		const n = tools.MaxListEntries + 500
		for i := range n {
			mustWrite(t, root, fmt.Sprintf("d%d/f%04d", i%7, i), "")
		}
		res, err := tools.Execute(t.Context(), mustLocal(t, root), mustCall(t, "fs.list", `{"path":"."}`))
		if err != nil || !res.OK {
			t.Fatalf("%+v, %v", res, err)
		}
		var got listOutput
		if err := json.Unmarshal(res.Output, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Entries) != tools.MaxListEntries || got.Total != n || !got.Truncated {
			t.Errorf("entries %d, total %d, truncated %v", len(got.Entries), got.Total, got.Truncated)
		}
		if !sortedStrings(got.Entries) {
			t.Error("entries are not sorted")
		}
	})
	t.Run("byte cap on long names", func(t *testing.T) {
		name := strings.Repeat("n", 4000)
		var all []string
		for i := range 100 {
			all = append(all, fmt.Sprintf("%s%03d", name, i))
		}
		ws := &recorder{list: func(context.Context, string) ([]string, error) { return all, nil }}
		res, err := tools.Execute(t.Context(), ws, mustCall(t, "fs.list", `{"path":"."}`))
		if err != nil || !res.OK {
			t.Fatalf("%+v, %v", res, err)
		}
		if len(res.Output) > tools.MaxOutputBytes {
			t.Fatalf("output is %d bytes", len(res.Output))
		}
		var got listOutput
		if err := json.Unmarshal(res.Output, &got); err != nil {
			t.Fatal(err)
		}
		if got.Total != 100 || !got.Truncated || len(got.Entries) == 0 || len(got.Entries) >= 100 {
			t.Errorf("entries %d, total %d, truncated %v", len(got.Entries), got.Total, got.Truncated)
		}
		if diff := cmp.Diff(all[:len(got.Entries)], got.Entries); diff != "" {
			t.Errorf("entries are not the first ones: %s", diff)
		}
	})
}

func sortedStrings(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			return false
		}
	}
	return true
}

func TestDiffBounds(t *testing.T) {
	small := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"
	var big strings.Builder
	for i := range 400 {
		fmt.Fprintf(&big, "diff --git a/f%d b/f%d\n--- a/f%d\n+++ b/f%d\n@@ -1 +1 @@\n-%s\n+%s\n",
			i, i, i, i, strings.Repeat("x", 200), strings.Repeat("y", 200))
	}
	tests := []struct {
		name  string
		patch string
		code  errcode.Code
	}{
		{"empty", "", ""},
		{"small", small, ""},
		{"over the limit", big.String(), errcode.ToolOutputLimit},
		// The limit is on the encoded output, {"patch":"…"} (12 bytes
		// around the patch): exactly MaxOutputBytes is returned whole.
		{"exactly the limit", strings.Repeat("x", tools.MaxOutputBytes-12), ""},
		{"one byte over the limit", strings.Repeat("x", tools.MaxOutputBytes-11), errcode.ToolOutputLimit},
		// Files the patch could not carry are named: never "" for a change.
		{"left out only", workspace.LeftOutPrefix + "\"a\\nb\" (a name no tool or patch can carry)\n", ""},
		{"over the limit, left out named", workspace.LeftOutPrefix + "x.bin (why)\n" + big.String(), errcode.ToolOutputLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := &recorder{diff: func(context.Context) (string, error) { return tt.patch, nil }}
			res, err := tools.Execute(t.Context(), ws, mustCall(t, "git.diff", `{}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := resultCode(res); got != tt.code {
				t.Fatalf("code = %q, want %q", got, tt.code)
			}
			if tt.code != "" {
				if len(res.Error.Message) > 8<<10 {
					t.Errorf("error message is %d bytes", len(res.Error.Message))
				}
				if left := workspace.LeftOut(tt.patch); len(left) > 0 && !strings.Contains(res.Error.Message, left[0]) {
					t.Errorf("the over-limit error does not name what was left out: %s", res.Error.Message)
				}
				return
			}
			var got struct{ Patch string }
			if err := json.Unmarshal(res.Output, &got); err != nil || got.Patch != tt.patch {
				t.Errorf("patch = %q, %v", got.Patch, err)
			}
		})
	}
}

// TestExecuteDuration checks that a result carries the time the call took.
func TestExecuteDuration(t *testing.T) {
	ws := &recorder{read: func(context.Context, string) ([]byte, error) { return []byte("x"), nil }}
	res, err := tools.Execute(t.Context(), ws, mustCall(t, "fs.read", `{"path":"a"}`))
	if err != nil || !res.OK {
		t.Fatalf("%+v, %v", res, err)
	}
	if res.Duration <= 0 || res.Duration > time.Minute {
		t.Errorf("Duration = %v", res.Duration)
	}
}

// An fs.write records its change against the workspace file's previous
// contents (a new file against /dev/null), never in the model's output;
// a previous read that fails for another reason leaves the patch out.
func TestWritePatch(t *testing.T) {
	var old strings.Builder
	for i := range 140 {
		fmt.Fprintf(&old, "line %d\n", i+1)
	}
	for _, c := range []struct {
		name      string
		read      func(context.Context, string) ([]byte, error)
		add, del  int
		from      string
		wantPatch bool
	}{
		{"overwrite", func(context.Context, string) ([]byte, error) { return []byte(old.String()), nil }, 3, 140, "--- a/README.md", true},
		{"new file", func(context.Context, string) ([]byte, error) {
			return nil, errcode.New(errcode.WorkspaceNotFound, "no such file")
		}, 3, 0, "--- /dev/null", true},
		{"unreadable", func(context.Context, string) ([]byte, error) {
			return nil, errcode.New(errcode.WorkspaceContainerFailed, "gone")
		}, 0, 0, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{read: c.read}
			register(t, r)
			call := mustCall(t, "fs.write", `{"path":"README.md","contents":"a\nb\nc\n"}`)
			// The question before the write shows the change its record keeps.
			patch, lines := tools.Preview(t.Context(), r, call)
			res, err := tools.Execute(t.Context(), r, call)
			if err != nil || !res.OK {
				t.Fatalf("write: %+v, %v", res, err)
			}
			if patch != res.Patch || (lines == nil) != (res.Lines == nil) || (lines != nil && *lines != *res.Lines) {
				t.Errorf("Preview = %q %+v, the write recorded %q %+v", patch, lines, res.Patch, res.Lines)
			}
			if string(res.Output) != `{"path":"README.md","bytes":6}` {
				t.Errorf("output = %s: the patch must not reach the model", res.Output)
			}
			if !c.wantPatch {
				if res.Patch != "" {
					t.Errorf("patch = %q, want none", res.Patch)
				}
				return
			}
			var add, del int
			for l := range strings.Lines(res.Patch) {
				switch {
				case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
				case strings.HasPrefix(l, "+"):
					add++
				case strings.HasPrefix(l, "-"):
					del++
				}
			}
			if add != c.add || del != c.del || !strings.HasPrefix(res.Patch, c.from) {
				t.Errorf("patch +%d −%d from %q, want +%d −%d from %q:\n%s", add, del, strings.SplitN(res.Patch, "\n", 2)[0], c.add, c.del, c.from, res.Patch)
			}
		})
	}
}
