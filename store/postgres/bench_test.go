package postgres

import (
	"context"
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
