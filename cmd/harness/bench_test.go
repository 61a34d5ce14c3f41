package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/testenv"
)

// Projects the exec benchmarks copy in: a copy of this repository's
// tracked files (about 400 files, 5 MB), and 2,000 text files of 10 KiB
// (20 MB).
var benchProjects = []struct {
	name string
	make func(b *testing.B, dir string)
}{
	{"repo", copyRepo},
	{"2000-files-20MB", func(b *testing.B, dir string) { writeFiles(b, dir, 2000, 10<<10) }},
}

// copyRepo copies the tracked files of the repository this test runs in
// into dir.
func copyRepo(b *testing.B, dir string) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		b.Fatalf("git rev-parse: %v", err)
	}
	root := strings.TrimSpace(string(top))
	list, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		b.Fatalf("git ls-files: %v", err)
	}
	for _, p := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		fi, err := os.Lstat(filepath.Join(root, p))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a symlink
		}
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			b.Fatal(err)
		}
		dst := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			b.Fatal(err)
		}
	}
}

// writeFiles writes n text files of size bytes, 100 to a directory.
func writeFiles(b *testing.B, dir string, n, size int) {
	line := "the quick brown fox jumps over the lazy dog, again and again and again.\n"
	body := strings.Repeat(line, size/len(line)+1)[:size]
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("pkg%02d", i/100))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%04d.txt", i)), []byte(fmt.Sprintf("%d\n", i)+body[len(fmt.Sprint(i))+1:]), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// benchUser is a user environment for a benchmark, on a project made by mk.
func benchUser(b *testing.B, mk func(*testing.B, string)) *userEnv {
	u := &userEnv{home: b.TempDir(), project: b.TempDir()}
	u.db = u.home + "/h.db"
	if mk != nil {
		mk(b, u.project)
	}
	return u
}

// needImage skips (or fails, with HARNESS_REQUIRE_DOCKER=1) without the
// daemon or the image.
func needImage(b *testing.B, image string) {
	if err := exec.Command("docker", "image", "inspect", image).Run(); err != nil {
		testenv.Unavailable(b, testenv.RequireDocker, "docker", "no daemon or no "+image+" image (scripts/docker.sh, scripts/images.sh)")
	}
}

// sessionIn finds the session ID harness exec printed.
func sessionIn(b *testing.B, out string) string {
	m := regexp.MustCompile(`harness: session (sess-[0-9a-f-]+)`).FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("no session in the output:\n%s", out)
	}
	return m[1]
}

// waitRemoved waits until the containers of session id (and the claimed
// spares of exited runs, waitClaimsRemoved), which the exited
// run left for the daemon to remove, are gone: a baseline timed right
// after a Docker run must not share the machine with that removal. A
// container whose create was still on the wire when the run exited is
// removed here, as the next run's reaping would.
func waitRemoved(b *testing.B, cli *client.Client, id string) {
	ctx := b.Context()
	// The daemon may finish a create after the reap listed the containers:
	// each round reaps (waiting for removals under way) and lists again.
	for range 100 {
		if _, err := dockerws.Reap(ctx, ""); err != nil {
			b.Fatal(err)
		}
		list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true,
			Filters: make(client.Filters).Add("label", dockerws.LabelSession+"="+id)})
		if err != nil {
			b.Fatal(err)
		}
		if len(list.Items) == 0 {
			waitClaimsRemoved(b, cli)
			return
		}
	}
	b.Fatalf("the containers of %s are not removed", id)
}

// dockerClient is a Docker client closed at the benchmark's end.
func dockerClient(b *testing.B) *client.Client {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cli.Close() })
	return cli
}

// BenchmarkExecFirstRequest measures `harness exec` from process start to
// its first model request on the wire (the model.request event line), with
// a scripted model, on the read-only local workspace and on the Docker
// workspace (harness-busybox), with a copy of this repository and with a
// 2,000-file / 20 MB project: the copy-in runs in the background, so the
// Docker figures stay near the local one whatever the project's size.
// Target: under 50 ms. It also reports the peak resident memory of a whole
// short turn (target: under 40 MiB). After each Docker run it waits until
// that run's container is removed.
func BenchmarkExecFirstRequest(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchFirstRequest(b, copyRepo, "--workspace", "local") })
	b.Run("docker", func(b *testing.B) {
		needImage(b, "harness-busybox")
		benchFirstRequest(b, copyRepo, "--image", "harness-busybox")
	})
	b.Run("docker-2000-files-20MB", func(b *testing.B) {
		needImage(b, "harness-busybox")
		benchFirstRequest(b, benchProjects[1].make, "--image", "harness-busybox")
	})
}

