package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// BenchmarkTUILongTurnRSS runs the built binary's TUI in a pseudo-terminal
// through one turn of 1,000 fs.read rounds of 20 KB files (20 distinct
// files of this repository's Go source, read in turn under 1,000 paths) against a loopback
// OpenAI-compatible server that reports usage, so the turn compacts as
// it would with a real model (about 90 summary rounds, 11,000 events):
// the whole engine side (runtime, store, session engine, the screen's
// fold) of the process a user runs. It reports the process's resident
// size after 500 and after 1,000 rounds, its growth over the second half
// (target: under 10 %) and its peak (target: under 64 MiB), under the
// binary's collector policy (internal/gcpolicy), and the same figures in
// the same run with the soft memory limit off (GOMEMLIMIT=off: GOGC=200
// alone) as the baseline. For each it also reports the process's CPU time
// per round (user and system, start-up included) and its collections per
// round (counted from GODEBUG=gctrace=1's lines on the terminal).
func BenchmarkTUILongTurnRSS(b *testing.B) {
	u := &userEnv{home: b.TempDir(), project: b.TempDir()}
	u.db = filepath.Join(u.home, "harness.db")
	files := linkRounds(b, u.project, writeChunks(b, u.project, 20, 20000), 1000)
	var policy, off longTurnRSS
	for b.Loop() {
		policy = runLongTurnRSS(b, u, files, 1000)
		off = runLongTurnRSS(b, u, files, 1000, "GOMEMLIMIT=off")
	}
	b.ReportMetric(policy.at500, "rss-500-MiB")
	b.ReportMetric(policy.at1000, "rss-1000-MiB")
	b.ReportMetric((policy.at1000-policy.at500)/policy.at500*100, "growth-%")
	b.ReportMetric(policy.peak, "peak-MiB")
	b.ReportMetric(off.at500, "nolimit-rss-500-MiB")
	b.ReportMetric(off.at1000, "nolimit-rss-1000-MiB")
	b.ReportMetric(off.peak, "nolimit-peak-MiB")
	b.ReportMetric(policy.cpu, "cpu-µs/round")
	b.ReportMetric(policy.gcs, "gc/round")
	b.ReportMetric(off.cpu, "nolimit-cpu-µs/round")
	b.ReportMetric(off.gcs, "nolimit-gc/round")
}

// longTurnRSS is a process's resident size (VmRSS) after rounds 500 and
// 1,000 and its peak (VmHWM) at the end, in MiB, and its CPU time (µs)
// and collections per round over the turn.
type longTurnRSS struct{ at500, at1000, peak, cpu, gcs float64 }

