package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/internal/rules"
)

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// The session's last seq and the time of its last append are columns
// (schema 4) written by every append, so that the listing, most recently
// updated first, walks the sessions_recent index and reads only the rows
// it returns; before, each listed page computed both for every session
// from the events (and read each last event's row to get its time).
const (
	lastSeqExpr = `last_seq`
	updatedExpr = `max(updated_at, appended_at)`
)

// sessionCols, in the order sessionRow.scan reads them.
const sessionCols = `id, title, metadata, created_at, ` + updatedExpr + ` AS updated, turns, tokens, status, ` + lastSeqExpr + `, epoch,
	owner_id, owner_host, owner_pid, owner_proc, lease_acquired_at, lease_expires_at, lease_ttl`

const qLoadSession = `SELECT ` + sessionCols + ` FROM sessions WHERE id = ?`

// listCols is sessionCols with the lease's seven columns as one: NULL for
// a session nobody holds (nearly every listed row), else a JSON array of
// them. A listed row's cost is mostly per column read (the driver takes
// the connection's mutex for each), so the listing reads 11 instead of 17
// (sessionRow.scanListed).
const listCols = `id, title, metadata, created_at, ` + updatedExpr + ` AS updated, turns, tokens, status, ` + lastSeqExpr + `, epoch,
	CASE WHEN owner_id IS NULL THEN NULL ELSE json_array(owner_id, owner_host, owner_pid, owner_proc, lease_acquired_at, lease_expires_at, lease_ttl) END`

// qLoadLease is qLoadSession without the metadata (read as '{}'), for the
// writes that do not touch it: an append need not copy a large metadata
// object out of the file.
const qLoadLease = `SELECT id, title, '{}', created_at, updated_at, turns, tokens, status, ` + lastSeqExpr + `, epoch,
	owner_id, owner_host, owner_pid, owner_proc, lease_acquired_at, lease_expires_at, lease_ttl FROM sessions WHERE id = ?`

// sessionRow is a sessions row as the code works with it.
type sessionRow struct{ rules.Row }

type scanner interface{ Scan(dest ...any) error }

func (r *sessionRow) scan(sc scanner) error { return r.scanRow(sc, false) }

// scanListed reads a row of listCols.
func (r *sessionRow) scanListed(sc scanner) error { return r.scanRow(sc, true) }

// scanRow reads a row of sessionCols, or of listCols when packed (the
// lease's columns as one JSON array).
func (r *sessionRow) scanRow(sc scanner, packed bool) error {
	// One value for every column's destination: scanning through an
	// interface moves them to the heap, one allocation rather than nine.
	var v struct {
		created, updated            int64
		id, host, proc, lease       sql.NullString
		pid, acquired, expires, ttl sql.NullInt64
	}
	dest := append(make([]any, 0, 17), &r.ID, &r.Sum.Title, &r.Metadata, &v.created, &v.updated, &r.Sum.Turns, &r.Sum.Tokens,
		&r.Sum.Status, &r.LastSeq, &r.Epoch)
	if packed {
		dest = append(dest, &v.lease)
	} else {
		dest = append(dest, &v.id, &v.host, &v.pid, &v.proc, &v.acquired, &v.expires, &v.ttl)
	}
	if err := sc.Scan(dest...); err != nil {
		return err
	}
	if v.lease.Valid {
		err := json.Unmarshal([]byte(v.lease.String),
			&[]any{&v.id.String, &v.host.String, &v.pid.Int64, &v.proc.String, &v.acquired.Int64, &v.expires.Int64, &v.ttl.Int64})
		if err != nil {
			return fmt.Errorf("read the lease of session %s: %w", r.ID, err)
		}
		v.id.Valid = true
	}
	r.CreatedAt, r.UpdatedAt = fromMicros(v.created), fromMicros(v.updated)
	r.Holder = nil
	if v.id.Valid {
		r.Holder = &rules.Holder{
			Owner:      store.Owner{ID: v.id.String, Host: v.host.String, PID: int(v.pid.Int64), Epoch: r.Epoch},
			Identity:   v.proc.String,
			AcquiredAt: fromMicros(v.acquired.Int64),
			ExpiresAt:  fromMicros(v.expires.Int64),
			TTL:        time.Duration(v.ttl.Int64) * time.Microsecond,
		}
	}
	return nil
}

