package runtime_test

import (
	"context"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/gcpolicy"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/model/fake"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/memstore"
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
	rt := runtime.New(runtime.Config{})
	sess, err := rt.OpenSession(ctx, steerLog, runtime.SessionConfig{Model: m, Workspace: mustLocal(b, b.TempDir()), MaxRounds: -1, LoopRepeats: -1}, checkpoint.Settings{Model: "fake", Tools: tools.ModelSpecs()})
	if err != nil {
		b.Fatal(err)
	}
	runID, err := sess.Start(ctx, runtime.StartRequest{Input: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { sess.Cancel(); rt.Wait(ctx, runID) }()
	text := strings.Repeat("s", 64)
	var steer, bare []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		sent, err := sess.Send(ctx, text)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		// Keep the queue under its bound; not timed.
		if err := sess.Withdraw(ctx, sent.MessageID); err != nil {
			b.Fatal(err)
		}
		t1b := time.Now()
		ev := event.Event{Type: event.TypeSteeringQueued, ID: event.NewID("evt"), At: time.Now(), Actor: "kernel",
			Data: event.SteeringQueued{RunID: runID, SessionID: bareLog.SessionID(), TurnID: "turn-x", MessageID: event.NewID("msg"), Content: text}}
		if _, err := bareLog.Append(ctx, ev); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		steer, bare = append(steer, t1.Sub(t0)), append(bare, t2.Sub(t1b))
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
// against a zero-latency scripted model, alternately over the in-memory
// store and over a log that encodes each event and keeps nothing, and
// reports the CPU time per round of each (see compareStore): the
// discarding run's is the runtime's own work, event encoding included.
// Target: under 1 ms per round.
func BenchmarkTurn200Rounds(b *testing.B) {
	var steps []string
	for i := range 199 {
		steps = append(steps, fmt.Sprintf(`{"toolCalls":[{"id":"c%d","name":"fs.read","arguments":{"path":"README.md"}}],"usage":{"promptTokens":1,"completionTokens":1}}`, i))
	}
	steps = append(steps, `{"content":"done"}`)
	js := "[" + strings.Join(steps, ",") + "]"
	turn := func(discard bool) time.Duration {
		m, err := fake.Parse([]byte(js))
		if err != nil {
			b.Fatal(err)
		}
		// The same read every round: the round limit and the loop guard
		// are off, as the benchmark measures a round's cost.
		noGuards := func(c *runtime.SessionConfig) { c.MaxRounds, c.LoopRepeats = -1, -1 }
		f := newFixture(b, m, m, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { noGuards(c) })
		if discard {
			f.swapLog(&discardLog{id: f.sess.ID()}, m, noGuards)
		}
		return cpuRun(b, f.sess, f.rt, "go")
	}
	compareStore(b, 200, turn).report(b)
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuRun runs one turn on sess to its completed end, the benchmark's
// timer running, and returns the CPU time it took. The garbage of what
// ran before is collected first, untimed, so that no run pays for
// another's.
func cpuRun(b *testing.B, sess *runtime.Session, rt *runtime.Runtime, input string) time.Duration {
	b.Helper()
	goruntime.GC()
	b.StartTimer()
	t0 := cpuTime(b)
	runID, err := sess.Start(b.Context(), runtime.StartRequest{Input: input})
	if err != nil {
		b.Fatal(err)
	}
	out, err := rt.Wait(b.Context(), runID)
	cpu := cpuTime(b) - t0
	b.StopTimer()
	if err != nil || out.Status != runtime.StatusCompleted {
		b.Fatalf("outcome %+v %v", out, err)
	}
	return cpu
}

// storeCost is the CPU time of turns run over the in-memory store and
// over a discarding log, alternately in the same benchmark, under two
// collector settings.
type storeCost struct {
	rounds, runs          int
	stored, discard       time.Duration // at gcpolicy.Percent
	stored100, discard100 time.Duration // at GOGC=100
	storedLim, discardLim time.Duration // at gcpolicy.Percent under gcpolicy's live-heap memory limit
}

// compareStore runs turn (of rounds model rounds) b.N times over the
// store and b.N times over a discarding log, alternately; the timer runs
// only inside the turns. It does so under the harness binary's collector
// setting (gcpolicy.Percent), whose figures report gives plainly, and
// again at Go's default (GOGC=100), given with the suffix @GOGC100, and
// under the binary's whole policy (gcpolicy.Percent and the soft memory
// limit that follows the live heap), given with the suffix @limit.
func compareStore(b *testing.B, rounds int, turn func(discard bool) time.Duration) storeCost {
	c := storeCost{rounds: rounds}
	b.StopTimer()
	old := debug.SetGCPercent(gcpolicy.Percent)
	defer debug.SetGCPercent(old)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, setting := range []int{gcpolicy.Percent, 100, -1} {
		stored, discard := &c.stored, &c.discard
		stop := func() {}
		switch setting {
		case 100:
			debug.SetGCPercent(100)
			stored, discard = &c.stored100, &c.discard100
		case -1:
			debug.SetGCPercent(gcpolicy.Percent)
			stop = gcpolicy.Follow()
			stored, discard = &c.storedLim, &c.discardLim
		}
		for range b.N {
			*stored += turn(false)
			*discard += turn(true)
		}
		stop()
	}
	c.runs = b.N
	return c
}

// report gives the CPU time per round of the runtime (the discarding
// runs) and of the store (the difference).
func (c storeCost) report(b *testing.B) {
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(c.runs*c.rounds) / 1e3 }
	b.ReportMetric(per(c.stored), "cpu-µs/round")
	b.ReportMetric(per(c.discard), "runtime-cpu-µs/round")
	b.ReportMetric(per(c.stored-c.discard), "store-cpu-µs/round")
	b.ReportMetric(per(c.discard100), "runtime-cpu-µs/round@GOGC100")
	b.ReportMetric(per(c.stored100-c.discard100), "store-cpu-µs/round@GOGC100")
	b.ReportMetric(per(c.discardLim), "runtime-cpu-µs/round@limit")
	b.ReportMetric(per(c.storedLim-c.discardLim), "store-cpu-µs/round@limit")
}

// discardLog is an event log that encodes each event, as a store adapter
// must (event.Encode: the runtime's work), and keeps nothing: its own
// cost is O(1) per append.
type discardLog struct {
	id  string
	seq int64
}

func (l *discardLog) SessionID() string { return l.id }

func (l *discardLog) Append(_ context.Context, e event.Event) (store.Record, error) {
	body, err := event.Encode(e)
	if err != nil {
		return store.Record{}, err
	}
	r := store.Record{SessionID: l.id, Seq: l.seq, ID: e.ID, Type: string(e.Type), Body: body}
	l.seq++
	return r, nil
}

func (l *discardLog) AppendCheckpoint(_ context.Context, afterSeq, _ int64, _ []byte) (store.Checkpoint, error) {
	return store.Checkpoint{SessionID: l.id, AfterSeq: afterSeq}, nil
}

// BenchmarkRestore10k restores a session of 10,000 events (its last
// terminal checkpoint, matched by its turn.completed) and reads the same
// session's rows raw, in the same run. Targets: ratio ≤ 2, under 300 ms.
func BenchmarkRestore10k(b *testing.B) {
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "h.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	id := event.NewID("sess")
	st.CreateSession(ctx, store.SessionInit{ID: id})
	who, _ := st.Acquire(ctx, id, store.Owner{ID: "bench"}, store.AcquireOptions{})
	log, _ := store.NewSessionLog(ctx, st, id, who)
	root := b.TempDir()
	writeFile(b, root, "f.txt", strings.Repeat("x", 2000))
	// Turns of 5 tool rounds each (≈ 50 events a turn) until 10,000 events.
	var steps []string
	for i := range 5 {
		steps = append(steps, fmt.Sprintf(`{"toolCalls":[{"id":"c%%d-%d","name":"fs.read","arguments":{"path":"f.txt"}}]}`, i))
	}
	steps = append(steps, `{"content":"turn done","usage":{"promptTokens":10,"completionTokens":2}}`)
	tmpl := "[" + strings.Join(steps, ",") + "]"
	var (
		sess *runtime.Session
		last model.Model // the last turn's, for the restores measured
	)
	for turn := 0; ; turn++ {
		m, err := fake.Parse([]byte(strings.ReplaceAll(tmpl, "%d", fmt.Sprint(turn))))
		if err != nil {
			b.Fatal(err)
		}
		last = m
		rt := runtime.New(runtime.Config{})
		var cp *checkpoint.Checkpoint
		if turn > 0 {
			rp, err := runtime.LatestTerminal(ctx, st, id)
			if err != nil {
				b.Fatal(err)
			}
			cp = rp.Checkpoint
		}
		sess, err = rt.RestoreSession(ctx, log, runtime.SessionConfig{Model: m, Workspace: mustLocal(b, root), MaxRounds: -1, LoopRepeats: -1}, cp, checkpoint.Settings{Model: "fake", Tools: tools.ModelSpecs()})
		if err != nil {
			b.Fatal(err)
		}
		runID, err := sess.Start(ctx, runtime.StartRequest{Input: fmt.Sprintf("turn %d", turn)})
		if err != nil {
			b.Fatal(err)
		}
		if out, _ := rt.Wait(ctx, runID); out.Status != runtime.StatusCompleted {
			b.Fatalf("turn %d: %+v", turn, out)
		}
		if s, _ := st.Session(ctx, id); s.LastSeq >= 9999 {
			break
		}
	}
	var bytesTotal int64
	rawRead := func() int {
		n, after := 0, int64(-1)
		bytesTotal = 0
		for {
			page, err := st.ReadEvents(ctx, id, after, store.MaxPage)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range page {
				bytesTotal += int64(len(r.Body))
			}
			n += len(page)
			if len(page) < store.MaxPage {
				return n
			}
			after = page[len(page)-1].Seq
		}
	}
	var restore, raw []time.Duration
	events := 0
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		rp, err := runtime.LatestTerminal(ctx, st, id)
		if err != nil {
			b.Fatal(err)
		}
		rt2 := runtime.New(runtime.Config{})
		if _, err := rt2.RestoreSession(ctx, log, runtime.SessionConfig{Model: last, Workspace: mustLocal(b, root), MaxRounds: -1, LoopRepeats: -1}, rp.Checkpoint, checkpoint.Settings{}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		events = rawRead()
		t2 := time.Now()
		restore, raw = append(restore, t1.Sub(t0)), append(raw, t2.Sub(t1))
	}
	mr, mw := median(restore), median(raw)
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(bytesTotal)/(1<<20), "log-MiB")
	b.ReportMetric(float64(mr.Microseconds())/1000, "restore-ms")
	b.ReportMetric(float64(mw.Microseconds())/1000, "raw-read-ms")
	b.ReportMetric(float64(mr)/float64(mw), "ratio")
}

// roundLog times the store adapter's appends and checkpoint saves per
// model round: round k runs from its model.request to the next one.
type roundLog struct {
	*store.SessionLog
	round     int
	spent     map[int]time.Duration
	keepAt200 int64
}

func (l *roundLog) Append(ctx context.Context, e event.Event) (store.Record, error) {
	if e.Type == event.TypeModelRequest {
		l.round++
	}
	t0 := time.Now()
	r, err := l.SessionLog.Append(ctx, e)
	l.spent[l.round] += time.Since(t0)
	return r, err
}

func (l *roundLog) AppendCheckpoint(ctx context.Context, after, keep int64, tail []byte) (store.Checkpoint, error) {
	t0 := time.Now()
	c, err := l.SessionLog.AppendCheckpoint(ctx, after, keep, tail)
	l.spent[l.round] += time.Since(t0)
	if l.round == 200 {
		l.keepAt200 = keep
	}
	return c, err
}

// BenchmarkRoundStoreCost runs a 201-round turn over a SQLite file, each
// round but the last reading a 10 KB file, so the history holds 2 MB at
// round 200, and times the store adapter's work (every append and the
// checkpoint save) per round; the last round, which also ends the turn,
// is not compared. BenchmarkRoundStoreCostMemstore runs the same turn over
// the in-memory store: the adapter's CPU work alone, without the disk. Target: round 200's store time ≤ 1.3× round 2's, in the same
// turn (medians over the iterations). For scale, it also times saving the
// round-200 checkpoint whole, as every round did before the row was kept
// by appends.
func BenchmarkRoundStoreCost(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	roundStoreCost(b, st)
}

func BenchmarkRoundStoreCostMemstore(b *testing.B) {
	roundStoreCost(b, memstore.New(memstore.Options{}))
}

// readLoop is a scripted model that keeps nothing: it asks to read
// big.txt until its last round, then answers. (model/fake keeps every
// request it receives, 200 MB by round 200 of this turn, whose garbage
// collection would be charged to whatever runs beside it.)
type readLoop struct {
	rounds int
	n      atomic.Int64
}

func (m *readLoop) Name() string { return "read-loop" }

func (m *readLoop) Stream(ctx context.Context, req model.Request) (model.Stream, error) {
	n := int(m.n.Add(1))
	c := model.Completion{Content: "done", FinishReason: model.FinishStop, Usage: model.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}}
	var chunks []model.Chunk
	if n < m.rounds {
		call := model.ToolCall{ID: fmt.Sprintf("c%d", n), Name: "fs.read", Arguments: []byte(`{"path":"big.txt"}`)}
		c = model.Completion{ToolCalls: []model.ToolCall{call}, FinishReason: model.FinishToolCalls, Usage: c.Usage}
		chunks = append(chunks, model.Chunk{Kind: model.ChunkToolCall, ToolCall: &call})
	} else {
		chunks = append(chunks, model.Chunk{Kind: model.ChunkDelta, Delta: "done"})
	}
	return &chunkStream{chunks: append(chunks, model.Chunk{Kind: model.ChunkCompletion, Completion: &c})}, nil
}

func roundStoreCost(b *testing.B, st store.Store) {
	ctx := b.Context()
	root := b.TempDir()
	writeFile(b, root, "big.txt", strings.Repeat("0123456789abcdef\n", 10000/17))
	var r2, r200, w2, w200, whole []time.Duration
	var history int64
	for b.Loop() {
		b.StopTimer()
		id := event.NewID("sess")
		if _, err := st.CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
			b.Fatal(err)
		}
		who, _ := st.Acquire(ctx, id, store.Owner{ID: "bench"}, store.AcquireOptions{})
		sl, err := store.NewSessionLog(ctx, st, id, who)
		if err != nil {
			b.Fatal(err)
		}
		log := &roundLog{SessionLog: sl, spent: map[int]time.Duration{}}
		rt := runtime.New(runtime.Config{})
		sess, err := rt.OpenSession(ctx, log, runtime.SessionConfig{Model: &readLoop{rounds: 201}, Workspace: mustLocal(b, root), MaxRounds: -1, LoopRepeats: -1}, checkpoint.Settings{Model: "read-loop", Tools: tools.ModelSpecs()})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		runID, err := sess.Start(ctx, runtime.StartRequest{Input: "read it 200 times"})
		if err != nil {
			b.Fatal(err)
		}
		if out, err := rt.Wait(ctx, runID); err != nil || out.Status != runtime.StatusCompleted || out.ModelRequests != 201 {
			b.Fatalf("outcome %+v %v", out, err)
		}
		b.StopTimer()
		r2, r200 = append(r2, log.spent[2]), append(r200, log.spent[200])
		var lo, hi []time.Duration
		for k := 2; k <= 11; k++ {
			lo, hi = append(lo, log.spent[k]), append(hi, log.spent[k+189])
		}
		// The row at round 200 (what its checkpoint save appended to).
		if log.keepAt200 < 1<<20 {
			b.Fatalf("round 200 kept %d bytes of the row: the history is not 2 MB", log.keepAt200)
		}
		w2, w200 = append(w2, median(lo)), append(w200, median(hi))
		cp, err := st.LoadCheckpoint(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		history = int64(len(cp.Payload))
		t0 := time.Now()
		if _, err := st.SaveCheckpoint(ctx, id, who, cp.Revision, cp.AfterSeq, cp.Payload); err != nil {
			b.Fatal(err)
		}
		whole = append(whole, time.Since(t0))
		b.StartTimer()
	}
	b.ReportMetric(float64(history)/(1<<20), "row-MiB")
	b.ReportMetric(float64(median(r2).Microseconds()), "round2-µs")
	b.ReportMetric(float64(median(r200).Microseconds()), "round200-µs")
	b.ReportMetric(float64(median(r200))/float64(median(r2)), "ratio")
	b.ReportMetric(float64(median(w200))/float64(median(w2)), "ratio-rounds191-200/2-11")
	b.ReportMetric(float64(median(whole).Microseconds()), "whole-save-µs")
}
