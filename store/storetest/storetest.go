// Package storetest is the conformance suite of the session store port:
// every store.Store implementation runs Run and must pass all of it. It
// covers sessions and their summary, ordering and gaps, redelivery and
// conflicts, cursors and paging, checkpoint compare-and-swap and
// idempotence, leases (busy, take-over, a dead holder on this host, a holder
// on another host waited out through the injected clock) and fencing,
// identical retries included, and concurrent appends.
package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
)

// Opener returns a fresh, empty store whose clock is now. The opener
// registers the store's Close with t.Cleanup; Close must be idempotent.
type Opener func(t *testing.T, now func() time.Time) store.Store

// Start is the suite clock's first reading.
var Start = time.Date(2026, 11, 29, 20, 41, 23, 123456000, time.UTC)

// OtherHost names a host that is never this one.
const OtherHost = "other-host.invalid"

// Clock is a manual clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time // guarded by mu
}

// NewClock returns a clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Event returns an event whose body is an envelope of the given type, ID
// and raw JSON data.
func Event(id, typ, data string) store.EventIn {
	q := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	body := `{"v":1,"type":` + q(typ) + `,"eventId":` + q(id) + `,"at":"2026-11-29T20:41:23.123Z","actor":"kernel","data":` + data + `}`
	return store.EventIn{ID: id, Type: typ, Body: []byte(body)}
}

// Note returns a test.note event numbered n.
func Note(id string, n int) store.EventIn {
	return Event(id, "test.note", fmt.Sprintf(`{"n":%d}`, n))
}

// WantCode fails t unless err carries code.
func WantCode(t testing.TB, err error, code errcode.Code) {
	t.Helper()
	if got := errcode.Of(err); got != code {
		t.Fatalf("error code = %q, want %q (err: %v)", got, code, err)
	}
}

// Me is an owner for this process on this host.
func Me(id string) store.Owner { return store.Owner{ID: id, PID: os.Getpid()} }

