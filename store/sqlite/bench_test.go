package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// Targets (each against a baseline measured in the same run):
//   - a durable single Append costs at most 1.5× a bare INSERT + COMMIT of
//     the same bytes on the same file with the same pragmas
//     (BenchmarkAppendVsBare reports the ratio);
//   - reading 100,000 events runs at 300,000 events/s or more
//     (BenchmarkRead100k reports it beside a bare query's rate).

// benchStore opens a store on a fresh file with one acquired session.
func benchStore(b *testing.B) (*Store, store.Owner) {
	b.Helper()
	s := mustOpen(b, filepath.Join(b.TempDir(), "bench.db"), Options{})
	ctx := context.Background()
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: "sess-bench"}); err != nil {
		b.Fatal(err)
	}
	who, err := s.Acquire(ctx, "sess-bench", storetest.Me("bench"), store.AcquireOptions{})
	if err != nil {
		b.Fatal(err)
	}
	mustExec(b, s.wdb, `CREATE TABLE bare (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT;
		CREATE TABLE bare_events (global_seq INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
			event_id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, body TEXT NOT NULL, stored_at INTEGER NOT NULL,
			UNIQUE (session_id, seq)) STRICT`)
	return s, who
}

// bareEventInsert is the second baseline: the same row inserted into a
// table shaped like events (same keys and indexes), then COMMIT; what the
// store adds over it is its own work (fencing, redelivery, the summary).
func bareEventInsert(ctx context.Context, db *sql.DB, seq int, ev store.EventIn) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO bare_events (session_id, seq, event_id, type, body, stored_at) VALUES (?, ?, ?, ?, ?, ?)`,
		"sess-bench", seq, ev.ID, ev.Type, string(ev.Body), time.Now().UnixMicro()); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// bareInsert is the baseline: one INSERT of the bytes and a durable
// COMMIT, through the store's own writer connection (same pragmas).
func bareInsert(ctx context.Context, db *sql.DB, body []byte) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO bare (body) VALUES (?)`, string(body)); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func BenchmarkAppendDurable(b *testing.B) {
	s, who := benchStore(b)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Append(ctx, "sess-bench", who, storetest.BenchEvent(i)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBareInsertCommit(b *testing.B) {
	s, _ := benchStore(b)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		if err := bareInsert(ctx, s.wdb, storetest.BenchEvent(i).Body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendVsBare alternates, on one file, a store Append, a bare
// INSERT + COMMIT of the same bytes into a one-column table (the target's
// baseline, ratio ≤ 1.5), and the same row into an events-shaped table, so
// that all three see the same disk and the same neighbours. It reports the
// median cost of each (a shared machine's stalls hit single commits, and a
// median ignores them) and the ratios of the medians.
func BenchmarkAppendVsBare(b *testing.B) {
	s, who := benchStore(b)
	ctx := context.Background()
	var inStore, bare, bareRow []time.Duration
	n := 0
	for b.Loop() {
		ev := storetest.BenchEvent(n)
		t0 := time.Now()
		if _, err := s.Append(ctx, "sess-bench", who, ev); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := bareInsert(ctx, s.wdb, ev.Body); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := bareEventInsert(ctx, s.wdb, n, ev); err != nil {
			b.Fatal(err)
		}
		inStore = append(inStore, t1.Sub(t0))
		bare = append(bare, t2.Sub(t1))
		bareRow = append(bareRow, time.Since(t2))
		n++
	}
	a, r, rr := storetest.Median(inStore), storetest.Median(bare), storetest.Median(bareRow)
	b.ReportMetric(float64(a.Nanoseconds()), "append-ns/op")
	b.ReportMetric(float64(r.Nanoseconds()), "bare-ns/op")
	b.ReportMetric(float64(rr.Nanoseconds()), "bare-row-ns/op")
	b.ReportMetric(float64(a)/float64(r), "ratio")
	b.ReportMetric(float64(a)/float64(rr), "row-ratio")
}

func BenchmarkAppendBatch(b *testing.B) {
	s, who := benchStore(b)
	storetest.BenchAppendBatch(b, s, who)
}

func BenchmarkRead100k(b *testing.B) {
	const total = 100_000
	s, who := benchStore(b)
	storetest.FillBench(b, s, who, total)
	// Each iteration reads the session through the store, then the same
	// rows with a bare query on the same connections (the baseline).
	storetest.BenchRead(b, s, total, func() int { return bareRead(b, s.rdb) })
}

// bareRead scans every event of the bench session in one query.
func bareRead(b *testing.B, db *sql.DB) int {
	rows, err := db.QueryContext(context.Background(), `SELECT seq, global_seq, event_id, type, body, stored_at FROM events
		WHERE session_id = 'sess-bench' ORDER BY seq`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			seq, global, at int64
			id, typ         string
			body            []byte
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

func BenchmarkCheckpointAppend(b *testing.B) {
	s, who := benchStore(b)
	storetest.BenchCheckpointAppend(b, s, who)
}

// BenchmarkListSessions10k: listing a file of 10,000 one-turn sessions
// against one of 10, alternating (target: the whole listing ≤ 3× and
// under 100 ms).
func BenchmarkListSessions10k(b *testing.B) {
	dir := b.TempDir()
	large := mustOpen(b, filepath.Join(dir, "large.db"), Options{})
	small := mustOpen(b, filepath.Join(dir, "small.db"), Options{})
	storetest.FillSessions(b, large, 10_000)
	storetest.FillSessions(b, small, 10)
	storetest.BenchListSessions(b, large, small)
}
