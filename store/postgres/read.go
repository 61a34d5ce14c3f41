package postgres

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/internal/rules"
)

// updatedExpr is when a session was last updated: by its last append or
// its last other change, whichever is later; sessions_recent indexes it.
const updatedExpr = `GREATEST(updated_at, appended_at)`

// sessionCols, in the order sessionRow.scan reads them.
const sessionCols = `id, title, metadata, created_at, ` + updatedExpr + ` AS updated, turns, tokens, status,
	last_seq, epoch, owner_id, owner_host, owner_pid, owner_proc, lease_acquired_at, lease_expires_at, lease_ttl_us`

// leaseCols is sessionCols without the metadata (read as '{}'), for the
// writes that do not touch it: an append need not ship a large metadata
// object from the server.
const leaseCols = `id, title, '{}'::text, created_at, GREATEST(updated_at, appended_at), turns, tokens, status,
	last_seq, epoch, owner_id, owner_host, owner_pid, owner_proc, lease_acquired_at, lease_expires_at, lease_ttl_us`

const (
	qSession = `SELECT ` + sessionCols + ` FROM sessions WHERE id = $1`
	// The writes' first statement: the session's row, locked until the
	// transaction ends, so that fencing, redelivery and the checkpoint CAS
	// decide on state no other writer can change under them. NO KEY
	// UPDATE is the lock an UPDATE of the row takes: it excludes the other
	// writers and lets readers and foreign-key checks through.
	qLockSession = qSession + ` FOR NO KEY UPDATE`
	qLockLease   = `SELECT ` + leaseCols + ` FROM sessions WHERE id = $1 FOR NO KEY UPDATE`
)

// sessionRow is a sessions row as the code works with it.
type sessionRow struct{ rules.Row }

func (r *sessionRow) scan(row pgx.Row) error {
	var (
		ownerID, ownerHost, ownerProc *string
		ownerPID                      *int32
		acquired, expires             *time.Time
		ttl                           *int64
	)
	if err := row.Scan(&r.ID, &r.Sum.Title, &r.Metadata, &r.CreatedAt, &r.UpdatedAt, &r.Sum.Turns, &r.Sum.Tokens, &r.Sum.Status,
		&r.LastSeq, &r.Epoch, &ownerID, &ownerHost, &ownerPID, &ownerProc, &acquired, &expires, &ttl); err != nil {
		return err
	}
	r.CreatedAt, r.UpdatedAt = utc(r.CreatedAt), utc(r.UpdatedAt)
	r.Holder = nil
	if ownerID != nil && expires != nil {
		h := &rules.Holder{Owner: store.Owner{ID: *ownerID, Epoch: r.Epoch}, ExpiresAt: utc(*expires)}
		if ownerHost != nil {
			h.Owner.Host = *ownerHost
		}
		if ownerPID != nil {
			h.Owner.PID = int(*ownerPID)
		}
		if ownerProc != nil {
			h.Identity = *ownerProc
		}
		if acquired != nil {
			h.AcquiredAt = utc(*acquired)
		}
		if ttl != nil {
			h.TTL = time.Duration(*ttl) * time.Microsecond
		}
		r.Holder = h
	}
	return nil
}

// loadRow scans one session row; SESS_NOT_FOUND when there is none.
func loadRow(row pgx.Row, op, id string) (*sessionRow, error) {
	var r sessionRow
	err := r.scan(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rules.NotFound(op, id)
	}
	if err != nil {
		return nil, translate(op, err)
	}
	return &r, nil
}

// Session implements store.Reader.
func (s *Store) Session(ctx context.Context, id string) (store.Session, error) {
	const op = "postgres.Session"
	if err := s.check(ctx, op); err != nil {
		return store.Session{}, err
	}
	row, err := loadRow(s.pool.QueryRow(ctx, qSession, id), op, id)
	if err != nil {
		return store.Session{}, err
	}
	out, err := row.View(s.env())
	if err != nil {
		return store.Session{}, translate(op, err)
	}
	return out, nil
}

