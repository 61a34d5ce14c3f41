// Command record records the session logs of internal/checkpoint/testdata/logs:
// real sessions — the runtime over the in-memory store, a local workspace
// and a scripted model, with a counting clock and counting IDs — and the
// broken logs derived from them. Run it from checkpoint/ with `go generate`
// when the event or checkpoint format changes, then `go test -update` to
// rewrite the golden files. The logs are fixtures, not outputs: tests never
// record them.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/model/fake"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/memstore"
	"github.com/harness-dev/harness/tools"
)

// fatal stands in for a test's failure: the recorder stops at the first.
type fatal struct{ ctx context.Context }

func (fatal) Fatal(args ...any)                 { log.Fatal(args...) }
func (fatal) Fatalf(format string, args ...any) { log.Fatalf(format, args...) }
func (f fatal) Context() context.Context        { return f.ctx }

func main() {
	dir := flag.String("dir", filepath.Join("testdata", "logs"), "where to write the logs")
	flag.Parse()
	root, err := os.MkdirTemp("", "record-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	t := fatal{ctx: context.Background()}
	r := newRecorder(t, root, *dir)
	one := r.session("sess-one", `[
	 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}}],"usage":{"promptTokens":5,"completionTokens":1}},
	 {"content":"It is a demo.","usage":{"promptTokens":9,"completionTokens":3}}]`, "what is this project?")
	r.write("good-one-turn", one.events())
	two := r.session("sess-two", `[
	 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}}],"usage":{"promptTokens":5,"completionTokens":1}},
	 {"content":"It is a demo.","usage":{"promptTokens":9,"completionTokens":3}},
	 {"toolCalls":[{"id":"c2","name":"fs.read","arguments":{"path":"main.go"}}],"usage":{"promptTokens":12,"completionTokens":1}},
	 {"content":"main.go declares package main.","usage":{"promptTokens":20,"completionTokens":6}}]`, "what is this project?", "and main.go?")
	good := two.events()
	r.write("good-two-turns", good)
	r.write("good-fork", r.fork(two, "sess-fork"))
	r.write("good-empty", nil)

	cps := indexes(good, event.TypeRuntimeCheckpoint)
	last := cps[len(cps)-1]
	turn2 := indexes(good, event.TypeTurnStarted)[1]
	results := indexes(good, event.TypeToolResult)

	r.write("bad-truncated-mid-request", good[:cps[len(cps)-2]+3])
	r.write("bad-interrupted-after-tool", good[:results[len(results)-1]+1])
	r.write("bad-no-turn-completed", good[:last+1])
	r.write("bad-started-after-finish", good[:turn2+1])
	r.writeRaw("bad-torn-line", good, func(lines [][]byte) [][]byte {
		n := len(lines) - 1
		lines[n] = lines[n][:len(lines[n])/2]
		return lines
	})
	r.write("bad-version", editPayload(t, good, last, func(p []byte) []byte {
		return bytes.Replace(p, []byte(`{"version":1,`), []byte(`{"version":2,`), 1)
	}))
	r.write("bad-unknown-key", editPayload(t, good, last, func(p []byte) []byte {
		return bytes.Replace(p, []byte(`{"version":1,`), []byte(`{"version":1,"resumeHint":true,`), 1)
	}))
	r.write("bad-usage", editCheckpoint(t, good, last, func(cp *checkpoint.Checkpoint) {
		u := &cp.Accounting.Usage
		u.TotalTokens = u.PromptTokens + u.CompletionTokens - 1 // above is allowed (reasoning tokens), below is not
	}))
	r.write("bad-base-mismatch", editCheckpoint(t, good, last, func(cp *checkpoint.Checkpoint) {
		cp.History.Base--
		cp.History.Revision++
	}))
	r.write("bad-delta-without-base", append(good[:cps[0]:cps[0]], good[cps[0]+1:]...))
	r.write("bad-duplicate-message", editCheckpoint(t, good, last, func(cp *checkpoint.Checkpoint) {
		cp.History.Messages[0].ID = firstMessageID(t, good)
	}))
	r.write("bad-duplicate-turn", editCheckpoint(t, good, last, func(cp *checkpoint.Checkpoint) {
		cp.Identity.SessionTurns = append(cp.Identity.SessionTurns, cp.Identity.TurnID)
	}))
	r.write("bad-terminal-with-next-request", editCheckpoint(t, good, last, func(cp *checkpoint.Checkpoint) {
		cp.NextRequest = &checkpoint.NextRequest{RequestID: "req-x", MaxTokens: 1, Step: 1}
	}))
	r.write("bad-cursor-past-history", editCheckpoint(t, good, last, func(cp *checkpoint.Checkpoint) {
		cp.Context.Compaction.TailStart = cp.History.Len() + 1
	}))
	r.write("bad-unanswered-tool-call", editCheckpoint(t, good, cps[len(cps)-2], func(cp *checkpoint.Checkpoint) {
		cp.History.Messages = append(cp.History.Messages, model.Message{ID: "msg-x", Role: model.RoleAssistant,
			ToolCalls: []model.ToolCall{{ID: "c9", Name: "fs.read", Arguments: []byte(`{"path":"x"}`)}}})
		cp.History.Revision++
	}))

	// Last, so that the IDs of the logs above stay as they were: a fork
	// of a session whose first turn was interrupted (killed while its
	// model request ran) continues from nothing; a fork killed between
	// its session.forked and its own terminal checkpoint is interrupted.
	cut := r.interrupted("sess-cut", "what is this project?")
	r.write("good-fork-empty", r.fork(cut, "sess-fork-empty"))
	fork := r.fork(two, "sess-fork-cut")
	r.write("bad-fork-without-checkpoint", fork[:1])
}

type recorder struct {
	t    fatal
	st   *memstore.Store
	rt   *runtime.Runtime // the one every session is opened through
	root string
	dir  string
	n    int
	now  time.Time
}

type recorded struct {
	r    *recorder
	id   string
	cfg  runtime.SessionConfig
	sess *runtime.Session
}

func newRecorder(t fatal, root, dir string) *recorder {
	for name, body := range map[string]string{"README.md": "# demo\n", "main.go": "package main\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &recorder{t: t, st: memstore.New(memstore.Options{}), root: root, dir: dir, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	r.rt = runtime.New(runtime.Config{
		Now:   func() time.Time { r.now = r.now.Add(time.Millisecond); return r.now },
		NewID: func(prefix string) string { r.n++; return fmt.Sprintf("%s-%04d", prefix, r.n) },
	})
	return r
}

