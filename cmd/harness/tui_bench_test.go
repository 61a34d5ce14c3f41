package main

import (
	"bytes"
	"context"
	"encoding/json"
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

	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/testenv"
)

// openPTY opens a pseudo-terminal pair of 120×40 cells.
func openPTY(tb testing.TB) (master, slave *os.File) {
	tb.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tb.Fatalf("open /dev/ptmx: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		tb.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		tb.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tb.Fatalf("open pty: %v", err)
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: termHeight, Col: termWidth}); err != nil {
		tb.Fatalf("pty size: %v", err)
	}
	return m, s
}

// BenchmarkTUIFirstFrame measures, for the real binary in a real
// pseudo-terminal, the time from starting the process to the first frame
// of the TUI on the screen (its header), then quits it with Ctrl+C.
// Target: under 40 ms. The session opens after the first frame, so the
// workspace does not count (it is the read-only local one here, to keep
// each iteration short).
func BenchmarkTUIFirstFrame(b *testing.B) {
	u := &userEnv{home: b.TempDir(), project: b.TempDir()}
	u.db = u.home + "/harness.db"
	script := u.home + "/script.json"
	if err := os.WriteFile(script, []byte(`[{"content":"hi"}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	var firsts []time.Duration
	for b.Loop() {
		firsts = append(firsts, firstFrame(b, u, script))
	}
	slices.Sort(firsts)
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "first-frame-p50-ms")
	b.ReportMetric(float64(firsts[len(firsts)-1].Microseconds())/1000, "first-frame-max-ms")
}

func firstFrame(b *testing.B, u *userEnv, script string) time.Duration {
	master, slave := openPTY(b)
	defer master.Close()
	cmd := exec.Command(harnessBin, "--db", u.db, "--workspace", "local", "--fake-model", script)
	cmd.Dir = u.project
	cmd.Env = append(u.environ(), "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	seen := make(chan time.Time, 1)
	go func() {
		var out bytes.Buffer
		buf := make([]byte, 32<<10)
		for {
			n, err := master.Read(buf)
			out.Write(buf[:n])
			if bytes.Contains(out.Bytes(), []byte("harness")) {
				select {
				case seen <- time.Now():
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	slave.Close()
	var first time.Time
	select {
	case first = <-seen:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		b.Fatal("no frame within 30 s")
	}
	if _, err := io.WriteString(master, "\x03"); err != nil { // Ctrl+C on the idle screen quits
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		b.Fatal("harness did not quit on Ctrl+C")
	}
	return first.Sub(start)
}

// BenchmarkTUIQuitDocker measures, for the real binary in a real
// pseudo-terminal on the Docker workspace (harness-busybox), the time from
// Ctrl+C on the idle screen to the process's exit, once the workspace's
// container runs. Target: ≤ 150 ms: quitting never waits for the
// container's removal (the daemon does it).
func BenchmarkTUIQuitDocker(b *testing.B) {
	if err := exec.Command("docker", "image", "inspect", "harness-busybox").Run(); err != nil {
		testenv.Unavailable(b, testenv.RequireDocker, "docker", "no daemon or no harness-busybox image (scripts/docker.sh, scripts/images.sh)")
	}
	u := &userEnv{home: b.TempDir(), project: b.TempDir()}
	u.db = u.home + "/harness.db"
	script := u.home + "/script.json"
	if err := os.WriteFile(script, []byte(`[{"content":"hi"}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	var quits []time.Duration
	for b.Loop() {
		quits = append(quits, quitDocker(b, u, script))
	}
	slices.Sort(quits)
	b.ReportMetric(float64(quits[len(quits)/2].Microseconds())/1000, "quit-p50-ms")
	b.ReportMetric(float64(quits[len(quits)-1].Microseconds())/1000, "quit-max-ms")
}

func quitDocker(b *testing.B, u *userEnv, script string) time.Duration {
	master, slave := openPTY(b)
	defer master.Close()
	cmd := exec.Command(harnessBin, "--db", u.db, "--workspace", "docker", "--image", "harness-busybox", "--fake-model", script)
	cmd.Dir = u.project
	cmd.Env = append(u.environ(), "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	go func() { _, _ = io.Copy(io.Discard, master) }()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	slave.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Wait for this process's container to run.
	mine := fmt.Sprintf("/%d/", cmd.Process.Pid)
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := exec.Command("docker", "ps", "--filter", "label="+dockerws.LabelWorkspace,
			"--format", `{{.Label "`+dockerws.LabelOwner+`"}}`).Output()
		if err != nil {
			b.Fatal(err)
		}
		if strings.Contains(string(out), mine) {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			b.Fatal("the workspace's container did not start within 60 s")
		}
	}
	t0 := time.Now()
	if _, err := io.WriteString(master, "\x03"); err != nil { // Ctrl+C on the idle screen quits
		b.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		b.Fatal("harness did not quit on Ctrl+C")
	}
	return time.Since(t0)
}

// BenchmarkTUIFirstToolCall measures the first `process.exec true` of a
// TUI session (the real binary in a pseudo-terminal, harness-busybox, a
// copy of this repository, --approve auto): the prompt is typed 2 s after
// launch, the scripted model asks for the call at once, and the call's
// time is read from the session's record, tool.call's time to
// tool.result's (milliseconds). The TUI opens its workspace at launch, so
// the call finds it ready. Baseline, alternating in the same run: `docker
// exec CID true` through the CLI into a running container of the same
// image. Target ≤ 1.2×.
func BenchmarkTUIFirstToolCall(b *testing.B) {
	needImage(b, "harness-busybox")
	docker, err := exec.LookPath("docker")
	if err != nil {
		b.Fatalf("the docker CLI is not installed: %v", err)
	}
	u := benchUser(b, copyRepo)
	script := u.home + "/s.json"
	if err := os.WriteFile(script, []byte(`[{"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["true"]}}]},{"content":"first-call-done"}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := dockerws.Open(b.Context(), dockerws.Options{Root: u.project, Image: "harness-busybox", SessionID: "sess-bench-bare"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ws.Close(context.WithoutCancel(b.Context())) }()
	var firsts, bares []time.Duration
	n := 0
	for b.Loop() {
		n++
		u.db = fmt.Sprintf("%s/tui-%d.db", u.home, n)
		firsts = append(firsts, tuiFirstCall(b, u, script))
		t0 := time.Now()
		if out, err := exec.Command(docker, "exec", ws.ContainerID(), "true").CombinedOutput(); err != nil {
			b.Fatalf("docker exec: %v\n%s", err, out)
		}
		bares = append(bares, time.Since(t0))
	}
	f, bare := median(firsts), median(bares)
	b.ReportMetric(float64(f.Microseconds())/1000, "first-call-ms")
	b.ReportMetric(float64(bare.Microseconds())/1000, "docker-exec-cli-ms")
	b.ReportMetric(float64(f)/float64(bare), "ratio")
}

// tuiFirstCall runs one TUI session of BenchmarkTUIFirstToolCall and
// returns its call's time.
func tuiFirstCall(b *testing.B, u *userEnv, script string) time.Duration {
	master, slave := openPTY(b)
	defer master.Close()
	cmd := exec.Command(harnessBin, "--db", u.db, "--image", "harness-busybox", "--approve", "auto", "--fake-model", script)
	cmd.Dir = u.project
	cmd.Env = append(u.environ(), "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	// The screen, read as it comes: answered closes once the turn's
	// answer was drawn after the prompt was sent, the call long over (the
	// record is read only then, so that nothing else runs meanwhile).
	sent, answered := make(chan struct{}), make(chan struct{})
	go func() {
		var screen bytes.Buffer
		buf := make([]byte, 32<<10)
		waiting := true
		for {
			n, err := master.Read(buf)
			screen.Write(buf[:n])
			select {
			case <-sent:
				if waiting && bytes.Contains(screen.Bytes(), []byte("first-call-done")) {
					waiting = false
					close(answered)
				}
			default:
				screen.Reset() // nothing before the prompt counts
			}
			if err != nil {
				return
			}
		}
	}()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	slave.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	quit := func() {
		_ = cmd.Process.Kill()
		<-done
	}
	// The scenario: the user types 2 s after launch, whatever the screen.
	<-time.After(time.Until(start.Add(2 * time.Second)))
	close(sent)
	if _, err := io.WriteString(master, "run true\r"); err != nil {
		quit()
		b.Fatal(err)
	}
	select {
	case <-answered:
	case <-time.After(60 * time.Second):
		quit()
		b.Fatal("no answer within 60 s")
	}
	// The turn's end follows its answer: read the record until it is there.
	var call, result time.Time
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for call, result = firstCallTimes(b, u); result.IsZero(); call, result = firstCallTimes(b, u) {
		select {
		case <-poll.C:
		case <-time.After(30 * time.Second):
			quit()
			b.Fatal("the turn's end was not recorded within 30 s of its answer")
		}
	}
	if _, err := io.WriteString(master, "\x03"); err != nil { // Ctrl+C on the idle screen quits
		quit()
		b.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		quit()
		b.Fatal("harness did not quit on Ctrl+C")
	}
	if call.IsZero() {
		b.Fatal("no tool.call before the tool.result")
	}
	return result.Sub(call)
}

// firstCallTimes reads the times of the first tool.call and tool.result of
// the session in u.db once its turn completed (zero before).
func firstCallTimes(b *testing.B, u *userEnv) (call, result time.Time) {
	out, err := exec.Command(harnessBin, "sessions", "--json", "--db", u.db).Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return // not created yet
	}
	var s struct{ ID string }
	if err := json.Unmarshal(bytes.SplitN(out, []byte("\n"), 2)[0], &s); err != nil {
		b.Fatalf("sessions --json: %v\n%s", err, out)
	}
	out, err = exec.Command(harnessBin, "events", s.ID, "--db", u.db).Output()
	if err != nil {
		b.Fatalf("events: %v", err)
	}
	var completed bool
	for line := range bytes.Lines(out) {
		var ev struct {
			Type string
			At   time.Time
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			b.Fatalf("events: %v\n%s", err, line)
		}
		switch ev.Type {
		case "tool.call":
			if call.IsZero() {
				call = ev.At
			}
		case "tool.result":
			if result.IsZero() {
				result = ev.At
			}
		case "turn.completed":
			completed = true
		}
	}
	if !completed {
		return time.Time{}, time.Time{}
	}
	return call, result
}
