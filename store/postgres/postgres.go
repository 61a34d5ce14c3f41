package postgres

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/internal/rules"
)

var _ store.Store = (*Store)(nil)

// Options configure a store. Zero values take the defaults.
type Options struct {
	// Now is the clock (default time.Now). Every stored time comes from
	// it, never from the server's clock.
	Now func() time.Time
	// LocalHost is this machine's name as leases record it (default
	// store.HostID: the host name and machine ID). It must be unique among
	// the machines sharing the database: a holder on this host whose
	// process is gone is taken as dead.
	LocalHost string
	// LockTimeout is how long a statement waits for a row lock held by
	// another writer (another process's open transaction on the same
	// session) before failing with SESS_BUSY (default 10 s).
	LockTimeout time.Duration
	// MaxConns bounds the pool's connections (default 4).
	MaxConns int32
}

func (o *Options) defaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LocalHost == "" {
		o.LocalHost = rules.LocalHost()
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = 10 * time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 4
	}
}

// Store is the Postgres session store. Every write is one transaction on
// one pooled connection that locks its session's row first, so writers to
// one session are serialized by the server whichever process or machine
// they run on.
type Store struct {
	pool *pgxpool.Pool
	now  func() time.Time
	host string

	closed    atomic.Bool
	closeOnce sync.Once
}

// Open connects to the database dsn names (a postgres:// URL or a
// key=value string, as libpq takes them; its search_path parameter picks
// the schema, which must exist), migrates an older schema in place under an
// advisory lock, and returns the store. Codes: SESS_SCHEMA_VERSION (a newer
// schema, or tables of the store's names that it did not create),
// SESS_CLOSED (a bad DSN, an unreachable server, a refused login, a missing
// database or schema), SESS_BUSY (the migration lock stayed taken).
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	const op = "postgres.Open"
	opts.defaults()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, &errcode.Error{Code: errcode.SessClosed, Op: op, Message: "parse store DSN", Err: err}
	}
	cfg.MaxConns = opts.MaxConns
	rp := cfg.ConnConfig.RuntimeParams
	// A commit is flushed to the server's WAL before it returns, whatever
	// the server's default; a row lock is waited for a bounded time.
	rp["synchronous_commit"] = "on"
	rp["lock_timeout"] = strconv.FormatInt(opts.LockTimeout.Milliseconds(), 10)
	if rp["application_name"] == "" {
		rp["application_name"] = "harness"
	}
	// A call whose context ends asks the server to cancel its statement,
	// so that no backend is left waiting on a session's lock for a caller
	// that is gone; the connection stays usable.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 5 * time.Second}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, translate(op, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, atServer(cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, translate(op, err))
	}
	var num int
	if err := pool.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&num); err != nil {
		pool.Close()
		return nil, translate(op, err)
	}
	if err := checkServerVersion(op, num); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, now: opts.Now, host: opts.LocalHost}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// minServerVersion is PostgreSQL 13 (server_version_num 130000): the
// feed's transaction IDs are xid8 (pg_current_xact_id, pg_snapshot_xmin).
const minServerVersion = 130000

// checkServerVersion refuses a server older than minServerVersion with
// SESS_CLOSED (the store cannot serve on it), naming both versions.
func checkServerVersion(op string, num int) error {
	if num >= minServerVersion {
		return nil
	}
	return &errcode.Error{Code: errcode.SessClosed, Op: op,
		Message: fmt.Sprintf("the session store needs PostgreSQL 13 or newer; this server is %d.%d", num/10000, num%10000/100)}
}

// Close closes the store: calls in flight finish first; later calls fail
// with SESS_CLOSED. It is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.pool.Close()
	})
	return nil
}

func (s *Store) env() rules.Env {
	return rules.Env{Now: rules.Now(s.now), LocalHost: s.host}
}

func (s *Store) check(ctx context.Context, op string) error {
	if s.closed.Load() {
		return rules.Closed(op)
	}
	if err := ctx.Err(); err != nil {
		return rules.Canceled(op, err)
	}
	return nil
}

// wtx is one write transaction on one pooled connection. It spends no
// round trip of its own: BEGIN goes out with its first batch and COMMIT
// with its last, so a write that reads, decides, then writes costs two
// round trips.
type wtx struct {
	conn      *pgxpool.Conn
	begun     bool // BEGIN has been sent: the transaction must end
	committed bool
}

// send sends b, after BEGIN when it is the transaction's first batch and
// followed by COMMIT when commit is set, and returns the first error. b's
// results are read by the callbacks set on its queries (QueuedQuery.Query,
// QueryRow, Exec); an error of one skips the rest, COMMIT included.
func (t *wtx) send(ctx context.Context, b *pgx.Batch, commit bool) error {
	qs := b.QueuedQueries
	if !t.begun {
		qs = append([]*pgx.QueuedQuery{{SQL: "BEGIN"}}, qs...)
		t.begun = true
	}
	if commit {
		c := &pgx.QueuedQuery{SQL: "COMMIT"}
		c.Exec(func(tag pgconn.CommandTag) error {
			if tag.String() != "COMMIT" {
				return pgx.ErrTxCommitRollback
			}
			t.committed = true
			return nil
		})
		qs = append(qs, c)
	}
	return t.conn.SendBatch(ctx, &pgx.Batch{QueuedQueries: qs}).Close()
}

// write runs fn as one transaction: fn sends its batches through the wtx,
// the last one committing. When fn fails, or returns without committing
// (nothing to write), the transaction is rolled back.
func (s *Store) write(ctx context.Context, op string, fn func(t *wtx) error) error {
	if err := s.check(ctx, op); err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return translate(op, err)
	}
	// A connection left inside a transaction (a failed rollback) is
	// destroyed by Release rather than pooled.
	defer conn.Release()
	t := &wtx{conn: conn}
	err = fn(t)
	if t.begun && !t.committed {
		// Roll back even when ctx has ended, so that the connection goes
		// back to the pool clean rather than being closed.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = conn.Exec(rctx, "ROLLBACK")
	}
	return translate(op, err)
}

// utc returns t in UTC: pgx reads timestamptz in the local zone.
func utc(t time.Time) time.Time { return t.UTC() }
