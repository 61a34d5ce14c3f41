package dockerws

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/toolchain"
	"github.com/harness-dev/harness/internal/workspace"
)

// Performance targets (issue 2), each against a baseline of the same run:
//   - process.exec of `true` through the workspace vs a bare exec
//     (create, attach, demux, inspect) through the same client: ratio
//     ≤ 1.3, median under 60 ms;
//   - copy-in of 2,000 files / 20 MB (reported beside an empty open);
//   - git.diff with 10 changed files in a 2,000-file tree: under 100 ms
//     (reported beside a bare exec).

// bareExec runs argv the plainest way the Docker API allows.
func bareExec(ctx context.Context, cli *client.Client, cid string, argv ...string) error {
	ex, err := cli.ExecCreate(ctx, cid, client.ExecCreateOptions{AttachStdout: true, AttachStderr: true, Cmd: argv})
	if err != nil {
		return err
	}
	hr, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return err
	}
	_, err = stdcopy.StdCopy(io.Discard, io.Discard, hr.Reader)
	hr.Close()
	if err != nil {
		return err
	}
	for {
		res, err := cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
		if err != nil || !res.Running {
			return err
		}
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func benchTree(b *testing.B, files, size int) string {
	b.Helper()
	root := b.TempDir()
	tree := map[string]string{}
	line := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789 ", 2)[:63] + "\n"
	content := strings.Repeat(line, size/len(line))
	for i := range files {
		tree[fmt.Sprintf("pkg%02d/file%04d.txt", i%40, i)] = content
	}
	writeTree(b, root, tree)
	return root
}

func BenchmarkExecTrue(b *testing.B) {
	w := open(b, b.TempDir(), busyboxImage)
	ctx := context.Background()
	req := workspace.ExecRequest{Argv: []string{"true"}}
	for b.Loop() {
		if _, err := w.Exec(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBareExecTrue(b *testing.B) {
	w := open(b, b.TempDir(), busyboxImage)
	ctx := context.Background()
	for b.Loop() {
		if err := bareExec(ctx, w.cli, w.cid, "true"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecVsBare interleaves the two so both see the same load, and
// reports both medians and their ratio (target ≤ 1.3, workspace median
// under 60 ms).
func BenchmarkExecVsBare(b *testing.B) {
	for _, image := range []string{busyboxImage, sandboxImage} {
		b.Run(image, func(b *testing.B) {
			w := open(b, b.TempDir(), image)
			ctx := context.Background()
			req := workspace.ExecRequest{Argv: []string{"true"}}
			var ws, bare []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := bareExec(ctx, w.cli, w.cid, "true"); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := w.Exec(ctx, req); err != nil {
					b.Fatal(err)
				}
				bare, ws = append(bare, t1.Sub(t0)), append(ws, time.Since(t1))
			}
			b.ReportMetric(ms(median(ws)), "ms-exec-median")
			b.ReportMetric(ms(median(bare)), "ms-bare-median")
			b.ReportMetric(float64(median(ws))/float64(median(bare)), "ratio")
		})
	}
}

// BenchmarkCopyIn2000Files20MB opens workspaces on a 2,000-file, 20 MB
// tree, interleaved with opens of an empty tree: the difference is the cost
// of the copy (host read, transfer, extraction onto the volume). They are
// closed after the timed loop (reported as ms-close-median): on these disks
// (ext4 with online discard) deleting 20 MB of files slows the writes that
// follow, which would otherwise be charged to the next open.
func BenchmarkCopyIn2000Files20MB(b *testing.B) {
	root := benchTree(b, 2000, 10<<10)
	empty := b.TempDir()
	for _, image := range []string{sandboxImage, busyboxImage} {
		b.Run(image, func(b *testing.B) {
			needDocker(b, image)
			ctx := context.Background()
			var full, none []time.Duration
			var opened []*Workspace
			for b.Loop() {
				for _, tc := range []struct {
					root string
					out  *[]time.Duration
				}{{empty, &none}, {root, &full}} {
					t0 := time.Now()
					w, err := Open(ctx, Options{Root: tc.root, Image: image, SessionID: "sess-bench"})
					if err != nil {
						b.Fatal(err)
					}
					*tc.out = append(*tc.out, time.Since(t0))
					opened = append(opened, w)
				}
			}
			var closes []time.Duration
			for _, w := range opened {
				t0 := time.Now()
				if err := w.Close(ctx); err != nil {
					b.Fatal(err)
				}
				closes = append(closes, time.Since(t0))
			}
			b.ReportMetric(ms(median(full)), "ms-open-median")
			b.ReportMetric(ms(median(none)), "ms-empty-open-median")
			b.ReportMetric(ms(median(full)-median(none)), "ms-copyin")
			b.ReportMetric(float64(median(full))/float64(median(none)), "ratio")
			b.ReportMetric(ms(median(closes)), "ms-close-median")
		})
	}
}

// BenchmarkDiff10Of2000 changes 10 files of a 2,000-file tree with one
// process (not timed) and times Diff (target under 100 ms), beside a bare
// exec of the same run.
func BenchmarkDiff10Of2000(b *testing.B) {
	for _, image := range []string{busyboxImage, sandboxImage} {
		b.Run(image, func(b *testing.B) {
			root := benchTree(b, 2000, 10<<10)
			w := open(b, root, image)
			ctx := context.Background()
			if _, err := w.Diff(ctx); err != nil {
				b.Fatal(err)
			}
			var diffs, bare []time.Duration
			i := 0
			for b.Loop() {
				b.StopTimer()
				script := fmt.Sprintf("for f in pkg0[0-9]/file000[0-9].txt; do echo change %d >> $f; done", i)
				i++
				if res, err := w.Exec(ctx, workspace.ExecRequest{Argv: []string{"sh", "-c", script}}); err != nil || res.ExitCode != 0 {
					b.Fatalf("change files: %v %+v", err, res)
				}
				t0 := time.Now()
				if err := bareExec(ctx, w.cli, w.cid, "true"); err != nil {
					b.Fatal(err)
				}
				bare = append(bare, time.Since(t0))
				b.StartTimer()
				t1 := time.Now()
				patch, err := w.Diff(ctx)
				if err != nil {
					b.Fatal(err)
				}
				diffs = append(diffs, time.Since(t1))
				if n := strings.Count(patch, "diff --git "); n != 10 {
					b.Fatalf("patch has %d files, want 10", n)
				}
			}
			b.ReportMetric(ms(median(diffs)), "ms-diff-median")
			b.ReportMetric(ms(median(bare)), "ms-bare-exec-median")
			b.ReportMetric(float64(median(diffs))/float64(median(bare)), "ratio")
		})
	}
}

// BenchmarkGoTestWarmCache: a second session's `go test -count=1 ./...` of
// github.com/google/go-cmp (copied from the host's module cache) in the
// sandbox, with the host's Go mounted and the project's build cache volume
// warm from a first session, against the same command on the host with a
// warm build cache, in the same run. Target: ratio ≤ 1.5.
func BenchmarkGoTestWarmCache(b *testing.B) {
	needDocker(b, sandboxImage)
	gobin, err := exec.LookPath("go")
	if err != nil {
		testenv.Unavailable(b, testenv.RequireDocker, "go", "no go on PATH")
	}
	modcache, err := exec.Command(gobin, "env", "GOMODCACHE").Output()
	if err != nil {
		b.Fatal(err)
	}
	src := filepath.Join(strings.TrimSpace(string(modcache)), "github.com", "google", "go-cmp@v0.7.0")
	if _, err := os.Stat(src); err != nil {
		testenv.Unavailable(b, testenv.RequireDocker, "go", "go-cmp v0.7.0 is not in the module cache: "+err.Error())
	}
	root := b.TempDir()
	if out, err := exec.Command("cp", "-R", src+"/.", root).CombinedOutput(); err != nil {
		b.Fatalf("copy go-cmp: %v: %s", err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", root).CombinedOutput(); err != nil {
		b.Fatalf("chmod: %v: %s", err, out)
	}
	argv := []string{"go", "test", "-count=1", "./..."}
	host := func() time.Duration {
		cmd := exec.Command(gobin, argv[1:]...)
		cmd.Dir = root
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go test on the host: %v: %s", err, out)
		}
		return time.Since(start)
	}
	host() // warm the host's cache
	ctx := context.Background()
	plan := toolchain.Detect(ctx, root, toolchain.Host{Env: os.Environ(), ShadowDir: b.TempDir()})
	if len(plan.Missing) > 0 {
		b.Fatalf("toolchain: %q", plan.Missing)
	}
	name := CacheVolume(root, os.Getuid())
	b.Cleanup(func() { _ = RemoveCache(context.Background(), "", name) })
	session := func() time.Duration {
		w, err := Open(ctx, Options{Root: root, Image: sandboxImage, SessionID: "sess-bench-gocache", Toolchain: plan,
			CacheVolume: name, CacheProject: root})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close(ctx)
		start := time.Now()
		res, err := w.Exec(ctx, workspace.ExecRequest{Argv: argv, Timeout: 10 * time.Minute})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("go test in the sandbox: %v %+v", err, res)
		}
		return time.Since(start)
	}
	session() // the first session warms the project's cache
	var hs, ss []time.Duration
	for b.Loop() {
		ss = append(ss, session())
		hs = append(hs, host())
	}
	b.ReportMetric(ms(median(ss)), "sandbox-ms")
	b.ReportMetric(ms(median(hs)), "host-ms")
	b.ReportMetric(float64(median(ss))/float64(median(hs)), "ratio")
}

// BenchmarkDiffAfterOneWrite times Diff after one fs.write in a 2,000-file
// tree (only the file written is read again) against Diff after a process
// that changed nothing (the whole tree is listed, as any diff did before):
// target ratio ≤ 1.2.
func BenchmarkDiffAfterOneWrite(b *testing.B) {
	root := benchTree(b, 2000, 10<<10)
	w := open(b, root, busyboxImage)
	ctx := context.Background()
	if _, err := w.Diff(ctx); err != nil {
		b.Fatal(err)
	}
	var writes, lists []time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		if err := w.WriteFile(ctx, "pkg00/file0000.txt", fmt.Appendf(nil, "version %d\n", i)); err != nil {
			b.Fatal(err)
		}
		i++
		b.StartTimer()
		t0 := time.Now()
		patch, err := w.Diff(ctx)
		if err != nil {
			b.Fatal(err)
		}
		writes = append(writes, time.Since(t0))
		b.StopTimer()
		if n := strings.Count(patch, "diff --git "); n != 1 {
			b.Fatalf("patch has %d files, want 1", n)
		}
		if res, err := w.Exec(ctx, workspace.ExecRequest{Argv: []string{"true"}}); err != nil || res.ExitCode != 0 {
			b.Fatalf("exec: %v %+v", err, res)
		}
		t1 := time.Now()
		if _, err := w.Diff(ctx); err != nil {
			b.Fatal(err)
		}
		lists = append(lists, time.Since(t1))
		b.StartTimer()
	}
	b.ReportMetric(ms(median(writes)), "ms-diff-after-write-median")
	b.ReportMetric(ms(median(lists)), "ms-diff-no-change-median")
	b.ReportMetric(float64(median(writes))/float64(median(lists)), "ratio")
}
