package postgres

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/gcpolicy"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// pgbenchScript is one append as pgbench sends it: the statements the
// store's append sends (lockAndFind's batch, then appendIn's), with the
// same text where pgbench can say it, in the same two pipelined round
// trips, one event per transaction into session pgb-RUN-CLIENT. The
// event's ID, seq and body are the store's; the session row's summary is
// written with the values an append that leaves the summary as it is
// writes.
func pgbenchScript(body []byte) string {
	sid := `('pgb-' || :run::text || '-' || :client_id::text)`
	eid := `('evt-' || :run::text || '-' || :client_id::text || '-' || :next::text)`
	sub := func(q string, args ...string) string {
		for i := len(args); i >= 1; i-- {
			q = strings.ReplaceAll(q, "$"+strconv.Itoa(i), args[i-1])
		}
		return strings.Join(strings.Fields(q), " ") + ";\n"
	}
	return "\\set next :next + 1\n\\startpipeline\nBEGIN;\n" +
		sub(qLockAppend, sid) +
		sub(qLockAppendRow, sid) +
		sub(qStoredEvent, eid) +
		"\\endpipeline\n\\startpipeline\n" +
		sub(qInsertEvents, sid, ":next", "now()", "ARRAY["+eid+"]", "ARRAY['message.delta']", `ARRAY['\x`+hex.EncodeToString(body)+`'::bytea]`) +
		sub(qUpdateAfterAppend, sid, ":next", "now()", "''", "0", "0", "'idle'", "now() + interval '1 hour'") +
		"COMMIT;\n\\endpipeline\n"
}

