package dockerws

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// sandboxProcs lists the command lines of the sandbox user's processes,
// apart from the ps that lists them.
func sandboxProcs(t *testing.T, w *Workspace) []string {
	t.Helper()
	res := mustExec(t, w, "ps", "-o", "user,args")
	var procs []string
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] == "root" || strings.HasPrefix(f[1], "ps") || strings.Contains(line, "kill -9 -1") {
			continue
		}
		procs = append(procs, strings.Join(f[1:], " "))
	}
	return procs
}

// wantNoProcs fails when any process of the sandbox user outlived its
// command (the wrapper running ps is not one: ps lists its own command
// line, and the wrapper's sh, which mustExec's ps runs under).
func wantNoProcs(t *testing.T, w *Workspace) {
	t.Helper()
	var left []string
	for _, p := range sandboxProcs(t, w) {
		if !strings.Contains(p, "ps -o user,args") {
			left = append(left, p)
		}
	}
	if len(left) > 0 {
		t.Fatalf("processes outlived their command:\n%s", strings.Join(left, "\n"))
	}
}

// TestExecLeavesNoProcess: every process a command starts is gone when it
// returns — setsid and nohup children, a loop that writes into the
// workspace, and hundreds of leftover sleeps — and the next command works.
func TestExecLeavesNoProcess(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"keep.txt": "keep\n"})
	before := treeDigest(t, root)
	w := open(t, root, sandboxImage)
	res := mustExec(t, w, "sh", "-c",
		`setsid sh -c 'while :; do echo x >> loop.txt; sleep 0.05; done' </dev/null >/dev/null 2>&1 &
nohup sleep 401 </dev/null >/dev/null 2>&1 &
setsid sleep 402 &
echo started`)
	if res.Stdout != "started\n" || res.ExitCode != 0 {
		t.Fatalf("result = %+v", res)
	}
	wantNoProcs(t, w)
	// The loop is gone: what it wrote stays as it was.
	first := mustExec(t, w, "sh", "-c", "cat loop.txt 2>/dev/null | wc -c").Stdout
	for range 5 {
		if got := mustExec(t, w, "sh", "-c", "cat loop.txt 2>/dev/null | wc -c").Stdout; got != first {
			t.Fatalf("loop.txt grew from %q to %q bytes after its command returned", first, got)
		}
	}

	// 600 leftover sleeps go beyond the pids limit (512): the command
	// itself runs out (its shell says so), and the next one starts.
	res = mustExec(t, w, "sh", "-c", `i=0; while [ $i -lt 600 ]; do sleep 403 & i=$((i+1)); done; echo forked`)
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "fork") {
		t.Fatalf("600 sleeps: %+v", res)
	}
	wantNoProcs(t, w)
	if got := mustExec(t, w, "cat", "keep.txt"); got.Stdout != "keep\n" {
		t.Fatalf("after the sleeps: %+v", got)
	}
	if got := treeDigest(t, root); got != before {
		t.Error("the host tree changed")
	}
}

// TestExecAfterForkBomb: a fork bomb takes every PID until its command
// ends (here by timeout); then nothing of it is left and the next command
// in the same workspace works, files intact.
func TestExecAfterForkBomb(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"keep.txt": "keep\n"})
	before := treeDigest(t, root)
	w := open(t, root, busyboxImage, func(o *Options) { o.PidsLimit = 128 })
	for _, tc := range []struct {
		name    string
		argv    []string
		timeout time.Duration
	}{
		{"bomb returns", []string{"sh", "-c", `b() { b | b & }; b; echo x > made.txt`}, 0},
		{"bomb until timeout", []string{"sh", "-c", `b() { b | b & }; b; wait; sleep 300`}, 2 * time.Second},
		{"command kills its wrapper", []string{"sh", "-c", `setsid sleep 404 & kill -9 -1`}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.Exec(t.Context(), workspace.ExecRequest{Argv: tc.argv, Timeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			wantNoProcs(t, w)
			if got := mustExec(t, w, "cat", "keep.txt"); got.Stdout != "keep\n" || got.ExitCode != 0 {
				t.Fatalf("next command: %+v", got)
			}
		})
	}
	if got := treeDigest(t, root); got != before {
		t.Error("the host tree changed")
	}
}