// Held creates session id in s and acquires it for Me(owner).
func Held(t testing.TB, s store.Store, id, owner string) store.Owner {
	t.Helper()
	if _, err := s.CreateSession(t.Context(), store.SessionInit{ID: id}); err != nil {
		t.Fatal(err)
	}
	who, err := s.Acquire(t.Context(), id, Me(owner), store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return who
}

type env struct {
	t     *testing.T
	s     store.Store
	clock *Clock
	host  string
}

func setup(t *testing.T, open Opener) *env {
	t.Helper()
	c := NewClock(Start)
	return &env{t: t, s: open(t, c.Now), clock: c, host: store.HostID()}
}

func (e *env) create(id string) store.Session {
	e.t.Helper()
	s, err := e.s.CreateSession(e.t.Context(), store.SessionInit{ID: id})
	if err != nil {
		e.t.Fatalf("create session %s: %v", id, err)
	}
	return s
}

func (e *env) acquire(id string, who store.Owner) store.Owner {
	e.t.Helper()
	o, err := e.s.Acquire(e.t.Context(), id, who, store.AcquireOptions{})
	if err != nil {
		e.t.Fatalf("acquire %s as %s: %v", id, who.ID, err)
	}
	return o
}

// owned creates a session and acquires it for a local owner.
func (e *env) owned(id string) store.Owner {
	e.t.Helper()
	e.create(id)
	return e.acquire(id, Me("owner-"+id))
}

func (e *env) append(id string, who store.Owner, ev store.EventIn) store.Record {
	e.t.Helper()
	r, err := e.s.Append(e.t.Context(), id, who, ev)
	if err != nil {
		e.t.Fatalf("append %s to %s: %v", ev.ID, id, err)
	}
	return r
}

func (e *env) session(id string) store.Session {
	e.t.Helper()
	s, err := e.s.Session(e.t.Context(), id)
	if err != nil {
		e.t.Fatalf("session %s: %v", id, err)
	}
	return s
}

func (e *env) readAll(id string) []store.Record {
	e.t.Helper()
	var out []store.Record
	after := int64(-1)
	for {
		page, err := e.s.ReadEvents(e.t.Context(), id, after, 1000)
		if err != nil {
			e.t.Fatalf("read events of %s after %d: %v", id, after, err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].Seq
	}
}

// Run runs the whole suite against the stores open returns.
func Run(t *testing.T, open Opener) {
	t.Run("Sessions", func(t *testing.T) { testSessions(t, open) })
	t.Run("Summary", func(t *testing.T) { testSummary(t, open) })
	t.Run("Ordering", func(t *testing.T) { testOrdering(t, open) })
	t.Run("Redelivery", func(t *testing.T) { testRedelivery(t, open) })
	t.Run("InvalidEvents", func(t *testing.T) { testInvalidEvents(t, open) })
	t.Run("Batch", func(t *testing.T) { testBatch(t, open) })
	t.Run("Start", func(t *testing.T) { testStart(t, open) })
	t.Run("RemoveEmpty", func(t *testing.T) { testRemoveEmpty(t, open) })
	t.Run("Cursors", func(t *testing.T) { testCursors(t, open) })
	t.Run("Copies", func(t *testing.T) { testCopies(t, open) })
	t.Run("Checkpoint", func(t *testing.T) { testCheckpoint(t, open) })
	t.Run("CheckpointAppend", func(t *testing.T) { testCheckpointAppend(t, open) })
	t.Run("Fencing", func(t *testing.T) { testFencing(t, open) })
	t.Run("Lease", func(t *testing.T) { testLease(t, open) })
	t.Run("DeadHolder", func(t *testing.T) { testDeadHolder(t, open) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, open) })
	t.Run("Paging10k", func(t *testing.T) { testPaging(t, open) })
	t.Run("Closed", func(t *testing.T) { testClosed(t, open) })
}

func testSessions(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	created := Start.Add(-time.Hour)
	got, err := e.s.CreateSession(ctx, store.SessionInit{
		ID: "sess-a", Title: "  first\nsecond", Metadata: map[string]string{"model": "m1", "root": "/src"}, CreatedAt: created,
	})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	want := store.Session{
		ID: "sess-a", Title: "first", Metadata: map[string]string{"model": "m1", "root": "/src"},
		CreatedAt: created, UpdatedAt: created, Status: store.StatusIdle, LastSeq: -1,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("created session (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, e.session("sess-a")); d != "" {
		t.Fatalf("read session (-want +got):\n%s", d)
	}

	t.Run("identical create is idempotent", func(t *testing.T) {
		again, err := e.s.CreateSession(ctx, store.SessionInit{ID: "sess-a", Title: "first", Metadata: map[string]string{"model": "m1", "root": "/src"}})
		if err != nil {
			t.Fatalf("create again: %v", err)
		}
		if d := cmp.Diff(want, again); d != "" {
			t.Fatalf("(-want +got):\n%s", d)
		}
	})
	t.Run("generated id", func(t *testing.T) {
		s, err := e.s.CreateSession(ctx, store.SessionInit{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if !strings.HasPrefix(s.ID, "sess-") || !s.CreatedAt.Equal(Start) || s.Metadata == nil {
			t.Fatalf("generated session = %+v, want a sess- ID created now with empty metadata", s)
		}
	})
	for _, tc := range []struct {
		name string
		init store.SessionInit
		code errcode.Code
	}{
		{"same id other title", store.SessionInit{ID: "sess-a", Title: "other", Metadata: map[string]string{"model": "m1", "root": "/src"}}, errcode.SessEventConflict},
		{"same id other metadata", store.SessionInit{ID: "sess-a", Title: "first"}, errcode.SessEventConflict},
		{"id with space", store.SessionInit{ID: "sess a"}, errcode.SessInvalidRecord},
		{"id too long", store.SessionInit{ID: strings.Repeat("s", store.MaxIDBytes+1)}, errcode.SessInvalidRecord},
		{"empty metadata key", store.SessionInit{ID: "sess-b", Metadata: map[string]string{"": "x"}}, errcode.SessInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.CreateSession(ctx, tc.init)
			WantCode(t, err, tc.code)
		})
	}
	t.Run("not found", func(t *testing.T) {
		_, err := e.s.Session(ctx, "sess-missing")
		WantCode(t, err, errcode.SessNotFound)
		WantCode(t, e.s.SetTitle(ctx, "sess-missing", "x"), errcode.SessNotFound)
	})
	t.Run("title", func(t *testing.T) {
		e.clock.Advance(time.Second)
		if err := e.s.SetTitle(ctx, "sess-a", "renamed\nignored"); err != nil {
			t.Fatalf("set title: %v", err)
		}
		s := e.session("sess-a")
		if s.Title != "renamed" || !s.UpdatedAt.Equal(e.clock.Now()) {
			t.Fatalf("after SetTitle: title %q updated %v", s.Title, s.UpdatedAt)
		}
	})
	t.Run("metadata", func(t *testing.T) {
		who := Me("meta-owner")
		err := e.s.SetMetadata(ctx, "sess-a", who, map[string]string{"x": "1"})
		WantCode(t, err, errcode.SessOwnershipLost)
		who = e.acquire("sess-a", who)
		if err := e.s.SetMetadata(ctx, "sess-a", who, map[string]string{"model": "m2", "root": "", "image": "img"}); err != nil {
			t.Fatalf("set metadata: %v", err)
		}
		if d := cmp.Diff(map[string]string{"model": "m2", "image": "img"}, e.session("sess-a").Metadata); d != "" {
			t.Fatalf("metadata (-want +got):\n%s", d)
		}
		WantCode(t, e.s.SetMetadata(ctx, "sess-a", who, map[string]string{"": "v"}), errcode.SessInvalidRecord)
		if err := e.s.Release(ctx, "sess-a", who); err != nil {
			t.Fatalf("release: %v", err)
		}
	})
	t.Run("list", func(t *testing.T) {
		e := setup(t, open)
		for _, id := range []string{"sess-1", "sess-2", "sess-3"} {
			e.clock.Advance(time.Second)
			e.create(id)
		}
		e.clock.Advance(time.Second)
		who := e.acquire("sess-1", Me("lister"))
		e.append("sess-1", who, Note("evt-1", 1))
		list, err := e.s.ListSessions(ctx, store.ListCursor{}, 10)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		var ids []string
		for _, s := range list {
			ids = append(ids, s.ID)
		}
		if d := cmp.Diff([]string{"sess-1", "sess-3", "sess-2"}, ids); d != "" {
			t.Fatalf("list order (-want +got):\n%s", d)
		}
		if list[0].LastSeq != 0 || list[0].Lease == nil || list[0].Lease.Owner.ID != "lister" {
			t.Fatalf("listed session = %+v, want LastSeq 0 held by lister", list[0])
		}
		// A listed row reads as the session itself, lease and all (the
		// listing reads the lease's columns in a form of its own).
		for _, s := range list {
			one, err := e.s.Session(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(one, s); d != "" {
				t.Errorf("listed %s differs from Session's (-session +listed):\n%s", s.ID, d)
			}
		}
		two, err := e.s.ListSessions(ctx, store.ListCursor{}, 2)
		if err != nil || len(two) != 2 {
			t.Fatalf("list 2: %d sessions, %v", len(two), err)
		}
		for _, bad := range []int{0, -1, store.MaxPage + 1} {
			_, err := e.s.ListSessions(ctx, store.ListCursor{}, bad)
			WantCode(t, err, errcode.SessInvalidCursor)
		}
		// Two more sessions updated at the instant of sess-1's append (a
		// tie of three, ordered by ID); page by page, the listing is the
		// whole list.
		e.create("sess-3a")
		e.create("sess-3b")
		all, err := e.s.ListSessions(ctx, store.ListCursor{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 2, 4} {
			var paged []string
			cur := store.ListCursor{}
			for {
				page, err := e.s.ListSessions(ctx, cur, size)
				if err != nil {
					t.Fatalf("page of %d after %+v: %v", size, cur, err)
				}
				for _, s := range page {
					paged = append(paged, s.ID)
				}
				if len(page) < size {
					break
				}
				cur = store.PageAfter(page[len(page)-1])
			}
			var want []string
			for _, s := range all {
				want = append(want, s.ID)
			}
			if d := cmp.Diff(want, paged); d != "" {
				t.Fatalf("pages of %d (-whole list +pages):\n%s", size, d)
			}
		}
	})
}

func testSummary(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	who := e.owned("sess-s")
	long := strings.Repeat("é", 100)
	steps := []struct {
		ev     store.EventIn
		title  string
		turns  int
		tokens int64
		status string
	}{
		{Event("evt-1", "agent.started", `{"agentId":"a"}`), "", 0, 0, store.StatusIdle},
		{Event("evt-2", "turn.started", `{"turnId":"t1"}`), "", 0, 0, store.StatusRunning},
		{Event("evt-3", "message.completed", `{"role":"assistant","content":"not a title"}`), "", 0, 0, store.StatusRunning},
		{Event("evt-4", "message.completed", `{"role":"user","content":"\n  Fix the flaky test  \nin store"}`), "Fix the flaky test", 0, 0, store.StatusRunning},
		{Event("evt-5", "message.completed", `{"role":"user","content":"second request"}`), "Fix the flaky test", 0, 0, store.StatusRunning},
		{Event("evt-6", "turn.completed", `{"status":"completed","usage":{"promptTokens":30,"completionTokens":12,"totalTokens":42}}`), "Fix the flaky test", 1, 42, store.StatusCompleted},
		{Event("evt-7", "turn.started", `{"turnId":"t2"}`), "Fix the flaky test", 1, 42, store.StatusRunning},
		{Event("evt-8", "turn.completed", `{"status":"budget_exceeded","usage":{"totalTokens":8}}`), "Fix the flaky test", 2, 50, store.StatusBudgetExceeded},
	}
	for i, st := range steps {
		e.clock.Advance(time.Second)
		e.append("sess-s", who, st.ev)
		s := e.session("sess-s")
		got := []any{s.Title, s.Turns, s.Tokens, s.Status, s.LastSeq, s.UpdatedAt}
		want := []any{st.title, st.turns, st.tokens, st.status, int64(i), e.clock.Now()}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("after %s (-want +got):\n%s", st.ev.ID, d)
		}
	}

	t.Run("long title is cut", func(t *testing.T) {
		who := e.owned("sess-long")
		e.append("sess-long", who, Event("evt-l", "message.completed", fmt.Sprintf(`{"role":"user","content":%q}`, long)))
		title := e.session("sess-long").Title
		if n := len([]rune(title)); n != store.MaxTitleChars || !strings.HasSuffix(title, "…") {
			t.Fatalf("title %q has %d chars, want %d ending in …", title, n, store.MaxTitleChars)
		}
	})
	t.Run("set title is kept", func(t *testing.T) {
		e.create("sess-named")
		if err := e.s.SetTitle(ctx, "sess-named", "my name"); err != nil {
			t.Fatal(err)
		}
		who := e.acquire("sess-named", Me("named"))
		e.append("sess-named", who, Event("evt-n", "message.completed", `{"role":"user","content":"hello"}`))
		if got := e.session("sess-named").Title; got != "my name" {
			t.Fatalf("title = %q, want my name", got)
		}
	})
	t.Run("malformed summary data", func(t *testing.T) {
		for _, ev := range []store.EventIn{
			Event("evt-bad1", "turn.completed", `{"usage":{"totalTokens":1}}`),
			Event("evt-bad2", "turn.completed", `{"status":"completed","usage":{"totalTokens":"many"}}`),
			Event("evt-bad3", "turn.completed", `{"status":"completed","usage":{"totalTokens":-1}}`),
			Event("evt-bad4", "message.completed", `[1]`),
		} {
			_, err := e.s.Append(ctx, "sess-s", who, ev)
			WantCode(t, err, errcode.SessInvalidRecord)
		}
		if s := e.session("sess-s"); s.LastSeq != int64(len(steps)-1) {
			t.Fatalf("LastSeq = %d after refused events, want %d", s.LastSeq, len(steps)-1)
		}
	})
}

func testOrdering(t *testing.T, open Opener) {
	e := setup(t, open)
	a, b := e.owned("sess-a"), e.owned("sess-b")
	var last int64
	for i := range 6 {
		id, who := "sess-a", a
		if i%2 == 1 {
			id, who = "sess-b", b
		}
		e.clock.Advance(time.Millisecond)
		ev := Note(fmt.Sprintf("evt-%d", i), i)
		r := e.append(id, who, ev)
		want := store.Record{SessionID: id, Seq: int64(i / 2), GlobalSeq: r.GlobalSeq, ID: ev.ID, Type: ev.Type, Body: ev.Body, StoredAt: e.clock.Now()}
		if d := cmp.Diff(want, r); d != "" {
			t.Fatalf("record %d (-want +got):\n%s", i, d)
		}
		if r.GlobalSeq <= last {
			t.Fatalf("GlobalSeq %d after %d, want growing", r.GlobalSeq, last)
		}
		last = r.GlobalSeq
	}
	for _, id := range []string{"sess-a", "sess-b"} {
		recs := e.readAll(id)
		for i, r := range recs {
			if r.Seq != int64(i) || r.SessionID != id {
				t.Fatalf("%s record %d has seq %d session %s", id, i, r.Seq, r.SessionID)
			}
			if i > 0 && r.GlobalSeq <= recs[i-1].GlobalSeq {
				t.Fatalf("%s GlobalSeq not growing at seq %d", id, i)
			}
		}
		if len(recs) != 3 || e.session(id).LastSeq != 2 {
			t.Fatalf("%s: %d records, LastSeq %d; want 3 and 2", id, len(recs), e.session(id).LastSeq)
		}
	}
	t.Run("large body round-trips", func(t *testing.T) {
		big := Event("evt-big", "test.blob", `{"b":"`+strings.Repeat("x", 1<<20)+`"}`)
		r := e.append("sess-a", a, big)
		recs, err := e.s.ReadEvents(t.Context(), "sess-a", r.Seq-1, 1)
		if err != nil || len(recs) != 1 || !bytes.Equal(recs[0].Body, big.Body) {
			t.Fatalf("read back 1 MiB body: %d records, err %v", len(recs), err)
		}
	})
}

func testRedelivery(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	a, b := e.owned("sess-a"), e.owned("sess-b")
	first := e.append("sess-a", a, Note("evt-1", 1))
	e.append("sess-a", a, Note("evt-2", 2))
	e.clock.Advance(time.Minute)
	again := e.append("sess-a", a, Note("evt-1", 1))
	if d := cmp.Diff(first, again); d != "" {
		t.Fatalf("redelivered record differs (-first +again):\n%s", d)
	}
	if s := e.session("sess-a"); s.LastSeq != 1 || !s.UpdatedAt.Equal(Start) {
		t.Fatalf("redelivery changed the session: LastSeq %d updated %v", s.LastSeq, s.UpdatedAt)
	}
	for _, tc := range []struct {
		name    string
		session string
		who     store.Owner
		ev      store.EventIn
	}{
		{"other bytes", "sess-a", a, Note("evt-1", 99)},
		{"other type", "sess-a", a, Event("evt-1", "test.other", `{"n":1}`)},
		{"other session", "sess-b", b, Note("evt-1", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.Append(ctx, tc.session, tc.who, tc.ev)
			WantCode(t, err, errcode.SessEventConflict)
		})
	}
	if n := len(e.readAll("sess-a")) + len(e.readAll("sess-b")); n != 2 {
		t.Fatalf("%d events stored, want 2", n)
	}
	t.Run("batch redelivery", func(t *testing.T) {
		recs, err := e.s.AppendBatch(ctx, "sess-a", a, []store.EventIn{Note("evt-2", 2), Note("evt-3", 3), Note("evt-3", 3)})
		if err != nil {
			t.Fatalf("batch: %v", err)
		}
		got := []int64{recs[0].Seq, recs[1].Seq, recs[2].Seq}
		if d := cmp.Diff([]int64{1, 2, 2}, got); d != "" {
			t.Fatalf("batch seqs (-want +got):\n%s", d)
		}
		_, err = e.s.AppendBatch(ctx, "sess-a", a, []store.EventIn{Note("evt-4", 4), Note("evt-4", 5)})
		WantCode(t, err, errcode.SessEventConflict)
		if s := e.session("sess-a"); s.LastSeq != 2 {
			t.Fatalf("LastSeq %d after a refused batch, want 2", s.LastSeq)
		}
	})
}

func testInvalidEvents(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	who := e.owned("sess-a")
	good := Note("evt-1", 1)
	huge := Event("evt-huge", "test.blob", `{"b":"`+strings.Repeat("x", store.MaxBodyBytes)+`"}`)
	for _, tc := range []struct {
		name string
		ev   store.EventIn
	}{
		{"empty id", store.EventIn{Type: good.Type, Body: good.Body}},
		{"id with space", Note("evt 1", 1)},
		{"empty type", store.EventIn{ID: good.ID, Body: good.Body}},
		{"empty body", store.EventIn{ID: good.ID, Type: good.Type}},
		{"not json", store.EventIn{ID: good.ID, Type: good.Type, Body: []byte("{not json")}},
		{"json array", store.EventIn{ID: good.ID, Type: good.Type, Body: []byte(`[1,2]`)}},
		{"trailing garbage", store.EventIn{ID: good.ID, Type: good.Type, Body: append(bytes.Clone(good.Body), "x"...)}},
		{"id differs from body", store.EventIn{ID: "evt-other", Type: good.Type, Body: good.Body}},
		{"type differs from body", store.EventIn{ID: good.ID, Type: "test.other", Body: good.Body}},
		{"body over 16 MiB", huge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.Append(ctx, "sess-a", who, tc.ev)
			WantCode(t, err, errcode.SessInvalidRecord)
		})
	}
	t.Run("unknown session", func(t *testing.T) {
		_, err := e.s.Append(ctx, "sess-missing", who, good)
		WantCode(t, err, errcode.SessNotFound)
	})
	if s := e.session("sess-a"); s.LastSeq != -1 {
		t.Fatalf("LastSeq = %d after refused events, want -1", s.LastSeq)
	}
}

func testBatch(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	who := e.owned("sess-a")
	e.append("sess-a", who, Note("evt-0", 0))
	evs := []store.EventIn{Note("evt-1", 1), Event("evt-2", "turn.started", `{}`), Note("evt-3", 3)}
	e.clock.Advance(time.Second)
	recs, err := e.s.AppendBatch(ctx, "sess-a", who, evs)
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) || r.ID != evs[i].ID || !r.StoredAt.Equal(e.clock.Now()) {
			t.Fatalf("batch record %d = seq %d id %s at %v", i, r.Seq, r.ID, r.StoredAt)
		}
	}
	if s := e.session("sess-a"); s.LastSeq != 3 || s.Status != store.StatusRunning {
		t.Fatalf("after batch: LastSeq %d status %s", s.LastSeq, s.Status)
	}
	t.Run("one transaction", func(t *testing.T) {
		bad := []store.EventIn{Note("evt-4", 4), Note("evt-5", 5), {ID: "evt-6", Type: "test.note", Body: []byte("nope")}}
		_, err := e.s.AppendBatch(ctx, "sess-a", who, bad)
		WantCode(t, err, errcode.SessInvalidRecord)
		conflict := []store.EventIn{Note("evt-4", 4), Note("evt-1", 100)}
		_, err = e.s.AppendBatch(ctx, "sess-a", who, conflict)
		WantCode(t, err, errcode.SessEventConflict)
		if got := len(e.readAll("sess-a")); got != 4 {
			t.Fatalf("%d events after refused batches, want 4", got)
		}
	})
	t.Run("empty batch", func(t *testing.T) {
		recs, err := e.s.AppendBatch(ctx, "sess-a", who, nil)
		if err != nil || len(recs) != 0 {
			t.Fatalf("empty batch: %d records, %v", len(recs), err)
		}
	})
	t.Run("too many", func(t *testing.T) {
		_, err := e.s.AppendBatch(ctx, "sess-a", who, make([]store.EventIn, store.MaxBatch+1))
		WantCode(t, err, errcode.SessInvalidRecord)
	})
}

// ids lists the IDs of every session of e's store.
func (e *env) ids() []string {
	e.t.Helper()
	list, err := e.s.ListSessions(e.t.Context(), store.ListCursor{}, store.MaxPage)
	if err != nil {
		e.t.Fatalf("list sessions: %v", err)
	}
	var out []string
	for _, s := range list {
		out = append(out, s.ID)
	}
	return out
}

func testStart(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	init := store.SessionInit{ID: "sess-a", Metadata: map[string]string{"root": "/p"}}
	who, recs, err := e.s.StartSession(ctx, init, Me("starter"), []store.EventIn{Note("evt-a0", 0), Event("evt-a1", "turn.started", `{}`)})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if who.Epoch != 1 || who.Host != e.host || len(recs) != 2 || recs[0].Seq != 0 || recs[1].Seq != 1 || recs[1].SessionID != "sess-a" {
		t.Fatalf("start returned %+v, %+v", who, recs)
	}
	s := e.session("sess-a")
	if s.LastSeq != 1 || s.Status != store.StatusRunning || s.Lease == nil || s.Lease.Owner.ID != "starter" || s.Metadata["root"] != "/p" ||
		!s.Lease.ExpiresAt.Equal(e.clock.Now().Add(store.DefaultLease)) {
		t.Fatalf("started session = %+v", s)
	}
	e.append("sess-a", who, Note("evt-a2", 2)) // the returned owner holds it
	_, err = e.s.Acquire(ctx, "sess-a", Me("other"), store.AcquireOptions{})
	WantCode(t, err, errcode.SessBusy)

	for _, tc := range []struct {
		name  string
		id    string
		first []store.EventIn
		code  errcode.Code
	}{
		{"no event", "sess-b", nil, errcode.SessInvalidRecord},
		{"bad event", "sess-b", []store.EventIn{{ID: "evt-b0", Type: "test.note", Body: []byte("nope")}}, errcode.SessInvalidRecord},
		{"bad id", "bad id", []store.EventIn{Note("evt-b0", 0)}, errcode.SessInvalidRecord},
		{"existing session", "sess-a", []store.EventIn{Note("evt-b0", 0)}, errcode.SessEventConflict},
		// The conflict is found inside the transaction, after the session's
		// row is written: the row goes with it.
		{"event of another session", "sess-b", []store.EventIn{Note("evt-b0", 0), Note("evt-a1", 1)}, errcode.SessEventConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := e.s.StartSession(ctx, store.SessionInit{ID: tc.id}, Me("starter"), tc.first)
			WantCode(t, err, tc.code)
			if got := e.ids(); len(got) != 1 || got[0] != "sess-a" {
				t.Fatalf("sessions after a refused start: %v", got)
			}
			if got := len(e.readAll("sess-a")); got != 3 {
				t.Fatalf("sess-a has %d events after a refused start, want 3", got)
			}
		})
	}
	t.Run("generated id", func(t *testing.T) {
		_, recs, err := e.s.StartSession(ctx, store.SessionInit{}, Me("starter"), []store.EventIn{Note("evt-c0", 0)})
		if err != nil || !strings.HasPrefix(recs[0].SessionID, "sess-") {
			t.Fatalf("start without an id: %+v, %v", recs, err)
		}
	})
}

