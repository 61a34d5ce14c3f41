package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

func TestSchemaVersion(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	s := mustOpen(t, dsn, Options{Now: storetest.NewClock(storetest.Start).Now})
	// One row per applied version, stamped by the store's clock.
	var versions []string
	rows, err := s.pool.Query(t.Context(), `SELECT version, applied_at FROM schema_version ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			v  int
			at time.Time
		)
		if err := rows.Scan(&v, &at); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, fmt.Sprintf("%d@%s", v, at.UTC().Format(time.RFC3339Nano)))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for v := 1; v <= schemaVersion; v++ {
		want = append(want, fmt.Sprintf("%d@%s", v, storetest.Start.Format(time.RFC3339Nano)))
	}
	if fmt.Sprint(versions) != fmt.Sprint(want) {
		t.Fatalf("schema_version rows %v, want %v", versions, want)
	}

	// Opening again finds the schema current and changes nothing.
	again := mustOpen(t, dsn, Options{})
	if _, err := again.CreateSession(t.Context(), store.SessionInit{ID: "sess-a"}); err != nil {
		t.Fatalf("use a store opened on a current schema: %v", err)
	}

	// A newer Harness wrote this schema: refused, by every Open.
	mustExec(t, s, `INSERT INTO schema_version (version, applied_at) VALUES ($1, now())`, schemaVersion+1)
	for range 2 {
		_, err := Open(t.Context(), dsn, Options{})
		storetest.WantCode(t, err, errcode.SessSchemaVersion)
	}
	// A store already open keeps working on the rows it knows.
	if _, err := s.Session(t.Context(), "sess-a"); err != nil {
		t.Fatalf("read through a store opened before: %v", err)
	}
}

func TestRefusedSchemas(t *testing.T) {
	t.Parallel()
	t.Run("tables of the store's names without a version", func(t *testing.T) {
		dsn := freshSchema(t)
		conn := mustConnect(t, dsn)
		if _, err := conn.Exec(t.Context(), `CREATE TABLE sessions (name text)`); err != nil {
			t.Fatal(err)
		}
		_, err := Open(t.Context(), dsn, Options{})
		storetest.WantCode(t, err, errcode.SessSchemaVersion)
	})
	t.Run("other tables are left alone", func(t *testing.T) {
		dsn := freshSchema(t)
		conn := mustConnect(t, dsn)
		if _, err := conn.Exec(t.Context(), `CREATE TABLE accounts (name text)`); err != nil {
			t.Fatal(err)
		}
		mustOpen(t, dsn, Options{})
	})
	t.Run("no schema", func(t *testing.T) {
		server(t)
		_, err := Open(t.Context(), withParam(baseDSN(), "search_path", "harness_test_missing_schema"), Options{})
		storetest.WantCode(t, err, errcode.SessClosed)
	})
}

// TestConcurrentMigrate opens one fresh schema from several stores at once:
// the advisory lock orders them, one migrates, the others find it done.
// Without the lock, concurrent CREATE TABLEs fail.
func TestConcurrentMigrate(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	const n = 6
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(t.Context(), dsn, Options{MaxConns: 1}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	var count int
	if err := stores[0].pool.QueryRow(t.Context(), `SELECT count(*) FROM schema_version`).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != schemaVersion {
		t.Fatalf("%d schema_version rows after %d concurrent opens, want %d", count, n, schemaVersion)
	}
}

// TestMigrateFromV1 opens a version 1 schema holding events numbered by
// the counter row: the migration keeps their numbers, the next append
// continues after the counter's last, and the feed lists the old events
// first, in their order.
func TestMigrateFromV1(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	ctx := t.Context()
	conn := mustConnect(t, dsn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate0to1(ctx, tx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO schema_version (version, applied_at) VALUES (1, now())`,
		`INSERT INTO sessions (id, created_at, updated_at, last_seq) VALUES ('sess-old', now(), now(), 2)`,
		`INSERT INTO events (global_seq, session_id, seq, event_id, type, body, stored_at)
			SELECT 10 + n, 'sess-old', n, 'evt-old-' || n, 'test.note', convert_to('{}', 'UTF8'), now() FROM generate_series(0, 2) n`,
		`UPDATE event_counter SET last_global_seq = 12`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	s := mustOpen(t, dsn, Options{})
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT max(version) FROM schema_version`).Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("schema version %d, %v; want %d", v, err, schemaVersion)
	}
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: "sess-new"}); err != nil {
		t.Fatal(err)
	}
	who, err := s.Acquire(ctx, "sess-new", storetest.Me("new"), store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.Append(ctx, "sess-new", who, storetest.Note("evt-new", 1))
	if err != nil {
		t.Fatal(err)
	}
	if rec.GlobalSeq != 13 {
		t.Fatalf("the first append after the migration got global seq %d, want 13", rec.GlobalSeq)
	}
	var got []string
	for cur := (FeedCursor{}); ; {
		recs, next, err := s.Feed(ctx, cur, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			if len(got) >= 4 {
				break
			}
			if err := ctx.Err(); err != nil {
				t.Fatalf("the feed gave %v: %v", got, err)
			}
			continue // another test's transaction holds the horizon back
		}
		for _, r := range recs {
			got = append(got, fmt.Sprintf("%s/%d", r.ID, r.GlobalSeq))
		}
		cur = next
	}
	if want := "[evt-old-0/10 evt-old-1/11 evt-old-2/12 evt-new/13]"; fmt.Sprint(got) != want {
		t.Fatalf("feed %v, want %s", got, want)
	}
}

func TestOpenFailures(t *testing.T) {
	t.Parallel()
	server(t)
	for _, tc := range []struct {
		name, dsn string
	}{
		{"malformed dsn", "postgres://%zz"},
		{"nothing listens", "postgres://harness:harness@127.0.0.1:1/harness_test?sslmode=disable&connect_timeout=5"},
		{"wrong password", withParam(replacePassword(baseDSN(), "not-the-password"), "connect_timeout", "5")},
		{"missing database", withParam(replaceDatabase(baseDSN(), "harness_test_no_such_db"), "connect_timeout", "5")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(t.Context(), tc.dsn, Options{})
			storetest.WantCode(t, err, errcode.SessClosed)
		})
	}
}

// TestSessionSettings checks what Open sets on every connection.
func TestSessionSettings(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, freshSchema(t), Options{LockTimeout: 1500 * time.Millisecond})
	for _, tc := range []struct{ name, want string }{
		{"synchronous_commit", "on"},
		{"lock_timeout", "1500ms"},
		{"application_name", "harness"},
	} {
		var got string
		if err := s.pool.QueryRow(t.Context(), `SELECT current_setting($1)`, tc.name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Fatalf("%s = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestAppendOnly changes stored events with raw SQL as the table's owner:
// the database refuses every UPDATE, DELETE and TRUNCATE, and the store
// translates the refusal.
func TestAppendOnly(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	s := mustOpen(t, dsn, Options{})
	ctx := t.Context()
	who := storetest.Held(t, s, "sess-a", "a")
	rec, err := s.Append(ctx, "sess-a", who, storetest.Note("evt-1", 1))
	if err != nil {
		t.Fatal(err)
	}
	conn := mustConnect(t, dsn)
	for _, q := range []string{
		`UPDATE events SET body = '\x7b7d'::bytea WHERE event_id = 'evt-1'`,
		`UPDATE events SET seq = seq + 1`,
		`UPDATE events SET type = 'x' WHERE false`,
		`DELETE FROM events WHERE event_id = 'evt-1'`,
		`DELETE FROM events`,
		`TRUNCATE events`,
		`INSERT INTO events SELECT * FROM events ON CONFLICT (global_seq) DO UPDATE SET body = excluded.body`,
	} {
		t.Run(q, func(t *testing.T) {
			_, err := conn.Exec(ctx, q)
			pe, ok := errors.AsType[*pgconn.PgError](err)
			if !ok || pe.Code != sqlstateAppendOnly {
				t.Fatalf("%s: %v, want SQLSTATE %s", q, err, sqlstateAppendOnly)
			}
			storetest.WantCode(t, translate("test", err), errcode.SessEventConflict)
		})
	}
	got, err := s.ReadEvents(ctx, "sess-a", -1, 10)
	if err != nil || len(got) != 1 || string(got[0].Body) != string(rec.Body) || got[0].Seq != 0 {
		t.Fatalf("events after refused changes: %+v, %v", got, err)
	}
}

func mustConnect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(t.Context()) })
	return conn
}

func replacePassword(dsn, password string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return dsn
	}
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", cfg.User, password, cfg.Host, cfg.Port, cfg.Database)
}

func replaceDatabase(dsn, db string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return dsn
	}
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Password, cfg.Host, cfg.Port, db)
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		sqlstate string
		want     errcode.Code
	}{
		{"23505", errcode.SessEventConflict},
		{sqlstateAppendOnly, errcode.SessEventConflict},
		{"55P03", errcode.SessBusy},
		{"40P01", errcode.SessBusy},
		{"40001", errcode.SessBusy},
		{"23503", errcode.SessInvalidRecord},
		{"23514", errcode.SessInvalidRecord},
		{"22021", errcode.SessInvalidRecord},
		{"54000", errcode.SessInvalidRecord},
		{"XX001", errcode.SessInvalidRecord},
		{"42P01", errcode.SessSchemaVersion},
		{"42703", errcode.SessSchemaVersion},
		{"08006", errcode.SessClosed},
		{"28P01", errcode.SessClosed},
		{"3D000", errcode.SessClosed},
		{"25006", errcode.SessClosed},
		{"53100", errcode.SessClosed},
		{"57P01", errcode.SessClosed},
		{"57014", errcode.SessClosed},
		{"42501", errcode.SessClosed},
		{"P0001", errcode.SessClosed},
		{"", errcode.SessClosed},
	} {
		t.Run(tc.sqlstate, func(t *testing.T) {
			if got, _ := classify(tc.sqlstate); got != tc.want {
				t.Fatalf("classify(%q) = %s, want %s", tc.sqlstate, got, tc.want)
			}
			storetest.WantCode(t, translate("op", &pgconn.PgError{Code: tc.sqlstate}), tc.want)
		})
	}
	t.Run("translate passes codes through", func(t *testing.T) {
		in := errcode.New(errcode.SessOwnershipLost, "x")
		if got := translate("op", in); got != error(in) {
			t.Fatalf("translate rewrapped a coded error: %v", got)
		}
		storetest.WantCode(t, translate("op", errors.New("closed pool")), errcode.SessClosed)
		storetest.WantCode(t, translate("op", fmt.Errorf("x: %w", context.Canceled)), errcode.SessClosed)
	})
}

// TestServerVersion: a server older than PostgreSQL 13 (no xid8) is
// refused with SESS_CLOSED; 13 and later are served.
func TestServerVersion(t *testing.T) {
	for num, code := range map[int]errcode.Code{120017: errcode.SessClosed, 96024: errcode.SessClosed, 130000: "", 150018: "", 170002: ""} {
		if got := errcode.Of(checkServerVersion("test", num)); got != code {
			t.Errorf("server_version_num %d: code %q, want %q", num, got, code)
		}
	}
}
