package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
// files of this repository's Go source, copied under 1,000 paths) against
// a loopback OpenAI-compatible server that reports usage, so the turn
// compacts as it would with a real model: the whole engine side
// (runtime, store, session engine, the screen's fold) of the process a
// user runs, in a new session of a new store, with 15–17 MiB live. It
// reports the process's resident size after 500 and after 1,000 rounds,
// its growth over the second half (target: under 10 %) and its peak
// (target: under 64 MiB), under the binary's collector policy
// (internal/gcpolicy), and the same figures with the soft memory limit
// off (GOMEMLIMIT=off: GOGC=200 alone) as the baseline. For each it also
// reports the process's CPU time per round, the collector's part of it,
// and its collections per round over the turn (from GODEBUG=gctrace=1's
// lines on the terminal), and the heap live after the turn's last
// collection. See compareLongTurns for how runs are ordered and reported,
// and HARNESS_BENCH_BASELINE. A read that fails fails the benchmark.
func BenchmarkTUILongTurnRSS(b *testing.B) {
	u := &userEnv{home: b.TempDir(), project: b.TempDir()}
	files := copyRounds(b, u.project, writeChunks(b, u.project, 20, 20000), 1000)
	compareLongTurns(b, func(bin string, extra ...string) longTurnRSS {
		return runLongTurnRSS(b, u, longTurn{bin: bin, db: filepath.Join(b.TempDir(), "harness.db"), paths: files, extra: extra})
	})
}

// BenchmarkTUIResumedLongTurnRSS is BenchmarkTUILongTurnRSS's turn in a
// session that already holds one such turn, resumed in the TUI: the
// process starts the turn with the stored log read and folded, about
// 116 MiB live rather than 15, where the collector's pace is set by the
// live heap. The first turn is run once, headless (harness exec); each
// TUI run resumes its own copy of that store. The same figures as
// BenchmarkTUILongTurnRSS; the peak is the resume's.
func BenchmarkTUIResumedLongTurnRSS(b *testing.B) {
	u := &userEnv{home: b.TempDir(), project: b.TempDir()}
	u.db = filepath.Join(u.home, "harness.db")
	files := copyRounds(b, u.project, writeChunks(b, u.project, 20, 20000), 2000)
	id := execLongTurn(b, u, files[:1000])
	compareLongTurns(b, func(bin string, extra ...string) longTurnRSS {
		return runLongTurnRSS(b, u, longTurn{bin: bin, args: []string{"resume", id}, db: copyStore(b, u.db), paths: files[1000:], extra: extra})
	})
}

