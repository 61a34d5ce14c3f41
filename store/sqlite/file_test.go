package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

func mustExec(t testing.TB, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), query, args...); err != nil {
		t.Fatalf("exec %q: %v", query, err)
	}
}

// rawDB opens path with no pragma of ours, as another program would.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestFileSettings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "harness")
	path := filepath.Join(dir, "harness.db")
	s := mustOpen(t, path, Options{})
	ctx := t.Context()
	owner := storetest.Me("o")
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: "sess-a"}); err != nil {
		t.Fatal(err)
	}
	owner, err := s.Acquire(ctx, "sess-a", owner, store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "sess-a", owner, storetest.Note("evt-1", 1)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		db     *sql.DB
		pragma string
		want   string
	}{
		{s.wdb, "journal_mode", "wal"},
		{s.wdb, "synchronous", "2"}, // FULL
		{s.wdb, "busy_timeout", "10000"},
		{s.wdb, "foreign_keys", "1"},
		{s.wdb, "user_version", fmt.Sprint(schemaVersion)},
		{s.rdb, "query_only", "1"},
		{s.rdb, "journal_mode", "wal"},
	} {
		t.Run(tc.pragma, func(t *testing.T) {
			var got string
			if err := tc.db.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("PRAGMA %s = %s, want %s", tc.pragma, got, tc.want)
			}
		})
	}
	t.Run("modes", func(t *testing.T) {
		for _, tc := range []struct {
			path string
			want os.FileMode
		}{
			{dir, os.ModeDir | 0o700},
			{path, 0o600},
			{path + "-wal", 0o600},
			{path + "-shm", 0o600},
		} {
			fi, err := os.Stat(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != tc.want {
				t.Errorf("%s has mode %v, want %v", filepath.Base(tc.path), fi.Mode(), tc.want)
			}
		}
	})
	t.Run("reader connections cannot write", func(t *testing.T) {
		_, err := s.rdb.ExecContext(ctx, `DELETE FROM events`)
		if err == nil {
			t.Fatal("a reader connection deleted events")
		}
	})
	t.Run("writes begin immediate", func(t *testing.T) {
		// A second store on the file: while it holds the write lock in a
		// transaction that has only read so far, our append must wait for
		// it and then fail with SESS_BUSY, never interleave.
		other := mustOpen(t, path, Options{BusyTimeout: 50 * time.Millisecond})
		tx, err := other.wdb.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		short := mustOpen(t, path, Options{BusyTimeout: 50 * time.Millisecond})
		_, err = short.Append(ctx, "sess-a", owner, storetest.Note("evt-2", 2))
		storetest.WantCode(t, err, errcode.SessBusy)
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if _, err := short.Append(ctx, "sess-a", owner, storetest.Note("evt-2", 2)); err != nil {
			t.Fatalf("append once the lock is free: %v", err)
		}
	})
}

// schemaV1ByHand is the version 1 schema as an older Harness wrote it,
// typed out again here rather than taken from schema.go, so that a change
// to the migration code is tested against the real old shape.
const schemaV1ByHand = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', metadata TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, last_seq INTEGER NOT NULL DEFAULT -1,
	epoch INTEGER NOT NULL DEFAULT 0, owner_id TEXT, owner_host TEXT, owner_pid INTEGER,
	lease_acquired_at INTEGER, lease_expires_at INTEGER) STRICT;
CREATE TABLE events (global_seq INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions (id),
	seq INTEGER NOT NULL, event_id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, body TEXT NOT NULL,
	stored_at INTEGER NOT NULL, UNIQUE (session_id, seq)) STRICT;
CREATE TABLE checkpoints (session_id TEXT PRIMARY KEY REFERENCES sessions (id), revision INTEGER NOT NULL,
	after_seq INTEGER NOT NULL, payload BLOB NOT NULL, saved_at INTEGER NOT NULL) STRICT;