func testRemoveEmpty(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	e.create("sess-free")                           // no lease, no event: an orphan
	e.acquire(e.create("sess-held").ID, Me("live")) // held by this live process
	withEvent := e.owned("sess-full")
	e.append("sess-full", withEvent, Note("evt-0", 0))
	if err := e.s.Release(ctx, "sess-full", withEvent); err != nil {
		t.Fatal(err)
	}
	pid, stop := startHolder(t)
	e.create("sess-dead")
	if _, err := e.s.Acquire(ctx, "sess-dead", store.Owner{ID: "crashing", PID: pid}, store.AcquireOptions{LeaseFor: time.Hour}); err != nil {
		t.Fatal(err)
	}
	stop()

	// Only sessions created before the given time go.
	gone, err := e.s.RemoveEmpty(ctx, e.clock.Now())
	if err != nil || len(gone) != 0 {
		t.Fatalf("remove empty sessions created before now: %v, %v", gone, err)
	}
	e.clock.Advance(time.Second)
	gone, err = e.s.RemoveEmpty(ctx, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"sess-dead", "sess-free"}, gone); diff != "" {
		t.Fatalf("removed (-want +got):\n%s", diff)
	}
	left := e.ids()
	slices.Sort(left)
	if diff := cmp.Diff([]string{"sess-full", "sess-held"}, left); diff != "" {
		t.Fatalf("left (-want +got):\n%s", diff)
	}
	_, err = e.s.Session(ctx, "sess-free")
	WantCode(t, err, errcode.SessNotFound)
	// A lease that expires frees the empty session it held.
	e.clock.Advance(store.DefaultLease)
	if gone, err := e.s.RemoveEmpty(ctx, e.clock.Now()); err != nil || len(gone) != 1 || gone[0] != "sess-held" {
		t.Fatalf("after the lease expired: %v, %v", gone, err)
	}
	// The ID can be used again.
	if _, _, err := e.s.StartSession(ctx, store.SessionInit{ID: "sess-free"}, Me("again"), []store.EventIn{Note("evt-1", 1)}); err != nil {
		t.Fatalf("start a removed session's ID again: %v", err)
	}
}