// compareLongTurns runs a long turn under the binary's policy, with the
// limit off (reported as nolimit-*), and, when HARNESS_BENCH_BASELINE
// names another build of the binary (main's, to compare a change of the
// policy), under that build (base-*), once each per iteration, in an
// order that rotates from one iteration to the next; it reports the
// median of each figure over the iterations (-benchtime=5x: five runs
// each).
func compareLongTurns(b *testing.B, run func(bin string, extra ...string) longTurnRSS) {
	type config struct {
		name   string
		prefix string
		run    func() longTurnRSS
		got    []longTurnRSS
	}
	configs := []*config{
		{name: "policy", prefix: "", run: func() longTurnRSS { return run(harnessBin) }},
		{name: "nolimit", prefix: "nolimit-", run: func() longTurnRSS { return run(harnessBin, "GOMEMLIMIT=off") }},
	}
	if other := os.Getenv("HARNESS_BENCH_BASELINE"); other != "" {
		configs = append(configs, &config{name: "base", prefix: "base-", run: func() longTurnRSS { return run(other) }})
	}
	for i := 0; b.Loop(); i++ {
		for j := range configs {
			c := configs[(i+j)%len(configs)]
			c.got = append(c.got, c.run())
		}
	}
	for _, c := range configs {
		median := func(f func(r longTurnRSS) float64) float64 {
			v := make([]float64, len(c.got))
			for i, r := range c.got {
				v[i] = f(r)
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		b.ReportMetric(median(func(r longTurnRSS) float64 { return r.at500 }), c.prefix+"rss-500-MiB")
		b.ReportMetric(median(func(r longTurnRSS) float64 { return r.at1000 }), c.prefix+"rss-1000-MiB")
		b.ReportMetric(median(func(r longTurnRSS) float64 { return (r.at1000 - r.at500) / r.at500 * 100 }), c.prefix+"growth-%")
		b.ReportMetric(median(func(r longTurnRSS) float64 { return r.peak }), c.prefix+"peak-MiB")
		b.ReportMetric(median(func(r longTurnRSS) float64 { return r.cpu }), c.prefix+"cpu-µs/round")
		b.ReportMetric(median(func(r longTurnRSS) float64 { return r.gcCPU }), c.prefix+"gc-cpu-µs/round")
		b.ReportMetric(median(func(r longTurnRSS) float64 { return r.gcs }), c.prefix+"gc/round")
		b.ReportMetric(median(func(r longTurnRSS) float64 { return r.live }), c.prefix+"live-MiB")
		// Every run's figures, one line per configuration (a benchmark's
		// log is cut after ten lines).
		var runs []string
		for _, r := range c.got {
			runs = append(runs, fmt.Sprintf("rss %.1f→%.1f (%+.1f%%) peak %.1f, %.0f µs (gc %.0f), %.3f gc, %.0f→%.0f live",
				r.at500, r.at1000, (r.at1000-r.at500)/r.at500*100, r.peak, r.cpu, r.gcCPU, r.gcs, r.live500, r.live))
		}
		b.Logf("%s: %s", c.name, strings.Join(runs, "; "))
	}
}

// execLongTurn runs one headless turn reading paths, one a round, against
// a loopback server like runLongTurnRSS's, in a new session of u.db, and
// returns the session's ID.
func execLongTurn(b *testing.B, u *userEnv, paths []string) string {
	var rr readRounds
	srv := &usageServer{next: func(req wireRequest) string {
		return rr.answer(req, func(k int) string {
			if k <= len(paths) {
				return readAnswer(k, paths[k-1])
			}
			return textAnswer("All files are read.")
		})
	}}
	srv.srv = httptest.NewServer(srv)
	defer srv.srv.Close()
	cmd := exec.Command(harnessBin, "exec", "--db", u.db, "--workspace", "local", "--max-rounds", strconv.Itoa(len(paths)+1),
		"--base-url", srv.url(), "--model", "m", longTurnPrompt)
	cmd.Dir = u.project
	cmd.Env = u.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("harness exec: %v\n%s", err, out)
	}
	if f := rr.firstFailure(); f != "" {
		b.Fatalf("a read failed: %s", f)
	}
	out, err := exec.Command(harnessBin, "sessions", "--json", "--db", u.db).Output()
	var s struct{ ID string }
	if err != nil || json.Unmarshal(bytes.SplitN(out, []byte("\n"), 2)[0], &s) != nil || s.ID == "" {
		b.Fatalf("sessions --json: %v\n%s", err, out)
	}
	return s.ID
}

// copyStore copies the SQLite store db (with its write-ahead log, if any)
// to a new file and returns its path.
func copyStore(b *testing.B, db string) string {
	to := filepath.Join(b.TempDir(), "harness.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		err := copyFile(db+suffix, to+suffix, 0o644)
		if err != nil && !(suffix != "" && errors.Is(err, fs.ErrNotExist)) {
			b.Fatal(err)
		}
	}
	return to
}

// The user's request and the model's summaries of the long turns.
const (
	longTurnPrompt = "Read every file under src/, one per round, round after round."
	summaryText    = "Summary: the user asked to read the files under src/ one per round; those read so far looked fine. Next: read the remaining ones."
)

// longTurnRSS is a process's resident size (VmRSS) after rounds 500 and
// 1,000 and its peak (VmHWM) at the end, in MiB, its CPU time (µs), the
// collector's part of it (µs, as the trace gives it) and its collections
// per round over the turn, and the heap live after the last collection
// before round 501 and before the end (MiB).
type longTurnRSS struct{ at500, at1000, peak, cpu, gcCPU, gcs, live500, live float64 }

// longTurn is one TUI run of a long turn: the binary, the command line
// before the common flags (none: a new session), the store, the path read
// in each round, and more environment.
type longTurn struct {
	bin   string
	args  []string
	db    string
	paths []string
	extra []string
}

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

// copyRounds gives each of n rounds a path of its own, src/r<i>.go, a
// copy of one of files in turn: the runtime's loop guard ends a turn
// whose calls repeat earlier ones with the same results, as reading 20
// paths round after round does. (Copies, not hard links: the workspace
// refuses to read a file with other hard links, WORKSPACE_SCOPE.)
func copyRounds(tb testing.TB, dir string, files []string, n int) []string {
	tb.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("src/r%04d.go", i)
		if err := copyFile(filepath.Join(dir, files[i%len(files)]), filepath.Join(dir, out[i]), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// readFailure is what the tool answered instead of a file's content when
// req answers a read that failed ("" when it did not: the last message
// is not a tool result, or one of at least 20,000 bytes' worth).
func readFailure(req wireRequest) string {
	if len(req.Messages) == 0 {
		return ""
	}
	last := req.Messages[len(req.Messages)-1]
	if text, ok := last.Content.(string); ok && last.Role == "tool" && len(text) < 19000 {
		return text
	}
	return ""
}

// runLongTurnRSS runs the TUI through one turn of run's reads and samples
// the process's memory when the model is asked for round 501 and round
// 1,001 (after rounds 500 and 1,000 were folded into the screen and
// stored); its CPU time and collections are counted from the turn's first
// request.
func runLongTurnRSS(b *testing.B, u *userEnv, run longTurn) longTurnRSS {
	rounds := len(run.paths)
	var (
		rr                 readRounds
		pid                int
		gcs                atomic.Int64 // the last collection's number in the trace
		gcCPU              atomic.Int64 // the CPU time of the collections so far, ns
		live               atomic.Int64 // the heap live after it, MB
		cpu0, gcs0, gcCPU0 int64
		got                longTurnRSS
		done               = make(chan struct{})
	)
	srv := &usageServer{next: func(req wireRequest) string {
		return rr.answer(req, func(k int) string {
			switch k {
			case 1:
				cpu0, gcs0, gcCPU0 = procCPU(pid).Microseconds(), gcs.Load(), gcCPU.Load()
			case rounds/2 + 1:
				got.at500, _ = procMemory(pid)
				got.live500 = float64(live.Load())
			case rounds + 1:
				got.at1000, got.peak = procMemory(pid)
				got.cpu = float64(procCPU(pid).Microseconds()-cpu0) / float64(rounds)
				got.gcs = float64(gcs.Load()-gcs0) / float64(rounds)
				got.gcCPU = float64(gcCPU.Load()-gcCPU0) / 1000 / float64(rounds)
				got.live = float64(live.Load())
				close(done)
			}
			if k <= rounds {
				return readAnswer(k, run.paths[k-1])
			}
			return textAnswer("All files are read.")
		})
	}}
	srv.srv = httptest.NewServer(srv)
	defer srv.srv.Close()

	master, slave := openPTY(b)
	defer master.Close()
	cmd := exec.Command(run.bin, append(run.args, "--db", run.db, "--workspace", "local", "--max-rounds", strconv.Itoa(rounds+1),
		"--base-url", srv.url(), "--model", "m")...)
	cmd.Dir = u.project
	cmd.Env = append(append(u.environ(), "TERM=xterm-256color", "GODEBUG=gctrace=1"), run.extra...)
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
					gcCPU.Add(traceCPU(string(m[2])).Nanoseconds())
					l, _ := strconv.ParseInt(string(m[3]), 10, 64)
					live.Store(l)
				}
			}
			tail = tail[max(0, len(tail)-256):]
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
	rr.mu.Lock()
	pid = cmd.Process.Pid
	rr.mu.Unlock()
	select {
	case <-framed:
	case err := <-exited:
		b.Fatalf("harness exited before its first frame: %v", err)
	case <-time.After(30 * time.Second):
		b.Fatal("no frame within 30 s")
	}
	if _, err := io.WriteString(master, longTurnPrompt+"\r"); err != nil {
		b.Fatal(err)
	}
	select {
	case <-done:
	case err := <-exited:
		b.Fatalf("harness exited during the turn: %v", err)
	case <-time.After(15 * time.Minute):
		b.Fatalf("the turn did not reach round %d within 15 minutes (at %d)", rounds, rr.round())
	}
	if f := rr.firstFailure(); f != "" {
		b.Fatalf("a read failed: %s", f)
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return got
}

// gcLine is a GODEBUG=gctrace=1 line up to the heap live after the
// collection: "gc 12 @3.4s 1%: 0.1+2.4+0.01 ms clock, 0.2+0.3/1.5/0.2+0.01
// ms cpu, 16->17->7 MB": its number, CPU times and live heap.
var gcLine = regexp.MustCompile(`gc (\d+) @[0-9.]+s \d+%: [0-9.+]+ ms clock, ([0-9.+/]+) ms cpu, \d+->\d+->(\d+) MB`)

// traceCPU is the sum of a trace line's CPU times ("0.2+0.3/1.5/0.2+0.01":
// the pauses, the mark's assists, background and idle workers).
func traceCPU(times string) time.Duration {
	var ms float64
	for _, f := range strings.FieldsFunc(times, func(r rune) bool { return r == '+' || r == '/' }) {
		v, _ := strconv.ParseFloat(f, 64)
		ms += v
	}
	return time.Duration(ms * float64(time.Millisecond))
}

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

// readRounds answers a long turn's requests one round at a time: a
// summary request with the summary, any other with what round k asks
// (under its lock), noting the first read that failed.
type readRounds struct {
	mu     sync.Mutex
	k      int
	failed string
}

func (r *readRounds) answer(req wireRequest, round func(k int) string) string {
	if req.summary() {
		return textAnswer(summaryText)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.k++
	if f := readFailure(req); f != "" && r.failed == "" {
		r.failed = f
	}
	return round(r.k)
}

// round is the number of the last round asked for.
func (r *readRounds) round() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.k
}

// firstFailure is the first read that failed ("" for none).
func (r *readRounds) firstFailure() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}
