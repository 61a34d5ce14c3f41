package runtime_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/model/fake"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/sqlite"
	"github.com/harness-dev/harness/tools"
)

// BenchmarkSteerVsAppend measures Steer until durable against a bare
// append of an event of the same size through the same SQLite store, in
// the same run, alternating. Target: ratio ≤ 1.2.
func BenchmarkSteerVsAppend(b *testing.B) {
	ctx := b.Context()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	mk := func(id string) *store.SessionLog {
		if _, err := st.CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
			b.Fatal(err)
		}
		who, err := st.Acquire(ctx, id, store.Owner{ID: "bench-" + id}, store.AcquireOptions{})
		if err != nil {
			b.Fatal(err)
		}
		l, err := store.NewSessionLog(ctx, st, id, who)
		if err != nil {
			b.Fatal(err)
		}
		return l
	}
	steerLog, bareLog := mk(event.NewID("sess")), mk(event.NewID("sess"))
	m, _ := fake.Parse([]byte(`[{"content":"x","hang":true}]`))
	rt, err := runtime.New(runtime.Config{Model: m, Workspace: mustLocal(b, b.TempDir())})
	if err != nil {
		b.Fatal(err)
	}
	sess, err := rt.OpenSession(ctx, steerLog, runtime.Settings{Model: "fake", Tools: tools.ModelSpecs()})
	if err != nil {
		b.Fatal(err)
	}
	runID, err := sess.Start(ctx, runtime.StartRequest{Input: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { rt.Cancel(runID); rt.Wait(ctx, runID) }()
	text := strings.Repeat("s", 64)
	var steer, bare []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := rt.Steer(ctx, runID, text); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		ev := event.Event{Type: event.TypeSteeringQueued, ID: event.NewID("evt"), At: time.Now(), Actor: "kernel",
			Data: event.SteeringQueued{RunID: runID, SessionID: bareLog.SessionID(), TurnID: "turn-x", MessageID: event.NewID("msg"), Content: text}}
		if _, err := bareLog.Append(ctx, ev); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		steer, bare = append(steer, t1.Sub(t0)), append(bare, t2.Sub(t1))
	}
	ms, mb := median(steer), median(bare)
	b.ReportMetric(float64(ms.Microseconds()), "steer-µs")
	b.ReportMetric(float64(mb.Microseconds()), "append-µs")
	b.ReportMetric(float64(ms)/float64(mb), "ratio")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// BenchmarkTurn200Rounds runs a 200-round turn (a tool call per round)
// against a zero-latency scripted model over the in-memory store, whose
// appends cost next to nothing: the time per round is the runtime's own
// overhead. Target: under 1 ms per round.
func BenchmarkTurn200Rounds(b *testing.B) {
	var steps []string
	for i := range 199 {
		steps = append(steps, fmt.Sprintf(`{"toolCalls":[{"id":"c%d","name":"fs.read","arguments":{"path":"README.md"}}],"usage":{"promptTokens":1,"completionTokens":1}}`, i))
	}
	steps = append(steps, `{"content":"done"}`)
	js := "[" + strings.Join(steps, ",") + "]"
	var storeTime time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		m, err := fake.Parse([]byte(js))
		if err != nil {
			b.Fatal(err)
		}
		f := newFixture(b, m, m, nil)
		tl := &timedLog{SessionLog: f.log}
		f.swapLog(tl, m)
		b.StartTimer()
		runID, err := f.sess.Start(b.Context(), runtime.StartRequest{Input: "go"})
		if err != nil {
			b.Fatal(err)
		}
		out, err := f.rt.Wait(b.Context(), runID)
		if err != nil || out.Status != runtime.StatusCompleted || out.ModelRequests != 200 {
			b.Fatalf("outcome %+v %v", out, err)
		}
		storeTime += tl.spent
	}
	rounds := float64(b.N) * 200
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rounds/1e3, "µs/round")
	b.ReportMetric(float64(storeTime.Nanoseconds())/rounds/1e3, "store-µs/round")
	b.ReportMetric(float64((b.Elapsed()-storeTime).Nanoseconds())/rounds/1e3, "runtime-µs/round")
}

// timedLog measures the time spent in the store adapter's appends and
// checkpoint saves (encoding, validation and storage).
type timedLog struct {
	*store.SessionLog
	spent time.Duration
}

func (l *timedLog) Append(ctx context.Context, e event.Event) (store.Record, error) {
	t0 := time.Now()
	r, err := l.SessionLog.Append(ctx, e)
	l.spent += time.Since(t0)
	return r, err
}

func (l *timedLog) SaveCheckpoint(ctx context.Context, after int64, p []byte) (store.Checkpoint, error) {
	t0 := time.Now()
	c, err := l.SessionLog.SaveCheckpoint(ctx, after, p)
	l.spent += time.Since(t0)
	return c, err
}
