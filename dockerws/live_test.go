package dockerws

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/attest"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// containerTree reads the workspace back through the archive API, which
// does not share code with Diff: every regular file outside .git with its
// content and owner-execute bit.
func containerTree(t *testing.T, w *Workspace) map[string]*entry {
	t.Helper()
	res, err := w.cli.CopyFromContainer(t.Context(), w.cid, client.CopyFromContainerOptions{SourcePath: WorkDir + "/."})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Content.Close()
	out := map[string]*entry{}
	tr := tar.NewReader(res.Content)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		// Copying "dir/." names the entries "./x".
		p := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if slices.Contains(strings.Split(p, "/"), ".git") {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		mode := fs.FileMode(0o644)
		if hdr.Mode&0o100 != 0 {
			mode = 0o755
		}
		out[p] = &entry{data: data, mode: mode}
	}
}

// textOnly keeps what a patch can carry.
func textOnly(tree map[string]*entry) map[string]*entry {
	out := map[string]*entry{}
	for p, e := range tree {
		if e.skip == "" && workspace.CheckPath(p) == nil {
			c := classify(strings.NewReader(string(e.data)), int64(len(e.data)), e.mode, DefaultMaxFileBytes)
			if c.skip == "" {
				out[p] = e
			}
		}
	}
	return out
}

// checkDiff takes the workspace's patch, applies it with git to a copy of
// the original tree and compares the result with the container's tree.
func checkDiff(t *testing.T, w *Workspace, original map[string]*entry) string {
	t.Helper()
	patch, err := w.Diff(t.Context())
	if err != nil {
		t.Fatalf("Diff: %v", err)
	}
	dir := materialize(t, original)
	if patch != "" {
		gitApply(t, dir, patch)
	}
	if diff := cmp.Diff(textOnly(containerTree(t, w)), readBack(t, dir), entriesEqual()); diff != "" {
		t.Fatalf("original + patch differs from the container (-container +patched):\n%s\npatch:\n%s", diff, patch)
	}
	return patch
}

var fixture = map[string]string{
	"README.md":       "# demo\n",
	"calc.py":         "def add(a, b):\n    return a - b\n",
	"test_calc.py":    "from calc import add\nassert add(2, 3) == 5, 'add is wrong'\nprint('ok')\n",
	"scripts/run.sh*": "#!/bin/sh\necho run\n",
	"docs/old.md":     "old\n",
	"with space.txt":  "x\n",
	".git/HEAD":       "ref: refs/heads/main\n",
	"link":            "->README.md",
	"logo.bin":        "\x00\x01\x02",
}

