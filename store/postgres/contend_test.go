package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

var at = time.Date(2026, 11, 29, 20, 41, 23, 123000000, time.UTC)

// delta is a runtime event as SessionLog encodes it.
func delta(id string, n int) event.Event {
	return event.Event{Type: event.TypeMessageDelta, ID: id, At: at, Actor: event.ActorKernel,
		Data: event.MessageDelta{RunID: "run-1", SessionID: "sess-shared", TurnID: "turn-1", RequestID: "req-1", MessageID: "msg-1", Sequence: n, Delta: "words "}}
}

// TestTwoRuntimesContend runs two runtimes' stores, each on its own pool
// (its own connections), each writing through a store.SessionLog, against
// one session. Runtime A writes continuously; B, refused while A is live,
// takes the session over explicitly in the middle of A's writes. A's next
// write, and every retry of an earlier one, fails with SESS_OWNERSHIP_LOST;
// B continues from A's last durable event and checkpoint; the log has no
// gap, no duplicate, and nothing of A's after the take-over.
func TestTwoRuntimesContend(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	ctx := t.Context()
	a := mustOpen(t, dsn, Options{MaxConns: 2})
	b := mustOpen(t, dsn, Options{MaxConns: 2})
	const sess = "sess-shared"
	if _, err := a.CreateSession(ctx, store.SessionInit{ID: sess}); err != nil {
		t.Fatal(err)
	}
	whoA, err := a.Acquire(ctx, sess, store.Owner{ID: "runtime-a"}, store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logA, err := store.NewSessionLog(ctx, a, sess, whoA)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Acquire(ctx, sess, store.Owner{ID: "runtime-b"}, store.AcquireOptions{})
	storetest.WantCode(t, err, errcode.SessBusy)
	if _, ok := errors.AsType[*store.BusyError](err); !ok {
		t.Fatalf("SESS_BUSY without the holder: %v", err)
	}

	// Runtime A: append, and checkpoint every fifth event, until fenced out.
	type result struct {
		acked   []store.Record
		cp      store.Checkpoint // A's last saved checkpoint
		lost    event.Event      // the write that found A fenced out
		lostErr error
	}
	const maxWrites = 20000
	progress := make(chan int, maxWrites)
	resA := make(chan result, 1)
	go func() {
		var r result
		defer func() { close(progress); resA <- r }()
		for i := range maxWrites {
			e := delta(fmt.Sprintf("evt-a-%05d", i), i)
			rec, err := logA.Append(ctx, e)
			if err != nil {
				r.lost, r.lostErr = e, err
				return
			}
			r.acked = append(r.acked, rec)
			progress <- len(r.acked)
			if i%5 == 4 {
				cp, err := logA.SaveCheckpoint(ctx, rec.Seq, fmt.Appendf(nil, "state after %d", rec.Seq))
				if err != nil {
					r.lost, r.lostErr = delta(fmt.Sprintf("evt-a-%05d", i+1), i+1), err
					return
				}
				r.cp = cp
			}
		}
	}()
	// Runtime B takes over once A has durable events and writes in flight.
	for n := range progress {
		if n >= 25 {
			break
		}
	}
	whoB, err := b.Acquire(ctx, sess, store.Owner{ID: "runtime-b"}, store.AcquireOptions{TakeOver: true})
	if err != nil {
		t.Fatalf("take over: %v", err)
	}
	if whoB.Epoch != whoA.Epoch+1 {
		t.Fatalf("epoch after take-over %d, want %d", whoB.Epoch, whoA.Epoch+1)
	}
	for range progress {
	}
	r := <-resA
	storetest.WantCode(t, r.lostErr, errcode.SessOwnershipLost)
	if len(r.acked) < 25 || r.cp.Revision == 0 {
		t.Fatalf("runtime A acked %d events and checkpoint revision %d before the take-over", len(r.acked), r.cp.Revision)
	}

	// Everything A retries is fenced, identical retries included.
	last := r.acked[len(r.acked)-1]
	lastEv := delta(last.ID, len(r.acked)-1)
	for i, e := range map[int]event.Event{0: delta(r.acked[0].ID, 0), len(r.acked) - 1: lastEv} {
		if body, err := event.Encode(e); err != nil || string(body) != string(r.acked[i].Body) {
			t.Fatalf("the retry of %s is not identical to the stored event (%v)", e.ID, err)
		}
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"the refused append again", func() error { _, err := logA.Append(ctx, r.lost); return err }},
		{"identical retry of the last acked append", func() error { _, err := logA.Append(ctx, lastEv); return err }},
		{"identical retry of the first append", func() error { _, err := logA.Append(ctx, delta(r.acked[0].ID, 0)); return err }},
		{"identical retry of the checkpoint", func() error {
			_, err := logA.SaveCheckpoint(ctx, r.cp.AfterSeq, r.cp.Payload)
			return err
		}},
		{"a new checkpoint", func() error { _, err := logA.SaveCheckpoint(ctx, last.Seq, []byte("late")); return err }},
		{"raw batch through the store", func() error {
			_, err := a.AppendBatch(ctx, sess, whoA, []store.EventIn{{ID: last.ID, Type: last.Type, Body: last.Body}})
			return err
		}},
		{"renew", func() error { return logA.Renew(ctx, time.Minute) }},
		{"release", func() error { return logA.Release(ctx) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.WantCode(t, tc.call(), errcode.SessOwnershipLost)
		})
	}

	// Runtime B continues where A's durable log ends.
	logB, err := store.NewSessionLog(ctx, b, sess, whoB)
	if err != nil {
		t.Fatal(err)
	}
	info, err := b.Session(ctx, sess)
	if err != nil {
		t.Fatal(err)
	}
	if info.LastSeq != last.Seq || info.Lease == nil || info.Lease.Owner != whoB {
		t.Fatalf("session after take-over: LastSeq %d lease %+v; want %d held by %+v", info.LastSeq, info.Lease, last.Seq, whoB)
	}
	var bRecs []store.Record
	for i := range 10 {
		rec, err := logB.Append(ctx, delta(fmt.Sprintf("evt-b-%05d", i), i))
		if err != nil {
			t.Fatalf("runtime B append %d: %v", i, err)
		}
		bRecs = append(bRecs, rec)
	}
	cpB, err := logB.SaveCheckpoint(ctx, bRecs[len(bRecs)-1].Seq, []byte("state of b"))
	if err != nil || cpB.Revision != r.cp.Revision+1 {
		t.Fatalf("runtime B checkpoint: %+v, %v; want revision %d", cpB, err, r.cp.Revision+1)
	}

	// The log, read through A's pool: A's acked events in order, then B's;
	// no gap, no duplicate, nothing A wrote after it was fenced.
	want := append(append([]store.Record{}, r.acked...), bRecs...)
	var got []store.Record
	for after := int64(-1); ; {
		page, err := a.ReadEvents(ctx, sess, after, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		got = append(got, page...)
		after = page[len(page)-1].Seq
	}
	if len(got) != len(want) {
		t.Fatalf("log has %d events, want %d (A acked %d, B %d)", len(got), len(want), len(r.acked), len(bRecs))
	}
	seen := map[string]bool{}
	for i, rec := range got {
		if rec.Seq != int64(i) || rec.ID != want[i].ID || rec.GlobalSeq != want[i].GlobalSeq || seen[rec.ID] {
			t.Fatalf("log entry %d: seq %d id %s global %d; want seq %d id %s global %d (seen before: %v)",
				i, rec.Seq, rec.ID, rec.GlobalSeq, i, want[i].ID, want[i].GlobalSeq, seen[rec.ID])
		}
		if i > 0 && rec.GlobalSeq <= got[i-1].GlobalSeq {
			t.Fatalf("GlobalSeq not growing at seq %d", i)
		}
		seen[rec.ID] = true
	}
	if seen[r.lost.ID] {
		t.Fatalf("the append refused to A (%s) is in the log", r.lost.ID)
	}
}

// TestLockWait holds a session's row lock from another connection: a write
// waits LockTimeout, then fails with SESS_BUSY; a write whose context ends
// first fails with SESS_CLOSED; once the lock is gone, writes go through.
func TestLockWait(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	ctx := t.Context()
	s := mustOpen(t, dsn, Options{LockTimeout: 200 * time.Millisecond})
	patient := mustOpen(t, withParam(dsn, "application_name", "harness-patient"), Options{LockTimeout: time.Hour})
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: "sess-a"}); err != nil {
		t.Fatal(err)
	}
	who, err := s.Acquire(ctx, "sess-a", storetest.Me("a"), store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conn := mustConnect(t, dsn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions WHERE id = 'sess-a' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(ctx, "sess-a", who, storetest.Note("evt-1", 1))
	storetest.WantCode(t, err, errcode.SessBusy)
	_, err = s.SaveCheckpoint(ctx, "sess-a", who, 0, -1, []byte("cp"))
	storetest.WantCode(t, err, errcode.SessBusy)

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = patient.Append(short, "sess-a", who, storetest.Note("evt-1", 1))
	storetest.WantCode(t, err, errcode.SessClosed)
	// The server was asked to cancel the statement: no backend of the
	// patient store still waits on the lock for a caller that is gone.
	var waiting int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = 'harness-patient' AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	if waiting != 0 {
		t.Fatalf("%d backends still wait on the lock after the caller's context ended", waiting)
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*Store{s, patient} {
		if _, err := st.Append(ctx, "sess-a", who, storetest.Note("evt-1", 1)); err != nil {
			t.Fatalf("append after the lock is gone: %v", err)
		}
	}
	if recs, err := s.ReadEvents(ctx, "sess-a", -1, 10); err != nil || len(recs) != 1 {
		t.Fatalf("%d events, %v; want 1", len(recs), err)
	}
}
