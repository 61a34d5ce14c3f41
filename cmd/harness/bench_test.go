package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/testenv"
)

// BenchmarkExecFirstRequest measures `harness exec` from process start to
// its first model request on the wire (the model.request event line), with
// a scripted model and the read-only local workspace. Target: under 50 ms.
// It also reports the peak resident memory of a whole short turn (target:
// under 40 MiB).
func BenchmarkExecFirstRequest(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchFirstRequest(b, "--workspace", "local") })
	b.Run("docker", func(b *testing.B) {
		if err := exec.Command("docker", "image", "inspect", "harness-busybox").Run(); err != nil {
			testenv.Unavailable(b, testenv.RequireDocker, "docker", "no daemon or no harness-busybox image (scripts/docker.sh, scripts/images.sh)")
		}
		benchFirstRequest(b, "--image", "harness-busybox")
	})
}

func benchFirstRequest(b *testing.B, wsArgs ...string) {
	u := &userEnv{home: b.TempDir(), project: b.TempDir()}
	u.db = u.home + "/h.db"
	script := u.home + "/s.json"
	if err := os.WriteFile(script, []byte(`[{"content":"hello","deltas":["hel","lo"]}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	var firsts []time.Duration
	var peakKiB int64
	for b.Loop() {
		args := append([]string{"exec", "--json"}, wsArgs...)
		cmd := exec.Command(harnessBin, append(args, "--fake-model", script, "--db", u.db, "hi")...)
		cmd.Dir = u.project
		cmd.Env = u.environ()
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		seen := false
		for sc.Scan() {
			if !seen && strings.Contains(sc.Text(), `"type":"model.request"`) {
				firsts = append(firsts, time.Since(t0))
				seen = true
			}
		}
		if err := cmd.Wait(); err != nil || !seen {
			b.Fatalf("exec: %v (model.request seen: %v)", err, seen)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peakKiB = max(peakKiB, ru.Maxrss)
		}
	}
	slices.Sort(firsts)
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "ms-to-first-request")
	b.ReportMetric(float64(peakKiB)/1024, "peak-MiB")
}

// BenchmarkExecOneAnswer measures `harness exec` answering one prompt
// with no tool call, from process start to exit, on the Docker workspace
// (harness-sandbox) and, alternating with it in the same run, on the
// read-only local workspace (the baseline). Target: Docker ≤ 1.3× local:
// a turn that never touches the workspace neither waits for its container
// to start nor for its removal.
func BenchmarkExecOneAnswer(b *testing.B) {
	if err := exec.Command("docker", "image", "inspect", "harness-sandbox").Run(); err != nil {
		testenv.Unavailable(b, testenv.RequireDocker, "docker", "no daemon or no harness-sandbox image (scripts/docker.sh, scripts/images.sh)")
	}
	u := &userEnv{home: b.TempDir(), project: b.TempDir()}
	u.db = u.home + "/h.db"
	script := u.home + "/s.json"
	if err := os.WriteFile(script, []byte(`[{"content":"hello"}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range 50 { // a small project to copy in
		if err := os.WriteFile(fmt.Sprintf("%s/f%02d.go", u.project, i), []byte(strings.Repeat("package p\n", 100)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run := func(ws ...string) time.Duration {
		cmd := exec.Command(harnessBin, append(append([]string{"exec"}, ws...), "--fake-model", script, "--db", u.db, "hi")...)
		cmd.Dir, cmd.Env = u.project, u.environ()
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("exec %v: %v\n%s", ws, err, out)
		}
		return time.Since(t0)
	}
	var local, docker []time.Duration
	for b.Loop() {
		local = append(local, run("--workspace", "local"))
		docker = append(docker, run("--workspace", "docker", "--image", "harness-sandbox"))
	}
	l, d := median(local), median(docker)
	b.ReportMetric(float64(l.Microseconds())/1000, "local-ms")
	b.ReportMetric(float64(d.Microseconds())/1000, "docker-ms")
	b.ReportMetric(float64(d)/float64(l), "ratio")
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkVersion measures `harness --version` from process start to
// exit and its peak resident memory (targets: ≤ 10 ms, ≤ 20 MiB) on the
// binary as make build links it (trimmed paths, symbols and DWARF
// stripped, version and commit set, so internal/version answers before
// the other packages' init), and reports that binary's size (target ≤ 40
// MiB). Floor, alternating in the same run: a Go program that prints one
// line, built the same way.
func BenchmarkVersion(b *testing.B) {
	dir := b.TempDir()
	const vpkg = "github.com/harness-dev/harness/internal/version"
	bin := dir + "/harness"
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X "+vpkg+".version=v0.0.0-bench -X "+vpkg+".commit=000000000000", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	hello := dir + "/hello"
	if err := os.WriteFile(dir+"/hello.go", []byte("package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", hello, dir+"/hello.go").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	timeOne := func(argv ...string) time.Duration {
		cmd := exec.Command(argv[0], argv[1:]...)
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var walls, floors []time.Duration
	for b.Loop() {
		walls = append(walls, timeOne(bin, "--version"))
		floors = append(floors, timeOne(hello))
	}
	b.ReportMetric(float64(median(walls).Microseconds())/1000, "wall-ms")
	b.ReportMetric(float64(median(floors).Microseconds())/1000, "floor-ms")
	if kib, ok := peakRSS(b, bin, "--version"); ok {
		b.ReportMetric(float64(kib)/1024, "peak-MiB")
	}
	fi, err := os.Stat(bin)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "binary-MiB")
}

// peakRSS runs argv under /usr/bin/time and returns its peak resident
// memory in KiB. The rusage Go's os/exec reports cannot serve: it starts
// children with vfork, so a child's maxrss counts the parent's (the
// benchmark's) resident memory from before the exec. false (and a log
// line) when /usr/bin/time is not installed (Debian's package time;
// scripts/provision.sh installs it).
func peakRSS(b *testing.B, argv ...string) (int64, bool) {
	b.Helper()
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		b.Logf("peak memory not measured: /usr/bin/time is missing (install Debian's time package)")
		return 0, false
	}
	var peak int64
	for range 5 {
		cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M"}, argv...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v\n%s", argv, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		if err != nil {
			b.Fatalf("/usr/bin/time printed %q", stderr.String())
		}
		peak = max(peak, kib)
	}
	return peak, true
}

// BenchmarkExecFirstToolRound measures the first tool round of a run of
// `harness exec` on the Docker workspace (harness-busybox): from the model's
// response asking for `process.exec true` (its tool.call line) to the next
// model request (dispatch, exec, appends). The scripted model answers the
// first request after 1.5 s, as a provider would, while the workspace is
// copied in. Baseline, alternating in the same run: a bare exec of `true`
// through the Docker Go client in a workspace's container. Target ≤ 1.5×.
func BenchmarkExecFirstToolRound(b *testing.B) {
	if err := exec.Command("docker", "image", "inspect", "harness-busybox").Run(); err != nil {
		testenv.Unavailable(b, testenv.RequireDocker, "docker", "no daemon or no harness-busybox image (scripts/docker.sh, scripts/images.sh)")
	}
	u := &userEnv{home: b.TempDir(), project: b.TempDir()}
	u.db = u.home + "/h.db"
	script := u.home + "/s.json"
	if err := os.WriteFile(script, []byte(`[{"delayMs":1500,"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["true"]}}]},{"content":"done"}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		if err := os.WriteFile(fmt.Sprintf("%s/f%02d.go", u.project, i), []byte(strings.Repeat("package p\n", 100)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := b.Context()
	ws, err := dockerws.Open(ctx, dockerws.Options{Root: u.project, Image: "harness-busybox", SessionID: "sess-bench-bare"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ws.Close(context.WithoutCancel(ctx)) }()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cli.Close() }()
	var rounds, bares []time.Duration
	for b.Loop() {
		cmd := exec.Command(harnessBin, "exec", "--json", "--image", "harness-busybox", "--fake-model", script, "--db", u.db, "run true")
		cmd.Dir, cmd.Env = u.project, u.environ()
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var called time.Time
		for sc.Scan() {
			line := sc.Text()
			switch {
			case called.IsZero() && strings.Contains(line, `"type":"tool.call"`):
				called = time.Now()
			case !called.IsZero() && strings.Contains(line, `"type":"model.request"`):
				rounds = append(rounds, time.Since(called))
				called = time.Now().Add(time.Hour) // counted; ignore later requests
			}
		}
		if err := cmd.Wait(); err != nil || len(rounds) == 0 {
			b.Fatalf("exec: %v (rounds measured: %d)", err, len(rounds))
		}
		t0 := time.Now()
		if err := bareExecTrue(ctx, cli, ws.ContainerID()); err != nil {
			b.Fatal(err)
		}
		bares = append(bares, time.Since(t0))
	}
	r, bare := median(rounds), median(bares)
	b.ReportMetric(float64(r.Microseconds())/1000, "round-ms")
	b.ReportMetric(float64(bare.Microseconds())/1000, "bare-exec-ms")
	b.ReportMetric(float64(r)/float64(bare), "ratio")
}

// bareExecTrue runs `true` in container cid through the Docker Go client:
// create, attach, read to the end, inspect until it has exited.
func bareExecTrue(ctx context.Context, cli *client.Client, cid string) error {
	ex, err := cli.ExecCreate(ctx, cid, client.ExecCreateOptions{AttachStdout: true, AttachStderr: true, Cmd: []string{"true"}})
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