// TestDefaultNanoCPUs: the container may use every core of the host (its
// low CPU weight, which TestContainerIsolation checks on the live
// container, keeps the host served first).
func TestDefaultNanoCPUs(t *testing.T) {
	for cpus, want := range map[int]int64{0: 1e9, 1: 1e9, 2: 2e9, 16: 16e9} {
		if got := DefaultNanoCPUs(cpus); got != want {
			t.Errorf("DefaultNanoCPUs(%d) = %d, want %d", cpus, got, want)
		}
	}
}

// TestHardLinkedFileStaysOut: a project file hard-linked to a file outside
// the project is not copied in, is reported, and reading it fails with
// WORKSPACE_SCOPE in both workspaces; the host tree is untouched.
func TestHardLinkedFileStaysOut(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("outside the project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	writeTree(t, root, map[string]string{"plain.txt": "plain\n"})
	if err := os.Link(secret, filepath.Join(root, "linked.txt")); err != nil {
		t.Fatal(err)
	}
	before := treeDigest(t, root)
	w := open(t, root, busyboxImage)
	if !slices.Contains(w.Info().Skipped, workspace.Skipped{Path: "linked.txt", Reason: skipHardLink}) {
		t.Errorf("skipped = %v, want linked.txt reported as %q", w.Info().Skipped, skipHardLink)
	}
	_, err := w.ReadFile(t.Context(), "linked.txt")
	wantCode(t, err, errcode.WorkspaceScope)
	if got := mustExec(t, w, "cat", "plain.txt"); got.Stdout != "plain\n" {
		t.Fatalf("plain.txt: %+v", got)
	}
	local, err := workspace.OpenLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = local.ReadFile(t.Context(), "linked.txt")
	wantCode(t, err, errcode.WorkspaceScope)
	if got := treeDigest(t, root); got != before {
		t.Error("the host tree changed")
	}
}

// TestHostGitGetsNoSecrets: the git Harness runs on the host (listing
// ignored paths at copy-in) does not inherit OPENAI_API_KEY, another
// secret, or the variable configured to hold the key (Options.SecretEnv).
func TestHostGitGetsNoSecrets(t *testing.T) {
	bin := t.TempDir()
	dump := filepath.Join(bin, "env.txt")
	script := "#!/bin/sh\nenv > " + dump + "\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("OPENAI_API_KEY", "sk-test-must-not-leak")
	t.Setenv("GITHUB_TOKEN", "ghp-must-not-leak")
	t.Setenv("GROQ_KEY", "gsk-must-not-leak") // named in no way a secret would be, but configured as the key
	t.Setenv("HARNESS_TEST_PLAIN", "kept")
	opts := Options{Root: t.TempDir(), SecretEnv: []string{"GROQ_KEY"}}
	opts.defaults()
	if _, err := scan(t.Context(), opts, nil); err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the git stand-in did not run: %v", err)
	}
	if strings.Contains(string(env), "must-not-leak") {
		t.Errorf("host git saw a secret:\n%s", env)
	}
	if !strings.Contains(string(env), "HARNESS_TEST_PLAIN=kept") || !strings.Contains(string(env), "GIT_OPTIONAL_LOCKS=0") {
		t.Errorf("host git lost its ordinary environment:\n%s", env)
	}
}

// TestWriteRefusesNonRegularFiles: fs.write to a named pipe (which would
// block until a reader came, holding the workspace) is refused at once; the
// workspace goes on.
func TestWriteRefusesNonRegularFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a\n"})
	before := treeDigest(t, root)
	w := open(t, root, busyboxImage)
	mustExec(t, w, "mkfifo", "pipe")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // today the write blocks
	defer cancel()
	err := w.WriteFile(ctx, "pipe", []byte("x"))
	wantCode(t, err, errcode.WorkspacePath)
	if err := w.WriteFile(t.Context(), "plain.txt", []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if got := treeDigest(t, root); got != before {
		t.Error("the host tree changed")
	}
}