// ListSessions implements store.Reader.
func (s *Store) ListSessions(ctx context.Context, after store.ListCursor, limit int) ([]store.Session, error) {
	const op = "postgres.ListSessions"
	if err := rules.CheckLimit(op, limit); err != nil {
		return nil, err
	}
	if err := s.check(ctx, op); err != nil {
		return nil, err
	}
	// Both forms walk sessions_recent (schema 4), reading only the rows
	// they return: the ORDER BY spells the index's expression.
	query, args := `SELECT `+sessionCols+` FROM sessions ORDER BY `+updatedExpr+` DESC, id LIMIT $1`, []any{limit}
	if after.ID != "" {
		query = `SELECT ` + sessionCols + ` FROM sessions WHERE ` + updatedExpr + ` <= $2
			AND (` + updatedExpr + ` < $2 OR id > $3) ORDER BY ` + updatedExpr + ` DESC, id LIMIT $1`
		args = []any{limit, after.UpdatedAt, after.ID}
	}
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, translate(op, err)
	}
	defer rows.Close()
	env := s.env()
	out := []store.Session{}
	for rows.Next() {
		var row sessionRow
		if err := row.scan(rows); err != nil {
			return nil, translate(op, err)
		}
		v, err := row.View(env)
		if err != nil {
			return nil, translate(op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, translate(op, err)
	}
	return out, nil
}

const qReadEvents = `SELECT seq, global_seq, event_id, type, body, stored_at FROM events
	WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`

// ReadEvents implements store.Reader. The session's last seq and the page
// are asked for in one round trip; the first answers "no such session" and
// sizes the page, and events committed in between are read all the same.
func (s *Store) ReadEvents(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]store.Record, error) {
	const op = "postgres.ReadEvents"
	if err := rules.CheckRead(op, afterSeq, limit); err != nil {
		return nil, err
	}
	if err := s.check(ctx, op); err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT last_seq FROM sessions WHERE id = $1`, sessionID)
	b.Queue(qReadEvents, sessionID, afterSeq, limit)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	var last int64
	err := br.QueryRow().Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rules.NotFound(op, sessionID)
	}
	if err != nil {
		return nil, translate(op, err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, translate(op, err)
	}
	out, err := scanEvents(rows, sessionID, int(min(int64(limit), max(last-afterSeq, 0))))
	if err != nil {
		return nil, translate(op, err)
	}
	if err := br.Close(); err != nil {
		return nil, translate(op, err)
	}
	return out, nil
}

func scanEvents(rows pgx.Rows, sessionID string, capacity int) ([]store.Record, error) {
	defer rows.Close()
	out := make([]store.Record, 0, capacity)
	for rows.Next() {
		rec := store.Record{SessionID: sessionID}
		if err := rows.Scan(&rec.Seq, &rec.GlobalSeq, &rec.ID, &rec.Type, &rec.Body, &rec.StoredAt); err != nil {
			return nil, err
		}
		rec.StoredAt = utc(rec.StoredAt)
		out = append(out, rec)
	}
	return out, rows.Err()
}

// LoadCheckpoint implements store.Reader. One statement reads the session,
// its checkpoint row and the row's parts, so it sees one snapshot.
func (s *Store) LoadCheckpoint(ctx context.Context, sessionID string) (store.Checkpoint, error) {
	const op = "postgres.LoadCheckpoint"
	if err := s.check(ctx, op); err != nil {
		return store.Checkpoint{}, err
	}
	var (
		cp     store.Checkpoint
		rev    *int64
		exists bool
	)
	err := s.pool.QueryRow(ctx, `SELECT c.revision, coalesce(c.after_seq, -1), coalesce(c.saved_at, 'epoch'),
		coalesce((SELECT string_agg(p.bytes, ''::bytea ORDER BY p.off) FROM checkpoint_parts p WHERE p.session_id = s.id), ''::bytea), true
		FROM sessions s LEFT JOIN checkpoints c ON c.session_id = s.id WHERE s.id = $1`, sessionID).
		Scan(&rev, &cp.AfterSeq, &cp.SavedAt, &cp.Payload, &exists)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Checkpoint{}, rules.NotFound(op, sessionID)
	}
	if err != nil {
		return store.Checkpoint{}, translate(op, err)
	}
	if rev == nil {
		return store.Checkpoint{}, rules.NoCheckpoint(op, sessionID)
	}
	cp.SessionID, cp.Revision, cp.SavedAt = sessionID, *rev, utc(cp.SavedAt)
	return cp, nil
}

// loadCheckpoint returns the session's checkpoint inside a write, nil when
// there is none.
func loadCheckpoint(row pgx.Row, sessionID string) (*store.Checkpoint, error) {
	cp := store.Checkpoint{SessionID: sessionID}
	err := row.Scan(&cp.Revision, &cp.AfterSeq, &cp.Payload, &cp.SavedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cp.SavedAt = utc(cp.SavedAt)
	return &cp, nil
}

// FeedCursor is a position in the store-wide feed (Store.Feed): the
// writing transaction and global sequence number of the last event read.
// The zero cursor is the feed's start.
type FeedCursor struct {
	Tx        uint64
	GlobalSeq int64
}

// qFeed reads the events after a cursor that no running transaction can
// still precede: those written by transactions older than the oldest one
// running (the snapshot's xmin). A transaction below that horizon has
// ended, so no event can appear behind the cursor later. The ORDER BY
// names the table's column: a bare tx is the output column, tx::text,
// and sorted the numbers as text ("100" before "99"), so that a page's
// cursor passed for good the events of a transaction with fewer digits.
const qFeed = `SELECT session_id, seq, global_seq, event_id, type, body, stored_at, tx::text FROM events
	WHERE (tx, global_seq) > ($1::text::xid8, $2::bigint) AND tx < pg_snapshot_xmin(pg_current_snapshot())
	ORDER BY events.tx, events.global_seq LIMIT $3`

// Feed returns up to limit events of the whole store after cursor, and the
// cursor to pass next (cursor itself when there is nothing new). Followed
// from the zero cursor it yields every committed event exactly once, in
// one order every reader sees alike, with each session's events in seq
// order, and takes no lock: appends to different sessions commit in
// parallel, so GlobalSeq alone may show a later number before an earlier
// one commits, and a reader tailing it could skip that one. The price is
// latency: an event is listed once every transaction that began before its
// own has ended, so a long transaction on the server (any database) holds
// the feed back until it ends. Codes: SESS_INVALID_CURSOR (limit out of
// range), SESS_CLOSED.
func (s *Store) Feed(ctx context.Context, after FeedCursor, limit int) ([]store.Record, FeedCursor, error) {
	const op = "postgres.Feed"
	if err := rules.CheckLimit(op, limit); err != nil {
		return nil, after, err
	}
	if err := s.check(ctx, op); err != nil {
		return nil, after, err
	}
	rows, err := s.pool.Query(ctx, qFeed, strconv.FormatUint(after.Tx, 10), after.GlobalSeq, limit)
	if err != nil {
		return nil, after, translate(op, err)
	}
	defer rows.Close()
	var out []store.Record
	next := after
	for rows.Next() {
		var (
			rec store.Record
			tx  string
		)
		if err := rows.Scan(&rec.SessionID, &rec.Seq, &rec.GlobalSeq, &rec.ID, &rec.Type, &rec.Body, &rec.StoredAt, &tx); err != nil {
			return nil, after, translate(op, err)
		}
		n, err := strconv.ParseUint(tx, 10, 64)
		if err != nil {
			return nil, after, translate(op, err)
		}
		rec.StoredAt = utc(rec.StoredAt)
		out = append(out, rec)
		next = FeedCursor{Tx: n, GlobalSeq: rec.GlobalSeq}
	}
	if err := rows.Err(); err != nil {
		return nil, after, translate(op, err)
	}
	return out, next, nil
}
