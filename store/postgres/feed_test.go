package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// TestFeedFollowsConcurrentAppends appends from several stores to several
// sessions at once, in single events and batches, some racing for the same
// event IDs across sessions, while a reader follows Store.Feed: it gets
// every committed event exactly once, each session's in seq order, with
// global sequence numbers unique and growing within a session; each
// contested ID lands once, and its loser gets SESS_EVENT_CONFLICT.
func TestFeedFollowsConcurrentAppends(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	ctx := t.Context()
	const writers, each = 4, 40
	stores := make([]*Store, writers)
	owners := make([]store.Owner, writers)
	for w := range writers {
		stores[w] = mustOpen(t, dsn, Options{MaxConns: 1})
		id := fmt.Sprintf("sess-%d", w)
		if _, err := stores[w].CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
			t.Fatal(err)
		}
		who, err := stores[w].Acquire(ctx, id, storetest.Me(fmt.Sprintf("writer-%d", w)), store.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		owners[w] = who
	}
	reader := mustOpen(t, dsn, Options{MaxConns: 1})

	var wg sync.WaitGroup
	conflicts := make([]int, writers)
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			sess := fmt.Sprintf("sess-%d", w)
			for i := range each {
				var err error
				switch {
				case i%2 == 0: // contested: every writer tries the same ID
					_, err = stores[w].Append(ctx, sess, owners[w], storetest.Note(fmt.Sprintf("evt-shared-%d", i), i))
				case i%5 == 1: // a batch of three
					_, err = stores[w].AppendBatch(ctx, sess, owners[w], []store.EventIn{
						storetest.Note(fmt.Sprintf("evt-%d-%d-a", w, i), i), storetest.Note(fmt.Sprintf("evt-%d-%d-b", w, i), i),
						storetest.Note(fmt.Sprintf("evt-%d-%d-c", w, i), i)})
				default:
					_, err = stores[w].Append(ctx, sess, owners[w], storetest.Note(fmt.Sprintf("evt-%d-%d", w, i), i))
				}
				switch errcode.Of(err) {
				case "":
				case errcode.SessEventConflict:
					conflicts[w]++
				default:
					errs <- err
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var (
		cur      FeedCursor
		followed []store.Record
		polls    int
	)
	follow := func() int {
		recs, next, err := reader.Feed(ctx, cur, 50)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 && next != cur {
			t.Fatalf("an empty page moved the cursor from %+v to %+v", cur, next)
		}
		followed = append(followed, recs...)
		cur = next
		polls++
		return len(recs)
	}
	for writing := true; writing; {
		select {
		case <-done:
			writing = false
		default:
			follow()
		}
	}
	close(errs)
	for err := range errs {
		t.Fatalf("append: %v", err)
	}
	var total int
	if err := reader.pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&total); err != nil {
		t.Fatal(err)
	}
	// Every writer has finished. Once no transaction as old as the last
	// writer's runs on the server (other tests' may, for a while), the feed
	// has nothing more to give: read it to the end.
	passed := func() bool {
		var ok bool
		if err := reader.pool.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot()) > max(tx) FROM events`).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for {
		if err := ctx.Err(); err != nil {
			t.Fatalf("the feed gave %d of %d events: %v", len(followed), total, err)
		}
		if p := passed(); follow() == 0 && p {
			break
		}
	}
	if len(followed) != total {
		t.Fatalf("the feed gave %d events, the table holds %d", len(followed), total)
	}

	seen := map[string]bool{}
	globals := map[int64]bool{}
	nextSeq := map[string]int64{}
	lastGlobal := map[string]int64{}
	for _, r := range followed {
		if seen[r.ID] || globals[r.GlobalSeq] {
			t.Fatalf("event %s (global %d) followed twice", r.ID, r.GlobalSeq)
		}
		seen[r.ID], globals[r.GlobalSeq] = true, true
		if r.Seq != nextSeq[r.SessionID] {
			t.Fatalf("%s: the feed gave seq %d, want %d next", r.SessionID, r.Seq, nextSeq[r.SessionID])
		}
		nextSeq[r.SessionID]++
		if r.GlobalSeq <= lastGlobal[r.SessionID] {
			t.Fatalf("%s: global seq %d after %d", r.SessionID, r.GlobalSeq, lastGlobal[r.SessionID])
		}
		lastGlobal[r.SessionID] = r.GlobalSeq
	}
	stored, lost := 0, 0
	for w := range writers {
		id := fmt.Sprintf("sess-%d", w)
		recs, err := reader.ReadEvents(ctx, id, -1, store.MaxPage)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			if r.Seq != int64(i) || !seen[r.ID] {
				t.Fatalf("%s: record %d has seq %d, followed %v", id, i, r.Seq, seen[r.ID])
			}
		}
		stored += len(recs)
		lost += conflicts[w]
	}
	contested := (each + 1) / 2
	batches := 0
	for i := range each {
		if i%2 != 0 && i%5 == 1 {
			batches++
		}
	}
	own := each - contested + 2*batches // a batch adds three events, not one
	if want := contested + writers*own; stored != want || lost != (writers-1)*contested {
		t.Fatalf("%d events stored and %d conflicts, want %d and %d", stored, lost, want, (writers-1)*contested)
	}
	t.Logf("%d polls of the feed while and after writing", polls)
}

// TestFeedPageSize refuses a page size out of range with SESS_INVALID_CURSOR.
func TestFeedPageSize(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, freshSchema(t), Options{})
	for _, limit := range []int{0, -1, store.MaxPage + 1} {
		_, _, err := s.Feed(t.Context(), FeedCursor{}, limit)
		storetest.WantCode(t, err, errcode.SessInvalidCursor)
	}
}

// TestFeedHoldsBackALaterCommit is the case a reader of global_seq alone
// gets wrong, made deterministic: append B takes its transaction ID and
// its global number, then waits (on a row another transaction C holds
// under the same event ID); append A, to another session, starts later,
// takes a larger number and commits first. While B is open, Feed lists
// neither (A's number is ahead of an event that may still commit); once B
// commits it lists B, then A — nothing ever appears behind its cursor.
func TestFeedHoldsBackALaterCommit(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	ctx := t.Context()
	s := mustOpen(t, dsn, Options{MaxConns: 4})
	owners := map[string]store.Owner{}
	for _, id := range []string{"sess-a", "sess-b", "sess-c"} {
		if _, err := s.CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
			t.Fatal(err)
		}
		who, err := s.Acquire(ctx, id, storetest.Me("writer-"+id), store.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		owners[id] = who
	}
	// C: an open transaction holding the event ID B will insert.
	c, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := c.Exec(ctx, `INSERT INTO events (global_seq, session_id, seq, event_id, type, body, stored_at)
		VALUES (nextval('event_global_seq'), 'sess-c', 0, 'evt-held', 'test.note', '\x7b7d', now())`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		rec store.Record
		err error
	}
	bDone := make(chan result, 1)
	go func() {
		rec, err := s.Append(ctx, "sess-b", owners["sess-b"], storetest.Note("evt-held", 1))
		bDone <- result{rec, err}
	}()
	// B is blocked once its insert waits for C's row lock.
	for {
		var waiting int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO events%'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case r := <-bDone:
			t.Fatalf("append B returned before it waited: %+v, %v", r.rec, r.err)
		default:
		}
	}
	a, err := s.Append(ctx, "sess-a", owners["sess-a"], storetest.Note("evt-a", 2))
	if err != nil {
		t.Fatal(err)
	}
	recs, cur, err := s.Feed(ctx, FeedCursor{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 0 {
		t.Fatalf("while B is open Feed listed %d events (first %s): A's number would pass B's", len(recs), recs[0].ID)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	b := <-bDone
	if b.err != nil {
		t.Fatal(b.err)
	}
	if b.rec.GlobalSeq >= a.GlobalSeq {
		t.Fatalf("B's number %d is not below A's %d: the case did not happen", b.rec.GlobalSeq, a.GlobalSeq)
	}
	// Both are listed once no transaction older than theirs is open on the
	// server — other tests' included, which the horizon waits for too.
	var ids []string
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	deadline := time.After(time.Minute)
	for len(ids) < 2 {
		recs, next, err := s.Feed(ctx, cur, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
		cur = next
		select {
		case <-poll.C:
		case <-deadline:
			t.Fatalf("a minute after B committed Feed had listed only %v", ids)
		}
	}
	if want := []string{"evt-held", "evt-a"}; !slices.Equal(ids, want) {
		t.Fatalf("after B committed Feed listed %v, want %v", ids, want)
	}
}

// Feed orders by transaction number, not by its text: events of
// transactions 99 and 100 (as a store's transaction numbers cross from two
// digits to three, and so on) come 99 first, and a cursor after 100 skips
// nothing. Sorted as text, "100" came before "99", and the cursor then
// passed 99's events for good.
func TestFeedOrdersByTransactionNumber(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, freshSchema(t), Options{})
	ctx := t.Context()
	storetest.Held(t, s, "sess-x", "x")
	// Written as by transactions 100 and 99 (long committed: the feed's
	// horizon has passed them), in that order of number.
	for i, tx := range []int{100, 99} {
		if _, err := s.pool.Exec(ctx, `INSERT INTO events (global_seq, session_id, seq, event_id, type, body, stored_at, tx)
			VALUES (nextval('event_global_seq'), 'sess-x', $1, $2, 'note', '{}', now(), $3::text::xid8)`, i, fmt.Sprint("evt-tx", tx), fmt.Sprint(tx)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	cur := FeedCursor{}
	for range 3 {
		recs, next, err := s.Feed(ctx, cur, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			got = append(got, r.ID)
		}
		cur = next
	}
	if want := []string{"evt-tx99", "evt-tx100"}; !slices.Equal(got, want) {
		t.Fatalf("Feed one by one listed %v, want %v", got, want)
	}
}