// TestWorkspaceQuota: writing beyond --max-workspace-bytes fails inside
// the container with ENOSPC, in the workspace and in $HOME; the files
// live in memory (tmpfs), so the host's disk takes none of it; the
// workspace goes on, its files intact.
func TestWorkspaceQuota(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"keep.txt": "keep\n"})
	before := treeDigest(t, root)
	w := open(t, root, busyboxImage, func(o *Options) { o.MaxWorkspaceBytes = 8 << 20 })
	for _, dir := range []string{WorkDir, HomeDir} {
		res := mustExec(t, w, "sh", "-c", "dd if=/dev/zero of="+dir+"/big bs=1M count=32 2>&1; echo rc=$?")
		if !strings.Contains(res.Stdout, "No space left on device") || strings.Contains(res.Stdout, "rc=0") {
			t.Errorf("%s: a write beyond the quota did not fail with ENOSPC: %q", dir, res.Stdout)
		}
		mounts := mustExec(t, w, "grep", " "+dir+" ", "/proc/mounts").Stdout
		if !strings.HasPrefix(mounts, "tmpfs ") {
			t.Errorf("%s is not in memory: %q", dir, mounts)
		}
		mustExec(t, w, "rm", "-f", dir+"/big")
	}
	if got := mustExec(t, w, "cat", "keep.txt"); got.Stdout != "keep\n" {
		t.Fatalf("after the full disk: %+v", got)
	}
	if got, err := w.ReadFile(t.Context(), "keep.txt"); err != nil || string(got) != "keep\n" {
		t.Fatalf("ReadFile: %q %v", got, err)
	}
	if got := treeDigest(t, root); got != before {
		t.Error("the host tree changed")
	}
}

// TestNoRaceThroughAParent: while a process keeps swapping a directory
// for symlinks to /etc and /tmp, fs.read and fs.write through it reach
// only the workspace's own directory — never the container's /etc/passwd,
// never a file in /tmp. (Read as root through the archive API, 1 read in
// about 150 returned the container's /etc/shadow.)
func TestNoRaceThroughAParent(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"real/passwd": "decoy\n"})
	before := treeDigest(t, root)
	w := open(t, root, sandboxImage)
	// The swapper stands for a process that escaped its command: started
	// beside the workspace's lock, it runs while reads and writes do (a
	// command ran, so reads ask the container).
	w.touch()
	e, err := w.start(t.Context(), proc{argv: []string{"sh", "-c",
		"touch flipping; while :; do ln -sfn /etc flip; ln -sfn real flip; ln -sfn /tmp flip; ln -sfn real flip; done"},
		stdout: io.Discard, stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, w, "flipping")
	var reads, writes int
	for range 50 {
		b, err := w.ReadFile(t.Context(), "flip/passwd")
		switch {
		case err == nil && string(b) != "decoy\n":
			t.Fatalf("read through the swapped parent returned %.60q", b)
		case err == nil:
			reads++
		case errcode.Of(err) != errcode.WorkspaceNotFound && errcode.Of(err) != errcode.WorkspaceScope &&
			errcode.Of(err) != errcode.WorkspacePermission:
			// A parent swapped between the script's checks can make one
			// of them look at another file (none was read through it).
			t.Fatalf("read: %v", err)
		}
		err = w.WriteFile(t.Context(), "flip/w.txt", []byte("w\n"))
		switch errcode.Of(err) {
		case "":
			writes++
		case errcode.WorkspacePath, errcode.WorkspaceScope:
		default:
			t.Fatalf("write: %v", err)
		}
	}
	e.close()
	mustExec(t, w, "true") // its clean-up ends the swapper
	wantNoProcs(t, w)
	t.Logf("%d reads and %d writes went through while the parent was swapped", reads, writes)
	if reads == 0 || writes == 0 {
		t.Fatalf("the swap never let a read (%d) or a write (%d) through: the test proves nothing", reads, writes)
	}
	if res := mustExec(t, w, "sh", "-c", "ls /tmp/w.txt /etc/w.txt 2>/dev/null; cat real/w.txt"); res.Stdout != "w\n" {
		t.Fatalf("after the race: %q (want only real/w.txt)", res.Stdout)
	}
	if after := treeDigest(t, root); after != before {
		t.Fatal("the host tree changed")
	}
}