func benchFirstRequest(b *testing.B, mk func(*testing.B, string), wsArgs ...string) {
	u := benchUser(b, mk)
	script := u.home + "/s.json"
	if err := os.WriteFile(script, []byte(`[{"content":"hello","deltas":["hel","lo"]}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	docker := !slices.Contains(wsArgs, "local")
	var cli *client.Client
	if docker {
		cli = dockerClient(b)
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
		session := ""
		for sc.Scan() {
			line := sc.Text()
			if !seen && strings.Contains(line, `"type":"model.request"`) {
				firsts = append(firsts, time.Since(t0))
				seen = true
			}
			if m := regexp.MustCompile(`"sessionId":"(sess-[0-9a-f-]+)"`).FindStringSubmatch(line); m != nil {
				session = m[1]
			}
		}
		if err := cmd.Wait(); err != nil || !seen {
			b.Fatalf("exec: %v (model.request seen: %v)", err, seen)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peakKiB = max(peakKiB, ru.Maxrss)
		}
		if docker {
			b.StopTimer()
			waitRemoved(b, cli, session)
			b.StartTimer()
		}
	}
	slices.Sort(firsts)
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "ms-to-first-request")
	b.ReportMetric(float64(peakKiB)/1024, "peak-MiB")
}

// BenchmarkExecOneAnswer measures `harness exec` answering one prompt
// with no tool call, from process start to exit, on the Docker workspace
// (harness-sandbox) and, alternating with it in the same run, on the
// read-only local workspace (the baseline), for each of benchProjects.
// Target: Docker ≤ 1.3× local, whatever the project: a turn that never
// touches the workspace waits neither for its scan and copy-in nor for its
// container to start or to be removed. Each local run starts once the
// previous Docker run's container is removed. Each op is five pairs, so
// that a single op (make bench BENCHTIME=1x, CI's run) reports medians.
// It also reports the peak resident memory of the local run (target ≤ 25
// MiB), under /usr/bin/time.
func BenchmarkExecOneAnswer(b *testing.B) {
	const pairsPerOp = 5
	needImage(b, "harness-sandbox")
	for _, p := range benchProjects {
		b.Run(p.name, func(b *testing.B) {
			u := benchUser(b, p.make)
			cli := dockerClient(b)
			script := u.home + "/s.json"
			if err := os.WriteFile(script, []byte(`[{"content":"hello"}]`), 0o644); err != nil {
				b.Fatal(err)
			}
			argv := func(ws ...string) []string {
				return append(append([]string{"exec"}, ws...), "--fake-model", script, "--db", u.db, "hi")
			}
			run := func(ws ...string) (time.Duration, string) {
				cmd := exec.Command(harnessBin, argv(ws...)...)
				cmd.Dir, cmd.Env = u.project, u.environ()
				t0 := time.Now()
				out, err := cmd.CombinedOutput()
				d := time.Since(t0)
				if err != nil {
					b.Fatalf("exec %v: %v\n%s", ws, err, out)
				}
				return d, string(out)
			}
			var local, docker []time.Duration
			for b.Loop() {
				for range pairsPerOp {
					d, _ := run("--workspace", "local")
					local = append(local, d)
					d, out := run("--workspace", "docker", "--image", "harness-sandbox")
					docker = append(docker, d)
					b.StopTimer()
					waitRemoved(b, cli, sessionIn(b, out))
					b.StartTimer()
				}
			}
			l, d := median(local), median(docker)
			b.ReportMetric(float64(l.Microseconds())/1000, "local-ms")
			b.ReportMetric(float64(d.Microseconds())/1000, "docker-ms")
			b.ReportMetric(float64(d)/float64(l), "ratio")
			// The peak of the local runs, under /usr/bin/time: the
			// rusage of the runs above would count this process's.
			b.StopTimer()
			if kib, ok := peakRSS(b, u.project, u.environ(), append([]string{harnessBin}, argv("--workspace", "local")...)...); ok {
				b.ReportMetric(float64(kib)/1024, "local-peak-MiB")
			}
		})
	}
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkVersion measures `harness --version` from process start to
// exit and its peak resident memory (targets: ≤ 10 ms, ≤ 20 MiB) on the
// binary as make build links it (static, trimmed paths, symbols and DWARF
// stripped, version and commit set, so internal/version answers before
// the other packages' init), and reports that binary's size (target ≤ 40
// MiB). Floor, alternating in the same run: a Go program that prints one
// line, built the same way.
func BenchmarkVersion(b *testing.B) {
	dir := b.TempDir()
	const vpkg = "github.com/harness-dev/harness/internal/version"
	bin := dir + "/harness"
	build := goBuild("-trimpath", "-ldflags", "-s -w -X "+vpkg+".version=v0.0.0-bench -X "+vpkg+".commit=000000000000", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	hello := dir + "/hello"
	if err := os.WriteFile(dir+"/hello.go", []byte("package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := goBuild("-trimpath", "-ldflags", "-s -w", "-o", hello, dir+"/hello.go").CombinedOutput(); err != nil {
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
	if kib, ok := peakRSS(b, "", nil, bin, "--version"); ok {
		b.ReportMetric(float64(kib)/1024, "peak-MiB")
	}
	fi, err := os.Stat(bin)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "binary-MiB")
}

// peakRSS runs argv under /usr/bin/time five times, in dir with env
// ("" and nil: this process's), and returns the largest peak resident
// memory in KiB. The rusage Go's os/exec reports cannot serve: it starts
// children with vfork, so a child's maxrss counts the parent's (the
// benchmark's) resident memory from before the exec. false (and a log
// line) when /usr/bin/time is not installed (Debian's package time;
// scripts/provision.sh installs it).
func peakRSS(b *testing.B, dir string, env []string, argv ...string) (int64, bool) {
	b.Helper()
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		b.Logf("peak memory not measured: /usr/bin/time is missing (install Debian's time package)")
		return 0, false
	}
	var peak int64
	for range 5 {
		cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M"}, argv...)...)
		cmd.Dir, cmd.Env = dir, env
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
// `harness exec` on the Docker workspace (harness-busybox) with a copy of
// this repository: from the model's response asking for `process.exec
// true` (its tool.call line) to the next model request (dispatch, exec,
// appends). The scripted model answers the first request after 400 ms, as
// a provider's first answer takes, while the workspace is copied in; the
// round includes whatever of the copy-in is left by then. Baseline,
// alternating in the same run, once the run's container is removed: a bare
// exec of `true` through the Docker Go client in a workspace's container.
// Target ≤ 1.5×.
func BenchmarkExecFirstToolRound(b *testing.B) {
	needImage(b, "harness-busybox")
	u := benchUser(b, copyRepo)
	script := u.home + "/s.json"
	if err := os.WriteFile(script, []byte(`[{"delayMs":400,"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["true"]}}]},{"content":"done"}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	ws, err := dockerws.Open(ctx, dockerws.Options{Root: u.project, Image: "harness-busybox", SessionID: "sess-bench-bare"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ws.Close(context.WithoutCancel(ctx)) }()
	cli := dockerClient(b)
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
		counted := false
		session := ""
		for sc.Scan() {
			line := sc.Text()
			if m := regexp.MustCompile(`"sessionId":"(sess-[0-9a-f-]+)"`).FindStringSubmatch(line); m != nil {
				session = m[1]
			}
			switch {
			case called.IsZero() && strings.Contains(line, `"type":"tool.call"`):
				called = time.Now()
			case !called.IsZero() && !counted && strings.Contains(line, `"type":"model.request"`):
				rounds = append(rounds, time.Since(called))
				counted = true
			}
		}
		if err := cmd.Wait(); err != nil || !counted {
			b.Fatalf("exec: %v (round measured: %v)", err, counted)
		}
		b.StopTimer()
		waitRemoved(b, cli, session)
		b.StartTimer()
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

// BenchmarkExecLaterToolCalls measures `process.exec true` once the
// workspace is open: a run of `harness exec` on the Docker workspace
// (harness-busybox, an empty project) whose scripted model asks for it 8
// times in a row, timed from each call's tool.call line to its
// tool.result line (the policy decision's append, the exec with its
// wrapper and clean-up, the result's append), calls 2 to 8. Baseline,
// alternating in the same run: a bare exec of `true` through the Docker Go
// client in a workspace's container, 7 times. Target ≤ 1.3×.
func BenchmarkExecLaterToolCalls(b *testing.B) {
	needImage(b, "harness-busybox")
	u := benchUser(b, nil)
	var calls []string
	for i := range 8 {
		calls = append(calls, fmt.Sprintf(`{"toolCalls":[{"id":"c%d","name":"process.exec","arguments":{"argv":["true","%d"]}}]}`, i, i))
	}
	script := u.home + "/s.json"
	if err := os.WriteFile(script, []byte("["+strings.Join(calls, ",")+`,{"content":"done"}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	ws, err := dockerws.Open(ctx, dockerws.Options{Root: u.project, Image: "harness-busybox", SessionID: "sess-bench-bare"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ws.Close(context.WithoutCancel(ctx)) }()
	cli := dockerClient(b)
	var calls2, bares []time.Duration
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
		n := 0
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, `"type":"tool.call"`) {
				called = time.Now()
			} else if strings.Contains(line, `"type":"tool.result"`) && !called.IsZero() {
				n++
				if n > 1 {
					calls2 = append(calls2, time.Since(called))
				}
				called = time.Time{}
			}
		}
		if err := cmd.Wait(); err != nil || n != 8 {
			b.Fatalf("exec: %v (%d tool results)", err, n)
		}
		for i := 0; i < 7; i++ {
			t0 := time.Now()
			if err := bareExecTrue(ctx, cli, ws.ContainerID()); err != nil {
				b.Fatal(err)
			}
			bares = append(bares, time.Since(t0))
		}
	}
	r, bare := median(calls2), median(bares)
	b.ReportMetric(float64(r.Microseconds())/1000, "tool-ms")
	b.ReportMetric(float64(bare.Microseconds())/1000, "bare-exec-ms")
	b.ReportMetric(float64(r)/float64(bare), "ratio")
}

// BenchmarkExecFirstToolCall measures the first `process.exec true` of a
// headless run whose scripted model asks for it at once (harness-busybox,
// an empty project), from its tool.call line to its tool.result line: the
// workspace's open that the call waits for, then the exec. With a warm
// spare ("spare", the default: the run claims the container the run
// before it left, checked each time, and copies the tree into it) and
// without ("no-spare": the container is created and started). Baseline,
// alternating in the same run: `docker exec CID true` through the CLI
// into a running container of the same image; the medians of five runs
// per op. Target ≤ 1.5×.
func BenchmarkExecFirstToolCall(b *testing.B) {
	b.Run("spare", func(b *testing.B) { benchFirstToolCall(b, true) })
	b.Run("no-spare", func(b *testing.B) { benchFirstToolCall(b, false) })
}

func benchFirstToolCall(b *testing.B, spare bool) {
	needImage(b, "harness-busybox")
	docker, err := exec.LookPath("docker")
	if err != nil {
		b.Fatalf("the docker CLI is not installed: %v", err)
	}
	u := benchUser(b, nil)
	script := u.home + "/s.json"
	if err := os.WriteFile(script, []byte(`[{"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["true"]}}]},{"content":"done"}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	ws, err := dockerws.Open(ctx, dockerws.Options{Root: u.project, Image: "harness-busybox", SessionID: "sess-bench-bare"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ws.Close(context.WithoutCancel(ctx)) }()
	cli := dockerClient(b)
	args := []string{"exec", "--json", "--image", "harness-busybox", "--fake-model", script, "--db", u.db}
	if !spare {
		args = append(args, "--no-spare")
	}
	// run runs harness once and returns the tool call's time.
	run := func() time.Duration {
		cmd := exec.Command(harnessBin, append(args, "run true")...)
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
		var first time.Duration
		session := ""
		for sc.Scan() {
			line := sc.Text()
			if m := regexp.MustCompile(`"sessionId":"(sess-[0-9a-f-]+)"`).FindStringSubmatch(line); m != nil {
				session = m[1]
			}
			if strings.Contains(line, `"type":"tool.call"`) {
				called = time.Now()
			} else if strings.Contains(line, `"type":"tool.result"`) && !called.IsZero() && first == 0 {
				first = time.Since(called)
			}
		}
		if err := cmd.Wait(); err != nil || first == 0 {
			b.Fatalf("exec: %v (measured: %v)", err, first)
		}
		b.StopTimer()
		waitRemoved(b, cli, session)
		b.StartTimer()
		return first
	}
	hash := "" // the configuration of the runs' spares
	if spare {
		testenv.Exclusive(b, "spares")
		b.Cleanup(func() { _, _ = dockerws.RemoveSpares(context.Background(), "") })
		// The first run leaves the first spare (of the runs' configuration,
		// whatever other spares there are).
		before := idleSpares(b, cli, "")
		run()
		for id, h := range idleSpares(b, cli, "") {
			if _, ok := before[id]; !ok {
				hash = h
			}
		}
		if hash == "" {
			b.Fatal("the first run left no spare")
		}
	}
	// Each op is five runs, each beside a bare exec, so that a single op
	// (make bench BENCHTIME=1x, CI's run) reports medians rather than one
	// run's time (it read 2.47 once that way on a loaded machine).
	const runsPerOp = 5
	var firsts, bares []time.Duration
	for b.Loop() {
		for range runsPerOp {
			before := idleSpares(b, cli, hash)
			firsts = append(firsts, run())
			if spare {
				// The run claimed the spare there was and left another.
				after := idleSpares(b, cli, hash)
				if len(before) != 1 || len(after) != 1 || maps.Equal(before, after) {
					b.Fatalf("spares before the run %v, after %v: want one claimed and one made", before, after)
				}
			}
			t0 := time.Now()
			if out, err := exec.Command(docker, "exec", ws.ContainerID(), "true").CombinedOutput(); err != nil {
				b.Fatalf("docker exec: %v\n%s", err, out)
			}
			bares = append(bares, time.Since(t0))
		}
	}
	f, bare := median(firsts), median(bares)
	b.ReportMetric(float64(f.Microseconds())/1000, "first-call-ms")
	b.ReportMetric(float64(bare.Microseconds())/1000, "docker-exec-cli-ms")
	b.ReportMetric(float64(f)/float64(bare), "ratio")
}

// idleSpares lists the idle warm spares of configuration hash ("": all):
// their IDs and configurations.
func idleSpares(b *testing.B, cli *client.Client, hash string) map[string]string {
	label := dockerws.LabelSpare
	if hash != "" {
		label += "=" + hash
	}
	list, err := cli.ContainerList(b.Context(), client.ContainerListOptions{
		Filters: make(client.Filters).Add("label", label).Add("name", dockerws.SparePrefix)})
	if err != nil {
		b.Fatal(err)
	}
	ids := map[string]string{}
	for _, c := range list.Items {
		ids[c.ID] = c.Labels[dockerws.LabelSpare]
	}
	return ids
}

// waitClaimsRemoved waits until the claimed warm spares of exited runs
// are gone (a claimed spare has no session label: the session's list does
// not see it). The reap removes those whose claimer is gone, or sees them
// being removed; a running one is a live process's workspace.
func waitClaimsRemoved(b *testing.B, cli *client.Client) {
	if _, err := dockerws.Reap(b.Context(), ""); err != nil {
		b.Fatal(err)
	}
	list, err := cli.ContainerList(b.Context(), client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", dockerws.LabelSpare).Add("name", dockerws.ClaimPrefix)})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range list.Items {
		if c.State == container.StateRunning {
			continue
		}
		wctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
		res := cli.ContainerWait(wctx, c.ID, client.ContainerWaitOptions{Condition: container.WaitConditionRemoved})
		select {
		case <-res.Result:
		case <-res.Error:
		}
		cancel()
	}
}
