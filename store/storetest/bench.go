package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/store"
)

// The benchmark bodies every store runs, so SQLite and Postgres are
// measured by the same code; each store's own file adds its baselines
// (a bare INSERT + COMMIT, a bare query) in its own SQL dialect.

// BenchSession is the session the benchmarks write.
const BenchSession = "sess-bench"

// BenchEvent is a typical small event: a streamed delta of a few words.
func BenchEvent(i int) store.EventIn {
	return Event(fmt.Sprintf("evt-%08d", i), "message.delta",
		fmt.Sprintf(`{"runId":"run-1","sessionId":"sess-bench","turnId":"turn-1","requestId":"req-1","messageId":"msg-1","sequence":%d,"delta":"some streamed words of text "}`, i))
}

// Median returns the median of ds.
func Median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchAppendBatch appends batches of 100 events and reports events/s.
func BenchAppendBatch(b *testing.B, s store.Store, who store.Owner) {
	const size = 100
	ctx := b.Context()
	n := 0
	for b.Loop() {
		evs := make([]store.EventIn, size)
		for i := range evs {
			evs[i] = BenchEvent(n)
			n++
		}
		if _, err := s.AppendBatch(ctx, BenchSession, who, evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// FillBench appends total events to the bench session in batches of 1,000.
func FillBench(b *testing.B, s store.Store, who store.Owner, total int) {
	for c := range total / 1000 {
		evs := make([]store.EventIn, 1000)
		for i := range evs {
			evs[i] = BenchEvent(c*1000 + i)
		}
		if _, err := s.AppendBatch(b.Context(), BenchSession, who, evs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchRead reads the bench session's total events through the store, then
// with bare (the store's baseline query, returning how many rows it read),
// in each iteration, and reports both rates and their ratio.
func BenchRead(b *testing.B, s store.Store, total int, bare func() int) {
	ctx := b.Context()
	var inStore, baseline time.Duration
	for b.Loop() {
		t0 := time.Now()
		n := 0
		for after := int64(-1); ; {
			page, err := s.ReadEvents(ctx, BenchSession, after, store.MaxPage)
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
		if m := bare(); n != total || m != total {
			b.Fatalf("read %d events through the store and %d bare, want %d", n, m, total)
		}
		inStore += t1.Sub(t0)
		baseline += time.Since(t1)
	}
	b.ReportMetric(float64(total*b.N)/inStore.Seconds(), "events/s")
	b.ReportMetric(float64(total*b.N)/baseline.Seconds(), "bare-events/s")
	b.ReportMetric(float64(inStore)/float64(baseline), "ratio")
}

// BenchCheckpoint1MiB saves 1 MiB checkpoints, each differing, in turn.
func BenchCheckpoint1MiB(b *testing.B, s store.Store, who store.Owner) {
	ctx := b.Context()
	if _, err := s.Append(ctx, BenchSession, who, BenchEvent(0)); err != nil {
		b.Fatal(err)
	}
	payload := []byte(strings.Repeat("checkpoint payload ", (1<<20)/19+1)[:1<<20])
	b.SetBytes(int64(len(payload)))
	rev := int64(0)
	for b.Loop() {
		payload[0] = byte('a' + rev%26)
		cp, err := s.SaveCheckpoint(ctx, BenchSession, who, rev, 0, payload)
		if err != nil {
			b.Fatal(err)
		}
		rev = cp.Revision
	}
}

// BenchCheckpointAppend measures AppendCheckpoint as the runtime uses it
// once a round: cut the row's old head, append the round's messages and a
// new head (16 KiB), on a row of 2 MiB and, alternating in the same loop,
// on a row of 20 KiB of another session. It reports both medians and their
// ratio: a round's save costs what it adds, not the row's size.
func BenchCheckpointAppend(b *testing.B, s store.Store, who store.Owner) {
	ctx := b.Context()
	small := BenchSession + "-small"
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: small}); err != nil {
		b.Fatal(err)
	}
	whoSmall, err := s.Acquire(ctx, small, who, store.AcquireOptions{})
	if err != nil {
		b.Fatal(err)
	}
	type row struct {
		id   string
		who  store.Owner
		rev  int64
		keep int64
	}
	rows := []*row{{id: BenchSession, who: who}, {id: small, who: whoSmall}}
	for i, r := range rows {
		if _, err := s.Append(ctx, r.id, r.who, BenchEvent(1_000_000*(i+1))); err != nil {
			b.Fatal(err)
		}
		size := []int{2 << 20, 20 << 10}[i]
		cp, err := s.SaveCheckpoint(ctx, r.id, r.who, 0, 0, []byte(strings.Repeat("m", size)))
		if err != nil {
			b.Fatal(err)
		}
		r.rev, r.keep = cp.Revision, int64(size-(6<<10))
	}
	tail := []byte(strings.Repeat("x", 16<<10))
	var big, sm []time.Duration
	for b.Loop() {
		for i, r := range rows {
			tail[0] = byte('a' + r.rev%26)
			t0 := time.Now()
			cp, err := s.AppendCheckpoint(ctx, r.id, r.who, r.rev, 0, r.keep, tail)
			if err != nil {
				b.Fatal(err)
			}
			if i == 0 {
				big = append(big, time.Since(t0))
			} else {
				sm = append(sm, time.Since(t0))
			}
			r.rev = cp.Revision
		}
	}
	mb, ms := Median(big), Median(sm)
	b.ReportMetric(float64(mb.Microseconds()), "2MiB-row-µs")
	b.ReportMetric(float64(ms.Microseconds()), "20KiB-row-µs")
	b.ReportMetric(float64(mb)/float64(ms), "ratio")
}
