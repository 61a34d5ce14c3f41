package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/workspace"
)

// btrfsDockerd starts a second dockerd whose storage is btrfs, on a
// loop-mounted image file under a temporary directory, and returns its
// host and a function that runs the docker CLI against it. Cleanup stops the daemon, unmounts and removes the image file,
// also when the test fails. It skips the test unless it runs as root with
// the dockerd binary and mkfs.btrfs.
func btrfsDockerd(t *testing.T) (string, func(args ...string) ([]byte, error)) {
	t.Helper()
	mkfs, err := exec.LookPath("mkfs.btrfs")
	if err != nil || os.Getuid() != 0 {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "a btrfs-backed dockerd needs root and mkfs.btrfs (btrfs-progs)")
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "btrfs.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(2 << 30) // sparse: only what is written takes disk
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-f", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.btrfs: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "cannot loop-mount a btrfs image: "+strings.TrimSpace(string(out)))
	}
	// Registered before the daemon's own cleanup, so it runs after it.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s (detaching it lazily)", mnt, err, out)
			_ = exec.Command("umount", "-l", mnt).Run()
		}
		if err := os.Remove(img); err != nil {
			t.Errorf("remove the btrfs image: %v", err)
		}
	})
	host := "unix://" + filepath.Join(dir, "d.sock")
	remote := secondDockerd(t, host, dir, "--storage-driver", "btrfs", "--data-root", filepath.Join(mnt, "docker"))
	return host, remote
}