func (r *recorder) config(m model.Model) runtime.SessionConfig {
	ws, err := workspace.OpenLocal(r.root)
	if err != nil {
		r.t.Fatal(err)
	}
	return runtime.SessionConfig{Model: m, Workspace: ws}
}

func (r *recorder) log(id string) *store.SessionLog {
	ctx := r.t.Context()
	if _, err := r.st.CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
		r.t.Fatal(err)
	}
	who, err := r.st.Acquire(ctx, id, store.Owner{ID: "recorder"}, store.AcquireOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	l, err := store.NewSessionLog(ctx, r.st, id, who)
	if err != nil {
		r.t.Fatal(err)
	}
	return l
}

var settings = checkpoint.Settings{Model: "fake", System: "you are a recorded test", Tools: tools.ModelSpecs()}

// session runs one turn per input against the script.
func (r *recorder) session(id, script string, inputs ...string) *recorded {
	m, err := fake.Parse([]byte(script))
	if err != nil {
		r.t.Fatal(err)
	}
	cfg := r.config(m)
	sess, err := r.rt.OpenSession(r.t.Context(), r.log(id), cfg, settings)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, in := range inputs {
		runID, err := sess.Start(r.t.Context(), runtime.StartRequest{Input: in})
		if err != nil {
			r.t.Fatal(err)
		}
		if out, err := r.rt.Wait(r.t.Context(), runID); err != nil || out.Status != runtime.StatusCompleted {
			r.t.Fatalf("turn %q: %+v %v", in, out, err)
		}
	}
	return &recorded{r: r, id: id, cfg: cfg, sess: sess}
}

