package sqlite

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/internal/rules"
)

// The statements of the hot write paths, prepared once per store.
const (
	qInsertEvent = `INSERT INTO events (session_id, seq, event_id, type, body, stored_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING`
	qUpdateAfterAppend = `UPDATE sessions SET title = ?, turns = ?, tokens = ?, status = ?, lease_expires_at = ?,
		last_seq = ?, appended_at = ? WHERE id = ?`
	qEventByID = `SELECT session_id, seq, global_seq, type, body, stored_at FROM events WHERE event_id = ?`
)

var preparedQueries = []string{qLoadSession, qLoadLease, qInsertEvent, qUpdateAfterAppend, qEventByID}

// wtx is a write transaction whose statements run through the statements
// prepared on the writer connection when their text is one of
// preparedQueries, and are prepared for the call otherwise.
type wtx struct {
	*sql.Tx
	prepared map[string]*sql.Stmt
}

func (t *wtx) stmt(ctx context.Context, query string) *sql.Stmt {
	if st, ok := t.prepared[query]; ok {
		return t.Tx.StmtContext(ctx, st)
	}
	return nil
}

func (t *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

func (t *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

// CreateSession implements store.Store.
func (s *Store) CreateSession(ctx context.Context, init store.SessionInit) (store.Session, error) {
	const op = "sqlite.CreateSession"
	if init.ID == "" {
		init.ID = rules.NewSessionID()
	}
	if err := rules.CheckID(op, "session id", init.ID); err != nil {
		return store.Session{}, err
	}
	if err := rules.CheckMetadata(op, init.Metadata); err != nil {
		return store.Session{}, err
	}
	title := rules.Title(init.Title)
	var out store.Session
	err := s.write(ctx, op, func(tx *wtx) (bool, error) {
		env := s.env()
		row, err := loadSession(ctx, tx, op, init.ID)
		if err == nil {
			old, err := row.View(env)
			if err != nil {
				return false, err
			}
			same := old.Title == title && maps.Equal(old.Metadata, rules.CopyMetadata(init.Metadata)) &&
				(init.CreatedAt.IsZero() || old.CreatedAt.Equal(init.CreatedAt.UTC().Truncate(store.TimePrecision)))
			if !same {
				return false, rules.EventConflict(op, init.ID, "this store")
			}
			out = old
			return false, nil
		}
		if errcode.Of(err) != errcode.SessNotFound {
			return false, err
		}
		created := env.Now
		if !init.CreatedAt.IsZero() {
			created = init.CreatedAt.UTC().Truncate(store.TimePrecision)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, title, metadata, created_at, updated_at, status) VALUES (?, ?, ?, ?, ?, ?)`,
			init.ID, title, rules.EncodeMetadata(init.Metadata), micros(created), micros(created), store.StatusIdle); err != nil {
			return false, err
		}
		out = store.Session{
			ID: init.ID, Title: title, Metadata: rules.CopyMetadata(init.Metadata),
			CreatedAt: created, UpdatedAt: created, Status: store.StatusIdle, LastSeq: -1,
		}
		return true, nil
	})
	if err != nil {
		return store.Session{}, err
	}
	return out, nil
}

// SetTitle implements store.Store.
func (s *Store) SetTitle(ctx context.Context, id, title string) error {
	const op = "sqlite.SetTitle"
	return s.write(ctx, op, func(tx *wtx) (bool, error) {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET title = ?, updated_at = ? WHERE id = ?`,
			rules.Title(title), micros(s.env().Now), id)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, err
		}
		if n == 0 {
			return false, rules.NotFound(op, id)
		}
		return true, nil
	})
}