// On a daemon whose storage gives a size quota (btrfs here), the workspace
// lives on disk, not in the host's memory: workspace.lifecycle says so, a
// write past --max-workspace-bytes fails in the sandbox (a tool result:
// the turn completes), a write within it works, and the
// session's patch applies to the host tree.
func TestWorkspaceOnDiskWithQuota(t *testing.T) {
	needDocker(t)
	host, remote := btrfsDockerd(t)
	u := newUser(t)
	u.write("notes.txt", "one\n")
	u.extra = append(u.extra, "DOCKER_HOST="+host)
	// --max-workspace-bytes 8 MiB: 16 MiB for /workspace and $HOME
	// together (and the image's few MiB, which btrfs counts).
	s := u.script(`[{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["sh","-c","dd if=/dev/zero of=big bs=1M count=64 2>&1; sync; rm -f big"]}}]},` +
		`{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"notes.txt","contents":"one\ntwo\n"}}]},` +
		`{"toolCalls":[{"id":"x2","name":"process.exec","arguments":{"argv":["sh","-c","stat -c %a /workspace $HOME; touch $HOME/x && echo home-writable"]}}]},{"content":"ok"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--max-workspace-bytes", "8388608", "--fake-model", s, "fill it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	op := opened(r)
	if op == nil || op.Storage != event.StorageDisk {
		t.Fatalf("workspace.lifecycle(opened) = %+v, want storage disk", op)
	}
	results := resultsByModelCall(r.events)
	var fill, look workspace.ExecResult
	for id, v := range map[string]*workspace.ExecResult{"x1": &fill, "x2": &look} {
		if err := json.Unmarshal(results[id].Output, v); err != nil {
			t.Fatalf("%s: %v: %+v\n%s", id, err, results, r.stdout)
		}
	}
	// btrfs says EDQUOT (its quota); overlay2 on xfs, ENOSPC.
	if got := fill.Stdout + fill.Stderr; !results["x1"].OK || !strings.Contains(got, "Disk quota exceeded") && !strings.Contains(got, "No space left on device") {
		t.Errorf("the write past the quota did not fail: %+v", fill)
	}
	if !results["w1"].OK {
		t.Errorf("fs.write within the quota failed: %+v", results["w1"])
	}
	if !strings.Contains(look.Stdout, "home-writable") || !strings.HasPrefix(look.Stdout, "1777\n1777\n") {
		t.Errorf("/workspace and $HOME are not world-writable and sticky, as tmpfs ones are: %+v", look)
	}
	id := sessionOf(t, r.events)
	doc := u.run("", "doctor", "--workspace", "local", "--image", "harness-busybox")
	if line := "✓ workspace storage: disk (the container's own layer, with a size quota): the daemon's btrfs storage"; !strings.Contains(doc.stdout, line) {
		t.Errorf("doctor does not say %q:\n%s", line, doc.stdout)
	}
	if a := u.run("", "apply", id, "--yes"); a.code != 0 {
		t.Fatalf("apply: exit %d\n%s", a.code, a.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(u.project, "notes.txt")); string(got) != "one\ntwo\n" {
		t.Errorf("notes.txt after apply = %q", got)
	}
	if _, err := os.Stat(filepath.Join(u.project, "big")); err == nil {
		t.Error("the file past the quota reached the host")
	}
	// The run left a warm spare of the disk configuration; the next run
	// claims it, and its workspace is on disk with the same quota.
	spares := func() []string {
		out, err := remote("ps", "-aq", "--no-trunc", "--filter", "label="+dockerws.LabelSpare)
		if err != nil {
			t.Fatalf("docker ps: %v: %s", err, out)
		}
		return strings.Fields(string(out))
	}
	first := spares()
	if len(first) != 1 {
		t.Fatalf("spares after a run: %v, want one", first)
	}
	if out, err := remote("inspect", "-f", "{{.HostConfig.StorageOpt}} {{.HostConfig.ReadonlyRootfs}}", first[0]); err != nil || !strings.HasPrefix(string(out), "map[size:") {
		t.Errorf("the spare is not a disk one: %v %s", err, out)
	}
	s2 := u.script(`[{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["sh","-c","dd if=/dev/zero of=big bs=1M count=64 2>&1; rm -f big"]}}]},{"content":"ok"}]`)
	r = u.run("", "exec", "--json", "--image", "harness-busybox", "--max-workspace-bytes", "8388608", "--fake-model", s2, "fill it again")
	if op := opened(r); r.code != 0 || op == nil || op.Storage != event.StorageDisk {
		t.Fatalf("second run: exit %d, opened %+v\n%s", r.code, op, r.stderr)
	}
	// Claimed, it is renamed harness-claim-… (and then removed, which the
	// daemon may still be doing).
	if out, err := remote("inspect", "-f", "{{.Name}}", first[0]); err == nil && !strings.HasPrefix(string(out), "/harness-claim-") {
		t.Errorf("the second run did not claim the spare %s (named %s)", first[0], out)
	}
	for _, e := range r.events {
		if d, ok := e.Data.(event.ToolResult); ok && !strings.Contains(string(d.Output), "Disk quota exceeded") && !strings.Contains(string(d.Output), "No space left on device") {
			t.Errorf("the claimed spare has no quota: %s", d.Output)
		}
	}
}

// On this machine's own daemon the workspace's storage is what its driver
// gives: tmpfs on overlay2 over anything but xfs; /workspace and $HOME
// are world-writable and sticky either way; doctor says which.
func TestWorkspaceStorageOfThisDaemon(t *testing.T) {
	needDocker(t)
	out, err := exec.Command("docker", "info", "--format", "{{.Driver}} {{.DriverStatus}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	if info := string(out); strings.HasPrefix(info, "overlay2 ") && !strings.Contains(info, "Backing Filesystem xfs") {
		want = event.StorageTmpfs
	}
	u := newUser(t)
	u.write("a.txt", "a\n")
	s := u.script(`[{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["stat","-c","%a","/workspace","/home/harness"]}}]},{"content":"ok"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", s, "hi")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	op := opened(r)
	if op == nil || op.Storage == "" || (want != "" && op.Storage != want) {
		t.Fatalf("workspace.lifecycle(opened) = %+v, want storage %q (daemon: %s)", op, want, out)
	}
	if want == event.StorageTmpfs {
		doc := u.run("", "doctor", "--workspace", "local", "--image", "harness-busybox")
		if line := "✓ workspace storage: tmpfs (host memory): the daemon's overlay2"; !strings.Contains(doc.stdout, line) {
			t.Errorf("doctor does not say %q:\n%s", line, doc.stdout)
		}
	}
	for _, e := range r.events {
		if d, ok := e.Data.(event.ToolResult); ok && !strings.Contains(string(d.Output), `"1777\n1777\n"`) {
			t.Errorf("/workspace and $HOME are not world-writable and sticky: %s", d.Output)
		}
	}
}

// In disk storage a kept container's files outlive a restart and a stop:
// diff recovers the work from it (starting it again) instead of refusing
// it as a tmpfs one is refused (TestRestartedKeptContainerDeletesNothing).
func TestKeptDiskContainerSurvivesARestart(t *testing.T) {
	needDocker(t)
	host, _ := btrfsDockerd(t)
	t.Setenv("DOCKER_HOST", host) // for the docker commands, failTheDiff's included
	u := newUser(t)
	u.write("a.txt", "a\n")
	u.extra = append(u.extra, "DOCKER_HOST="+host)
	before := treeHash(t, u.project)
	id, name := failTheDiff(t, u, `for i in 1 2 3 4; do yes abcdefg | head -c 900000 > big$i.txt; done`, "--max-total-bytes", "1000000")
	for _, cmd := range [][]string{{"restart", name}, {"stop", name}} {
		if out, err := exec.Command("docker", cmd...).CombinedOutput(); err != nil {
			t.Fatalf("docker %v: %v %s", cmd, err, out)
		}
	}
	if running(name) {
		t.Fatalf("%s still runs after docker stop", name)
	}
	d := u.run("", "diff", id, "--max-total-bytes", "10000000")
	if d.code != 0 || !strings.Contains(d.stdout, "+keep me") {
		t.Fatalf("diff of the restarted, stopped kept container: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	if got := treeHash(t, u.project); got != before {
		t.Error("diff changed the host tree")
	}
}
