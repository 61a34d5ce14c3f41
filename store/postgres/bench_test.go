package postgres

import (
	"context"
	"fmt"
	"sync"
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
	ctx := b.Context()
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: "sess-bench"}); err != nil {
		b.Fatal(err)
	}
	who, err := s.Acquire(ctx, "sess-bench", storetest.Me("bench"), store.AcquireOptions{})
	if err != nil {
		b.Fatal(err)
	}
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
// processes would be, one event per transaction. Each iteration runs every
// level in turn, so the levels share the server's and the machine's
// conditions; it reports each level's aggregate appends/s and the ratio of
// 16 sessions to 1. Beside it, the same shape with bare INSERT + COMMIT
// transactions on one table (bare-N): how far this server and disk scale
// concurrent durable commits at all, whatever the store does.
func BenchmarkConcurrentSessions(b *testing.B) {
	const perSession = 24
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
	run := func(name string, n int, fn func(w, i int) error) {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		t0 := time.Now()
		for w := range n {
			wg.Go(func() {
				for i := range perSession {
					if err := fn(w, i); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed[name] += time.Since(t0)
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	round := 0
	for b.Loop() {
		for _, n := range levels {
			run(fmt.Sprint(n), n, func(w, i int) error {
				_, err := stores[w].Append(ctx, fmt.Sprintf("sess-%d", w), owners[w], storetest.BenchEvent(w*1_000_000+round*perSession+i))
				return err
			})
			run(fmt.Sprint("bare-", n), n, func(w, i int) error {
				return bareInsert(ctx, stores[w].pool, storetest.BenchEvent(i).Body)
			})
		}
		round++
	}
	rate := func(name string, n int) float64 {
		return float64(n*perSession*round) / elapsed[name].Seconds()
	}
	for _, n := range levels {
		b.ReportMetric(rate(fmt.Sprint(n), n), fmt.Sprintf("appends/s@%d", n))
		b.ReportMetric(rate(fmt.Sprint("bare-", n), n), fmt.Sprintf("bare/s@%d", n))
	}
	b.ReportMetric(rate("16", 16)/rate("1", 1), "x16/1")
	b.ReportMetric(rate("bare-16", 16)/rate("bare-1", 1), "bare-x16/1")
}

func BenchmarkCheckpointAppend(b *testing.B) {
	s, who := benchStore(b)
	storetest.BenchCheckpointAppend(b, s, who)
}