// SetMetadata implements store.Store.
func (s *Store) SetMetadata(ctx context.Context, id string, who store.Owner, md map[string]string) error {
	const op = "sqlite.SetMetadata"
	return s.write(ctx, op, func(tx *wtx) (bool, error) {
		row, err := loadSession(ctx, tx, op, id)
		if err != nil {
			return false, err
		}
		if err := rules.Fence(op, id, row.Holder, who); err != nil {
			return false, err
		}
		merged, err := rules.UpdateMetadata(op, id, row.Metadata, md)
		if err != nil {
			return false, err
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET metadata = ?, updated_at = ? WHERE id = ?`,
			merged, micros(s.env().Now), id)
		return err == nil, err
	})
}

// writeHolder stores a session's lease (nil: none), epoch and status.
func writeHolder(ctx context.Context, tx *wtx, id string, epoch int64, h *rules.Holder, status string) error {
	if h == nil {
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET epoch = ?, status = ?, owner_id = NULL, owner_host = NULL,
			owner_pid = NULL, owner_proc = NULL, lease_acquired_at = NULL, lease_expires_at = NULL, lease_ttl = NULL WHERE id = ?`,
			epoch, status, id)
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE sessions SET epoch = ?, status = ?, owner_id = ?, owner_host = ?,
		owner_pid = ?, owner_proc = ?, lease_acquired_at = ?, lease_expires_at = ?, lease_ttl = ? WHERE id = ?`,
		epoch, status, h.Owner.ID, h.Owner.Host, h.Owner.PID, h.Identity,
		micros(h.AcquiredAt), micros(h.ExpiresAt), h.TTL.Microseconds(), id)
	return err
}

// Acquire implements store.Store.
func (s *Store) Acquire(ctx context.Context, sessionID string, who store.Owner, opts store.AcquireOptions) (store.Owner, error) {
	const op = "sqlite.Acquire"
	var out store.Owner
	err := s.write(ctx, op, func(tx *wtx) (bool, error) {
		row, err := loadLease(ctx, tx, op, sessionID)
		if err != nil {
			return false, err
		}
		if err := rules.Unmoved(op, sessionID, row.LastSeq, opts); err != nil {
			return false, err
		}
		g, err := rules.Acquire(op, sessionID, row.Epoch, row.Holder, who, opts, s.env())
		if err != nil {
			return false, err
		}
		status := row.Sum.Status
		if g.Displaced {
			status = rules.Displace(status)
		}
		out = g.Holder.Owner
		return true, writeHolder(ctx, tx, sessionID, g.Holder.Owner.Epoch, &g.Holder, status)
	})
	if err != nil {
		return store.Owner{}, err
	}
	return out, nil
}

// Renew implements store.Store.
func (s *Store) Renew(ctx context.Context, sessionID string, who store.Owner, d time.Duration) error {
	const op = "sqlite.Renew"
	return s.write(ctx, op, func(tx *wtx) (bool, error) {
		row, err := loadLease(ctx, tx, op, sessionID)
		if err != nil {
			return false, err
		}
		h, err := rules.Renew(op, sessionID, row.Holder, who, d, s.env().Now)
		if err != nil {
			return false, err
		}
		return true, writeHolder(ctx, tx, sessionID, row.Epoch, &h, row.Sum.Status)
	})
}

// Release implements store.Store.
func (s *Store) Release(ctx context.Context, sessionID string, who store.Owner) error {
	const op = "sqlite.Release"
	return s.write(ctx, op, func(tx *wtx) (bool, error) {
		row, err := loadLease(ctx, tx, op, sessionID)
		if err != nil {
			return false, err
		}
		if err := rules.Fence(op, sessionID, row.Holder, who); err != nil {
			return false, err
		}
		return true, writeHolder(ctx, tx, sessionID, row.Epoch, nil, rules.Displace(row.Sum.Status))
	})
}

// Append implements store.Store.
func (s *Store) Append(ctx context.Context, sessionID string, who store.Owner, ev store.EventIn) (store.Record, error) {
	recs, err := s.appendAll(ctx, "sqlite.Append", sessionID, who, []store.EventIn{ev})
	if err != nil {
		return store.Record{}, err
	}
	return recs[0], nil
}

// AppendBatch implements store.Store.
func (s *Store) AppendBatch(ctx context.Context, sessionID string, who store.Owner, evs []store.EventIn) ([]store.Record, error) {
	return s.appendAll(ctx, "sqlite.AppendBatch", sessionID, who, evs)
}

// appendAll appends evs in one transaction: fence, then for each event
// insert it at the next seq unless its ID exists (then compare: the same
// bytes in the same session is a redelivery, anything else a conflict),
// then fold the new events into the session row. A call that adds nothing
// rolls back and costs no commit.
func (s *Store) appendAll(ctx context.Context, op, sessionID string, who store.Owner, evs []store.EventIn) ([]store.Record, error) {
	effects, err := rules.CheckEvents(op, evs)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, nil
	}
	out := make([]store.Record, len(evs))
	err = s.write(ctx, op, func(tx *wtx) (bool, error) {
		row, err := loadLease(ctx, tx, op, sessionID)
		if err != nil {
			return false, err
		}
		if err := rules.Fence(op, sessionID, row.Holder, who); err != nil {
			return false, err
		}
		return appendTx(ctx, tx, op, row, evs, effects, out, s.env().Now)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendTx inserts evs into the session of row (fenced by the caller),
// filling out, and folds the new ones into the row. It reports whether
// anything was written.
func appendTx(ctx context.Context, tx *wtx, op string, row *sessionRow, evs []store.EventIn, effects []rules.Effect, out []store.Record, now time.Time) (bool, error) {
	sessionID := row.ID
	sum, next := row.Sum, row.LastSeq+1
	for i, ev := range evs {
		res, err := tx.ExecContext(ctx, qInsertEvent, sessionID, next, ev.ID, ev.Type, string(ev.Body), micros(now))
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, err
		}
		if n == 0 {
			old, err := eventByID(ctx, tx, ev.ID)
			if err != nil {
				return false, err
			}
			if old.SessionID != sessionID || old.Type != ev.Type || string(old.Body) != string(ev.Body) {
				return false, rules.EventConflict(op, ev.ID, old.SessionID)
			}
			out[i] = old
			continue
		}
		global, err := res.LastInsertId()
		if err != nil {
			return false, err
		}
		out[i] = store.Record{
			SessionID: sessionID, Seq: next, GlobalSeq: global,
			ID: ev.ID, Type: ev.Type, Body: slices.Clone(ev.Body), StoredAt: now,
		}
		effects[i].Apply(&sum)
		next++
	}
	if next == row.LastSeq+1 {
		return false, nil
	}
	// The row carries the last seq and the time of this append (for the
	// listing's index), the summary and the lease.
	h := row.Holder
	rules.Extend(h, now)
	_, err := tx.ExecContext(ctx, qUpdateAfterAppend, sum.Title, sum.Turns, sum.Tokens, sum.Status, micros(h.ExpiresAt),
		next-1, micros(now), sessionID)
	return err == nil, err
}

// StartSession implements store.Store.
func (s *Store) StartSession(ctx context.Context, init store.SessionInit, who store.Owner, first []store.EventIn) (store.Owner, []store.Record, error) {
	const op = "sqlite.StartSession"
	init, h, effects, err := rules.Start(op, init, who, first, s.env())
	if err != nil {
		return store.Owner{}, nil, err
	}
	out := make([]store.Record, len(first))
	err = s.write(ctx, op, func(tx *wtx) (bool, error) {
		if _, err := loadLease(ctx, tx, op, init.ID); errcode.Of(err) != errcode.SessNotFound {
			if err == nil {
				err = rules.Exists(op, init.ID)
			}
			return false, err
		}
		created := micros(init.CreatedAt)
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, title, metadata, created_at, updated_at, status) VALUES (?, ?, ?, ?, ?, ?)`,
			init.ID, init.Title, rules.EncodeMetadata(init.Metadata), created, created, store.StatusIdle); err != nil {
			return false, err
		}
		if err := writeHolder(ctx, tx, init.ID, h.Owner.Epoch, &h, store.StatusIdle); err != nil {
			return false, err
		}
		row := &sessionRow{rules.Row{ID: init.ID, Sum: rules.Summary{Title: init.Title, Status: store.StatusIdle},
			CreatedAt: init.CreatedAt, UpdatedAt: init.CreatedAt, LastSeq: -1, Epoch: h.Owner.Epoch, Holder: &h}}
		wrote, err := appendTx(ctx, tx, op, row, first, effects, out, s.env().Now)
		if err == nil && !wrote {
			err = rules.EventConflict(op, first[0].ID, "another session")
		}
		return err == nil, err
	})
	if err != nil {
		return store.Owner{}, nil, err
	}
	return h.Owner, out, nil
}

