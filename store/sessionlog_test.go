package store_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/memstore"
	"github.com/harness-dev/harness/store/sqlite"
	"github.com/harness-dev/harness/store/storetest"
)

var at = time.Date(2026, 11, 29, 20, 41, 23, 123000000, time.UTC)

// stores runs f against each real implementation.
func stores(t *testing.T, f func(t *testing.T, s store.Store)) {
	t.Run("memstore", func(t *testing.T) {
		s := memstore.New(memstore.Options{})
		t.Cleanup(func() { _ = s.Close() })
		f(t, s)
	})
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(filepath.Join(t.TempDir(), "harness.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		f(t, s)
	})
}

// bound creates sess-a, acquires it and binds a log to it.
func bound(t *testing.T, s store.Store) *store.SessionLog {
	t.Helper()
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: "sess-a"}); err != nil {
		t.Fatal(err)
	}
	who, err := s.Acquire(ctx, "sess-a", storetest.Me("runtime"), store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := store.NewSessionLog(ctx, s, "sess-a", who)
	if err != nil {
		t.Fatalf("bind log: %v", err)
	}
	return l
}

func ev(id string, d event.Data) event.Event {
	return event.Event{Type: d.EventType(), ID: id, At: at, Actor: event.ActorKernel, Data: d}
}

func turnStarted(id string) event.Event {
	return ev(id, event.TurnStarted{RunID: "run-1", SessionID: "sess-a", TurnID: "turn-1", InputMessageID: "msg-1"})
}

func userMessage(id, content string) event.Event {
	return ev(id, event.MessageCompleted{RunID: "run-1", SessionID: "sess-a", TurnID: "turn-1", MessageID: "msg-" + id, Role: model.RoleUser, Content: content})
}

func turnCompleted(id string, tokens int) event.Event {
	return ev(id, event.TurnCompleted{RunID: "run-1", SessionID: "sess-a", TurnID: "turn-1", Status: event.StatusCompleted,
		Usage: model.Usage{PromptTokens: tokens - 1, CompletionTokens: 1, TotalTokens: tokens}})
}

func TestSessionLogAppend(t *testing.T) {
	stores(t, func(t *testing.T, s store.Store) {
		ctx := t.Context()
		l := bound(t, s)
		if l.SessionID() != "sess-a" || l.Owner().ID != "runtime" || l.Owner().Epoch != 1 {
			t.Fatalf("log bound to %s as %+v", l.SessionID(), l.Owner())
		}
		evs := []event.Event{turnStarted("evt-1"), userMessage("evt-2", "Make the tests pass\nplease"), turnCompleted("evt-3", 42)}
		for i, e := range evs {
			rec, err := l.Append(ctx, e)
			if err != nil {
				t.Fatalf("append %s: %v", e.ID, err)
			}
			body, err := event.Encode(e)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Seq != int64(i) || rec.ID != e.ID || rec.Type != string(e.Type) || !bytes.Equal(rec.Body, body) {
				t.Fatalf("record %d = %+v, want seq %d id %s and the canonical bytes", i, rec, i, e.ID)
			}
			back, err := event.Decode(rec.Body)
			if err != nil {
				t.Fatalf("decode stored body: %v", err)
			}
			if d := cmp.Diff(e, back); d != "" {
				t.Fatalf("round trip (-appended +decoded):\n%s", d)
			}
			rec.Body[0] = 'X' // the caller's own copy
		}
		again, err := l.Append(ctx, evs[0])
		if err != nil || again.Seq != 0 {
			t.Fatalf("redelivery through the log: %+v, %v", again, err)
		}
		sess, err := s.Session(ctx, "sess-a")
		if err != nil {
			t.Fatal(err)
		}
		got := []any{sess.Title, sess.Turns, sess.Tokens, sess.Status, sess.LastSeq}
		if d := cmp.Diff([]any{"Make the tests pass", 1, int64(42), store.StatusCompleted, int64(2)}, got); d != "" {
			t.Fatalf("summary from codec events (-want +got):\n%s", d)
		}
		recs, err := l.ReadEvents(ctx, -1, 10)
		if err != nil || len(recs) != 3 || recs[0].Body[0] != '{' {
			t.Fatalf("read back: %d records, %v", len(recs), err)
		}

		t.Run("invalid event", func(t *testing.T) {
			bad := turnStarted("evt-4")
			bad.Type = "no.such"
			_, err := l.Append(ctx, bad)
			storetest.WantCode(t, err, errcode.EventUnknownType)
			bad = turnStarted("not-an-event-id")
			_, err = l.Append(ctx, bad)
			storetest.WantCode(t, err, errcode.EventInvalidField)
		})
		t.Run("raw", func(t *testing.T) {
			body, err := event.Encode(turnStarted("evt-5"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.AppendRaw(ctx, store.EventIn{ID: "evt-6", Type: string(event.TypeTurnStarted), Body: body})
			storetest.WantCode(t, err, errcode.SessInvalidRecord)
			_, err = l.AppendRaw(ctx, store.EventIn{ID: "evt-5", Type: string(event.TypeTurnStarted), Body: []byte("nope")})
			storetest.WantCode(t, err, errcode.EventNotObject)
			rec, err := l.AppendRaw(ctx, store.EventIn{ID: "evt-5", Type: string(event.TypeTurnStarted), Body: body})
			if err != nil || rec.Seq != 3 || !bytes.Equal(rec.Body, body) {
				t.Fatalf("append raw: %+v, %v", rec, err)
			}
		})
	})
}

func TestSessionLogSerializes(t *testing.T) {
	stores(t, func(t *testing.T, s store.Store) {
		l := bound(t, s)
		const workers, each = 6, 20
		var wg sync.WaitGroup
		seqs := make([][]int64, workers)
		errs := make([]error, workers)
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					rec, err := l.Append(t.Context(), turnStarted(fmt.Sprintf("evt-%d-%d", w, i)))
					if err != nil {
						errs[w] = err
						return
					}
					seqs[w] = append(seqs[w], rec.Seq)
				}
			})
		}
		wg.Wait()
		seen := map[int64]bool{}
		for w := range workers {
			if errs[w] != nil {
				t.Fatalf("worker %d: %v", w, errs[w])
			}
			for i, seq := range seqs[w] {
				if seen[seq] || (i > 0 && seq <= seqs[w][i-1]) {
					t.Fatalf("worker %d got seq %d after %v", w, seq, seqs[w][:i])
				}
				seen[seq] = true
			}
		}
		for seq := range int64(workers * each) {
			if !seen[seq] {
				t.Fatalf("seq %d missing: a gap", seq)
			}
		}
	})
}

