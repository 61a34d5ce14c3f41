package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
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

// benchEvent is a typical small event: a streamed delta of a few words.
func benchEvent(i int) store.EventIn {
	return storetest.Event(fmt.Sprintf("evt-%08d", i), "message.delta",
		fmt.Sprintf(`{"runId":"run-1","sessionId":"sess-bench","turnId":"turn-1","requestId":"req-1","messageId":"msg-1","sequence":%d,"delta":"some streamed words of text "}`, i))
}

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
		if _, err := s.Append(ctx, "sess-bench", who, benchEvent(i)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBareInsertCommit(b *testing.B) {
	s, _ := benchStore(b)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		if err := bareInsert(ctx, s.wdb, benchEvent(i).Body); err != nil {
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
		ev := benchEvent(n)
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
	a, r, rr := median(inStore), median(bare), median(bareRow)
	b.ReportMetric(float64(a.Nanoseconds()), "append-ns/op")
	b.ReportMetric(float64(r.Nanoseconds()), "bare-ns/op")
	b.ReportMetric(float64(rr.Nanoseconds()), "bare-row-ns/op")
	b.ReportMetric(float64(a)/float64(r), "ratio")
	b.ReportMetric(float64(a)/float64(rr), "row-ratio")
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func BenchmarkAppendBatch(b *testing.B) {
	const size = 100
	s, who := benchStore(b)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		evs := make([]store.EventIn, size)
		for i := range evs {
			evs[i] = benchEvent(n)
			n++
		}
		if _, err := s.AppendBatch(ctx, "sess-bench", who, evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkRead100k(b *testing.B) {
	const total = 100_000
	s, who := benchStore(b)
	ctx := context.Background()
	for c := range total / 1000 {
		evs := make([]store.EventIn, 1000)
		for i := range evs {
			evs[i] = benchEvent(c*1000 + i)
		}
		if _, err := s.AppendBatch(ctx, "sess-bench", who, evs); err != nil {
			b.Fatal(err)
		}
	}
	// Each iteration reads the session through the store, then the same
	// rows with a bare query on the same pool (the baseline).
	var inStore, bare time.Duration
	for b.Loop() {
		t0 := time.Now()
		n := 0
		for after := int64(-1); ; {
			page, err := s.ReadEvents(ctx, "sess-bench", after, store.MaxPage)
			if err != nil {
				b.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			n += len(page)
			after = page[len(page)-1].Seq
		}
		t1 := time.Now()
		if m := bareRead(b, s.rdb); n != total || m != total {
			b.Fatalf("read %d events through the store and %d bare, want %d", n, m, total)
		}
		inStore += t1.Sub(t0)
		bare += time.Since(t1)
	}
	b.ReportMetric(float64(total*b.N)/inStore.Seconds(), "events/s")
	b.ReportMetric(float64(total*b.N)/bare.Seconds(), "bare-events/s")
	b.ReportMetric(float64(inStore)/float64(bare), "ratio")
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
	ctx := context.Background()
	if _, err := s.Append(ctx, "sess-bench", who, benchEvent(0)); err != nil {
		b.Fatal(err)
	}
	payload := []byte(strings.Repeat("checkpoint payload ", (1<<20)/19+1)[:1<<20])
	b.SetBytes(int64(len(payload)))
	rev := int64(0)
	for b.Loop() {
		payload[0] = byte('a' + rev%26) // each save differs
		cp, err := s.SaveCheckpoint(ctx, "sess-bench", who, rev, 0, payload)
		if err != nil {
			b.Fatal(err)
		}
		rev = cp.Revision
	}
}