func testCursors(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	who := e.owned("sess-a")
	e.create("sess-empty")
	for i := range 5 {
		e.append("sess-a", who, Note(fmt.Sprintf("evt-%d", i), i))
	}
	for _, tc := range []struct {
		name     string
		session  string
		after    int64
		limit    int
		wantSeqs []int64
		code     errcode.Code
	}{
		{"from start", "sess-a", -1, 10, []int64{0, 1, 2, 3, 4}, ""},
		{"page", "sess-a", 0, 2, []int64{1, 2}, ""},
		{"last page", "sess-a", 3, 10, []int64{4}, ""},
		{"at end", "sess-a", 4, 10, []int64{}, ""},
		{"past end", "sess-a", 100, 10, []int64{}, ""},
		{"max page", "sess-a", -1, store.MaxPage, []int64{0, 1, 2, 3, 4}, ""},
		{"empty session", "sess-empty", -1, 10, []int64{}, ""},
		{"cursor below -1", "sess-a", -2, 10, nil, errcode.SessInvalidCursor},
		{"zero limit", "sess-a", -1, 0, nil, errcode.SessInvalidCursor},
		{"negative limit", "sess-a", -1, -5, nil, errcode.SessInvalidCursor},
		{"limit too big", "sess-a", -1, store.MaxPage + 1, nil, errcode.SessInvalidCursor},
		{"unknown session", "sess-missing", -1, 10, nil, errcode.SessNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := e.s.ReadEvents(ctx, tc.session, tc.after, tc.limit)
			if tc.code != "" {
				WantCode(t, err, tc.code)
				return
			}
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			seqs := []int64{}
			for _, r := range recs {
				seqs = append(seqs, r.Seq)
			}
			if d := cmp.Diff(tc.wantSeqs, seqs); d != "" {
				t.Fatalf("seqs (-want +got):\n%s", d)
			}
		})
	}
}