func TestSessionLogCheckpoint(t *testing.T) {
	stores(t, func(t *testing.T, s store.Store) {
		ctx := t.Context()
		l := bound(t, s)
		for i := range 3 {
			if _, err := l.Append(ctx, turnStarted(fmt.Sprintf("evt-%d", i))); err != nil {
				t.Fatal(err)
			}
		}
		save := func(after int64, payload string) store.Checkpoint {
			t.Helper()
			cp, err := l.SaveCheckpoint(ctx, after, []byte(payload))
			if err != nil {
				t.Fatalf("save %d %q: %v", after, payload, err)
			}
			return cp
		}
		if cp := save(-1, "a"); cp.Revision != 1 {
			t.Fatalf("first revision %d", cp.Revision)
		}
		cp2 := save(1, "b")
		if cp2.Revision != 2 {
			t.Fatalf("second revision %d", cp2.Revision)
		}
		for _, tc := range []struct {
			name    string
			after   int64
			payload string
		}{
			{"current again", 1, "b"},
			{"older again", -1, "a"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if d := cmp.Diff(cp2, save(tc.after, tc.payload)); d != "" {
					t.Fatalf("re-delivery (-current +got):\n%s", d)
				}
				got, err := l.LoadCheckpoint(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(cp2, got); d != "" {
					t.Fatalf("stored checkpoint moved (-want +got):\n%s", d)
				}
			})
		}
		_, err := l.SaveCheckpoint(ctx, 0, []byte("new but behind"))
		storetest.WantCode(t, err, errcode.SessCheckpointConflict)
		if cp := save(2, "c"); cp.Revision != 3 {
			t.Fatalf("third revision %d", cp.Revision)
		}

		t.Run("a new log continues", func(t *testing.T) {
			l2, err := store.NewSessionLog(ctx, s, "sess-a", l.Owner())
			if err != nil {
				t.Fatal(err)
			}
			if cp, err := l2.SaveCheckpoint(ctx, 2, []byte("c")); err != nil || cp.Revision != 3 {
				t.Fatalf("re-deliver through a new log: %+v, %v", cp, err)
			}
			if cp, err := l2.SaveCheckpoint(ctx, 2, []byte("d")); err != nil || cp.Revision != 4 {
				t.Fatalf("save through a new log: %+v, %v", cp, err)
			}
		})
	})
}

func TestSessionLogFencing(t *testing.T) {
	stores(t, func(t *testing.T, s store.Store) {
		ctx := t.Context()
		l := bound(t, s)
		if _, err := l.Append(ctx, turnStarted("evt-1")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"a", "b"} {
			if _, err := l.SaveCheckpoint(ctx, 0, []byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		_, err := store.NewSessionLog(ctx, s, "sess-a", storetest.Me("stranger"))
		storetest.WantCode(t, err, errcode.SessOwnershipLost)
		_, err = store.NewSessionLog(ctx, s, "sess-missing", l.Owner())
		storetest.WantCode(t, err, errcode.SessNotFound)

		if _, err := s.Acquire(ctx, "sess-a", storetest.Me("usurper"), store.AcquireOptions{TakeOver: true}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			call func() error
		}{
			{"append", func() error { _, err := l.Append(ctx, turnStarted("evt-2")); return err }},
			{"identical append", func() error { _, err := l.Append(ctx, turnStarted("evt-1")); return err }},
			{"current checkpoint again", func() error { _, err := l.SaveCheckpoint(ctx, 0, []byte("b")); return err }},
			{"older checkpoint again", func() error { _, err := l.SaveCheckpoint(ctx, 0, []byte("a")); return err }},
			{"renew", func() error { return l.Renew(ctx, time.Minute) }},
			{"release", func() error { return l.Release(ctx) }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				storetest.WantCode(t, tc.call(), errcode.SessOwnershipLost)
			})
		}
	})
}