// BenchmarkAppendVsPgbench: durable appends/s of N sessions at once (16,
// 64), each its own store on its own connection, against pgbench sending
// the same statements (pgbenchScript) from N clients to the same schema
// (target: store/pgbench ≥ 0.9 at both).
//
// The two take turns, sixteen windows of a second each per level, which goes
// first alternating: the machines this runs on are shared, and the
// server's CPU per append moved from 312 to 828 µs between phases of ten
// seconds in one run, so that phases taken seconds apart compared the
// machine's moments more than the two clients. Each side is measured the
// same way, in its steady state: its N clients run, every one of them has
// committed, then the appends committed over the next second are counted
// (pgbench's on the server, in the last_seq its script writes to each
// client's session row; the store's as they return), then the clients
// stop: the store's finish their appends, pgbench is killed and its
// backends end, so that no transaction of one side is open while the
// other runs. Each side's rate is its appends over its windows' time,
// after a VACUUM ANALYZE of the tables at the start of the level. Each of
// the store's clients has its own context and makes its events with
// storetest.BenchEvents, as a process of its own would and as pgbench's
// script has its body written out: what is compared is the appends.
// Beside the rates, the CPU each side spent per append in its windows:
// this process's (client-cpu-µs), pgbench's, and the server's (from
// /proc): on a machine whose cores are full, the rates follow the sum.
func BenchmarkAppendVsPgbench(b *testing.B) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		b.Fatalf("pgbench is not installed (scripts/postgres.sh installs it): %v", err)
	}
	// The collector's setting of the binary, whose append path this is.
	defer debug.SetGCPercent(debug.SetGCPercent(gcpolicy.Percent))
	const (
		window = time.Second
		pairs  = 16
	)
	levels := []int{16, 64}
	dsn := freshSchema(b)
	ctx := b.Context()
	setup := mustOpen(b, dsn, Options{MaxConns: 1})
	var maxConns int
	if err := setup.pool.QueryRow(ctx, `SELECT current_setting('max_connections')::int`).Scan(&maxConns); err != nil {
		b.Fatal(err)
	}
	if need := 2*levels[len(levels)-1] + 8; maxConns < need {
		b.Fatalf("the server allows %d connections; pgbench's and the store's %d each need %d (scripts/postgres.sh raises it)",
			maxConns, levels[len(levels)-1], need)
	}
	script := filepath.Join(b.TempDir(), "append.sql")
	if err := os.WriteFile(script, []byte(pgbenchScript(storetest.BenchEvent(0).Body)), 0o600); err != nil {
		b.Fatal(err)
	}
	u, err := url.Parse(baseDSN())
	if err != nil {
		b.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	if pu, err := url.Parse(dsn); err == nil {
		schema = pu.Query().Get("search_path")
	}
	sides := map[string]*measured{}
	for _, n := range levels {
		sides[fmt.Sprint("store-", n)], sides[fmt.Sprint("pgbench-", n)] = &measured{}, &measured{}
	}
	runID := 0
	for b.Loop() {
		for _, n := range levels {
			runID++
			st, pg := sides[fmt.Sprint("store-", n)], sides[fmt.Sprint("pgbench-", n)]
			owners := make([]store.Owner, n)
			stores := make([]*Store, n)
			next := make([]int, n)
			for c := range n {
				storetest.Held(b, setup, fmt.Sprintf("pgb-%d-%d", runID, c), fmt.Sprintf("p%d", c))
				owners[c] = storetest.Held(b, setup, fmt.Sprintf("app-%d-%d", runID, c), fmt.Sprintf("w%d", c))
				s, err := Open(ctx, dsn, Options{MaxConns: 1})
				if err != nil {
					b.Fatal(err)
				}
				stores[c] = s
				next[c] = runID*10_000_000_000 + c*100_000_000
			}
			if _, err := setup.pool.Exec(ctx, `VACUUM (ANALYZE) events, sessions`); err != nil {
				b.Fatal(err)
			}
			storeWindow := func() float64 {
				var total, started atomic.Int64
				var stop atomic.Bool
				var wg sync.WaitGroup
				errs := make(chan error, n)
				ready := make(chan struct{})
				for c := range n {
					wg.Go(func() {
						// Its own context and events, as a process of its own has.
						ctx, cancel := context.WithCancel(ctx)
						defer cancel()
						var evs storetest.BenchEvents
						id := fmt.Sprintf("app-%d-%d", runID, c)
						for i := 0; !stop.Load(); i++ {
							if _, err := stores[c].Append(ctx, id, owners[c], evs.Event(next[c])); err != nil {
								errs <- err
								return
							}
							next[c]++
							total.Add(1)
							if i == 0 && started.Add(1) == int64(n) {
								close(ready)
							}
						}
					})
				}
				var m measured
				select {
				case <-ready:
					m = measure(window, func() int64 { return total.Load() }, selfCPU)
				case err := <-errs:
					errs <- err // reported below, once every worker has returned
				}
				stop.Store(true)
				wg.Wait()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				st.add(m)
				return m.rate()
			}
			pgbenchWindow := func() float64 {
				m := runPgbench(b, pgbench, script, schema, n, runID, setup, window)
				pg.add(m)
				return m.rate()
			}
			var ratios []float64
			for k := range pairs {
				var sr, pr float64
				if k%2 == 0 {
					pr, sr = pgbenchWindow(), storeWindow()
				} else {
					sr, pr = storeWindow(), pgbenchWindow()
				}
				ratios = append(ratios, sr/pr)
			}
			for _, s := range stores {
				_ = s.Close()
			}
			slices.Sort(ratios)
			b.Logf("%d sessions: store %.0f/s, pgbench %.0f/s over %d windows of %v each: ratio %.3f (the windows' from %.2f to %.2f, median %.2f)",
				n, st.rate(), pg.rate(), pairs, window, st.rate()/pg.rate(), ratios[0], ratios[len(ratios)-1], ratios[len(ratios)/2])
		}
	}
	for _, n := range levels {
		st, pg := sides[fmt.Sprint("store-", n)], sides[fmt.Sprint("pgbench-", n)]
		b.ReportMetric(st.rate(), fmt.Sprintf("appends/s@%d", n))
		b.ReportMetric(pg.rate(), fmt.Sprintf("pgbench/s@%d", n))
		b.ReportMetric(st.rate()/pg.rate(), fmt.Sprintf("store/pgbench@%d", n))
		b.ReportMetric(st.perOp(st.cli), fmt.Sprintf("client-cpu-µs/append@%d", n))
		b.ReportMetric(st.perOp(st.srv), fmt.Sprintf("server-cpu-µs/append@%d", n))
		b.ReportMetric(pg.perOp(pg.cli), fmt.Sprintf("pgbench-cpu-µs/tx@%d", n))
		b.ReportMetric(pg.perOp(pg.srv), fmt.Sprintf("pgbench-server-cpu-µs/tx@%d", n))
	}
}

// measured is what one side did over its windows: the appends (or
// transactions) committed, the time, and the CPU of its client and of the
// server.
type measured struct {
	ops            int64
	time, cli, srv time.Duration
}

