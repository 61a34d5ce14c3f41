package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// A server that drops the store's connections (as a restart does) is
// ridden out: the next append is tried again on a new connection and
// succeeds, once, with nothing lost or doubled. Only this test's own
// backends are terminated (by their application_name), not the server:
// other tests share it.
func TestAppendRidesOutDroppedConnections(t *testing.T) {
	t.Parallel()
	var b [6]byte
	_, _ = rand.Read(b[:])
	app := "harness-restart-" + hex.EncodeToString(b[:])
	s := mustOpen(t, withParam(freshSchema(t), "application_name", app), Options{})
	who := storetest.Held(t, s, "sess-restart", "me")
	data := `{"runId":"run-1","sessionId":"sess-restart","turnId":"turn-1","requestId":"req-1","messageId":"msg-1","sequence":%d,"delta":"w"}`
	ev := func(id string, n int) store.EventIn {
		return storetest.Event(id, "message.delta", fmt.Sprintf(data, n))
	}
	if _, err := s.Append(t.Context(), "sess-restart", who, ev("evt-1", 0)); err != nil {
		t.Fatal(err)
	}
	var killed int
	if err := server(t).QueryRow(t.Context(),
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatal("no connection of the store's to terminate")
	}
	rec, err := s.Append(t.Context(), "sess-restart", who, ev("evt-2", 1))
	if err != nil {
		t.Fatalf("append after the server dropped the connections: %v (%s)", err, errcode.Of(err))
	}
	if rec.Seq != 1 {
		t.Fatalf("seq %d, want 1", rec.Seq)
	}
	recs, err := s.ReadEvents(context.WithoutCancel(t.Context()), "sess-restart", -1, 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d events stored (%v), want 2", len(recs), err)
	}
}

// A connection dropped while its append waits inside its first round
// trip (here for a row lock another transaction holds) is ridden out as
// well: the append, tried again on a new connection once the lock is
// free, stores its event once.
func TestAppendRidesOutAConnectionDroppedMidAppend(t *testing.T) {
	t.Parallel()
	var b [6]byte
	_, _ = rand.Read(b[:])
	app := "harness-midappend-" + hex.EncodeToString(b[:])
	dsn := freshSchema(t)
	s := mustOpen(t, withParam(dsn, "application_name", app), Options{LockTimeout: time.Minute})
	who := storetest.Held(t, s, "sess-mid", "me")
	ctx := t.Context()
	blocker := mustConnect(t, dsn)
	tx, err := blocker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions WHERE id = 'sess-mid' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		rec store.Record
		err error
	}
	done := make(chan result, 1)
	go func() {
		rec, err := s.Append(ctx, "sess-mid", who, storetest.Note("evt-1", 1))
		done <- result{rec, err}
	}()
	// Wait until the append's backend waits on the lock, then drop it.
	for {
		var killed int
		if err := server(t).QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&killed); err != nil {
			t.Fatal(err)
		}
		if killed > 0 {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the append returned before it waited on the lock: %v, %v", r.rec, r.err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("append whose connection was dropped mid-append: %v (%s)", r.err, errcode.Of(r.err))
	}
	recs, err := s.ReadEvents(ctx, "sess-mid", -1, 10)
	if err != nil || len(recs) != 1 || recs[0].ID != "evt-1" || r.rec.Seq != recs[0].Seq {
		t.Fatalf("stored %v (%v), returned %v; want evt-1 once", recs, err, r.rec)
	}
}

// An unreachable server is SESS_CLOSED with a sentence that says where
// (host and port) and why (the network's cause), and never the password.
func TestOpenUnreachableSaysWhereAndWhy(t *testing.T) {
	t.Parallel()
	_, err := Open(t.Context(), "postgres://harness:s3cret-pw@127.0.0.1:1/harness?sslmode=disable&connect_timeout=5", Options{})
	if errcode.Of(err) != errcode.SessClosed {
		t.Fatalf("open: %v, want %s", err, errcode.SessClosed)
	}
	msg := errcode.Message(err)
	if !strings.Contains(msg, "127.0.0.1:1") || strings.Contains(msg, "s3cret-pw") || !strings.Contains(msg, "refused") {
		t.Fatalf("message %q: want the address and the cause, without the password", msg)
	}
}