// TestEditTestDiffDispose is the whole life of a workspace: an edit, a
// failing then passing test command, changes made by a process, a patch
// that git applies to a copy of the original, and a dispose that leaves no
// container, no volume and an untouched host tree.
func TestEditTestDiffDispose(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	writeTree(t, root, fixture)
	before := treeDigest(t, root)
	w := open(t, root, sandboxImage)

	info := w.Info()
	if info.Backend != workspace.BackendDocker || info.Image != sandboxImage || !strings.HasPrefix(info.ImageID, "sha256:") {
		t.Errorf("Info = %+v", info)
	}
	if info.Files != 6 {
		t.Errorf("Info.Files = %d, want 6", info.Files)
	}
	wantSkipped := []workspace.Skipped{{Path: "link", Reason: skipSymlink}, {Path: "logo.bin", Reason: skipBinary}}
	if diff := cmp.Diff(wantSkipped, info.Skipped); diff != "" {
		t.Errorf("Info.Skipped (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(w.Snapshot(), "sha256:") {
		t.Errorf("Snapshot = %q", w.Snapshot())
	}
	if !workspace.Attested(w) {
		t.Fatal("a workspace from Open is not attested")
	}

	if res := mustExec(t, w, "python3", "test_calc.py"); res.ExitCode == 0 {
		t.Fatalf("the broken test passed: %+v", res)
	}
	if err := w.WriteFile(ctx, "calc.py", []byte("def add(a, b):\n    return a + b\n")); err != nil {
		t.Fatal(err)
	}
	res := mustExec(t, w, "python3", "test_calc.py")
	if diff := cmp.Diff(workspace.ExecResult{Stdout: "ok\n"}, res); diff != "" {
		t.Fatalf("test after the fix (-want +got):\n%s", diff)
	}
	mustExec(t, w, "sh", "-c", `rm docs/old.md && printf 'new\n' > docs/new.md && chmod +x calc.py && echo more >> "with space.txt"`)
	patch := checkDiff(t, w, text(map[string]string{
		"README.md": fixture["README.md"], "calc.py": fixture["calc.py"], "test_calc.py": fixture["test_calc.py"],
		"scripts/run.sh*": fixture["scripts/run.sh*"], "docs/old.md": fixture["docs/old.md"], "with space.txt": fixture["with space.txt"],
	}))
	for _, want := range []string{"diff --git a/calc.py b/calc.py", "new file mode 100644", "deleted file mode 100644", "new mode 100755"} {
		if !strings.Contains(patch, want) {
			t.Errorf("patch lacks %q:\n%s", want, patch)
		}
	}
	// The host tree, .git and all, was never touched; the real git repo
	// accepts the patch too.
	if got := treeDigest(t, root); got != before {
		t.Fatalf("the host tree changed while the workspace was open")
	}

	id, cid := info.ID, w.ContainerID()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if workspace.Attested(w) {
		t.Error("a closed workspace is still attested")
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.ContainerInspect(ctx, cid, client.ContainerInspectOptions{}); !isNotFound(err) {
		t.Errorf("container after Close: err = %v, want not found", err)
	}
	vols, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", LabelWorkspace+"="+id)})
	if err != nil {
		t.Fatal(err)
	}
	if len(vols.Items) != 0 {
		t.Errorf("%d volumes left after Close", len(vols.Items))
	}
	for name, call := range map[string]func() error{
		"Exec":       func() error { _, err := w.Exec(ctx, workspace.ExecRequest{Argv: []string{"true"}}); return err },
		"ReadFile":   func() error { _, err := w.ReadFile(ctx, "README.md"); return err },
		"WriteFile":  func() error { return w.WriteFile(ctx, "x", nil) },
		"List":       func() error { _, err := w.List(ctx, "."); return err },
		"Diff":       func() error { _, err := w.Diff(ctx); return err },
		"ApplyPatch": func() error { return w.ApplyPatch(ctx, patch) },
		"Close":      func() error { return w.Close(ctx) },
	} {
		t.Run(name+" after Close", func(t *testing.T) { wantCode(t, call(), errcode.WorkspaceDisposed) })
	}
	if got := treeDigest(t, root); got != before {
		t.Fatalf("the host tree changed")
	}
}

// TestContainerIsolation checks the container from inside and from its
// configuration: no network, a non-root user without capabilities, a
// read-only root with the workspace, home and /tmp writable.
func TestContainerIsolation(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	before := treeDigest(t, root)
	w := open(t, root, busyboxImage)
	ctx := t.Context()
	for _, tc := range []struct {
		name     string
		argv     []string
		wantOut  string
		wantFail bool
	}{
		{"non-root user", []string{"id", "-u"}, "65534\n", false},
		{"non-root group", []string{"id", "-g"}, "65534\n", false},
		{"only loopback", []string{"ls", "/sys/class/net"}, "lo\n", false},
		{"no route out", []string{"wget", "-q", "-T", "2", "-O", "/dev/null", "http://1.1.1.1/"}, "", true},
		{"no name resolution", []string{"nslookup", "example.com"}, "", true},
		{"no capabilities", []string{"sh", "-c", "grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status | tr -s '\\t' ' '"},
			"CapPrm: 0000000000000000\nCapEff: 0000000000000000\nNoNewPrivs: 1\n", false},
		{"root fs read-only", []string{"touch", "/harness-test"}, "", true},
		{"etc read-only", []string{"touch", "/etc/harness-test"}, "", true},
		{"bin read-only", []string{"touch", "/bin/harness-test"}, "", true},
		{"home of others", []string{"mkdir", "/home/other"}, "", true},
		{"proc not writable", []string{"sh", "-c", "echo 1 > /proc/sys/kernel/sysrq"}, "", true},
		{"workspace writable", []string{"touch", WorkDir + "/ok"}, "", false},
		{"home writable", []string{"sh", "-c", "touch \"$HOME/ok\" && echo $HOME"}, HomeDir + "\n", false},
		{"tmp writable", []string{"touch", "/tmp/ok"}, "", false},
		{"no setuid escalation", []string{"su", "-c", "id -u"}, "", true},
		// The command's own wrapper is among the user's processes: the
		// result is "killed" (137), and the container goes on.
		{"kill everything it may", []string{"sh", "-c", "sleep 306 & kill -9 -1; echo survived"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustExec(t, w, tc.argv...)
			if failed := res.ExitCode != 0; failed != tc.wantFail {
				t.Fatalf("exit %d (stderr %q), want failure %v", res.ExitCode, res.Stderr, tc.wantFail)
			}
			if !tc.wantFail && res.Stdout != tc.wantOut {
				t.Errorf("stdout = %q, want %q", res.Stdout, tc.wantOut)
			}
		})
	}
	// kill -9 -1 above ended the user's processes, not the container.
	waitNoProcess(t, w, "sleep 306")
	got, err := w.cli.ContainerInspect(ctx, w.cid, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Container.State.Running {
		t.Fatalf("container state %+v", got.Container.State)
	}
	hc, cfg := got.Container.HostConfig, got.Container.Config
	// The root is read-only in tmpfs storage; in disk storage /workspace
	// and $HOME are in the container's layer, which is then writable.
	if hc.NetworkMode != "none" || hc.ReadonlyRootfs != (w.Info().Storage == workspace.StorageTmpfs) || hc.Init == nil || !*hc.Init || hc.Privileged {
		t.Errorf("network %q, read-only %v, init %v, privileged %v", hc.NetworkMode, hc.ReadonlyRootfs, hc.Init, hc.Privileged)
	}
	// CAP_KILL is the reaper's, a root process; the sandbox user has no
	// capability (TestContainerIsolation's cases run as that user).
	if !slices.Equal(hc.CapDrop, []string{"ALL"}) || len(hc.CapAdd) != 1 || !strings.HasSuffix(hc.CapAdd[0], "KILL") ||
		!slices.Contains(hc.SecurityOpt, "no-new-privileges") {
		t.Errorf("cap-drop %v, cap-add %v, security %v", hc.CapDrop, hc.CapAdd, hc.SecurityOpt)
	}
	if hc.PidsLimit == nil || *hc.PidsLimit != DefaultPidsLimit || hc.Memory != DefaultMemoryBytes+2*DefaultMaxWorkspaceBytes+TmpBytes || hc.NanoCPUs <= 0 {
		t.Errorf("pids %v, memory %d, cpus %d", hc.PidsLimit, hc.Memory, hc.NanoCPUs)
	}
	// Every core, at a quarter of a host process's weight.
	if n := goruntime.NumCPU(); hc.NanoCPUs != int64(n)*1e9 || hc.CPUShares != CPUShares || CPUShares >= 1024 {
		t.Errorf("NanoCPUs = %d, CPUShares = %d on a %d-core host", hc.NanoCPUs, hc.CPUShares, n)
	}
	if len(hc.Binds) != 0 {
		t.Errorf("host binds: %v", hc.Binds)
	}
	for _, m := range got.Container.Mounts {
		if m.Type != mount.TypeVolume && m.Type != mount.TypeTmpfs {
			t.Errorf("mount %s of type %s", m.Destination, m.Type)
		}
	}
	if cfg.User != "0:0" || cfg.Labels[LabelSession] != "sess-test-"+t.Name() || cfg.Labels[LabelWorkspace] != w.Info().ID {
		t.Errorf("user %q, labels %v", cfg.User, cfg.Labels)
	}
	if got := treeDigest(t, root); got != before {
		t.Error("the host tree changed")
	}
}

func TestExec(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"sub/file.txt": "x\n"})
	w := open(t, root, busyboxImage)
	ctx := t.Context()
	mustExec(t, w, "ln", "-s", "/etc", "etc-link")
	t.Setenv("HARNESS_TEST_SECRET", "must-not-leak")
	for _, tc := range []struct {
		name string
		req  workspace.ExecRequest
		want workspace.ExecResult
	}{
		{"separate streams and exit code", workspace.ExecRequest{Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}},
			workspace.ExecResult{ExitCode: 3, Stdout: "out\n", Stderr: "err\n"}},
		{"argv is not interpreted", workspace.ExecRequest{Argv: []string{"echo", "$HOME", "*", ";", "a  b", "`id`"}},
			workspace.ExecResult{Stdout: "$HOME * ; a  b `id`\n"}},
		{"cwd", workspace.ExecRequest{Argv: []string{"pwd"}, Cwd: "sub"}, workspace.ExecResult{Stdout: WorkDir + "/sub\n"}},
		{"root cwd", workspace.ExecRequest{Argv: []string{"pwd"}, Cwd: "."}, workspace.ExecResult{Stdout: WorkDir + "\n"}},
		{"missing program", workspace.ExecRequest{Argv: []string{"no-such-program"}}, workspace.ExecResult{ExitCode: 127}},
		{"environment scrubbed", workspace.ExecRequest{Argv: []string{"sh", "-c", `env | grep -c HARNESS_TEST_SECRET; echo "$HOME $TMPDIR"`}},
			workspace.ExecResult{ExitCode: 0, Stdout: "0\n" + HomeDir + " " + HomeDir + "/tmp\n"}},
		{"no stdin", workspace.ExecRequest{Argv: []string{"cat"}}, workspace.ExecResult{}},
		{"output caps keep the start and the end", workspace.ExecRequest{Argv: []string{"sh", "-c", "seq 1 20000; seq 1 5000 >&2"}, MaxOutput: 1000},
			workspace.ExecResult{Stdout: headTailOf(seq(20000), 1000), Stderr: headTailOf(seq(5000), 1000), StdoutTruncated: true, StderrTruncated: true}},
		{"exactly at the cap", workspace.ExecRequest{Argv: []string{"sh", "-c", "printf 12345"}, MaxOutput: 5},
			workspace.ExecResult{Stdout: "12345"}},
		{"timeout kills", workspace.ExecRequest{Argv: []string{"sh", "-c", "echo started; exec sleep 300"}, Timeout: 300 * time.Millisecond},
			workspace.ExecResult{ExitCode: ExitTimedOut, Stdout: "started\n", TimedOut: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := w.Exec(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "missing program" {
				res.Stderr = "" // the shell's wording
			}
			if diff := cmp.Diff(tc.want, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct {
		name string
		req  workspace.ExecRequest
		want errcode.Code
	}{
		{"empty argv", workspace.ExecRequest{}, errcode.ToolBadInput},
		{"NUL in argument", workspace.ExecRequest{Argv: []string{"echo", "a\x00b"}}, errcode.ToolBadInput},
		{"cwd escapes", workspace.ExecRequest{Argv: []string{"pwd"}, Cwd: "../etc"}, errcode.WorkspacePath},
		{"cwd into .git", workspace.ExecRequest{Argv: []string{"pwd"}, Cwd: ".git"}, errcode.WorkspacePath},
		{"cwd missing", workspace.ExecRequest{Argv: []string{"pwd"}, Cwd: "nope"}, errcode.WorkspaceNotFound},
		{"cwd is a file", workspace.ExecRequest{Argv: []string{"pwd"}, Cwd: "sub/file.txt"}, errcode.WorkspaceNotFound},
		{"cwd through a symlink out", workspace.ExecRequest{Argv: []string{"pwd"}, Cwd: "etc-link"}, errcode.WorkspaceScope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.Exec(ctx, tc.req)
			wantCode(t, err, tc.want)
		})
	}
}

// TestExecStreamsOutput: OnOutput sees the output while the command still
// runs, whole lines with their newline (the wrapper's PID header never),
// and the result keeps all of it. A stderr line's newline is not held back
// until the command ends: a card would show it joined to the next stdout
// line.
func TestExecStreamsOutput(t *testing.T) {
	w := open(t, t.TempDir(), busyboxImage)
	var (
		mu       sync.Mutex
		got      = map[string]string{}
		returned atomic.Bool
		early    = make(chan struct{})
		once     sync.Once
	)
	req := workspace.ExecRequest{
		Argv: []string{"sh", "-c", "echo first; echo err1 >&2; sleep 2; echo second"},
		OnOutput: func(stream string, p []byte) {
			mu.Lock()
			got[stream] += string(p)
			seen := strings.Contains(got["stdout"], "first") && got["stderr"] == "err1\n" && !strings.Contains(got["stdout"], "second")
			mu.Unlock()
			if seen && !returned.Load() {
				once.Do(func() { close(early) })
			}
		},
	}
	res, err := w.Exec(t.Context(), req)
	returned.Store(true)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-early:
	default:
		t.Fatalf("the first lines reached OnOutput whole only after the command ended: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if got["stdout"] != "first\nsecond\n" || got["stderr"] != "err1\n" {
		t.Errorf("streamed %q, want stdout first+second and stderr err1 (no PID header)", got)
	}
	if res.Stdout != "first\nsecond\n" || res.Stderr != "err1\n" {
		t.Errorf("result %+v lost output", res)
	}
}

// TestExecTimeoutKillsProcessGroup: the children a timed-out command
// started in the background die with it.
func TestExecTimeoutKillsProcessGroup(t *testing.T) {
	w := open(t, t.TempDir(), busyboxImage)
	res, err := w.Exec(t.Context(), workspace.ExecRequest{
		Argv:    []string{"sh", "-c", "trap '' TERM; sleep 301 & sleep 302 & (sleep 303; echo never) & echo started; wait"},
		Timeout: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(workspace.ExecResult{ExitCode: ExitTimedOut, Stdout: "started\n", TimedOut: true}, res); diff != "" {
		t.Fatalf("result (-want +got):\n%s", diff)
	}
	waitNoProcess(t, w, "sleep 30")
}

// TestExecTimeoutWhenNoProcessCanStart: a command that holds every PID
// until its timeout (bash retries a failed fork, so the loop goes on)
// leaves no room for the kill; the reaper, signaled, makes room and the
// workspace, files included, goes on.
func TestExecTimeoutWhenNoProcessCanStart(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"kept.txt": "kept\n"})
	w := open(t, root, sandboxImage, func(o *Options) { o.PidsLimit = 64 })
	res, err := w.Exec(t.Context(), workspace.ExecRequest{
		Argv:    []string{"bash", "-c", "echo x > made.txt; while :; do sleep 300 & done 2>/dev/null"},
		Timeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != ExitTimedOut {
		t.Fatalf("result = %+v, want a timeout", res)
	}
	if got := mustExec(t, w, "cat", "kept.txt", "made.txt"); got.Stdout != "kept\nx\n" {
		t.Errorf("after the sweep: %+v", got)
	}
	waitNoProcess(t, w, "sleep 300")
}

// waitNoProcess polls ps in the container until no command line contains
// pattern (killed children are reaped by the container's init).
func waitNoProcess(t *testing.T, w *Workspace, pattern string) {
	t.Helper()
	var last string
	for range 100 {
		res := mustExec(t, w, "ps", "-o", "args")
		if !strings.Contains(res.Stdout, pattern) {
			return
		}
		last = res.Stdout
	}
	t.Fatalf("processes matching %q still run:\n%s", pattern, last)
}

func TestExecCancelKillsAndClose(t *testing.T) {
	w := open(t, t.TempDir(), busyboxImage)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := w.Exec(ctx, workspace.ExecRequest{Argv: []string{"sh", "-c", "touch started; sleep 304 & wait"}})
		errc <- err
	}()
	waitFile(t, w, "started")
	cancel()
	err := <-errc
	wantCode(t, err, errcode.ToolCanceled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want it to wrap context.Canceled", err)
	}
	waitNoProcess(t, w, "sleep 304")

	// Close while a process runs: the call ends with WORKSPACE_DISPOSED.
	go func() {
		_, err := w.Exec(t.Context(), workspace.ExecRequest{Argv: []string{"sh", "-c", "touch started2; exec sleep 305"}})
		errc <- err
	}()
	waitFile(t, w, "started2")
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantCode(t, <-errc, errcode.WorkspaceDisposed)
}

// waitFile polls ReadFile (which does not wait for the running Exec)
// until p exists.
// waitFile waits until a process made the file p. It asks the container
// each time (a read of an untouched workspace answers from the scan).
func waitFile(t *testing.T, w *Workspace, p string) {
	t.Helper()
	if err := w.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	for range 500 {
		_, err := w.readAs(t.Context(), "wait for a file", p, MaxReadBytes)
		if err == nil {
			return
		}
		if errcode.Of(err) != errcode.WorkspaceNotFound {
			t.Fatal(err)
		}
	}
	t.Fatalf("%s never appeared", p)
}

func TestFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "alpha\n", "dir/b.txt": "beta\n", "tool.sh*": "#!/bin/sh\n"})
	w := open(t, root, busyboxImage)
	ctx := t.Context()
	mustExec(t, w, "sh", "-c", `ln -s a.txt inlink && ln -s /etc/passwd outlink && ln -s /etc outdir && ln -s dir indir &&
mkdir .git && echo secret > .git/config && ln -s .git gitlink && mkfifo fifo && head -c 17000000 /dev/zero > big.bin`)

	reads := []struct {
		path string
		want string
		code errcode.Code
	}{
		{"a.txt", "alpha\n", ""},
		{"dir/b.txt", "beta\n", ""},
		{"inlink", "alpha\n", ""},
		{"indir/b.txt", "beta\n", ""},
		{"outlink", "", errcode.WorkspaceScope},
		{"outdir/passwd", "", errcode.WorkspaceScope},
		{"gitlink/config", "", errcode.WorkspaceScope},
		{".git/config", "", errcode.WorkspacePath},
		{".", "", errcode.WorkspacePath},
		{"../etc/passwd", "", errcode.WorkspacePath},
		{"missing.txt", "", errcode.WorkspaceNotFound},
		{"dir", "", errcode.WorkspaceNotFound},
		{"fifo", "", errcode.WorkspaceNotFound},
		{"a.txt/x", "", errcode.WorkspaceNotFound},
		{"big.bin", "", errcode.WorkspaceLimit},
	}
	for _, tc := range reads {
		t.Run("read "+tc.path, func(t *testing.T) {
			got, err := w.ReadFile(ctx, tc.path)
			wantCode(t, err, tc.code)
			if string(got) != tc.want {
				t.Errorf("content = %q, want %q", got, tc.want)
			}
		})
	}

	writes := []struct {
		path string
		code errcode.Code
	}{
		{"new.txt", ""},
		{"deep/new/dir/file.txt", ""},
		{"a.txt", ""},
		{"tool.sh", ""},
		{"indir/c.txt", ""},
		{"inlink", ""}, // replaces the symlink, not its target
		{"dir", errcode.WorkspacePath},
		{"a.txt/x", errcode.WorkspacePath},
		{"outdir/x", errcode.WorkspaceScope},
		{"outdir/new/x", errcode.WorkspaceScope},
		{"gitlink/x", errcode.WorkspaceScope},
		{".git/x", errcode.WorkspacePath},
		{".", errcode.WorkspacePath},
	}
	for _, tc := range writes {
		t.Run("write "+tc.path, func(t *testing.T) {
			data := []byte("written " + tc.path + "\n")
			err := w.WriteFile(ctx, tc.path, data)
			wantCode(t, err, tc.code)
			if tc.code != "" {
				return
			}
			got, err := w.ReadFile(ctx, tc.path)
			if err != nil || string(got) != string(data) {
				t.Errorf("read back %q, %v", got, err)
			}
		})
	}
	if got, _ := w.ReadFile(ctx, "a.txt"); string(got) != "written a.txt\n" {
		t.Errorf("a.txt = %q: writing the symlink inlink went through it", got)
	}
	res := mustExec(t, w, "sh", "-c", "stat -c '%a %U' tool.sh deep/new/dir/file.txt deep/new; test -L inlink || echo regular")
	if want := "755 nobody\n644 nobody\n755 nobody\nregular\n"; res.Stdout != want {
		t.Errorf("modes and owners = %q, want %q", res.Stdout, want)
	}

	lists := []struct {
		path string
		want []string
		code errcode.Code
	}{
		{".", []string{"a.txt", "big.bin", "deep/new/dir/file.txt", "dir/b.txt", "dir/c.txt", "inlink", "new.txt", "tool.sh"}, ""},
		{"dir", []string{"dir/b.txt", "dir/c.txt"}, ""},
		{"indir", []string{"indir/b.txt", "indir/c.txt"}, ""},
		{"a.txt", []string{"a.txt"}, ""},
		{"missing", nil, errcode.WorkspaceNotFound},
		{"outdir", nil, errcode.WorkspaceScope},
		{"../x", nil, errcode.WorkspacePath},
	}
	for _, tc := range lists {
		t.Run("list "+tc.path, func(t *testing.T) {
			got, err := w.List(ctx, tc.path)
			wantCode(t, err, tc.code)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("list (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiffFollowsProcesses runs a series of changes, each checked by
// applying the workspace's patch with git to a copy of the original tree.
func TestDiffFollowsProcesses(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{"a.txt": "aaaa\n", "b.txt": "bbbb\n", "c.txt": "cccc\n", "sub/d.txt": "dddd\n"}
	for i := range 50 {
		files[fmt.Sprintf("bulk/%02d.txt", i)] = fmt.Sprintf("line %d\n", i)
	}
	writeTree(t, root, files)
	original := text(files)
	w := open(t, root, busyboxImage)
	steps := []struct {
		name string
		argv []string
		want []string // substrings of the patch
	}{
		{"nothing yet", nil, nil},
		{"append", []string{"sh", "-c", "echo more >> a.txt"}, []string{"+more"}},
		{"same size, old mtime", []string{"sh", "-c", "cp -p b.txt /tmp/b && printf 'BBBB\\n' > b.txt && touch -r /tmp/b b.txt"}, []string{"+BBBB"}},
		{"rename", []string{"mv", "c.txt", "sub/c2.txt"}, []string{"deleted file mode", "b/sub/c2.txt"}},
		{"delete and recreate identically", []string{"sh", "-c", "rm sub/d.txt && printf 'dddd\\n' > sub/d.txt"}, nil},
		{"chmod", []string{"chmod", "+x", "a.txt"}, []string{"new mode 100755"}},
		{"binary files are carried, git files left out", []string{"sh", "-c", "printf '\\000\\001' > blob.bin && mkdir .git && echo x > .git/HEAD"}, []string{"GIT binary patch"}},
		{"many small changes", []string{"sh", "-c", "for f in bulk/*.txt; do echo changed >> $f; done"}, []string{"b/bulk/49.txt"}},
		{"more files than one tar names", []string{"sh", "-c", "mkdir gen && i=0; while [ $i -lt 1100 ]; do echo $i > gen/f$i.txt; i=$((i+1)); done"},
			[]string{"b/gen/f1099.txt"}},
		{"undo everything", []string{"sh", "-c", "rm -rf gen blob.bin .git sub/c2.txt && chmod -x a.txt && printf 'aaaa\\n' > a.txt && printf 'bbbb\\n' > b.txt && printf 'cccc\\n' > c.txt && for f in bulk/*.txt; do sed -i '$d' $f; done"}, nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.argv != nil {
				if res := mustExec(t, w, st.argv...); res.ExitCode != 0 {
					t.Fatalf("step failed: %+v", res)
				}
			}
			patch := checkDiff(t, w, original)
			for _, want := range st.want {
				if !strings.Contains(patch, want) {
					t.Errorf("patch lacks %q:\n%s", want, patch)
				}
			}
			if strings.Contains(patch, ".git/") {
				t.Errorf("patch carries a .git file:\n%s", patch)
			}
		})
	}
	if patch, err := w.Diff(t.Context()); err != nil || patch != "" {
		t.Errorf("after undoing everything: patch %q, err %v", patch, err)
	}
}

// TestApplyPatchRebuilds rebuilds a second workspace from the first's
// initial tree and patch, as a resumed session does.
func TestApplyPatchRebuilds(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "1\n2\n3\n", "b.txt": "b\n", "run.sh": "echo\n"})
	first := open(t, root, busyboxImage)
	mustExec(t, first, "sh", "-c", "printf '1\\ntwo\\n3\\n' > a.txt && rm b.txt && mkdir -p n && echo new > n/c.txt && chmod +x run.sh")
	patch, err := first.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	second := open(t, root, busyboxImage)
	if second.Snapshot() != first.Snapshot() {
		t.Fatal("same tree, different snapshots")
	}
	if err := second.ApplyPatch(t.Context(), patch); err != nil {
		t.Fatal(err)
	}
	again, err := second.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(patch, again); diff != "" {
		t.Errorf("patch of the rebuilt workspace (-first +rebuilt):\n%s", diff)
	}
	if diff := cmp.Diff(containerTree(t, first), containerTree(t, second), entriesEqual()); diff != "" {
		t.Errorf("trees differ (-first +rebuilt):\n%s", diff)
	}
	before := containerTree(t, second)
	for _, tc := range []struct {
		name, patch string
		code        errcode.Code
	}{
		{"not a patch", "hello\n", errcode.ToolBadInput},
		{"applied twice", patch, errcode.ToolExecutionFailed},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, second.ApplyPatch(t.Context(), tc.patch), tc.code)
			if diff := cmp.Diff(before, containerTree(t, second), entriesEqual()); diff != "" {
				t.Errorf("a refused patch changed the tree:\n%s", diff)
			}
		})
	}
}

type wrapped struct{ workspace.Workspace }

type embedding struct{ *Workspace }

func (embedding) Exec(context.Context, workspace.ExecRequest) (workspace.ExecResult, error) {
	return workspace.ExecResult{}, nil
}

func TestAttestation(t *testing.T) {
	w := open(t, t.TempDir(), busyboxImage)
	local, err := workspace.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close(t.Context())
	for _, tc := range []struct {
		name string
		ws   workspace.Workspace
		want bool
	}{
		{"from Open", w, true},
		{"wrapper", wrapped{w}, false},
		{"wrapper pointer", &wrapped{w}, false},
		{"embedding override", embedding{w}, false},
		{"embedding pointer", &embedding{w}, false},
		{"local", local, false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := workspace.Attested(tc.ws); got != tc.want {
				t.Errorf("Attested = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	needDocker(t, busyboxImage)
	ctx := t.Context()
	good := t.TempDir()
	writeTree(t, good, map[string]string{"a.txt": "a\n"})
	creds := t.TempDir()
	writeTree(t, creds, map[string]string{"a.txt": "a\n", ".env": "TOKEN=x\n"})
	for _, tc := range []struct {
		name string
		opts Options
		want errcode.Code
	}{
		{"missing image", Options{Root: good, Image: "harness-no-such-image:never"}, errcode.WorkspaceNotFound},
		{"missing default image", Options{Root: good, Image: "harness-sandbox:no-such-tag"}, errcode.WorkspaceNotFound},
		{"credentials", Options{Root: creds, Image: busyboxImage, SessionID: "sess-creds-" + t.Name()}, errcode.WorkspaceCredentialInput},
		{"credentials excluded", Options{Root: creds, Image: busyboxImage, Exclude: []string{".env"}}, ""},
		{"missing root", Options{Root: good + "/nope", Image: busyboxImage}, errcode.WorkspaceNotFound},
		{"empty root", Options{Image: busyboxImage}, errcode.WorkspaceNotFound},
		{"limit", Options{Root: good, Image: busyboxImage, MaxTotalBytes: 1}, errcode.WorkspaceLimit},
		{"daemon unreachable", Options{Root: good, Image: busyboxImage, DockerHost: "unix:///nonexistent/docker.sock"}, errcode.WorkspaceContainerFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Open(ctx, tc.opts)
			if w != nil {
				w.Close(ctx)
			}
			wantCode(t, err, tc.want)
		})
	}
	// The credential failure happened before Docker: no container exists.
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", LabelSession+"=sess-creds-"+t.Name())})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d containers exist for a refused project", len(list.Items))
	}
	wantCode(t, Ping(ctx, "unix:///nonexistent/docker.sock"), errcode.WorkspaceContainerFailed)
	if err := Ping(ctx, ""); err != nil {
		t.Errorf("Ping = %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Open(canceled, Options{Root: good, Image: busyboxImage})
	wantCode(t, err, errcode.ToolCanceled)
}

// TestReap removes a container whose owner is gone and keeps a live one.
func TestReap(t *testing.T) {
	live := open(t, t.TempDir(), busyboxImage)
	ctx := t.Context()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// A crashed run: its owner's PID exists (1) but started at another time.
	labels := map[string]string{LabelWorkspace: "ws-leftover-" + t.Name(), LabelOwner: bootID() + "/1/999999999", LabelOwnerNS: pidNS()}
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{Image: busyboxImage, Cmd: []string{"sleep", "infinity"}, Labels: labels},
		HostConfig: &container.HostConfig{NetworkMode: "none", Mounts: []mount.Mount{
			{Type: mount.TypeVolume, Target: WorkDir, VolumeOptions: &mount.VolumeOptions{Labels: labels}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ContainerRemove(context.WithoutCancel(ctx), res.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	})
	if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	n, err := Reap(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if n < 1 {
		t.Errorf("Reap removed %d objects, want at least the leftover", n)
	}
	if _, err := cli.ContainerInspect(ctx, res.ID, client.ContainerInspectOptions{}); !isNotFound(err) {
		t.Errorf("leftover container: err = %v, want not found", err)
	}
	vols, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", LabelWorkspace+"="+labels[LabelWorkspace])})
	if err != nil {
		t.Fatal(err)
	}
	if len(vols.Items) != 0 {
		t.Errorf("leftover volumes: %d", len(vols.Items))
	}
	if res := mustExec(t, live, "true"); res.ExitCode != 0 {
		t.Errorf("the live workspace was reaped: %+v", res)
	}
	_, err = Reap(ctx, "unix:///nonexistent/docker.sock")
	wantCode(t, err, errcode.WorkspaceContainerFailed)
}

func TestOwnerAlive(t *testing.T) {
	self := ownerLabel()
	boot, ns := bootID(), pidNS()
	if ns == "" {
		t.Fatal("no PID namespace in /proc/self/ns/pid")
	}
	for _, tc := range []struct {
		name    string
		owner   string
		ns      string // "": this process's labels; "-": no namespace label
		running bool
		want    bool
	}{
		{"this process", self, "", true, true},
		{"this process, stopped container", self, "", false, true},
		{"pid reused", boot + "/1/999999999", ns, true, false},
		{"no such pid", boot + "/999999999/1", ns, true, false},
		{"other boot, running", "other-boot/1/1", ns, true, true},
		{"other boot, stopped", "other-boot/1/1", ns, false, false},
		{"other PID namespace, running", boot + "/1/999999999", "1", true, true},
		{"other PID namespace, stopped", boot + "/1/999999999", "1", false, true},
		{"no namespace recorded (an older Harness), pid reused", boot + "/1/999999999", "-", true, false},
		{"unknown, running", "unknown/5/0", ns, true, true},
		{"garbage, stopped", "garbage", ns, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			labels := map[string]string{LabelOwner: tc.owner, LabelOwnerNS: tc.ns}
			switch tc.ns {
			case "":
				labels = ownerLabels()
			case "-":
				delete(labels, LabelOwnerNS)
			}
			if got := ownerAlive(labels, tc.running); got != tc.want {
				t.Errorf("ownerAlive(%q, %v) = %v, want %v", tc.owner, tc.running, got, tc.want)
			}
		})
	}
}

// TestImageUser opens an image that names a non-root user and has no
// workspace directory of its own for it: processes run as that user and
// still own the copy.
func TestImageUser(t *testing.T) {
	needDocker(t, busyboxImage)
	ctx := t.Context()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	c, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: busyboxImage, Cmd: []string{"true"}}})
	if err != nil {
		t.Fatal(err)
	}
	ref := "harness-test-user1000:" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	_, err = cli.ContainerCommit(ctx, c.ID, client.ContainerCommitOptions{Reference: ref, Changes: []string{"USER 1000:1000"}})
	_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.WithoutCancel(ctx), ref, client.ImageRemoveOptions{Force: true})
	})
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a\n"})
	w := open(t, root, ref)
	if w.User() != "1000:1000" {
		t.Errorf("User = %q", w.User())
	}
	if res := mustExec(t, w, "sh", "-c", "id -u; stat -c %u a.txt; touch new && echo ok"); res.Stdout != "1000\n1000\nok\n" {
		t.Errorf("user, owner, write = %q (stderr %q)", res.Stdout, res.Stderr)
	}
	if err := w.WriteFile(ctx, "b/c.txt", []byte("c\n")); err != nil {
		t.Fatal(err)
	}
	checkDiff(t, w, text(map[string]string{"a.txt": "a\n"}))
}