func (m *measured) add(o measured) {
	m.ops, m.time, m.cli, m.srv = m.ops+o.ops, m.time+o.time, m.cli+o.cli, m.srv+o.srv
}

func (m *measured) rate() float64 { return float64(m.ops) / m.time.Seconds() }

func (m *measured) perOp(d time.Duration) float64 {
	return float64(d.Microseconds()) / float64(max(m.ops, 1))
}

// measure counts what count adds over the window d (the measurement's
// own length, not a wait for something to happen), with the CPU that
// clientCPU and the server's processes spend meanwhile.
func measure(d time.Duration, count func() int64, clientCPU func() time.Duration) measured {
	srv0, cli0, n0 := postgresCPU(), clientCPU(), count()
	t0 := time.Now()
	window := time.NewTimer(d)
	<-window.C
	n1 := count()
	elapsed := time.Since(t0)
	return measured{ops: n1 - n0, time: elapsed, cli: clientCPU() - cli0, srv: postgresCPU() - srv0}
}

// runPgbench runs pgbench's n clients into sessions pgb-RUN-CLIENT until
// each has committed, measures the window d, then kills it and waits
// until its backends have ended. Its transactions are counted on the
// server: each writes its seq as its session's last_seq, and each run
// numbers from above what the earlier ones wrote.
func runPgbench(b *testing.B, pgbench, script, schema string, n, runID int, setup *Store, d time.Duration) measured {
	b.Helper()
	ctx := b.Context()
	prefix := fmt.Sprintf("pgb-%d-", runID)
	var base int64
	if err := setup.pool.QueryRow(ctx, `SELECT coalesce(max(last_seq), 0) FROM sessions WHERE id LIKE $1`, prefix+"%").Scan(&base); err != nil {
		b.Fatal(err)
	}
	// -T bounds it should the benchmark end without killing it.
	cmd := exec.CommandContext(ctx, pgbench, "-n", "-M", "prepared", "-c", strconv.Itoa(n), "-j", "2",
		"-T", "600", "-D", "next="+strconv.FormatInt(base, 10), "-D", "run="+strconv.Itoa(runID), "-f", script, baseDSN())
	cmd.Env = append(os.Environ(), "PGOPTIONS=-c search_path="+schema+" -c application_name=harness-pgbench")
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	kill := func() {
		_ = cmd.Process.Kill() // an error: it has exited
		<-exited
	}
	defer kill()
	count := func() (sum int64, started int) {
		if err := setup.pool.QueryRow(ctx,
			`SELECT coalesce(sum(last_seq), 0)::bigint, count(*) FILTER (WHERE last_seq > $2)::int FROM sessions WHERE id LIKE $1`,
			prefix+"%", base).Scan(&sum, &started); err != nil {
			b.Fatal(err)
		}
		return sum, started
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, started := count(); started == n {
			break
		}
		select {
		case <-exited:
			b.Fatalf("pgbench exited before each of its clients committed: %s", out)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Fatalf("pgbench: not every one of its %d clients committed within a minute: %s", n, out)
		}
	}
	m := measure(d, func() int64 { sum, _ := count(); return sum }, func() time.Duration { return processCPU(cmd.Process.Pid) })
	select {
	case <-exited:
		b.Fatalf("pgbench exited during its window: %s", out)
	default:
	}
	kill()
	// Its backends roll back what it had begun when they see the
	// connections close; the other side runs once they have ended: the
	// server waits for each (pg_terminate_backend with a timeout returns
	// once the backend is gone; one that ended already is no error here).
	if _, err := setup.pool.Exec(ctx, `SELECT pg_terminate_backend(pid, 60000) FROM pg_stat_activity WHERE application_name = 'harness-pgbench'`); err != nil {
		b.Fatal(err)
	}
	var left int
	if err := setup.pool.QueryRow(ctx, `SELECT count(*)::int FROM pg_stat_activity WHERE application_name = 'harness-pgbench'`).Scan(&left); err != nil {
		b.Fatal(err)
	}
	if left != 0 {
		b.Fatalf("%d of pgbench's backends still run a minute after it was killed", left)
	}
	return m
}

// processCPU is the user and system time of process pid, all its threads,
// from /proc/PID/stat; 0 where it cannot be read.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * time.Second / 100 // USER_HZ
}