// trailerCut takes the trailer off the end of a stream, however the
// stream is cut into writes, and passes everything else on, in order.
func TestTrailerCut(t *testing.T) {
	const tr = "\n@@end@@\n"
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
		cut    bool
	}{
		{"no trailer", []string{"abc", "def\n"}, "abcdef\n", false},
		{"trailer alone", []string{tr}, "", true},
		{"trailer at the end", []string{"out\n", tr}, "out\n", true},
		{"trailer split", []string{"out", "\n@@e", "nd@", "@\n"}, "out", true},
		{"trailer byte by byte", strings.Split("x"+tr, ""), "x", true},
		{"trailer in the middle", []string{"a" + tr + "b"}, "a" + tr + "b", false},
		{"trailer then more", []string{"a", tr, "b"}, "a" + tr + "b", false},
		{"a prefix at the end", []string{"a\n@@en"}, "a\n@@en", false},
		{"empty", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			c := &trailerCut{next: &out, trailer: tr}
			for _, w := range tc.writes {
				if n, err := c.Write([]byte(w)); err != nil || n != len(w) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := c.finish(); got != tc.cut || out.String() != tc.want {
				t.Errorf("finish = %v, out %q; want %v, %q", got, out.String(), tc.cut, tc.want)
			}
		})
	}
}

// A command that runs into the pids limit gets a result that says so (a
// note naming the limit), whether it returns or times out; a command that
// does not gets none, and the next command works.
func TestPidsLimitNamed(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"keep.txt": "keep\n"})
	before := treeDigest(t, root)
	w := open(t, root, busyboxImage, func(o *Options) { o.PidsLimit = 64 })
	ctx := t.Context()
	if res := mustExec(t, w, "sh", "-c", "echo fine >&2"); res.Note != "" || res.Stderr != "fine\n" {
		t.Fatalf("a plain command: %+v", res)
	}
	res := mustExec(t, w, "sh", "-c", `i=0; while [ $i -lt 100 ]; do sleep 30 & i=$((i+1)); done; echo forked`)
	if res.Note == "" || !strings.Contains(res.Note, "64") || strings.Contains(res.Stderr, "@@") {
		t.Fatalf("100 sleeps under a limit of 64: %+v", res)
	}
	res, err := w.Exec(ctx, workspace.ExecRequest{Argv: []string{"sh", "-c", `b() { b | b & }; b; wait; sleep 300`}, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The bomb runs until its timeout, unless its own shell is the one
	// that cannot fork (then it returns at once): a note either way.
	if res.Note == "" || !strings.Contains(res.Note, "64") || (!res.TimedOut && res.ExitCode == 0) {
		t.Fatalf("a fork bomb: %+v", res)
	}
	if got := mustExec(t, w, "cat", "keep.txt"); got.Stdout != "keep\n" || got.Note != "" {
		t.Fatalf("next command: %+v", got)
	}
	if got := treeDigest(t, root); got != before {
		t.Error("the host tree changed")
	}
}

// When every PID of the container is taken (here by root processes the
// sandbox user cannot kill), a command cannot start: Exec fails with
// WORKSPACE_LIMIT saying so (startFailed, pidsExhausted), the reaper makes
// room, and the next command works.
func TestStartFailedWhenEveryPidIsTaken(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"keep.txt": "keep\n"})
	before := treeDigest(t, root)
	const limit = 32
	w := open(t, root, busyboxImage, func(o *Options) { o.PidsLimit = limit })
	ctx := t.Context()
	// init, the reaper and its sleep run; the filler takes every other PID
	// (its sleeps, then itself) and says so with a builtin.
	filler := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do sleep 1000 & i=$((i+1)); done; echo filled; exec sleep 1000`, limit-4)
	pr, pw := io.Pipe()
	e, err := w.start(ctx, proc{argv: []string{"sh", "-c", filler}, user: "0:0", stdout: pw, stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { pw.Close(); e.close() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || line != "filled\n" {
		t.Fatalf("the filler said %q, %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	_, err = w.Exec(ctx, workspace.ExecRequest{Argv: []string{"true"}})
	wantCode(t, err, errcode.WorkspaceLimit)
	if !strings.Contains(errcode.Message(err), fmt.Sprint(limit)) {
		t.Errorf("the message does not name the limit: %s", errcode.Message(err))
	}
	if got := mustExec(t, w, "cat", "keep.txt"); got.Stdout != "keep\n" {
		t.Fatalf("next command: %+v", got)
	}
	if got := treeDigest(t, root); got != before {
		t.Error("the host tree changed")
	}
}