// TestConcurrentCalls: mutations from several goroutines are serialized;
// none is lost.
func TestConcurrentCalls(t *testing.T) {
	w := open(t, t.TempDir(), busyboxImage)
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 4 {
		wg.Go(func() { errs <- w.WriteFile(ctx, fmt.Sprintf("w%d.txt", i), []byte("w\n")) })
		wg.Go(func() {
			_, err := w.Exec(ctx, workspace.ExecRequest{Argv: []string{"sh", "-c", fmt.Sprintf("echo e > e%d.txt", i)}})
			errs <- err
		})
		wg.Go(func() { _, err := w.Diff(ctx); errs <- err })
		wg.Go(func() { _, err := w.List(ctx, "."); errs <- err })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	got, err := w.List(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"e0.txt", "e1.txt", "e2.txt", "e3.txt", "w0.txt", "w1.txt", "w2.txt", "w3.txt"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

// Files a process adds under paths the project's git ignores stay out of
// the patch; other new files are in it.
func TestDiffLeavesOutIgnoredOutputs(t *testing.T) {
	needDocker(t, busyboxImage)
	root := t.TempDir()
	writeTree(t, root, map[string]string{".gitignore": "build/\n*.log\n", "main.go": "package main\n"})
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	w := open(t, root, busyboxImage)
	mustExec(t, w, "mkdir", "-p", "build")
	mustExec(t, w, "sh", "-c", "echo out > build/app.txt; echo log > run.log; echo new > notes.md")
	patch, err := w.Diff(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(patch, "b/notes.md") || strings.Contains(patch, "build/app.txt") || strings.Contains(patch, "run.log") {
		t.Errorf("patch:\n%s", patch)
	}
}

// Start returns before the container is up; operations wait for it, and a
// Close during the background open leaves no container behind.
func TestStartOpensInTheBackground(t *testing.T) {
	needDocker(t, busyboxImage)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "one\n"})
	w, err := Start(t.Context(), Options{Root: root, Image: busyboxImage, SessionID: "sess-start"})
	if err != nil {
		t.Fatal(err)
	}
	if !attest.Is(w) {
		t.Fatal("a started workspace is not attested")
	}
	if info := w.Info(); info.ImageID == "" {
		t.Errorf("info before ready = %+v", info)
	}
	<-w.Scanned()
	if info := w.Info(); info.Files != 1 {
		t.Errorf("info once scanned = %+v", info)
	}
	if err := w.WriteFile(t.Context(), "a.txt", []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if res := mustExec(t, w, "cat", "a.txt"); res.Stdout != "two\n" {
		t.Errorf("cat = %+v", res)
	}
	patch, err := w.Diff(t.Context())
	if err != nil || !strings.Contains(patch, "+two") {
		t.Errorf("diff = %q, %v", patch, err)
	}
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Closed while opening: nothing is left.
	w2, err := Start(t.Context(), Options{Root: root, Image: busyboxImage, SessionID: "sess-start-2"})
	if err != nil {
		t.Fatal(err)
	}
	id := w2.Info().ID
	if err := w2.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err = w2.ReadFile(t.Context(), "a.txt")
	wantCode(t, err, errcode.WorkspaceDisposed)
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+LabelWorkspace+"="+id).Output()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("containers left for %s: %q (%v)", id, out, err)
	}
}

// A Harness running inside a container that shares the daemon has this
// host's boot ID but PIDs of its own PID namespace: its workspaces are
// not judged by what its PID names here. It was: the label a Harness in a
// container wrote ("<boot>/1/<start>", its PID 1) named this host's PID
// 1, which started at another time, so every reaper on the host removed
// that Harness's live workspace (and a session's idle container was
// rebuilt under it). Its namespace is now recorded beside (LabelOwnerNS).
func TestReapKeepsOwnersOfAnotherPIDNamespace(t *testing.T) {
	needDocker(t, busyboxImage)
	ctx := t.Context()
	cli := dockerCLI(t)
	// The other Harness: PID 1 of a container of its own.
	other := "harness-other-ns-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	if out, err := exec.Command("docker", "run", "-d", "--rm", "--network", "none", "--name", other, busyboxImage, "sleep", "infinity").CombinedOutput(); err != nil {
		t.Fatalf("docker run: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", other).Run() })
	out, err := exec.Command("docker", "exec", other, "sh", "-c",
		"cat /proc/sys/kernel/random/boot_id; cut -d' ' -f22 /proc/1/stat; readlink /proc/self/ns/pid").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	if len(f) != 3 || f[0] != bootID() {
		t.Fatalf("inside the container: %q (host boot ID %s)", out, bootID())
	}
	ns := strings.TrimSuffix(strings.TrimPrefix(f[2], "pid:["), "]")
	if ns == pidNS() {
		t.Fatalf("the container shares this test's PID namespace %s", ns)
	}
	// Its workspace, running and stopped, labeled as that Harness labels
	// it: its PID 1, and its namespace beside.
	for _, start := range []bool{true, false} {
		owner := f[0] + "/1/" + f[1]
		labels := map[string]string{LabelWorkspace: "ws-other-ns-" + uuid.NewString(), LabelOwner: owner, LabelOwnerNS: ns}
		res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Config:     &container.Config{Image: busyboxImage, Cmd: []string{"sleep", "infinity"}, Labels: labels},
			HostConfig: &container.HostConfig{NetworkMode: "none"},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = cli.ContainerRemove(context.WithoutCancel(ctx), res.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		})
		if start {
			if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Reap(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := cli.ContainerInspect(ctx, res.ID, client.ContainerInspectOptions{}); err != nil {
			t.Errorf("the workspace (running: %v) of a Harness in another PID namespace (owner %s) after Reap: %v, want kept", start, owner, err)
		}
	}
}
