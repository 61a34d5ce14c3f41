package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/event"
)

// The binary under test, built once per test run.
var harnessBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "harness-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	harnessBin = filepath.Join(dir, "harness")
	build := goBuild("-o", harnessBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build harness:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goBuild is go build as make build links (statically, CGO_ENABLED=0):
// every binary the tests and benchmarks build shares one configuration.
func goBuild(args ...string) *exec.Cmd {
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}

// env is a user's environment in temp dirs: its own HOME, XDG dirs, a
// project directory and a store file.
type userEnv struct {
	t       *testing.T
	home    string
	project string
	db      string
	extra   []string // more environment, KEY=VALUE
}

func newUser(t *testing.T) *userEnv {
	t.Helper()
	home := t.TempDir()
	project := t.TempDir()
	return &userEnv{t: t, home: home, project: project, db: filepath.Join(home, "harness.db")}
}

func (u *userEnv) environ() []string {
	return append([]string{
		"HOME=" + u.home,
		"XDG_DATA_HOME=" + filepath.Join(u.home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(u.home, "config"),
		"PATH=" + os.Getenv("PATH"),
		"DOCKER_HOST=" + os.Getenv("DOCKER_HOST"),
	}, u.extra...)
}

func (u *userEnv) write(name, body string) {
	u.t.Helper()
	p := filepath.Join(u.project, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		u.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		u.t.Fatal(err)
	}
}

func (u *userEnv) script(body string) string {
	u.t.Helper()
	p := filepath.Join(u.home, fmt.Sprintf("script-%d.json", time.Now().UnixNano()))
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		u.t.Fatal(err)
	}
	return p
}

// result of one harness run.
type result struct {
	code   int
	stdout string
	stderr string
	events []event.Event
}

func (u *userEnv) run(stdin string, args ...string) result {
	u.t.Helper()
	return u.runIn(u.project, stdin, args...)
}

// runIn runs harness with dir as the working directory.
func (u *userEnv) runIn(dir, stdin string, args ...string) result {
	u.t.Helper()
	if !slicesContains(args, "--db") {
		args = append(args, "--db", u.db)
	}
	cmd := exec.CommandContext(u.t.Context(), harnessBin, args...)
	cmd.Dir = dir
	cmd.Env = u.environ()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		u.t.Fatalf("run harness: %v", err)
	}
	if slicesContains(args, "--json") && args[0] == "exec" {
		r.events = decodeLines(u.t, r.stdout)
	}
	return r
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func decodeLines(t *testing.T, s string) []event.Event {
	var out []event.Event
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		ev, err := event.Decode([]byte(line))
		if err != nil {
			t.Fatalf("output line does not decode: %v\n%s", err, line)
		}
		out = append(out, ev)
	}
	return out
}

// live is a harness run whose stdout is read as it happens, with a pipe
// for stdin, to steer and interrupt it while it runs.
type live struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	lines  []string
	grew   chan struct{}
	done   chan struct{}
	stderr bytes.Buffer
	killed bool // ended with SIGKILL: a last partial line is dropped
}

func (u *userEnv) start(args ...string) *live {
	u.t.Helper()
	cmd := exec.Command(harnessBin, append(args, "--db", u.db)...)
	cmd.Dir = u.project
	cmd.Env = u.environ()
	l := &live{t: u.t, cmd: cmd, grew: make(chan struct{}, 1), done: make(chan struct{})}
	cmd.Stderr = &l.stderr
	var err error
	if l.stdin, err = cmd.StdinPipe(); err != nil {
		u.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		u.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 32<<20)
		for sc.Scan() {
			l.mu.Lock()
			l.lines = append(l.lines, sc.Text())
			l.mu.Unlock()
			select {
			case l.grew <- struct{}{}:
			default:
			}
		}
	}()
	u.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return l
}

// waitFor blocks until an output line contains s.
func (l *live) waitFor(s string) {
	l.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if strings.Contains(line, s) {
				l.mu.Unlock()
				return
			}
		}
		l.mu.Unlock()
		select {
		case <-l.grew:
		case <-l.done:
			l.t.Fatalf("harness ended before printing %q; stderr:\n%s", s, l.stderr.String())
		case <-deadline:
			l.t.Fatalf("no line with %q in 60 s", s)
		}
	}
}

func (l *live) wait() result {
	l.t.Helper()
	l.stdin.Close()
	<-l.done
	err := l.cmd.Wait()
	r := result{stderr: l.stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	}
	l.mu.Lock()
	r.stdout = strings.Join(l.lines, "\n")
	l.mu.Unlock()
	out := r.stdout
	if l.killed {
		// A process killed with SIGKILL may have been cut mid-line: only
		// whole lines count.
		if lines := strings.Split(out, "\n"); len(lines) > 0 {
			if _, err := event.Decode([]byte(lines[len(lines)-1])); err != nil {
				out = strings.Join(lines[:len(lines)-1], "\n")
			}
		}
	}
	r.events = decodeLines(l.t, out)
	return r
}

// kill9 ends the process with SIGKILL, as a crash would.
func (l *live) kill9() {
	l.killed = true
	l.cmd.Process.Kill()
}

// waitLines blocks until n output lines were read.
func (l *live) waitLines(n int) {
	l.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		l.mu.Lock()
		got := len(l.lines)
		l.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-l.grew:
		case <-l.done:
			return
		case <-deadline:
			l.t.Fatalf("only %d of %d lines in 60 s", got, n)
		}
	}
}

// fixture is the path of a shared scripted-model run in testdata/scripts.
func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "scripts", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}