// qEmptySessions lists the sessions without events or checkpoint created
// before ?.
const qEmptySessions = `SELECT ` + sessionCols + ` FROM sessions WHERE created_at < ? AND last_seq = -1
	AND NOT EXISTS (SELECT 1 FROM events WHERE session_id = sessions.id)
	AND NOT EXISTS (SELECT 1 FROM checkpoints WHERE session_id = sessions.id)`

// RemoveEmpty implements store.Store.
func (s *Store) RemoveEmpty(ctx context.Context, before time.Time) ([]string, error) {
	const op = "sqlite.RemoveEmpty"
	var out []string
	err := s.write(ctx, op, func(tx *wtx) (bool, error) {
		out = nil
		// Through sessions_empty (last_seq = -1): only the rows of the
		// sessions without events are read, without a probe of the events
		// index for the others (on a store of 2,760 sessions the probes,
		// and then the scan of every row, filled the writer's page cache,
		// left resident in a one-answer run). No ORDER BY, which would
		// have the table scanned in key order instead.
		rows, err := tx.QueryContext(ctx, qEmptySessions, micros(before))
		if err != nil {
			return false, err
		}
		env := s.env()
		for rows.Next() {
			var row sessionRow
			if err := row.scan(rows); err != nil {
				rows.Close()
				return false, err
			}
			if !env.Live(row.Holder) {
				out = append(out, row.ID)
			}
		}
		if err := rows.Close(); err != nil {
			return false, err
		}
		slices.Sort(out)
		for _, id := range out {
			if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
				return false, err
			}
		}
		return len(out) > 0, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func eventByID(ctx context.Context, q querier, id string) (store.Record, error) {
	rec := store.Record{ID: id}
	var at int64
	err := q.QueryRowContext(ctx, qEventByID, id).
		Scan(&rec.SessionID, &rec.Seq, &rec.GlobalSeq, &rec.Type, &rec.Body, &at)
	rec.StoredAt = fromMicros(at)
	return rec, err
}

// putCheckpoint writes the checkpoint row of cp and its payload: the first
// keep bytes of the current one (cut at keep), then tail as a part of its
// own.
func putCheckpoint(ctx context.Context, tx *wtx, sessionID string, cp store.Checkpoint, keep int64, tail []byte) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoint_parts WHERE session_id = ? AND off >= ?`, sessionID, keep); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE checkpoint_parts SET bytes = substr(bytes, 1, ?2 - off)
		WHERE session_id = ?1 AND off < ?2 AND off + length(bytes) > ?2`, sessionID, keep); err != nil {
		return err
	}
	if len(tail) > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO checkpoint_parts (session_id, off, bytes) VALUES (?, ?, ?)`, sessionID, keep, tail); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO checkpoints (session_id, revision, after_seq, payload, saved_at, size) VALUES (?, ?, ?, x'', ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET revision = excluded.revision, after_seq = excluded.after_seq,
		saved_at = excluded.saved_at, size = excluded.size`,
		sessionID, cp.Revision, cp.AfterSeq, micros(cp.SavedAt), keep+int64(len(tail)))
	return err
}

