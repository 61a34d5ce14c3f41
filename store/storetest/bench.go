package storetest

import (
	"fmt"
	"slices"
	"strconv"
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

// BenchEvents builds BenchEvent(i) for a benchmark's loop, byte for byte
// the same, with one allocation (its ID) instead of BenchEvent's
// formatting: a benchmark that compares a store's appends with another
// client's (pgbench's, whose events are written out once) measures the
// store, not the making of the JSON. Its bodies share one buffer: an
// event's Body is valid until the next call. One per goroutine.
type BenchEvents struct{ buf []byte }

// Event returns BenchEvent(i), for i ≥ 0.
func (e *BenchEvents) Event(i int) store.EventIn {
	const (
		head = `{"v":1,"type":"message.delta","eventId":"`
		mid  = `","at":"2026-11-29T20:41:23.123Z","actor":"kernel","data":{"runId":"run-1","sessionId":"sess-bench","turnId":"turn-1","requestId":"req-1","messageId":"msg-1","sequence":`
		tail = `,"delta":"some streamed words of text "}}`
	)
	b := append(e.buf[:0], head...)
	idAt := len(b)
	b = append(b, "evt-"...)
	for k := 10_000_000; k > 1 && i < k; k /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(i), 10)
	id := string(b[idAt:])
	b = append(b, mid...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, tail...)
	e.buf = b
	return store.EventIn{ID: id, Type: "message.delta", Body: b}
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

// FillSessions starts n one-turn sessions in s, each as `harness exec`
// leaves one: a title, the project's root in its metadata, a turn of
// eleven events (one of them a 16 KiB tool result) and a 16 KiB
// checkpoint.
func FillSessions(b *testing.B, s store.Store, n int) {
	b.Helper()
	ctx := b.Context()
	big := strings.Repeat("x", 16<<10)
	for i := range n {
		id := fmt.Sprintf("sess-%06d", i)
		ev := func(k int, typ, data string) store.EventIn {
			return Event(fmt.Sprintf("evt-%06d-%02d", i, k), typ, data)
		}
		evs := []store.EventIn{
			ev(0, "session.started", `{}`),
			ev(1, "turn.started", `{}`),
			ev(2, "message.completed", `{"role":"user","content":"Fix the failing test in the parser"}`),
			ev(3, "model.request", `{"model":"m"}`),
			ev(4, "message.completed", `{"role":"assistant","content":"Let me look."}`),
			ev(5, "tool.call", `{"name":"fs.read","args":{"path":"parser.go"}}`),
			ev(6, "tool.result", `{"output":"`+big+`"}`),
			ev(7, "model.request", `{"model":"m"}`),
			ev(8, "message.completed", `{"role":"assistant","content":"Fixed."}`),
			ev(9, "workspace.diff", `{"files":1}`),
			ev(10, "turn.completed", `{"status":"completed","usage":{"totalTokens":5400}}`),
		}
		who, _, err := s.StartSession(ctx, store.SessionInit{ID: id, Metadata: map[string]string{"root": "/home/dev/project", "model": "m"}},
			Me("fill"), evs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.SaveCheckpoint(ctx, id, who, 0, int64(len(evs)-1), []byte(big)); err != nil {
			b.Fatal(err)
		}
		if err := s.Release(ctx, id, who); err != nil {
			b.Fatal(err)
		}
	}
}

// ListAll pages through every session of r as `harness sessions` does
// (pages of 500, most recent first) and returns how many it read.
func ListAll(b *testing.B, r store.Reader) int {
	n, cur := 0, store.ListCursor{}
	for {
		page, err := r.ListSessions(b.Context(), cur, 500)
		if err != nil {
			b.Fatal(err)
		}
		n += len(page)
		if len(page) < 500 {
			return n
		}
		cur = store.PageAfter(page[len(page)-1])
	}
}

// BenchListSessions lists a store of 10,000 sessions and one of 10, in
// alternation: the whole listing (`harness sessions`) and its first 50
// rows (the resume picker's first frame), and reports the medians and the
// ratios of the large store to the small one.
func BenchListSessions(b *testing.B, large, small store.Reader) {
	ctx := b.Context()
	var all, first [2][]time.Duration
	for b.Loop() {
		for k, r := range []store.Reader{large, small} {
			t0 := time.Now()
			ListAll(b, r)
			all[k] = append(all[k], time.Since(t0))
		}
		// The first page takes well under a millisecond: one sample of it
		// is the machine's noise, so each iteration takes 25 of each,
		// alternating, and the ratio is of their medians.
		for range 25 {
			for k, r := range []store.Reader{large, small} {
				t0 := time.Now()
				if _, err := r.ListSessions(ctx, store.ListCursor{}, 50); err != nil {
					b.Fatal(err)
				}
				first[k] = append(first[k], time.Since(t0))
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(Median(all[0])), "ms/list-10k")
	b.ReportMetric(ms(Median(all[1])), "ms/list-10")
	b.ReportMetric(float64(Median(all[0]))/float64(Median(all[1])), "list-ratio")
	b.ReportMetric(ms(Median(first[0])), "ms/first50-10k")
	b.ReportMetric(float64(Median(first[0]))/float64(Median(first[1])), "first50-ratio")
}