// writeChunks writes n files of size bytes cut on character boundaries
// from this repository's Go sources as src/<i>.go under dir.
func writeChunks(tb testing.TB, dir string, n, size int) []string {
	tb.Helper()
	var all []byte
	err := filepath.WalkDir("../../internal", func(p string, d os.DirEntry, err error) error {
		if err != nil || len(all) >= n*size+size {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			all = append(all, b...)
			return err
		}
		return nil
	})
	if err != nil || len(all) < n*size {
		tb.Fatalf("%d bytes of Go source: %v", len(all), err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		tb.Fatal(err)
	}
	out := make([]string, n)
	start := 0
	for i := range out {
		end := start + size
		for end > start && !utf8.RuneStart(all[end]) {
			end--
		}
		out[i] = fmt.Sprintf("src/%02d.go", i)
		if err := os.WriteFile(filepath.Join(dir, out[i]), all[start:end], 0o644); err != nil {
			tb.Fatal(err)
		}
		start = end
	}
	return out
}

// linkRounds gives each of n rounds a path of its own, src/r<i>.go, a
// hard link to one of files in turn: the runtime's loop guard ends a turn
// whose calls repeat earlier ones with the same results, as reading 20
// paths round after round does.
func linkRounds(tb testing.TB, dir string, files []string, n int) []string {
	tb.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("src/r%04d.go", i)
		if err := os.Link(filepath.Join(dir, files[i%len(files)]), filepath.Join(dir, out[i])); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// runLongTurnRSS runs one TUI session of a turn of rounds reads, with
// extra environment, and samples the process's memory when the model is
// asked for round 501 and round 1,001 (after rounds 500 and 1,000 were
// folded into the screen and stored).
func runLongTurnRSS(b *testing.B, u *userEnv, files []string, rounds int, extra ...string) longTurnRSS {
	var (
		mu   sync.Mutex
		k    int
		pid  int
		gcs  atomic.Int64 // the last collection's number in the trace
		got  longTurnRSS
		done = make(chan struct{})
	)
	srv := &usageServer{next: func(req wireRequest) string {
		if req.summary() {
			return textAnswer("Summary: the user asked to read the files under src/ one per round; those read so far looked fine. Next: read the remaining ones.")
		}
		mu.Lock()
		defer mu.Unlock()
		k++
		switch k {
		case rounds/2 + 1:
			got.at500, _ = procMemory(pid)
		case rounds + 1:
			got.at1000, got.peak = procMemory(pid)
			got.cpu = float64(procCPU(pid).Microseconds()) / float64(rounds)
			got.gcs = float64(gcs.Load()) / float64(rounds)
			close(done)
		}
		if k <= rounds {
			return readAnswer(k, files[(k-1)%len(files)])
		}
		return textAnswer("All files are read.")
	}}
	srv.srv = httptest.NewServer(srv)
	defer srv.srv.Close()

	master, slave := openPTY(b)
	defer master.Close()
	cmd := exec.Command(harnessBin, "--db", u.db, "--workspace", "local", "--max-rounds", strconv.Itoa(rounds+1),
		"--base-url", srv.url(), "--model", "m")
	cmd.Dir = u.project
	cmd.Env = append(append(u.environ(), "TERM=xterm-256color", "GODEBUG=gctrace=1"), extra...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	framed := make(chan struct{})
	go func() { // the screen is read all along, as a terminal does
		var seen bool
		buf := make([]byte, 64<<10)
		var head bytes.Buffer
		var tail []byte // the end of the last read, for a trace line cut in two
		for {
			n, err := master.Read(buf)
			tail = append(tail, buf[:n]...)
			for _, m := range gcLine.FindAllSubmatch(tail, -1) {
				if g, _ := strconv.ParseInt(string(m[1]), 10, 64); g > gcs.Load() {
					gcs.Store(g)
				}
			}
			tail = tail[max(0, len(tail)-32):]
			if !seen {
				head.Write(buf[:n])
				if bytes.Contains(head.Bytes(), []byte("harness")) {
					seen = true
					close(framed)
				}
			}
			if err != nil {
				return
			}
		}
	}()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	slave.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	mu.Lock()
	pid = cmd.Process.Pid
	mu.Unlock()
	select {
	case <-framed:
	case err := <-exited:
		b.Fatalf("harness exited before its first frame: %v", err)
	case <-time.After(30 * time.Second):
		b.Fatal("no frame within 30 s")
	}
	if _, err := io.WriteString(master, "Read every file under src/, one per round, round after round.\r"); err != nil {
		b.Fatal(err)
	}
	select {
	case <-done:
	case err := <-exited:
		b.Fatalf("harness exited during the turn: %v", err)
	case <-time.After(15 * time.Minute):
		b.Fatalf("the turn did not reach round %d within 15 minutes (at %d)", rounds, k)
	}
	return got
}

// gcLine is the start of a GODEBUG=gctrace=1 line: "gc 12 @3.4s ...".
var gcLine = regexp.MustCompile(`gc (\d+) @`)

// procCPU is a process's user and system CPU time so far.
func procCPU(pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name, which is in parentheses:
	// utime and stime are the 12th and 13th, in USER_HZ (100) ticks.
	rest := stat[bytes.LastIndex(stat, []byte(") "))+2:]
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * (time.Second / 100)
}

// procMemory is a process's VmRSS and VmHWM in MiB.
func procMemory(pid int) (rss, hwm float64) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		if k == "VmRSS" {
			rss = float64(kb) / 1024
		} else {
			hwm = float64(kb) / 1024
		}
	}
	return rss, hwm
}