// loadSession reads one session row; SESS_NOT_FOUND when it is missing.
func loadSession(ctx context.Context, q querier, op, id string) (*sessionRow, error) {
	return loadRow(ctx, q, qLoadSession, op, id)
}

// loadLease reads one session row but its metadata.
func loadLease(ctx context.Context, q querier, op, id string) (*sessionRow, error) {
	return loadRow(ctx, q, qLoadLease, op, id)
}

func loadRow(ctx context.Context, q querier, query, op, id string) (*sessionRow, error) {
	var row sessionRow
	err := row.scan(q.QueryRowContext(ctx, query, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rules.NotFound(op, id)
	}
	if err != nil {
		return nil, translate(op, err)
	}
	return &row, nil
}

func sessionExists(ctx context.Context, q querier, op, id string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return rules.NotFound(op, id)
	}
	return translate(op, err)
}

// Session implements store.Reader.
func (r *Reader) Session(ctx context.Context, id string) (store.Session, error) {
	const op = "sqlite.Session"
	if err := r.check(ctx, op); err != nil {
		return store.Session{}, err
	}
	row, err := loadSession(ctx, r.rdb, op, id)
	if err != nil {
		return store.Session{}, err
	}
	s, err := row.View(r.env())
	if err != nil {
		return store.Session{}, atPath(r.path, translate(op, err))
	}
	return s, nil
}

// ListSessions implements store.Reader.
func (r *Reader) ListSessions(ctx context.Context, after store.ListCursor, limit int) ([]store.Session, error) {
	const op = "sqlite.ListSessions"
	if err := rules.CheckLimit(op, limit); err != nil {
		return nil, err
	}
	if err := r.check(ctx, op); err != nil {
		return nil, err
	}
	// Both forms walk sessions_recent: the ORDER BY spells its expression.
	query, args := `SELECT `+listCols+` FROM sessions ORDER BY `+updatedExpr+` DESC, id LIMIT ?`, []any{limit}
	if after.ID != "" {
		query = `SELECT ` + listCols + ` FROM sessions WHERE ` + updatedExpr + ` <= ?1 AND (` + updatedExpr + ` < ?1 OR id > ?2)
			ORDER BY ` + updatedExpr + ` DESC, id LIMIT ?3`
		args = []any{micros(after.UpdatedAt), after.ID, limit}
	}
	rows, err := r.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, atPath(r.path, translate(op, err))
	}
	defer rows.Close()
	env := r.env()
	out := []store.Session{}
	for rows.Next() {
		var row sessionRow
		if err := row.scanListed(rows); err != nil {
			return nil, atPath(r.path, translate(op, err))
		}
		s, err := row.View(env)
		if err != nil {
			return nil, atPath(r.path, translate(op, err))
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, atPath(r.path, translate(op, err))
	}
	return out, nil
}

// ReadEvents implements store.Reader.
func (r *Reader) ReadEvents(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]store.Record, error) {
	const op = "sqlite.ReadEvents"
	if err := rules.CheckRead(op, afterSeq, limit); err != nil {
		return nil, err
	}
	if err := r.check(ctx, op); err != nil {
		return nil, err
	}
	// The session's last seq, read first, answers "no such session" and
	// sizes the page; events committed since are read all the same.
	var last int64
	err := r.rdb.QueryRowContext(ctx, `SELECT `+lastSeqExpr+` FROM sessions WHERE id = ?`, sessionID).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rules.NotFound(op, sessionID)
	}
	if err != nil {
		return nil, atPath(r.path, translate(op, err))
	}
	out, err := readEvents(ctx, r.rdb, sessionID, afterSeq, limit, int(min(int64(limit), max(last-afterSeq, 0))))
	if err != nil {
		return nil, atPath(r.path, translate(op, err))
	}
	return out, nil
}

