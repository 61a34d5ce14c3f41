package tui

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// base is the fixed clock of these tests.
var base = time.Date(2026, 11, 29, 20, 41, 0, 0, time.UTC)

const sessID = "sess-0196f0d0-3b1a-7c00-8000-00000000golden"

// fakeEngine is a hand-written Engine: it records the intents it gets and
// answers from its fields. Events reach the model through deliver, not
// Next, so the tests decide the interleaving.
type fakeEngine struct {
	mu       sync.Mutex
	calls    []string
	sess     Session
	openErr  error
	sendErr  error
	answered *[]Answer // when set, Answer appends to it
	patch    string
	plan     ApplyPlan
	sessions []SessionSummary
	files    []string // the workspace listing
	errSess  Session  // what Open gives beside openErr
	filesErr error
	turns    []TurnSummary
	undoable bool
}

func (f *fakeEngine) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeEngine) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

var errNoStream = errors.New("fake engine: events come from the test")

func (f *fakeEngine) Open(_ context.Context, req OpenRequest) (Session, error) {
	f.record("open %q fork=%v", req.ID, req.Fork)
	if f.openErr != nil {
		return f.errSess, f.openErr
	}
	s := f.sess
	if req.ID != "" {
		s.ID = req.ID
	}
	return s, nil
}
func (f *fakeEngine) Next(ctx context.Context) (Update, error) { return Update{}, errNoStream }
func (f *fakeEngine) Send(_ context.Context, text string) (Sent, error) {
	f.record("send %q", text)
	return Sent{Kind: "steered", MessageID: "msg-s"}, f.sendErr
}
func (f *fakeEngine) Queue(_ context.Context, text string) (Sent, error) {
	f.record("queue %q", text)
	return Sent{Kind: "queued", MessageID: "msg-q"}, nil
}
func (f *fakeEngine) StartQueued(context.Context) (Sent, error) {
	f.record("start-queued")
	return Sent{Kind: "started"}, nil
}
func (f *fakeEngine) Withdraw(_ context.Context, id string) error {
	f.record("withdraw %s", id)
	return nil
}
func (f *fakeEngine) Cancel(context.Context) error {
	f.record("cancel")
	return nil
}
func (f *fakeEngine) Answer(_ context.Context, permissionID string, a Answer) error {
	if a.ForSession {
		f.record("answer %s allow=%v forSession=true reason=%q", permissionID, a.Allow, a.Reason)
	} else {
		f.record("answer %s allow=%v forRun=%v reason=%q", permissionID, a.Allow, a.ForRun, a.Reason)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.answered != nil {
		*f.answered = append(*f.answered, a)
	}
	return nil
}
func (f *fakeEngine) StopJob(_ context.Context, id string) error {
	f.record("stop job %s", id)
	return nil
}
func (f *fakeEngine) Revoke(_ context.Context, tool string) error {
	f.record("revoke %s", tool)
	return nil
}
func (f *fakeEngine) Compact(_ context.Context, focus string) error {
	f.record("compact %s", focus)
	return nil
}
func (f *fakeEngine) SetModel(_ context.Context, name string) (string, error) {
	f.record("model %s", name)
	return "", nil
}
func (f *fakeEngine) Models(context.Context) ([]string, error) {
	f.record("models")
	return []string{"gpt-x", "gpt-y"}, nil
}
func (f *fakeEngine) Diff(context.Context) (string, error) {
	f.record("diff")
	return f.patch, nil
}
func (f *fakeEngine) CheckApply(context.Context) (ApplyPlan, error) {
	f.record("check-apply")
	return f.plan, nil
}
func (f *fakeEngine) Apply(_ context.Context, p ApplyPlan) (string, error) {
	f.record("apply %s", p.Root)
	return "applied the patch to " + p.Root, nil
}
func (f *fakeEngine) Turns(context.Context) ([]TurnSummary, bool, error) {
	f.record("turns")
	return f.turns, f.undoable, nil
}
func (f *fakeEngine) Rewind(_ context.Context, turnID string, undo bool) (Session, string, error) {
	f.record("rewind %s %v", turnID, undo)
	return f.sess, "", nil
}
func (f *fakeEngine) Sessions(context.Context) ([]SessionSummary, error) {
	f.record("sessions")
	return f.sessions, nil
}
func (f *fakeEngine) Files(context.Context) ([]string, error) {
	f.record("files")
	return f.files, f.filesErr
}

// screen drives a Model the way the program does, synchronously: every
// command runs and its message goes back to Update (the spinner's timed
// ticks excepted: no clock runs in these tests).
type screen struct {
	t    testing.TB
	m    *Model
	eng  *fakeEngine
	seq  int64
	quit bool
}

func newScreen(t testing.TB, eng *fakeEngine, opts Options, w, h int) *screen {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return base }
	}
	s := &screen{t: t, m: New(t.Context(), eng, opts), eng: eng, seq: -1}
	s.send(tea.WindowSizeMsg{Width: w, Height: h})
	s.run(s.m.Init(), 0)
	return s
}