// AppendCheckpoint implements store.Store.
func (s *Store) AppendCheckpoint(ctx context.Context, sessionID string, who store.Owner, expectedRevision, afterSeq, keep int64, tail []byte) (store.Checkpoint, error) {
	const op = "sqlite.AppendCheckpoint"
	if err := rules.CheckAppendInput(op, expectedRevision, afterSeq, keep, tail); err != nil {
		return store.Checkpoint{}, err
	}
	return s.writeCheckpoint(ctx, op, sessionID, who, func(tx *wtx, lastSeq int64) (store.Checkpoint, bool, error) {
		cur, err := checkpointHead(ctx, tx, sessionID)
		if err != nil {
			return store.Checkpoint{}, false, err
		}
		same, err := rules.DecideAppend(op, sessionID, cur, lastSeq, expectedRevision, afterSeq, keep, tail,
			func() ([]byte, error) { return checkpointSuffix(ctx, tx, sessionID, keep) })
		if err != nil || !same {
			return store.Checkpoint{}, false, err
		}
		var at int64
		err = tx.QueryRowContext(ctx, `SELECT saved_at FROM checkpoints WHERE session_id = ?`, sessionID).Scan(&at)
		return store.Checkpoint{SessionID: sessionID, Revision: cur.Revision, AfterSeq: cur.AfterSeq, SavedAt: fromMicros(at)}, true, err
	}, func(now time.Time) (store.Checkpoint, int64, []byte) {
		return store.Checkpoint{SessionID: sessionID, Revision: expectedRevision + 1, AfterSeq: afterSeq, SavedAt: now}, keep, tail
	})
}