func readEvents(ctx context.Context, q querier, sessionID string, afterSeq int64, limit, capacity int) ([]store.Record, error) {
	rows, err := q.QueryContext(ctx, `SELECT seq, global_seq, event_id, type, body, stored_at FROM events
		WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, sessionID, afterSeq, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]store.Record, 0, capacity)
	for rows.Next() {
		rec := store.Record{SessionID: sessionID}
		var at int64
		if err := rows.Scan(&rec.Seq, &rec.GlobalSeq, &rec.ID, &rec.Type, &rec.Body, &at); err != nil {
			return nil, err
		}
		rec.StoredAt = fromMicros(at)
		out = append(out, rec)
	}
	return out, rows.Err()
}

// LoadCheckpoint implements store.Reader.
func (r *Reader) LoadCheckpoint(ctx context.Context, sessionID string) (store.Checkpoint, error) {
	const op = "sqlite.LoadCheckpoint"
	if err := r.check(ctx, op); err != nil {
		return store.Checkpoint{}, err
	}
	cp, err := loadCheckpoint(ctx, r.rdb, sessionID)
	if err != nil {
		return store.Checkpoint{}, atPath(r.path, translate(op, err))
	}
	if cp == nil {
		if err := sessionExists(ctx, r.rdb, op, sessionID); err != nil {
			return store.Checkpoint{}, err
		}
		return store.Checkpoint{}, rules.NoCheckpoint(op, sessionID)
	}
	return *cp, nil
}

// loadCheckpoint returns the session's checkpoint, nil when there is none.
// One statement reads the row and its parts, so it sees one snapshot.
func loadCheckpoint(ctx context.Context, q querier, sessionID string) (*store.Checkpoint, error) {
	rows, err := q.QueryContext(ctx, qLoadCheckpoint, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cp *store.Checkpoint
	for rows.Next() {
		var (
			off, rev, after, at int64
			b                   []byte
		)
		if err := rows.Scan(&off, &b, &rev, &after, &at); err != nil {
			return nil, err
		}
		if off < 0 {
			cp = &store.Checkpoint{SessionID: sessionID, Revision: rev, AfterSeq: after, SavedAt: fromMicros(at), Payload: b}
			continue
		}
		if cp != nil {
			cp.Payload = append(cp.Payload, b...)
		}
	}
	return cp, rows.Err()
}

// qLoadCheckpoint reads the checkpoint row (off -1, its payload column:
// empty since schema 3) and then its parts in order.
const qLoadCheckpoint = `SELECT -1 AS o, payload, revision, after_seq, saved_at FROM checkpoints WHERE session_id = ?1
	UNION ALL SELECT off, bytes, 0, 0, 0 FROM checkpoint_parts WHERE session_id = ?1 ORDER BY o`

// checkpointHead returns the checkpoint's revision, cursor and size
// without its payload, nil when there is none.
func checkpointHead(ctx context.Context, q querier, sessionID string) (*rules.Head, error) {
	var h rules.Head
	err := q.QueryRowContext(ctx, `SELECT revision, after_seq, size FROM checkpoints WHERE session_id = ?`, sessionID).Scan(&h.Revision, &h.AfterSeq, &h.Size)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return &h, err
}

// checkpointSuffix reads the checkpoint's payload from byte keep on.
func checkpointSuffix(ctx context.Context, q querier, sessionID string, keep int64) ([]byte, error) {
	rows, err := q.QueryContext(ctx, `SELECT substr(bytes, max(?2 - off, 0) + 1) FROM checkpoint_parts
		WHERE session_id = ?1 AND off + length(bytes) > ?2 ORDER BY off`, sessionID, keep)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, rows.Err()
}
