package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// onceGate holds the first append of one event type until released.
type onceGate struct {
	*store.SessionLog
	block   event.Type
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func newOnceGate(l *store.SessionLog, block event.Type) *onceGate {
	return &onceGate{SessionLog: l, block: block, entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *onceGate) Append(ctx context.Context, e event.Event) (store.Record, error) {
	if e.Type == g.block {
		hold := false
		g.once.Do(func() { hold = true })
		if hold {
			close(g.entered)
			<-g.release
		}
	}
	return g.SessionLog.Append(ctx, e)
}

// userMessages lists the user messages of a request, in order.
func userMessages(req model.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}

// assertOneEndPerTurn checks that every turn.started has exactly one
// turn.completed, after it.
func assertOneEndPerTurn(t *testing.T, evs []event.Event) {
	t.Helper()
	started, ended := map[string]int{}, map[string]int{}
	for _, e := range evs {
		switch d := e.Data.(type) {
		case event.TurnStarted:
			started[d.TurnID]++
		case event.TurnCompleted:
			if started[d.TurnID] == 0 {
				t.Errorf("turn.completed of %s before its turn.started", d.TurnID)
			}
			ended[d.TurnID]++
		}
	}
	if !cmp.Equal(started, ended) {
		t.Errorf("turn.started %v, turn.completed %v: want one end per turn", started, ended)
	}
}

// Text sent while the turn it starts is still being admitted (the race the
// TUI's early detour was for) waits for the admission and steers that turn.
func TestSendWhileAdmitting(t *testing.T) {
	// The steering lands in the first request, or (when it arrives while
	// that answer streams) causes a second one.
	// The first request is held until the typed message is in, so the
	// turn cannot end before it arrives (a loaded machine may schedule
	// the second Send after a quick turn's end).
	m := script(t, `[{"content":"done"},{"content":"done again"}]`)
	gm := &gatedModel{inner: m, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{1: true}}
	f := newFixture(t, m, m, nil)
	g := newOnceGate(f.log, event.TypeTurnStarted)
	f.swapLog(g, gm)
	ctx := t.Context()
	first := make(chan runtime.Sent)
	go func() {
		sent, err := f.sess.Send(ctx, "task")
		if err != nil {
			t.Errorf("send: %v", err)
		}
		first <- sent
	}()
	<-g.entered // the turn is being admitted
	second := make(chan runtime.Sent)
	go func() {
		sent, err := f.sess.Send(ctx, "typed during admission")
		if err != nil {
			t.Errorf("send during admission: %v", err)
		}
		second <- sent
	}()
	close(g.release)
	a := <-first
	<-gm.started
	b := <-second
	close(gm.release)
	if a.Kind != runtime.SentStarted || b.Kind != runtime.SentSteered || b.RunID != a.RunID {
		t.Fatalf("sent = %+v then %+v; want a start, then steering of that run", a, b)
	}
	if out := f.wait(a.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	reqs := m.Requests()
	if got := userMessages(reqs[len(reqs)-1]); !cmp.Equal(got, []string{"task", "typed during admission"}) {
		t.Errorf("last request's user messages = %q", got)
	}
	evs := f.events()
	if q := ofType[event.SteeringQueued](evs); len(q) != 1 || q[0].RunID != a.RunID {
		t.Errorf("steering.queued = %+v", q)
	}
	assertOneEndPerTurn(t, evs)
}

// Text sent once the turn has decided to complete (where steering used to
// be refused as terminal, and the TUI deferred it) waits for the end and
// starts the next turn; it is never lost and never steers a finished turn.
func TestSendWhileEndingStartsNextTurn(t *testing.T) {
	m := script(t, `[{"content":"first"},{"content":"second"}]`)
	f := newFixture(t, m, m, nil)
	g := newOnceGate(f.log, event.TypeTurnCompleted)
	f.swapLog(g, m)
	ctx := t.Context()
	a, err := f.sess.Send(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	<-g.entered // the turn is ending: its terminal checkpoint is written
	late := make(chan runtime.Sent)
	go func() {
		sent, err := f.sess.Send(ctx, "late")
		if err != nil {
			t.Errorf("send while ending: %v", err)
		}
		late <- sent
	}()
	close(g.release)
	b := <-late
	if b.Kind != runtime.SentStarted || b.RunID == a.RunID {
		t.Fatalf("late send = %+v; want a new turn after %s", b, a.RunID)
	}
	if out := f.wait(b.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("second = %+v", out)
	}
	evs := f.events()
	if n := len(ofType[event.SteeringQueued](evs)); n != 0 {
		t.Errorf("steering.queued = %d; nothing may steer an ending turn", n)
	}
	assertOneEndPerTurn(t, evs)
	if got := userMessages(m.Requests()[1]); !cmp.Equal(got, []string{"one", "late"}) {
		t.Errorf("second request's user messages = %q", got)
	}
	// The first turn's terminal checkpoint is followed only by its own end,
	// so the session resumes.
	if _, err := runtime.LatestTerminal(ctx, f.st, f.sess.ID()); err != nil {
		t.Errorf("restore: %v", err)
	}
}

// The session starts the queued turn after a completed one; after a
// canceled one the queue waits for StartQueued, and Withdraw works between
// turns (and restore folds it).
func TestQueueAfterCancelWaits(t *testing.T) {
	inner := script(t, `[{"content":"queued answer"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{1: true}}
	f := newFixture(t, gm, inner, nil)
	ctx := t.Context()
	a, err := f.sess.Send(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	<-gm.started
	q1, err := f.sess.Queue(ctx, "then this")
	if err != nil || q1.Kind != runtime.SentQueued {
		t.Fatalf("queue = %+v, %v", q1, err)
	}
	q2, err := f.sess.Queue(ctx, "and this")
	if err != nil {
		t.Fatal(err)
	}
	f.sess.Cancel()
	out, err := f.sess.Wait(ctx)
	if err != nil || out.Status != runtime.StatusCanceled || out.RunID != a.RunID {
		t.Fatalf("wait = %+v, %v; want the canceled first turn, nothing started after it", out, err)
	}
	if got := f.sess.Queued(); !cmp.Equal(got, []string{"then this", "and this"}) {
		t.Fatalf("queued = %q", got)
	}
	if err := f.sess.Withdraw(ctx, q2.MessageID); err != nil {
		t.Fatalf("withdraw between turns: %v", err)
	}
	mustCode(t, f.sess.Withdraw(ctx, q2.MessageID), errcode.RuntimeInvalidInput)
	rp, err := runtime.LatestTerminal(ctx, f.st, f.sess.ID())
	if err != nil {
		t.Fatalf("restore after a withdrawal between turns: %v", err)
	}
	if q := rp.Checkpoint.Control.QueuedInputs; len(q) != 1 || q[0].Content != "then this" {
		t.Errorf("restored queue = %+v", q)
	}
	next, err := f.sess.StartQueued(ctx)
	if err != nil || next.Kind != runtime.SentStarted || next.MessageID != q1.MessageID {
		t.Fatalf("start queued = %+v, %v", next, err)
	}
	if out := f.wait(next.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("queued turn = %+v", out)
	}
	_, err = f.sess.StartQueued(ctx)
	mustCode(t, err, errcode.RuntimeInvalidInput) // nothing is queued
	assertOneEndPerTurn(t, f.events())
}

// SetSettings between turns is recorded at once, the next model.request
// names the model really asked, and resume folds the change.
func TestSetSettingsBetweenTurns(t *testing.T) {
	m := script(t, `[{"content":"a"},{"content":"b"}]`)
	f := newFixture(t, m, m, nil)
	ctx := t.Context()
	a, _ := f.sess.Send(ctx, "one")
	f.wait(a.RunID)
	newModel := "model-b"
	window := compaction.Policy{WindowTokens: 64000, ThresholdTokens: 48000, TailMessages: 8, ReserveTokens: 4000}
	set, err := f.sess.SetSettings(ctx, runtime.SettingsChange{Model: &newModel, Context: &window})
	if err != nil || set.Model != newModel || set.Context != window {
		t.Fatalf("set = %+v, %v", set, err)
	}
	sc := ofType[event.SettingsChanged](f.events())
	if len(sc) != 1 || sc[0].Model != newModel || sc[0].WindowTokens != 64000 ||
		!cmp.Equal(sc[0].Changed, []string{"model", "contextWindow", "compactAt", "compactTail"}) {
		t.Fatalf("settings.changed = %+v", sc)
	}
	rp, err := runtime.LatestTerminal(ctx, f.st, f.sess.ID())
	if err != nil || rp.Checkpoint.Settings.Model != newModel || rp.Checkpoint.Settings.Context != window {
		t.Fatalf("restored settings = %+v, %v", rp.Checkpoint, err)
	}
	// The same change again changes nothing and records nothing.
	if _, err := f.sess.SetSettings(ctx, runtime.SettingsChange{Model: &newModel}); err != nil {
		t.Fatal(err)
	}
	b, _ := f.sess.Send(ctx, "two")
	f.wait(b.RunID)
	if got := m.Requests()[1].Model; got != newModel {
		t.Errorf("the model asked = %q, want %q", got, newModel)
	}
	evs := f.events()
	if n := len(ofType[event.SettingsChanged](evs)); n != 1 {
		t.Errorf("settings.changed = %d, want 1", n)
	}
	reqs := ofType[event.ModelRequest](evs)
	if last := reqs[len(reqs)-1]; last.Model != newModel {
		t.Errorf("model.request names %q, want %q", last.Model, newModel)
	}
	acc := ofType[event.ContextAccounted](evs)
	if last := acc[len(acc)-1]; last.WindowTokens != 64000 {
		t.Errorf("context.accounted window = %d", last.WindowTokens)
	}
	empty := ""
	_, err = f.sess.SetSettings(ctx, runtime.SettingsChange{Model: &empty})
	mustCode(t, err, errcode.RuntimeInvalidInput)
}

// SetSettings while a request is in flight applies from the next request
// of the same turn, recorded before it.
func TestSetSettingsDuringTurn(t *testing.T) {
	inner := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.list","arguments":{"path":"."}}]},{"content":"done"}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{1: true}}
	f := newFixture(t, gm, inner, nil)
	ctx := t.Context()
	a, _ := f.sess.Send(ctx, "go")
	<-gm.started
	next := "model-b"
	if _, err := f.sess.SetSettings(ctx, runtime.SettingsChange{Model: &next}); err != nil {
		t.Fatal(err)
	}
	close(gm.release)
	f.wait(a.RunID)
	reqs := inner.Requests()
	if reqs[0].Model != "fake" || reqs[1].Model != next {
		t.Errorf("models asked = %q, %q", reqs[0].Model, reqs[1].Model)
	}
	var order []string
	for _, e := range f.events() {
		switch d := e.Data.(type) {
		case event.SettingsChanged:
			order = append(order, "settings.changed")
		case event.ModelRequest:
			order = append(order, "model.request "+d.Model)
		}
	}
	if want := []string{"model.request fake", "settings.changed", "model.request model-b"}; !cmp.Equal(order, want) {
		t.Errorf("order = %q, want %q", order, want)
	}
}

// Events(after) gives the stored events after a seq, then the live ones:
// no gap, no repeat, whatever is appended meanwhile.
func TestEventsBacklogThenLive(t *testing.T) {
	inner := script(t, `[{"content":"a"},{"content":"b","deltas":["b"]}]`)
	gm := &gatedModel{inner: inner, started: make(chan int), release: make(chan struct{}), gate: map[int]bool{2: true}}
	f := newFixture(t, gm, inner, nil)
	ctx := t.Context()
	a, _ := f.sess.Send(ctx, "one")
	f.wait(a.RunID)
	b, _ := f.sess.Send(ctx, "two")
	<-gm.started
	sub, err := f.sess.Events(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	close(gm.release)
	f.wait(b.RunID)
	var seqs []int64
	for done := false; !done; {
		<-sub.Ready()
		for _, p := range sub.Drain() {
			seqs = append(seqs, p.Seq)
			if d, ok := p.Event.Data.(event.AgentStopped); ok && d.RunID == b.RunID {
				done = true
			}
		}
	}
	total := int64(len(f.events()))
	if int64(len(seqs)) != total-3 {
		t.Fatalf("got %d events after seq 2, the log has %d in all", len(seqs), total)
	}
	for i, s := range seqs {
		if s != int64(i)+3 {
			t.Fatalf("seq %d at position %d: %v", s, i, seqs)
		}
	}
}

// Send, Cancel and Queue racing over many turns: every turn ends exactly
// once, the session ends idle, and what was accepted is in the log.
func TestCommandsRaceOneEndPerTurn(t *testing.T) {
	answers := ""
	for i := range 60 {
		if i > 0 {
			answers += ","
		}
		answers += fmt.Sprintf(`{"content":"answer %d","deltas":["ans","wer %d"]}`, i, i)
	}
	m := script(t, "["+answers+"]")
	f := newFixture(t, m, m, nil)
	ctx := t.Context()
	accepted := 0
	for i := range 12 {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for j, send := range []func() (runtime.Sent, error){
			func() (runtime.Sent, error) { return f.sess.Send(ctx, fmt.Sprintf("send %d", i)) },
			func() (runtime.Sent, error) { return f.sess.Queue(ctx, fmt.Sprintf("queue %d", i)) },
			func() (runtime.Sent, error) { return f.sess.Send(ctx, fmt.Sprintf("steer %d", i)) },
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := send(); err != nil {
					t.Errorf("round %d, command %d: %v", i, j, err)
					return
				}
				mu.Lock()
				accepted++
				mu.Unlock()
			}()
		}
		if i%3 == 0 {
			f.sess.Cancel()
		}
		wg.Wait()
		if _, err := f.sess.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		// A queue left waiting after a canceled turn is started here.
		for len(f.sess.Queued()) > 0 {
			if _, err := f.sess.StartQueued(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := f.sess.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	evs := f.events()
	assertOneEndPerTurn(t, evs)
	texts := 0
	for _, e := range evs {
		switch d := e.Data.(type) {
		case event.SteeringQueued, event.InputQueued:
			texts++
		case event.MessageCompleted:
			if d.Role == model.RoleUser {
				texts++
			}
		}
	}
	// Each accepted text is recorded once as steering or queued input, or
	// as a turn's message (a queued input is both: its input.queued, then
	// the message of the turn it starts).
	queuedStarted := 0
	queued := map[string]bool{}
	for _, e := range evs {
		switch d := e.Data.(type) {
		case event.InputQueued:
			queued[d.MessageID] = true
		case event.TurnStarted:
			if queued[d.InputMessageID] {
				queuedStarted++
			}
		}
	}
	if texts-queuedStarted != accepted {
		t.Errorf("%d texts recorded (%d queued inputs started), %d accepted", texts, queuedStarted, accepted)
	}
	if ty := evs[len(evs)-1].Type; ty != event.TypeAgentStopped {
		t.Errorf("last event %s", ty)
	}
}

// ChangeSettings reads the settings it changes under the session's lock:
// racing SetSettings on an idle session (go test -race), every change is
// recorded and the last one recorded is the one in force.
func TestChangeSettingsRacesSetSettings(t *testing.T) {
	m := script(t, `[]`)
	f := newFixture(t, m, m, func(_ *runtime.SessionConfig, s *checkpoint.Settings) {
		s.Context = compaction.DefaultPolicy(100000)
	})
	ctx := t.Context()
	p := compaction.DefaultPolicy(100000)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("set-%d", i)
			if _, err := f.sess.SetSettings(ctx, runtime.SettingsChange{Model: &name}); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			d := event.SettingsChanged{Changed: []string{"model"}, Model: fmt.Sprintf("change-%d", i),
				WindowTokens: p.WindowTokens, ThresholdTokens: p.ThresholdTokens, TailMessages: p.TailMessages, ReserveTokens: p.ReserveTokens}
			if err := f.sess.ChangeSettings(ctx, d); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	sc := ofType[event.SettingsChanged](f.events())
	if len(sc) != 40 {
		t.Fatalf("%d settings.changed, want 40", len(sc))
	}
	if got, want := f.sess.Settings().Model, sc[len(sc)-1].Model; got != want {
		t.Errorf("model in force %q, the last recorded %q", got, want)
	}
}
