package postgres

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// The benchmarks mirror store/sqlite's (same names, events and shapes) so
// that the README can set them side by side. Each reports, beside the
// store's figure, a baseline measured in the same run on the same server:
// a bare INSERT + COMMIT of the same bytes (BenchmarkAppendVsBare), a bare
// query over the same rows (BenchmarkRead100k).

// benchStore opens a store on a fresh schema with one acquired session and
// the baseline's table.
func benchStore(b *testing.B) (*Store, store.Owner) {
	b.Helper()
	s := mustOpen(b, freshSchema(b), Options{})
	who := storetest.Held(b, s, "sess-bench", "bench")
	mustExec(b, s, `CREATE TABLE bare (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body bytea NOT NULL)`)
	return s, who
}

// bareInsert is the baseline: one INSERT of the bytes and a durable
// COMMIT, through the store's own pool (same settings).
func bareInsert(ctx context.Context, p *pgxpool.Pool, body []byte) error {
	tx, err := p.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO bare (body) VALUES ($1)`, body); err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	return tx.Commit(ctx)
}

func BenchmarkAppendDurable(b *testing.B) {
	s, who := benchStore(b)
	ctx := b.Context()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Append(ctx, "sess-bench", who, storetest.BenchEvent(i)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBareInsertCommit(b *testing.B) {
	s, _ := benchStore(b)
	ctx := b.Context()
	for i := 0; b.Loop(); i++ {
		if err := bareInsert(ctx, s.pool, storetest.BenchEvent(i).Body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendVsBare alternates a store Append and a bare INSERT +
// COMMIT of the same bytes, so that both see the same server and disk, and
// reports the median of each (a shared machine's stalls hit single
// commits, and a median ignores them) and their ratio.
func BenchmarkAppendVsBare(b *testing.B) {
	s, who := benchStore(b)
	ctx := b.Context()
	var inStore, bare []time.Duration
	for i := 0; b.Loop(); i++ {
		ev := storetest.BenchEvent(i)
		t0 := time.Now()
		if _, err := s.Append(ctx, "sess-bench", who, ev); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := bareInsert(ctx, s.pool, ev.Body); err != nil {
			b.Fatal(err)
		}
		inStore = append(inStore, t1.Sub(t0))
		bare = append(bare, time.Since(t1))
	}
	a, r := storetest.Median(inStore), storetest.Median(bare)
	b.ReportMetric(float64(a.Nanoseconds()), "append-ns/op")
	b.ReportMetric(float64(r.Nanoseconds()), "bare-ns/op")
	b.ReportMetric(float64(a)/float64(r), "ratio")
}

func BenchmarkAppendBatch(b *testing.B) {
	s, who := benchStore(b)
	storetest.BenchAppendBatch(b, s, who)
}

func BenchmarkRead100k(b *testing.B) {
	const total = 100_000
	s, who := benchStore(b)
	storetest.FillBench(b, s, who, total)
	mustExec(b, s, `VACUUM ANALYZE events`)
	// Each iteration reads the session through the store, then the same
	// rows with a bare query on the same connections (the baseline).
	storetest.BenchRead(b, s, total, func() int { return bareRead(b, s.pool) })
}

// bareRead scans every event of the bench session in one query.
func bareRead(b *testing.B, p *pgxpool.Pool) int {
	rows, err := p.Query(b.Context(), `SELECT seq, global_seq, event_id, type, body, stored_at FROM events
		WHERE session_id = 'sess-bench' ORDER BY seq`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			seq, global int64
			id, typ     string
			body        []byte
			at          time.Time
		)
		if err := rows.Scan(&seq, &global, &id, &typ, &body, &at); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

func BenchmarkCheckpoint1MiB(b *testing.B) {
	s, who := benchStore(b)
	storetest.BenchCheckpoint1MiB(b, s, who)
}

// BenchmarkConcurrentSessions measures durable appends from N sessions at
// once (1, 4, 16, 64), each its own store on its own connection as N
// processes would be, one event per transaction, each level for at least
// half a second. Each iteration runs every level in turn, so the levels
// share the server's and the machine's conditions; it reports each level's
// aggregate appends/s and the ratio of 16 sessions to 1. Beside it, the
// same shape with bare INSERT + COMMIT transactions on one table (bare-N):
// how far this server and disk scale concurrent durable commits at all,
// whatever the store does, and the store's rate against it at each level
// (store/bare@N): where the store is near the bare rate, the server's
// commits (and the machine under them) are the limit, not the store. The
// CPU the server's processes and this one spent per append at 16
// (server-cpu-µs, client-cpu-µs, from /proc and getrusage; the server's
// per bare commit beside it) and the cores
// busy meanwhile (cores@16, against runtime.NumCPU) tell whether the
// machine is.
func BenchmarkConcurrentSessions(b *testing.B) {
	const minRun = 500 * time.Millisecond
	levels := []int{1, 4, 16, 64}
	dsn := freshSchema(b)
	ctx := b.Context()
	stores := make([]*Store, levels[len(levels)-1])
	owners := make([]store.Owner, len(stores))
	for i := range stores {
		stores[i] = mustOpen(b, dsn, Options{MaxConns: 1})
		id := fmt.Sprintf("sess-%d", i)
		if _, err := stores[i].CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
			b.Fatal(err)
		}
		who, err := stores[i].Acquire(ctx, id, storetest.Me(fmt.Sprintf("w%d", i)), store.AcquireOptions{})
		if err != nil {
			b.Fatal(err)
		}
		owners[i] = who
	}
	mustExec(b, stores[0], `CREATE TABLE bare (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body bytea NOT NULL)`)
	elapsed := map[string]time.Duration{}
	ops := map[string]int64{}
	serverCPU, clientCPU := map[string]time.Duration{}, map[string]time.Duration{}
	seq := 0
	run := func(name string, n int, fn func(w, i int) error) {
		var wg sync.WaitGroup
		var total atomic.Int64
		errs := make(chan error, n)
		srv0, cli0 := postgresCPU(), selfCPU()
		t0 := time.Now()
		deadline := t0.Add(minRun)
		for w := range n {
			wg.Go(func() {
				for i := 0; time.Now().Before(deadline); i++ {
					if err := fn(w, seq+i); err != nil {
						errs <- err
						return
					}
					total.Add(1)
				}
			})
		}
		wg.Wait()
		elapsed[name] += time.Since(t0)
		serverCPU[name] += postgresCPU() - srv0
		clientCPU[name] += selfCPU() - cli0
		ops[name] += total.Load()
		seq += 1_000_000
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		for _, n := range levels {
			run(fmt.Sprint(n), n, func(w, i int) error {
				_, err := stores[w].Append(ctx, fmt.Sprintf("sess-%d", w), owners[w], storetest.BenchEvent(w*100_000_000+i))
				return err
			})
			run(fmt.Sprint("bare-", n), n, func(w, i int) error {
				return bareInsert(ctx, stores[w].pool, storetest.BenchEvent(i).Body)
			})
		}
	}
	rate := func(name string) float64 { return float64(ops[name]) / elapsed[name].Seconds() }
	for _, n := range levels {
		b.ReportMetric(rate(fmt.Sprint(n)), fmt.Sprintf("appends/s@%d", n))
		b.ReportMetric(rate(fmt.Sprint("bare-", n)), fmt.Sprintf("bare/s@%d", n))
		b.ReportMetric(rate(fmt.Sprint(n))/rate(fmt.Sprint("bare-", n)), fmt.Sprintf("store/bare@%d", n))
	}
	b.ReportMetric(rate("16")/rate("1"), "x16/1")
	b.ReportMetric(rate("bare-16")/rate("bare-1"), "bare-x16/1")
	if n := ops["16"]; n > 0 && serverCPU["16"] > 0 {
		b.ReportMetric(float64(serverCPU["16"].Microseconds())/float64(n), "server-cpu-µs/append@16")
		b.ReportMetric(float64(clientCPU["16"].Microseconds())/float64(n), "client-cpu-µs/append@16")
		b.ReportMetric(float64(serverCPU["bare-16"].Microseconds())/float64(max(ops["bare-16"], 1)), "server-cpu-µs/bare@16")
		b.ReportMetric((serverCPU["16"]+clientCPU["16"]).Seconds()/elapsed["16"].Seconds(), "cores@16")
		b.ReportMetric(float64(goruntime.NumCPU()), "cores")
	}
}

// postgresCPU sums the user and system time of the processes named
// postgres on this machine (the test server's backends), and of those
// that ended (their parent's children's time), from /proc/PID/stat; 0
// where /proc cannot tell (another machine's server).
func postgresCPU() time.Duration {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || close < open || string(b[open+1:close]) != "postgres" {
			continue
		}
		f := strings.Fields(string(b[close+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)  // utime, field 14
		k, _ := strconv.ParseInt(f[12], 10, 64)  // stime, field 15
		cu, _ := strconv.ParseInt(f[13], 10, 64) // cutime, field 16: the postmaster's ended backends
		ck, _ := strconv.ParseInt(f[14], 10, 64) // cstime, field 17
		ticks += u + k + cu + ck
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// selfCPU is this process's user and system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkCheckpointAppend(b *testing.B) {
	s, who := benchStore(b)
	storetest.BenchCheckpointAppend(b, s, who)
}

// BenchmarkListSessions10k: listing a schema of 10,000 one-turn sessions
// against one of 10, alternating (target: the whole listing ≤ 3× and
// under 100 ms).
func BenchmarkListSessions10k(b *testing.B) {
	large := mustOpen(b, freshSchema(b), Options{})
	small := mustOpen(b, freshSchema(b), Options{})
	storetest.FillSessions(b, large, 10_000)
	storetest.FillSessions(b, small, 10)
	storetest.BenchListSessions(b, large, small)
}