// interrupted starts one turn on a model that never answers and returns
// once its model request is checkpointed: the session's first turn is
// interrupted, as if the process had been killed there.
func (r *recorder) interrupted(id, input string) *recorded {
	m, err := fake.Parse([]byte(`[{"content":"thinking","hang":true}]`))
	if err != nil {
		r.t.Fatal(err)
	}
	ctx := r.t.Context()
	cfg := r.config(m)
	sess, err := r.rt.OpenSession(ctx, r.log(id), cfg, settings)
	if err != nil {
		r.t.Fatal(err)
	}
	sub, err := sess.Events(ctx, -1)
	if err != nil {
		r.t.Fatal(err)
	}
	defer sub.Close()
	if _, err := sess.Start(ctx, runtime.StartRequest{Input: input}); err != nil {
		r.t.Fatal(err)
	}
	for {
		<-sub.Ready()
		for _, p := range sub.Drain() {
			if p.Event.Type == event.TypeRuntimeCheckpoint {
				return &recorded{r: r, id: id, cfg: cfg, sess: sess}
			}
		}
	}
}

// fork forks from's last finished turn into a new session.
func (r *recorder) fork(from *recorded, id string) []event.Event {
	cp, abandoned, err := runtime.LastFinished(r.t.Context(), r.st, from.id)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.rt.Fork(r.t.Context(), r.log(id), from.cfg, from.id, cp, abandoned, settings); err != nil {
		r.t.Fatal(err)
	}
	return (&recorded{r: r, id: id}).events()
}

func (s *recorded) events() []event.Event {
	var out []event.Event
	err := store.Each(s.r.t.Context(), s.r.st, s.id, -1, func(rec store.Record) error {
		e, err := event.Decode(rec.Body)
		out = append(out, e)
		return err
	})
	if err != nil {
		s.r.t.Fatal(err)
	}
	return out
}

func (r *recorder) write(name string, evs []event.Event) {
	r.writeRaw(name, evs, nil)
}

// writeRaw encodes evs one per line, lets edit change the lines, and
// writes testdata/logs/name.jsonl with the recorder's temp root replaced.
func (r *recorder) writeRaw(name string, evs []event.Event, edit func([][]byte) [][]byte) {
	var lines [][]byte
	for _, e := range evs {
		b, err := event.Encode(e)
		if err != nil {
			r.t.Fatalf("%s: %v", name, err)
		}
		lines = append(lines, b)
	}
	if edit != nil {
		lines = edit(lines)
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	out := strings.ReplaceAll(buf.String(), r.root, "/project")
	if err := os.WriteFile(filepath.Join(r.dir, name+".jsonl"), []byte(out), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func indexes(evs []event.Event, ty event.Type) []int {
	var out []int
	for i, e := range evs {
		if e.Type == ty {
			out = append(out, i)
		}
	}
	return out
}

func firstMessageID(t fatal, evs []event.Event) string {
	for _, e := range evs {
		if d, ok := e.Data.(event.MessageCompleted); ok {
			return d.MessageID
		}
	}
	t.Fatal("no message")
	return ""
}

// editPayload returns a copy of evs whose i-th event (a runtime.checkpoint)
// carries edit's payload.
func editPayload(t fatal, evs []event.Event, i int, edit func([]byte) []byte) []event.Event {
	out := append([]event.Event(nil), evs...)
	d := out[i].Data.(event.RuntimeCheckpoint)
	p := edit(bytes.Clone(d.Payload))
	if bytes.Equal(p, d.Payload) {
		t.Fatal("the edit changed nothing")
	}
	d.Payload = p
	out[i].Data = d
	return out
}

// editCheckpoint is editPayload through the parsed checkpoint, written back
// canonically, so that only the rule the edit breaks is broken.
func editCheckpoint(t fatal, evs []event.Event, i int, edit func(*checkpoint.Checkpoint)) []event.Event {
	return editPayload(t, evs, i, func(p []byte) []byte {
		cp, err := checkpoint.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		edit(cp)
		b, err := model.MarshalCanonical(cp)
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}