func (s *screen) send(msg tea.Msg) {
	_, cmd := s.m.Update(msg)
	s.run(cmd, 0)
}

func (s *screen) run(cmd tea.Cmd, depth int) {
	if cmd == nil || depth > 10 {
		return
	}
	switch msg := cmd().(type) {
	case nil, spinner.TickMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			s.run(c, depth+1)
		}
	case tea.QuitMsg:
		s.quit = true
	default:
		_, next := s.m.Update(msg)
		s.run(next, depth+1)
	}
}

// key sends one key press, given as Bubble Tea spells it ("enter",
// "alt+enter", "ctrl+c", "y").
func (s *screen) key(k string) {
	s.send(keyMsg(k))
}

func keyMsg(k string) tea.KeyPressMsg {
	var mod tea.KeyMod
	for {
		switch {
		case strings.HasPrefix(k, "ctrl+"):
			mod |= tea.ModCtrl
			k = k[5:]
			continue
		case strings.HasPrefix(k, "alt+"):
			mod |= tea.ModAlt
			k = k[4:]
			continue
		}
		break
	}
	code := map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "home": tea.KeyHome, "end": tea.KeyEnd, "tab": tea.KeyTab,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "backspace": tea.KeyBackspace}[k]
	if k == "space" {
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	if code == 0 {
		r := []rune(k)
		code = r[0]
		if mod == 0 {
			return tea.KeyPressMsg{Code: code, Text: k}
		}
	}
	return tea.KeyPressMsg{Code: code, Mod: mod}
}

// typeText types text key by key, then presses enter (or alt+enter).
func (s *screen) typeText(text string) {
	for _, r := range text {
		s.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// events delivers events of the open session as one batch, numbered on,
// with the state the session's owner would report after them (these
// tests have no owner: a turn is active from its turn.started to its
// turn.completed).
func (s *screen) events(evs ...event.Event) {
	var recs []Record
	for _, e := range evs {
		s.seq++
		recs = append(recs, Record{Seq: s.seq, Event: e})
	}
	s.send(updateMsg{u: Update{SessionID: s.m.SessionID(), Events: recs, State: ownerAfter(s.m.state, recs)}})
}

// ownerAfter is the state an owner in st reports after recs, for these
// tests that have none.
func ownerAfter(st State, recs []Record) State {
	for _, r := range recs {
		switch r.Event.Data.(type) {
		case event.TurnStarted:
			st = StateRunning
		case event.TurnCompleted:
			st = StateIdle
		}
	}
	return st
}

func (s *screen) view() string { return s.m.View().Content }

func (s *screen) text() string { return ansi.Strip(s.view()) }

func (s *screen) wantText(subs ...string) {
	s.t.Helper()
	txt := s.text()
	for _, sub := range subs {
		if !strings.Contains(txt, sub) {
			s.t.Errorf("screen lacks %q:\n%s", sub, txt)
		}
	}
}

func (s *screen) wantCalls(want ...string) {
	s.t.Helper()
	got := s.eng.Calls()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		s.t.Errorf("engine calls:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func (s *screen) resetCalls() {
	s.eng.mu.Lock()
	s.eng.calls = nil
	s.eng.mu.Unlock()
}

// ev makes an event at base + i·100 ms.
func ev(i int, d event.Data) event.Event {
	return event.Event{Type: d.EventType(), ID: fmt.Sprintf("evt-%d", i), At: base.Add(time.Duration(i) * 100 * time.Millisecond), Actor: "kernel", Data: d}
}

func session() Session {
	return Session{ID: sessID, Model: "gpt-x", Workspace: "docker harness-sandbox@sha256:1a2b3c4d…", Budget: 200000, Window: 128000, Occupancy: 39680}
}

func idleEngine() *fakeEngine { return &fakeEngine{sess: session()} }

// mustLoadLog reads a recorded log and normalizes what differs between
// recordings (times and durations), as the transcript tests do.
func mustLoadLog(t testing.TB, path string) []Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	calls := 0
	for sc.Scan() {
		e, err := event.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("decode line %d: %v", len(out)+1, err)
		}
		e.At = base.Add(time.Duration(len(out)) * 100 * time.Millisecond)
		if r, ok := e.Data.(event.ToolResult); ok {
			calls++
			r.DurationMs = 10 * calls
			e.Data = r
		}
		out = append(out, Record{Seq: int64(len(out)), Event: e})
	}
	return out
}

var (
	errQueueFull   = errcode.New(errcode.RuntimeInvalidInput, "queue a message on run run-1: the queue is full (1024)")
	errInterrupted = errcode.New(errcode.RuntimeCheckpointInterrupted, "the last turn of sess-x was interrupted; nothing to resume from")
	u15            = model.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}
)