func testCopies(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	who := e.owned("sess-a")
	ev := Note("evt-1", 1)
	want := bytes.Clone(ev.Body)
	r := e.append("sess-a", who, ev)
	ev.Body[len(ev.Body)-2] = 'X'
	r.Body[0] = 'X'
	recs, err := e.s.ReadEvents(ctx, "sess-a", -1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(recs[0].Body, want) {
		t.Fatalf("stored body changed through a caller's slice: %s", recs[0].Body)
	}
	payload := []byte("payload")
	cp, err := e.s.SaveCheckpoint(ctx, "sess-a", who, 0, 0, payload)
	if err != nil {
		t.Fatal(err)
	}
	payload[0], cp.Payload[0] = 'X', 'X'
	got, err := e.s.LoadCheckpoint(ctx, "sess-a")
	if err != nil || string(got.Payload) != "payload" {
		t.Fatalf("stored payload changed through a caller's slice: %q, %v", got.Payload, err)
	}
	md := map[string]string{"k": "v"}
	s, err := e.s.CreateSession(ctx, store.SessionInit{ID: "sess-md", Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	md["k"], s.Metadata["k"] = "changed", "changed"
	if got := e.session("sess-md").Metadata["k"]; got != "v" {
		t.Fatalf("stored metadata changed through a caller's map: %q", got)
	}
}

func testCheckpoint(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	who := e.owned("sess-a")
	_, err := e.s.LoadCheckpoint(ctx, "sess-a")
	WantCode(t, err, errcode.SessNotFound)
	_, err = e.s.LoadCheckpoint(ctx, "sess-missing")
	WantCode(t, err, errcode.SessNotFound)

	cp1, err := e.s.SaveCheckpoint(ctx, "sess-a", who, 0, -1, []byte("p1"))
	if err != nil {
		t.Fatalf("first save: %v", err)
	}
	want := store.Checkpoint{SessionID: "sess-a", Revision: 1, AfterSeq: -1, Payload: []byte("p1"), SavedAt: Start}
	if d := cmp.Diff(want, cp1); d != "" {
		t.Fatalf("first checkpoint (-want +got):\n%s", d)
	}
	for i := range 3 {
		e.append("sess-a", who, Note(fmt.Sprintf("evt-%d", i), i))
	}
	e.clock.Advance(time.Second)
	retry, err := e.s.SaveCheckpoint(ctx, "sess-a", who, 0, -1, []byte("p1"))
	if err != nil {
		t.Fatalf("identical retry: %v", err)
	}
	if d := cmp.Diff(cp1, retry); d != "" {
		t.Fatalf("identical retry (-want +got):\n%s", d)
	}
	cp2, err := e.s.SaveCheckpoint(ctx, "sess-a", who, 1, 1, []byte("p2"))
	if err != nil || cp2.Revision != 2 || cp2.AfterSeq != 1 || !cp2.SavedAt.Equal(e.clock.Now()) {
		t.Fatalf("second save: %+v, %v", cp2, err)
	}
	for _, tc := range []struct {
		name     string
		expected int64
		after    int64
		payload  []byte
		code     errcode.Code
	}{
		{"stale revision", 1, 2, []byte("p3"), errcode.SessCheckpointConflict},
		{"old identical is stale", 0, -1, []byte("p1"), errcode.SessCheckpointConflict},
		{"future revision", 5, 2, []byte("p3"), errcode.SessCheckpointConflict},
		{"cursor backwards", 2, 0, []byte("p3"), errcode.SessCheckpointConflict},
		{"cursor past last event", 2, 3, []byte("p3"), errcode.SessInvalidRecord},
		{"cursor below -1", 2, -2, []byte("p3"), errcode.SessInvalidCursor},
		{"negative revision", -1, 2, []byte("p3"), errcode.SessInvalidRecord},
		{"empty payload", 2, 2, nil, errcode.SessInvalidRecord},
		{"payload over 16 MiB", 2, 2, make([]byte, store.MaxPayloadBytes+1), errcode.SessInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.SaveCheckpoint(ctx, "sess-a", who, tc.expected, tc.after, tc.payload)
			WantCode(t, err, tc.code)
		})
	}
	cp3, err := e.s.SaveCheckpoint(ctx, "sess-a", who, 2, 1, []byte("p3 same cursor"))
	if err != nil || cp3.Revision != 3 {
		t.Fatalf("save at the same cursor: %+v, %v", cp3, err)
	}
	cp4, err := e.s.SaveCheckpoint(ctx, "sess-a", who, 3, 2, []byte("p4"))
	if err != nil {
		t.Fatalf("save at the last event: %v", err)
	}
	got, err := e.s.LoadCheckpoint(ctx, "sess-a")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(cp4, got); d != "" {
		t.Fatalf("loaded checkpoint (-want +got):\n%s", d)
	}
	_, err = e.s.SaveCheckpoint(ctx, "sess-missing", who, 0, -1, []byte("x"))
	WantCode(t, err, errcode.SessNotFound)
}

// testCheckpointAppend: an append save is SaveCheckpoint of the kept
// prefix followed by the tail, under the same CAS, cursor and fencing
// rules, whatever the pieces earlier saves left.
func testCheckpointAppend(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	who := e.owned("sess-a")
	for i := range 4 {
		e.append("sess-a", who, Note(fmt.Sprintf("evt-%d", i), i))
	}
	load := func(want string, rev int64) {
		t.Helper()
		got, err := e.s.LoadCheckpoint(ctx, "sess-a")
		if err != nil || string(got.Payload) != want || got.Revision != rev {
			t.Fatalf("loaded %q at revision %d, %v; want %q at %d", got.Payload, got.Revision, err, want, rev)
		}
	}
	_, err := e.s.AppendCheckpoint(ctx, "sess-a", who, 0, -1, 1, []byte("x"))
	WantCode(t, err, errcode.SessInvalidRecord) // nothing to keep yet
	cp1, err := e.s.AppendCheckpoint(ctx, "sess-a", who, 0, 0, 0, []byte("m1\nhead1"))
	if err != nil || cp1.Revision != 1 || cp1.AfterSeq != 0 || cp1.Payload != nil || !cp1.SavedAt.Equal(e.clock.Now()) {
		t.Fatalf("first append: %+v, %v", cp1, err)
	}
	load("m1\nhead1", 1)
	e.clock.Advance(time.Second)
	retry, err := e.s.AppendCheckpoint(ctx, "sess-a", who, 0, 0, 0, []byte("m1\nhead1"))
	if err != nil || cmp.Diff(cp1, retry) != "" {
		t.Fatalf("identical retry: %+v, %v; want %+v", retry, err, cp1)
	}
	// Cut inside the first piece, then at a piece's end, then inside a
	// later one, then keep everything.
	steps := []struct {
		after, keep int64
		tail, want  string
	}{
		{1, 3, "m2\nhead2", "m1\nm2\nhead2"},
		{1, 6, "m3\nhead3", "m1\nm2\nm3\nhead3"},
		{2, 4, "M\nhead4", "m1\nmM\nhead4"},
		{3, 11, "!", "m1\nmM\nhead4!"},
		{3, 0, "whole", "whole"},
	}
	for i, st := range steps {
		rev := int64(i + 2)
		cp, err := e.s.AppendCheckpoint(ctx, "sess-a", who, rev-1, st.after, st.keep, []byte(st.tail))
		if err != nil || cp.Revision != rev || cp.AfterSeq != st.after {
			t.Fatalf("append %d: %+v, %v", i, cp, err)
		}
		load(st.want, rev)
	}
	// A whole save after appends replaces every piece; an append after it
	// cuts that save's payload.
	if _, err := e.s.SaveCheckpoint(ctx, "sess-a", who, 6, 3, []byte("abcdef")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.AppendCheckpoint(ctx, "sess-a", who, 7, 3, 2, []byte("XY")); err != nil {
		t.Fatal(err)
	}
	load("abXY", 8)
	for _, tc := range []struct {
		name            string
		expected, after int64
		keep            int64
		tail            []byte
		code            errcode.Code
	}{
		{"stale revision", 7, 3, 4, []byte("z"), errcode.SessCheckpointConflict},
		{"future revision", 9, 3, 4, []byte("z"), errcode.SessCheckpointConflict},
		{"old identical is stale", 5, 3, 0, []byte("whole"), errcode.SessCheckpointConflict},
		{"identical retry of the current", 7, 3, 2, []byte("XY"), ""},
		{"cursor backwards", 8, 2, 4, []byte("z"), errcode.SessCheckpointConflict},
		{"cursor past last event", 8, 4, 4, []byte("z"), errcode.SessInvalidRecord},
		{"cursor below -1", 8, -2, 4, []byte("z"), errcode.SessInvalidCursor},
		{"keep past the payload", 8, 3, 5, []byte("z"), errcode.SessInvalidRecord},
		{"negative keep", 8, 3, -1, []byte("z"), errcode.SessInvalidRecord},
		{"empty result", 8, 3, 0, nil, errcode.SessInvalidRecord},
		{"result over 16 MiB", 8, 3, 4, make([]byte, store.MaxPayloadBytes-3), errcode.SessInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.AppendCheckpoint(ctx, "sess-a", who, tc.expected, tc.after, tc.keep, tc.tail)
			WantCode(t, err, tc.code)
		})
	}
	load("abXY", 8)
	if _, err := e.s.AppendCheckpoint(ctx, "sess-a", who, 8, 3, 4, nil); err != nil {
		t.Fatalf("an append that keeps everything: %v", err)
	}
	load("abXY", 9)
	_, err = e.s.AppendCheckpoint(ctx, "sess-missing", who, 0, -1, 0, []byte("x"))
	WantCode(t, err, errcode.SessNotFound)
}

func testFencing(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	e.create("sess-a")
	stranger := Me("stranger")
	_, err := e.s.Append(ctx, "sess-a", stranger, Note("evt-0", 0))
	WantCode(t, err, errcode.SessOwnershipLost)
	_, err = e.s.SaveCheckpoint(ctx, "sess-a", stranger, 0, -1, []byte("x"))
	WantCode(t, err, errcode.SessOwnershipLost)

	a := e.acquire("sess-a", Me("a"))
	if a.Epoch != 1 || a.Host != e.host || a.PID != os.Getpid() {
		t.Fatalf("acquired owner = %+v, want epoch 1 on %s pid %d", a, e.host, os.Getpid())
	}
	e.append("sess-a", a, Note("evt-1", 1))
	if _, err := e.s.SaveCheckpoint(ctx, "sess-a", a, 0, 0, []byte("cp")); err != nil {
		t.Fatal(err)
	}
	wrongEpoch := a
	wrongEpoch.Epoch = 7
	_, err = e.s.Append(ctx, "sess-a", wrongEpoch, Note("evt-2", 2))
	WantCode(t, err, errcode.SessOwnershipLost)

	b, err := e.s.Acquire(ctx, "sess-a", Me("b"), store.AcquireOptions{TakeOver: true})
	if err != nil || b.Epoch != 2 {
		t.Fatalf("take over: %+v, %v", b, err)
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"new append", func() error { _, err := e.s.Append(ctx, "sess-a", a, Note("evt-2", 2)); return err }},
		{"identical append retry", func() error { _, err := e.s.Append(ctx, "sess-a", a, Note("evt-1", 1)); return err }},
		{"batch", func() error {
			_, err := e.s.AppendBatch(ctx, "sess-a", a, []store.EventIn{Note("evt-1", 1)})
			return err
		}},
		{"new checkpoint", func() error { _, err := e.s.SaveCheckpoint(ctx, "sess-a", a, 1, 0, []byte("cp2")); return err }},
		{"identical checkpoint retry", func() error { _, err := e.s.SaveCheckpoint(ctx, "sess-a", a, 0, 0, []byte("cp")); return err }},
		{"checkpoint append", func() error { _, err := e.s.AppendCheckpoint(ctx, "sess-a", a, 1, 0, 2, []byte("+")); return err }},
		{"metadata", func() error { return e.s.SetMetadata(ctx, "sess-a", a, map[string]string{"k": "v"}) }},
		{"renew", func() error { return e.s.Renew(ctx, "sess-a", a, time.Minute) }},
		{"release", func() error { return e.s.Release(ctx, "sess-a", a) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			WantCode(t, tc.call(), errcode.SessOwnershipLost)
		})
	}
	e.append("sess-a", b, Note("evt-2", 2))
	if err := e.s.Release(ctx, "sess-a", b); err != nil {
		t.Fatalf("release: %v", err)
	}
	_, err = e.s.Append(ctx, "sess-a", b, Note("evt-3", 3))
	WantCode(t, err, errcode.SessOwnershipLost)
	if s := e.session("sess-a"); s.Lease != nil || s.LastSeq != 1 {
		t.Fatalf("after release: lease %+v LastSeq %d", s.Lease, s.LastSeq)
	}
	c := e.acquire("sess-a", Me("c"))
	if c.Epoch != 3 {
		t.Fatalf("epoch after release and acquire = %d, want 3", c.Epoch)
	}
}

func testLease(t *testing.T, open Opener) {
	ctx := t.Context()
	t.Run("same owner renews", func(t *testing.T) {
		e := setup(t, open)
		e.create("sess-a")
		a, err := e.s.Acquire(ctx, "sess-a", Me("a"), store.AcquireOptions{LeaseFor: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(5 * time.Second)
		again, err := e.s.Acquire(ctx, "sess-a", Me("a"), store.AcquireOptions{LeaseFor: 10 * time.Second})
		if err != nil || again != a {
			t.Fatalf("re-acquire = %+v, %v; want %+v", again, err, a)
		}
		want := &store.Lease{Owner: a, AcquiredAt: Start, ExpiresAt: Start.Add(15 * time.Second)}
		if d := cmp.Diff(want, e.session("sess-a").Lease); d != "" {
			t.Fatalf("lease (-want +got):\n%s", d)
		}
		if err := e.s.Renew(ctx, "sess-a", a, time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := e.session("sess-a").Lease.ExpiresAt; !got.Equal(e.clock.Now().Add(time.Minute)) {
			t.Fatalf("renewed lease expires %v", got)
		}
	})
	t.Run("live holder is busy until taken over", func(t *testing.T) {
		e := setup(t, open)
		e.create("sess-a")
		a := e.acquire("sess-a", Me("a"))
		_, err := e.s.Acquire(ctx, "sess-a", Me("b"), store.AcquireOptions{})
		WantCode(t, err, errcode.SessBusy)
		busy, ok := errors.AsType[*store.BusyError](err)
		if !ok {
			t.Fatalf("SESS_BUSY without a *store.BusyError naming the holder: %v", err)
		}
		want := store.BusyError{SessionID: "sess-a", Lease: *e.session("sess-a").Lease}
		if d := cmp.Diff(want, *busy); d != "" || busy.Lease.Owner.PID != os.Getpid() || busy.Lease.Owner.Host != e.host {
			t.Fatalf("busy holder (-want +got):\n%s", d)
		}
		b, err := e.s.Acquire(ctx, "sess-a", Me("b"), store.AcquireOptions{TakeOver: true})
		if err != nil || b.Epoch != a.Epoch+1 {
			t.Fatalf("take over: %+v, %v", b, err)
		}
	})
	t.Run("take-over only while the log has not moved", func(t *testing.T) {
		e := setup(t, open)
		e.create("sess-a")
		a := e.acquire("sess-a", Me("a"))
		seen := int64(-1) // what the taker looked at: no event
		e.append("sess-a", a, Event("evt-1", "turn.started", `{}`))
		_, err := e.s.Acquire(ctx, "sess-a", Me("b"), store.AcquireOptions{TakeOver: true, IfLastSeq: &seen})
		WantCode(t, err, errcode.SessBusy)
		// The holder never noticed.
		e.append("sess-a", a, Note("evt-2", 2))
		seen = 1
		b, err := e.s.Acquire(ctx, "sess-a", Me("b"), store.AcquireOptions{TakeOver: true, IfLastSeq: &seen})
		if err != nil || b.Epoch != a.Epoch+1 {
			t.Fatalf("take over of an unmoved log: %+v, %v", b, err)
		}
	})
	t.Run("other host is waited out", func(t *testing.T) {
		e := setup(t, open)
		e.create("sess-a")
		remote, err := e.s.Acquire(ctx, "sess-a", store.Owner{ID: "remote", Host: OtherHost, PID: 4242}, store.AcquireOptions{LeaseFor: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		e.append("sess-a", remote, Event("evt-1", "turn.started", `{}`))
		e.clock.Advance(29 * time.Second)
		_, err = e.s.Acquire(ctx, "sess-a", Me("local"), store.AcquireOptions{})
		WantCode(t, err, errcode.SessBusy)
		if s := e.session("sess-a"); s.Status != store.StatusRunning {
			t.Fatalf("status under a live remote lease = %s", s.Status)
		}
		e.clock.Advance(time.Second)
		if s := e.session("sess-a"); s.Status != store.StatusInterrupted {
			t.Fatalf("status with the lease expired = %s, want interrupted", s.Status)
		}
		local, err := e.s.Acquire(ctx, "sess-a", Me("local"), store.AcquireOptions{})
		if err != nil || local.Epoch != remote.Epoch+1 {
			t.Fatalf("acquire after expiry: %+v, %v", local, err)
		}
		if s := e.session("sess-a"); s.Status != store.StatusInterrupted {
			t.Fatalf("status after take-over = %s, want interrupted", s.Status)
		}
		_, err = e.s.Append(ctx, "sess-a", remote, Note("evt-2", 2))
		WantCode(t, err, errcode.SessOwnershipLost)
	})
	t.Run("writes renew the lease", func(t *testing.T) {
		e := setup(t, open)
		e.create("sess-a")
		remote, err := e.s.Acquire(ctx, "sess-a", store.Owner{ID: "remote", Host: OtherHost, PID: 1}, store.AcquireOptions{LeaseFor: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(8 * time.Second)
		e.append("sess-a", remote, Note("evt-1", 1))
		e.clock.Advance(8 * time.Second)
		_, err = e.s.Acquire(ctx, "sess-a", Me("local"), store.AcquireOptions{})
		WantCode(t, err, errcode.SessBusy)
		e.clock.Advance(8 * time.Second)
		if _, err := e.s.SaveCheckpoint(ctx, "sess-a", remote, 0, 0, []byte("cp")); err != nil {
			t.Fatalf("a holder past its lease but not displaced still writes: %v", err)
		}
		e.clock.Advance(9 * time.Second)
		_, err = e.s.Acquire(ctx, "sess-a", Me("local"), store.AcquireOptions{})
		WantCode(t, err, errcode.SessBusy)
		e.clock.Advance(time.Second)
		if _, err := e.s.Acquire(ctx, "sess-a", Me("local"), store.AcquireOptions{}); err != nil {
			t.Fatalf("acquire after the renewed lease expired: %v", err)
		}
	})
	t.Run("bad acquire", func(t *testing.T) {
		e := setup(t, open)
		e.create("sess-a")
		_, err := e.s.Acquire(ctx, "sess-missing", Me("a"), store.AcquireOptions{})
		WantCode(t, err, errcode.SessNotFound)
		_, err = e.s.Acquire(ctx, "sess-a", store.Owner{}, store.AcquireOptions{})
		WantCode(t, err, errcode.SessInvalidRecord)
		_, err = e.s.Acquire(ctx, "sess-a", Me("a"), store.AcquireOptions{LeaseFor: -time.Second})
		WantCode(t, err, errcode.SessInvalidRecord)
		WantCode(t, e.s.Renew(ctx, "sess-missing", Me("a"), 0), errcode.SessNotFound)
		WantCode(t, e.s.Release(ctx, "sess-a", Me("a")), errcode.SessOwnershipLost)
	})
}

// startHolder starts a process that lives until the returned stop is
// called; stop kills it and reaps it.
func startHolder(t *testing.T) (pid int, stop func()) {
	t.Helper()
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Fatalf("find cat to stand in for another process: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), cat)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start holder process: %v", err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = in.Close() // only read (or a pipe end): a failed close loses nothing
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	t.Cleanup(stop)
	return cmd.Process.Pid, stop
}

func testDeadHolder(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	e.create("sess-a")
	pid, stop := startHolder(t)
	holder, err := e.s.Acquire(ctx, "sess-a", store.Owner{ID: "crashing", PID: pid}, store.AcquireOptions{LeaseFor: time.Hour})
	if err != nil {
		t.Fatalf("acquire for the holder process: %v", err)
	}
	e.append("sess-a", holder, Event("evt-1", "turn.started", `{}`))
	_, err = e.s.Acquire(ctx, "sess-a", Me("next"), store.AcquireOptions{})
	WantCode(t, err, errcode.SessBusy)
	if s := e.session("sess-a"); s.Status != store.StatusRunning {
		t.Fatalf("status under a live local holder = %s", s.Status)
	}
	stop()
	if s := e.session("sess-a"); s.Status != store.StatusInterrupted {
		t.Fatalf("status with the holder dead = %s, want interrupted", s.Status)
	}
	next, err := e.s.Acquire(ctx, "sess-a", Me("next"), store.AcquireOptions{})
	if err != nil {
		t.Fatalf("acquire from a dead holder, lease not expired: %v", err)
	}
	if next.Epoch != holder.Epoch+1 {
		t.Fatalf("epoch %d after a dead holder's %d", next.Epoch, holder.Epoch)
	}
	t.Run("dead pid cannot acquire", func(t *testing.T) {
		e.create("sess-b")
		_, err := e.s.Acquire(ctx, "sess-b", store.Owner{ID: "ghost", PID: pid}, store.AcquireOptions{})
		WantCode(t, err, errcode.SessInvalidRecord)
	})
}

func testConcurrency(t *testing.T, open Opener) {
	e := setup(t, open)
	who := e.owned("sess-a")
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("evt-%d-%d", w, i)
				if _, err := e.s.Append(t.Context(), "sess-a", who, Note(id, i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent append: %v", err)
	}
	recs := e.readAll("sess-a")
	if len(recs) != workers*each {
		t.Fatalf("%d records, want %d", len(recs), workers*each)
	}
	seen := map[string]bool{}
	for i, r := range recs {
		if r.Seq != int64(i) || seen[r.ID] {
			t.Fatalf("record %d: seq %d id %s (seen before: %v)", i, r.Seq, r.ID, seen[r.ID])
		}
		seen[r.ID] = true
		if i > 0 && r.GlobalSeq <= recs[i-1].GlobalSeq {
			t.Fatalf("GlobalSeq not growing at seq %d", i)
		}
	}
}

func testPaging(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	who := e.owned("sess-a")
	const total, chunk = 10000, 1000
	for c := range total / chunk {
		evs := make([]store.EventIn, chunk)
		for i := range evs {
			n := c*chunk + i
			evs[i] = Note(fmt.Sprintf("evt-%05d", n), n)
		}
		if _, err := e.s.AppendBatch(ctx, "sess-a", who, evs); err != nil {
			t.Fatalf("batch %d: %v", c, err)
		}
	}
	for _, limit := range []int{777, store.MaxPage} {
		after, n := int64(-1), 0
		for {
			page, err := e.s.ReadEvents(ctx, "sess-a", after, limit)
			if err != nil {
				t.Fatalf("read after %d: %v", after, err)
			}
			if len(page) == 0 {
				break
			}
			if len(page) > limit {
				t.Fatalf("page of %d, limit %d", len(page), limit)
			}
			for _, r := range page {
				if r.Seq != int64(n) || r.ID != fmt.Sprintf("evt-%05d", n) {
					t.Fatalf("limit %d: record %d is seq %d id %s", limit, n, r.Seq, r.ID)
				}
				n++
			}
			after = page[len(page)-1].Seq
		}
		if n != total {
			t.Fatalf("limit %d: paged %d events, want %d", limit, n, total)
		}
	}
}

func testClosed(t *testing.T, open Opener) {
	e := setup(t, open)
	ctx := t.Context()
	who := e.owned("sess-a")
	if err := e.s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := e.s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"session", func() error { _, err := e.s.Session(ctx, "sess-a"); return err }},
		{"list", func() error { _, err := e.s.ListSessions(ctx, store.ListCursor{}, 1); return err }},
		{"create", func() error { _, err := e.s.CreateSession(ctx, store.SessionInit{ID: "sess-b"}); return err }},
		{"append", func() error { _, err := e.s.Append(ctx, "sess-a", who, Note("evt-1", 1)); return err }},
		{"read", func() error { _, err := e.s.ReadEvents(ctx, "sess-a", -1, 1); return err }},
		{"acquire", func() error { _, err := e.s.Acquire(ctx, "sess-a", who, store.AcquireOptions{}); return err }},
		{"checkpoint", func() error { _, err := e.s.LoadCheckpoint(ctx, "sess-a"); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			WantCode(t, tc.call(), errcode.SessClosed)
		})
	}
}