// SaveCheckpoint implements store.Store.
func (s *Store) SaveCheckpoint(ctx context.Context, sessionID string, who store.Owner, expectedRevision, afterSeq int64, payload []byte) (store.Checkpoint, error) {
	const op = "sqlite.SaveCheckpoint"
	if err := rules.CheckCheckpointInput(op, expectedRevision, afterSeq, payload); err != nil {
		return store.Checkpoint{}, err
	}
	return s.writeCheckpoint(ctx, op, sessionID, who, func(tx *wtx, lastSeq int64) (store.Checkpoint, bool, error) {
		cur, err := loadCheckpoint(ctx, tx, sessionID)
		if err != nil {
			return store.Checkpoint{}, false, err
		}
		same, err := rules.DecideCheckpoint(op, sessionID, cur, lastSeq, expectedRevision, afterSeq, payload)
		if err != nil || !same {
			return store.Checkpoint{}, false, err
		}
		return *cur, true, nil
	}, func(now time.Time) (store.Checkpoint, int64, []byte) {
		return store.Checkpoint{SessionID: sessionID, Revision: expectedRevision + 1, AfterSeq: afterSeq, Payload: slices.Clone(payload), SavedAt: now}, 0, payload
	})
}

// writeCheckpoint is the one transaction of a checkpoint save or append:
// the lease is loaded and fenced; decide compares the call with what is
// stored and returns the stored checkpoint for an identical retry;
// otherwise next names the new checkpoint (stamped now) and the pieces of
// its row (the first keep bytes of the old payload, then tail), which are
// written and the lease extended.
func (s *Store) writeCheckpoint(ctx context.Context, op, sessionID string, who store.Owner,
	decide func(tx *wtx, lastSeq int64) (store.Checkpoint, bool, error),
	next func(now time.Time) (store.Checkpoint, int64, []byte)) (store.Checkpoint, error) {
	var out store.Checkpoint
	err := s.write(ctx, op, func(tx *wtx) (bool, error) {
		row, err := loadLease(ctx, tx, op, sessionID)
		if err != nil {
			return false, err
		}
		if err := rules.Fence(op, sessionID, row.Holder, who); err != nil {
			return false, err
		}
		stored, same, err := decide(tx, row.LastSeq)
		if err != nil || same {
			out = stored
			return false, err
		}
		now := s.env().Now
		cp, keep, tail := next(now)
		out = cp
		if err := putCheckpoint(ctx, tx, sessionID, cp, keep, tail); err != nil {
			return false, err
		}
		if h := row.Holder; rules.Extend(h, now) {
			_, err = tx.ExecContext(ctx, `UPDATE sessions SET lease_expires_at = ? WHERE id = ?`, micros(h.ExpiresAt), sessionID)
		}
		return err == nil, err
	})
	if err != nil {
		return store.Checkpoint{}, err
	}
	return out, nil
}