PRAGMA user_version = 1;
`

func TestMigrateFromV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	ctx := t.Context()
	old := rawDB(t, path)
	mustExec(t, old, schemaV1ByHand)
	t0 := storetest.Start
	us := func(d time.Duration) int64 { return t0.Add(d).UnixMicro() }
	mustExec(t, old, `INSERT INTO sessions (id, title, metadata, created_at, updated_at, last_seq, epoch, owner_id, owner_host, owner_pid,
		lease_acquired_at, lease_expires_at) VALUES ('sess-old', '', '{"model":"m"}', ?, ?, 3, 4, 'remote', ?, 99, ?, ?),
		('sess-empty', 'kept', '{}', ?, ?, -1, 0, NULL, NULL, NULL, NULL, NULL)`,
		us(0), us(time.Minute), storetest.OtherHost, us(0), us(time.Hour), us(0), us(0))
	evs := []store.EventIn{
		storetest.Event("evt-1", "turn.started", `{}`),
		storetest.Event("evt-2", "message.completed", `{"role":"user","content":"Port the parser\nto Go"}`),
		storetest.Event("evt-3", "turn.completed", `{"status":"failed","usage":{"totalTokens":17}}`),
		storetest.Event("evt-4", "turn.completed", `not json at all`), // an old, unreadable event
	}
	for i, ev := range evs {
		mustExec(t, old, `INSERT INTO events (session_id, seq, event_id, type, body, stored_at) VALUES ('sess-old', ?, ?, ?, ?, ?)`,
			i, ev.ID, ev.Type, string(ev.Body), us(time.Duration(i)*time.Second))
	}
	mustExec(t, old, `INSERT INTO checkpoints VALUES ('sess-old', 2, 3, x'00ff', ?)`, us(time.Minute))
	// A session last updated by its append, after its row's updated_at.
	mustExec(t, old, `INSERT INTO sessions (id, created_at, updated_at, last_seq) VALUES ('sess-late', ?, ?, 0)`, us(0), us(0))
	mustExec(t, old, `INSERT INTO events (session_id, seq, event_id, type, body, stored_at) VALUES ('sess-late', 0, 'evt-late', 'note', '{}', ?)`,
		us(5*time.Minute))
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	clock := storetest.NewClock(t0.Add(2 * time.Minute))
	s := mustOpen(t, path, Options{Now: clock.Now})
	got, err := s.Session(ctx, "sess-old")
	if err != nil {
		t.Fatal(err)
	}
	want := store.Session{
		ID: "sess-old", Title: "Port the parser", Metadata: map[string]string{"model": "m"},
		CreatedAt: t0, UpdatedAt: t0.Add(time.Minute), Turns: 1, Tokens: 17, Status: store.StatusFailed, LastSeq: 3,
		Lease: &store.Lease{Owner: store.Owner{ID: "remote", Host: storetest.OtherHost, PID: 99, Epoch: 4}, AcquiredAt: t0, ExpiresAt: t0.Add(time.Hour)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("migrated session (-want +got):\n%s", d)
	}
	if e, err := s.Session(ctx, "sess-empty"); err != nil || e.Title != "kept" || e.Status != store.StatusIdle {
		t.Fatalf("migrated empty session: %+v, %v", e, err)
	}
	// Schema 4 back-fills each session's last seq and append time: the
	// listing (from the sessions_recent index) orders by them.
	list, err := s.ListSessions(ctx, store.ListCursor{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, l := range list {
		order = append(order, fmt.Sprintf("%s@%s/%d", l.ID, l.UpdatedAt.Sub(t0), l.LastSeq))
	}
	if want := "[sess-late@5m0s/0 sess-old@1m0s/3 sess-empty@0s/-1]"; fmt.Sprint(order) != want {
		t.Fatalf("migrated listing %v, want %s", order, want)
	}
	recs, err := s.ReadEvents(ctx, "sess-old", -1, 10)
	if err != nil || len(recs) != len(evs) {
		t.Fatalf("read migrated events: %d, %v", len(recs), err)
	}
	for i, r := range recs {
		if string(r.Body) != string(evs[i].Body) || r.Seq != int64(i) {
			t.Fatalf("migrated event %d changed: %+v", i, r)
		}
	}
	cp, err := s.LoadCheckpoint(ctx, "sess-old")
	if err != nil || cp.Revision != 2 || string(cp.Payload) != "\x00\xff" {
		t.Fatalf("migrated checkpoint: %+v, %v", cp, err)
	}
	// The remote lease is still honoured, then waited out; writing goes on
	// at the next seq with the next epoch.
	_, err = s.Acquire(ctx, "sess-old", storetest.Me("local"), store.AcquireOptions{})
	storetest.WantCode(t, err, errcode.SessBusy)
	clock.Advance(time.Hour)
	who, err := s.Acquire(ctx, "sess-old", storetest.Me("local"), store.AcquireOptions{})
	if err != nil || who.Epoch != 5 {
		t.Fatalf("acquire migrated session: %+v, %v", who, err)
	}
	r, err := s.Append(ctx, "sess-old", who, storetest.Note("evt-5", 5))
	if err != nil || r.Seq != 4 {
		t.Fatalf("append after migration: %+v, %v", r, err)
	}
	// The migrated payload is the checkpoint's first part: an append save
	// keeps a prefix of it.
	if _, err := s.AppendCheckpoint(ctx, "sess-old", who, 2, 4, 1, []byte("new")); err != nil {
		t.Fatalf("append checkpoint after migration: %v", err)
	}
	if cp, err := s.LoadCheckpoint(ctx, "sess-old"); err != nil || cp.Revision != 3 || string(cp.Payload) != "\x00new" {
		t.Fatalf("checkpoint after migration and append: %+v, %v", cp, err)
	}
	// Schema 5: the empty sessions are found through sessions_empty, which
	// holds the migrated ones (last_seq -1), and only them.
	var plan strings.Builder
	rows, err := s.wdb.QueryContext(ctx, `EXPLAIN QUERY PLAN `+qEmptySessions, 0)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "\n")
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.String(), "SEARCH sessions USING INDEX sessions_empty") {
		t.Errorf("plan of the empty sessions' query:\n%s", plan.String())
	}
	if gone, err := s.RemoveEmpty(ctx, t0.Add(time.Second)); err != nil || fmt.Sprint(gone) != "[sess-empty]" {
		t.Fatalf("RemoveEmpty after migration = %v, %v", gone, err)
	}
	var v int
	if err := s.wdb.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("user_version = %d, %v", v, err)
	}
}

func TestRefusedFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, path string)
		code  errcode.Code
	}{
		{"newer schema", func(t *testing.T, path string) {
			s := mustOpen(t, path, Options{})
			mustExec(t, s.wdb, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion+1))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}, errcode.SessSchemaVersion},
		{"another application's tables", func(t *testing.T, path string) {
			mustExec(t, rawDB(t, path), `CREATE TABLE notes (body TEXT)`)
		}, errcode.SessSchemaVersion},
		{"not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not a database file ", 400)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, errcode.SessInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "harness.db")
			tc.write(t, path)
			s, err := Open(path, Options{})
			if err == nil {
				_ = s.Close()
			}
			storetest.WantCode(t, err, tc.code)
			r, err := OpenReader(path, Options{})
			if err == nil {
				_ = r.Close()
			}
			storetest.WantCode(t, err, tc.code)
		})
	}
}

func TestReader(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	_, err := OpenReader(filepath.Join(dir, "missing.db"), Options{})
	storetest.WantCode(t, err, errcode.SessNotFound)

	path := filepath.Join(dir, "harness.db")
	s := mustOpen(t, path, Options{})
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: "sess-a", Title: "read me"}); err != nil {
		t.Fatal(err)
	}
	who, err := s.Acquire(ctx, "sess-a", storetest.Me("w"), store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	for i := range 3 {
		if _, err := s.Append(ctx, "sess-a", who, storetest.Note(fmt.Sprintf("evt-%d", i), i)); err != nil {
			t.Fatal(err)
		}
		recs, err := r.ReadEvents(ctx, "sess-a", -1, 10)
		if err != nil || len(recs) != i+1 {
			t.Fatalf("reader sees %d events after %d appends: %v", len(recs), i+1, err)
		}
	}
	list, err := r.ListSessions(ctx, store.ListCursor{}, 10)
	if err != nil || len(list) != 1 || list[0].Title != "read me" || list[0].Lease == nil || list[0].Lease.Owner.ID != "w" {
		t.Fatalf("reader lists %+v, %v", list, err)
	}
	// Reading took nothing: the writer still holds the session.
	if _, err := s.Append(ctx, "sess-a", who, storetest.Note("evt-3", 3)); err != nil {
		t.Fatalf("append after reads: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = r.Session(ctx, "sess-a")
	storetest.WantCode(t, err, errcode.SessClosed)

	t.Run("migrates an older file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "old.db")
		mustExec(t, rawDB(t, path), schemaV1ByHand)
		r, err := OpenReader(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if list, err := r.ListSessions(ctx, store.ListCursor{}, 10); err != nil || len(list) != 0 {
			t.Fatalf("list migrated empty file: %+v, %v", list, err)
		}
	})
}

// TestReusedPID checks that a holder is identified by its process start,
// not its PID alone: a live process with the holder's PID but another
// identity is a stranger, and the session is taken at once.
func TestReusedPID(t *testing.T) {
	ctx := t.Context()
	s := mustOpen(t, filepath.Join(t.TempDir(), "harness.db"), Options{})
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: "sess-a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(ctx, "sess-a", storetest.Me("first"), store.AcquireOptions{LeaseFor: time.Hour}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Acquire(ctx, "sess-a", storetest.Me("second"), store.AcquireOptions{})
	storetest.WantCode(t, err, errcode.SessBusy)
	// Rewrite the recorded start time as if "first" had been an earlier
	// process that died and whose PID this process now has.
	mustExec(t, s.wdb, `UPDATE sessions SET owner_proc = 'some-boot:12345' WHERE id = 'sess-a'`)
	who, err := s.Acquire(ctx, "sess-a", storetest.Me("second"), store.AcquireOptions{})
	if err != nil || who.Epoch != 2 {
		t.Fatalf("acquire from a holder whose PID was reused: %+v, %v", who, err)
	}
}

// TestSQLite3Tool reads the file with the stock sqlite3 command-line tool,
// while the store has it open (WAL) and after it is closed.
func TestSQLite3Tool(t *testing.T) {
	const tool = "/usr/bin/sqlite3"
	if _, err := os.Stat(tool); err != nil {
		t.Fatalf("the stock sqlite3 tool is required at %s: %v", tool, err)
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "harness.db")
	s := mustOpen(t, path, Options{})
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: "sess-cli"}); err != nil {
		t.Fatal(err)
	}
	who, err := s.Acquire(ctx, "sess-cli", storetest.Me("w"), store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	types := []string{"agent.started", "turn.started", "test.note", "test.note", "turn.completed"}
	for i, typ := range types {
		data := fmt.Sprintf(`{"n":%d,"text":"line with | and ü"}`, i)
		if typ == "turn.completed" {
			data = `{"status":"completed","usage":{"totalTokens":3}}`
		}
		ev := storetest.Event(fmt.Sprintf("evt-%d", i), typ, data)
		if _, err := s.Append(ctx, "sess-cli", who, ev); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%d|%s|%s|%s", i, ev.ID, typ, ev.Body))
	}
	query := `SELECT seq, event_id, json_extract(body, '$.type'), body FROM events WHERE session_id = 'sess-cli' ORDER BY seq;`
	run := func(t *testing.T) {
		out, err := exec.CommandContext(ctx, tool, "-readonly", path, query).CombinedOutput()
		if err != nil {
			t.Fatalf("sqlite3: %v\n%s", err, out)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("sqlite3 output (-want +got):\n%s", d)
		}
	}
	t.Run("while open", run)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Run("after close", run)
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		rc   int
		want errcode.Code
	}{
		{sqlite3.SQLITE_BUSY, errcode.SessBusy},
		{sqlite3.SQLITE_BUSY | 2<<8, errcode.SessBusy}, // BUSY_SNAPSHOT
		{sqlite3.SQLITE_LOCKED, errcode.SessBusy},
		{sqlite3.SQLITE_CONSTRAINT_UNIQUE, errcode.SessEventConflict},
		{sqlite3.SQLITE_CONSTRAINT_NOTNULL, errcode.SessInvalidRecord},
		{sqlite3.SQLITE_TOOBIG, errcode.SessInvalidRecord},
		{sqlite3.SQLITE_CORRUPT, errcode.SessInvalidRecord},
		{sqlite3.SQLITE_NOTADB, errcode.SessInvalidRecord},
		{sqlite3.SQLITE_FULL, errcode.SessDiskFull},
		{sqlite3.SQLITE_FULL | 1<<8, errcode.SessDiskFull},
		{sqlite3.SQLITE_IOERR_FSYNC, errcode.SessClosed},
		{sqlite3.SQLITE_READONLY, errcode.SessClosed},
		{sqlite3.SQLITE_CANTOPEN, errcode.SessClosed},
		{sqlite3.SQLITE_ERROR, errcode.SessClosed},
	} {
		t.Run(fmt.Sprint(tc.rc), func(t *testing.T) {
			if got, _ := classify(tc.rc); got != tc.want {
				t.Fatalf("classify(%d) = %s, want %s", tc.rc, got, tc.want)
			}
		})
	}
	t.Run("translate passes codes through", func(t *testing.T) {
		in := errcode.New(errcode.SessOwnershipLost, "x")
		if got := translate("op", in); got != error(in) {
			t.Fatalf("translate rewrapped a coded error: %v", got)
		}
		storetest.WantCode(t, translate("op", sql.ErrConnDone), errcode.SessClosed)
	})
}
