package main

import (
	"bytes"
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
