package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/internal/rules"
)

// CreateSession implements store.Store.
func (s *Store) CreateSession(ctx context.Context, init store.SessionInit) (store.Session, error) {
	const op = "postgres.CreateSession"
	if init.ID == "" {
		init.ID = rules.NewSessionID()
	}
	if err := rules.CheckID(op, "session id", init.ID); err != nil {
		return store.Session{}, err
	}
	if err := rules.CheckMetadata(op, init.Metadata); err != nil {
		return store.Session{}, err
	}
	if err := s.check(ctx, op); err != nil {
		return store.Session{}, err
	}
	title := rules.Title(init.Title)
	env := s.env()
	created := env.Now
	if !init.CreatedAt.IsZero() {
		created = init.CreatedAt.UTC().Truncate(store.TimePrecision)
	}
	// One statement: a concurrent create of the same ID waits for the
	// other's commit, then inserts nothing and compares below.
	var id string
	err := s.pool.QueryRow(ctx, `INSERT INTO sessions (id, title, metadata, created_at, updated_at, status)
		VALUES ($1, $2, $3, $4, $4, $5) ON CONFLICT (id) DO NOTHING RETURNING id`,
		init.ID, title, rules.EncodeMetadata(init.Metadata), created, store.StatusIdle).Scan(&id)
	if err == nil {
		return store.Session{
			ID: init.ID, Title: title, Metadata: rules.CopyMetadata(init.Metadata),
			CreatedAt: created, UpdatedAt: created, Status: store.StatusIdle, LastSeq: -1,
		}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return store.Session{}, translate(op, err)
	}
	row, err := loadRow(s.pool.QueryRow(ctx, qSession, init.ID), op, init.ID)
	if err != nil {
		return store.Session{}, err
	}
	old, err := row.View(env)
	if err != nil {
		return store.Session{}, translate(op, err)
	}
	same := old.Title == title && maps.Equal(old.Metadata, rules.CopyMetadata(init.Metadata)) &&
		(init.CreatedAt.IsZero() || old.CreatedAt.Equal(created))
	if !same {
		return store.Session{}, rules.EventConflict(op, init.ID, "this store")
	}
	return old, nil
}

// SetTitle implements store.Store.
func (s *Store) SetTitle(ctx context.Context, id, title string) error {
	const op = "postgres.SetTitle"
	if err := s.check(ctx, op); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE sessions SET title = $2, updated_at = $3 WHERE id = $1`, id, rules.Title(title), s.env().Now)
	if err != nil {
		return translate(op, err)
	}
	if tag.RowsAffected() == 0 {
		return rules.NotFound(op, id)
	}
	return nil
}

// SetMetadata implements store.Store.
func (s *Store) SetMetadata(ctx context.Context, id string, who store.Owner, md map[string]string) error {
	const op = "postgres.SetMetadata"
	return s.write(ctx, op, func(t *wtx) error {
		var row *sessionRow
		b := &pgx.Batch{}
		b.Queue(qLockSession, id).QueryRow(func(r pgx.Row) (err error) { row, err = loadRow(r, op, id); return err })
		if err := t.send(ctx, b, false); err != nil {
			return err
		}
		if err := rules.Fence(op, id, row.Holder, who); err != nil {
			return err
		}
		merged, err := rules.UpdateMetadata(op, id, row.Metadata, md)
		if err != nil {
			return err
		}
		w := &pgx.Batch{}
		w.Queue(`UPDATE sessions SET metadata = $2, updated_at = $3 WHERE id = $1`, id, merged, s.env().Now)
		return t.send(ctx, w, true)
	})
}

// lockLease sends the transaction's first batch: the session's row,
// locked, without its metadata.
func lockLease(ctx context.Context, t *wtx, op, id string) (*sessionRow, error) {
	var row *sessionRow
	b := &pgx.Batch{}
	b.Queue(qLockLease, id).QueryRow(func(r pgx.Row) (err error) { row, err = loadRow(r, op, id); return err })
	if err := t.send(ctx, b, false); err != nil {
		return nil, err
	}
	return row, nil
}

// queueHolder queues the write of a session's lease (nil: none), epoch and status.
func queueHolder(b *pgx.Batch, id string, epoch int64, h *rules.Holder, status string) {
	if h == nil {
		b.Queue(`UPDATE sessions SET epoch = $2, status = $3, owner_id = NULL, owner_host = NULL,
			owner_pid = NULL, owner_proc = NULL, lease_acquired_at = NULL, lease_expires_at = NULL, lease_ttl_us = NULL WHERE id = $1`,
			id, epoch, status)
		return
	}
	b.Queue(`UPDATE sessions SET epoch = $2, status = $3, owner_id = $4, owner_host = $5,
		owner_pid = $6, owner_proc = $7, lease_acquired_at = $8, lease_expires_at = $9, lease_ttl_us = $10 WHERE id = $1`,
		id, epoch, status, h.Owner.ID, h.Owner.Host, int32(h.Owner.PID), h.Identity,
		h.AcquiredAt, h.ExpiresAt, h.TTL.Microseconds())
}

// Acquire implements store.Store.
func (s *Store) Acquire(ctx context.Context, sessionID string, who store.Owner, opts store.AcquireOptions) (store.Owner, error) {
	const op = "postgres.Acquire"
	var out store.Owner
	err := s.write(ctx, op, func(t *wtx) error {
		row, err := lockLease(ctx, t, op, sessionID)
		if err != nil {
			return err
		}
		if err := rules.Unmoved(op, sessionID, row.LastSeq, opts); err != nil {
			return err
		}
		g, err := rules.Acquire(op, sessionID, row.Epoch, row.Holder, who, opts, s.env())
		if err != nil {
			return err
		}
		status := row.Sum.Status
		if g.Displaced {
			status = rules.Displace(status)
		}
		out = g.Holder.Owner
		w := &pgx.Batch{}
		queueHolder(w, sessionID, g.Holder.Owner.Epoch, &g.Holder, status)
		return t.send(ctx, w, true)
	})
	if err != nil {
		return store.Owner{}, err
	}
	return out, nil
}

// Renew implements store.Store.
func (s *Store) Renew(ctx context.Context, sessionID string, who store.Owner, d time.Duration) error {
	const op = "postgres.Renew"
	return s.write(ctx, op, func(t *wtx) error {
		row, err := lockLease(ctx, t, op, sessionID)
		if err != nil {
			return err
		}
		h, err := rules.Renew(op, sessionID, row.Holder, who, d, s.env().Now)
		if err != nil {
			return err
		}
		w := &pgx.Batch{}
		queueHolder(w, sessionID, row.Epoch, &h, row.Sum.Status)
		return t.send(ctx, w, true)
	})
}

// Release implements store.Store.
func (s *Store) Release(ctx context.Context, sessionID string, who store.Owner) error {
	const op = "postgres.Release"
	return s.write(ctx, op, func(t *wtx) error {
		row, err := lockLease(ctx, t, op, sessionID)
		if err != nil {
			return err
		}
		if err := rules.Fence(op, sessionID, row.Holder, who); err != nil {
			return err
		}
		w := &pgx.Batch{}
		queueHolder(w, sessionID, row.Epoch, nil, rules.Displace(row.Sum.Status))
		return t.send(ctx, w, true)
	})
}

// Append implements store.Store.
func (s *Store) Append(ctx context.Context, sessionID string, who store.Owner, ev store.EventIn) (store.Record, error) {
	recs, err := s.appendAll(ctx, "postgres.Append", sessionID, who, []store.EventIn{ev})
	if err != nil {
		return store.Record{}, err
	}
	return recs[0], nil
}

// AppendBatch implements store.Store.
func (s *Store) AppendBatch(ctx context.Context, sessionID string, who store.Owner, evs []store.EventIn) ([]store.Record, error) {
	return s.appendAll(ctx, "postgres.AppendBatch", sessionID, who, evs)
}

const (
	// qStoredEvent and qStoredEvents find the events of a call already
	// stored, in any session: one probe of the event_id index per ID,
	// whatever the table's statistics say. The server keeps one plan of a
	// prepared statement per connection. The earlier form (event_id IN
	// (SELECT unnest($1))) was planned for ten IDs; made while the table
	// was new and small, that plan was a hash join over a scan of the
	// whole table, kept while the table grew: every append read every
	// event stored since (50 pages per append in a benchmark's first
	// seconds, the server's CPU per append 1.6 times pgbench's). A call of
	// one event, nearly every append, looks its ID up alone, planned once;
	// a call of several probes the index per ID through a lateral join,
	// which the server plans for each call (a plan kept for ten IDs would
	// look dearer than one for the call's).
	qStoredEvent  = `SELECT event_id, session_id, seq, global_seq, type, body, stored_at FROM events WHERE event_id = $1`
	qStoredEvents = `SELECT e.event_id, e.session_id, e.seq, e.global_seq, e.type, e.body, e.stored_at
		FROM unnest($1::text[]) AS k (id)
		CROSS JOIN LATERAL (SELECT * FROM events WHERE event_id = k.id OFFSET 0) AS e`
	// qLockAppend serializes the appends to one session before anything
	// else of theirs happens (it gives the transaction no ID). The row lock
	// that follows gives the transaction its ID, so that of two appends to
	// one session the later always has the larger tx: Feed, which orders by
	// tx, lists a session's events in seq order.
	qLockAppend = `SELECT pg_advisory_xact_lock(hashtextextended('harness append ' || $1::text, 0))`
	// qInsertEvents inserts session $1's events ($4 IDs, $5 types, $6
	// bodies) at seqs $2, $2+1, …, stored at $3, numbering them from the
	// global sequence in seq order (ORDER BY the ordinality, which the scan
	// already yields: no sort), and returns each one's seq and number. The
	// sequence hands numbers out without waiting for other sessions'
	// appends to commit. The statement has one plan whatever its arguments,
	// so the server plans it once per connection: the numbering it replaced
	// (generate_series, then row_number over the numbers) was planned anew
	// at every append, which cost more server time than the insert itself.
	qInsertEvents = `INSERT INTO events (global_seq, session_id, seq, event_id, type, body, stored_at)
		SELECT nextval('event_global_seq'), $1::text, $2::bigint + e.n - 1, e.id, e.type, e.body, $3::timestamptz
		FROM unnest($4::text[], $5::text[], $6::bytea[]) WITH ORDINALITY AS e (id, type, body, n)
		ORDER BY e.n
		RETURNING seq, global_seq`
	qUpdateAfterAppend = `UPDATE sessions SET last_seq = $2, appended_at = $3, title = $4, turns = $5, tokens = $6, status = $7,
		lease_expires_at = $8 WHERE id = $1`
)

// appendAll appends evs in one transaction of two round trips: first
// BEGIN, lock the session's appends and its row, and look up the call's
// event IDs; then fence, and for each event decide: stored with the same
// bytes in the same session is a redelivery, stored otherwise a conflict,
// new gets the next seq; then insert the new events numbered from the
// global sequence, fold them into the session's row, and COMMIT. A call
// that adds nothing rolls back and costs no commit.
func (s *Store) appendAll(ctx context.Context, op, sessionID string, who store.Owner, evs []store.EventIn) ([]store.Record, error) {
	effects, err := rules.CheckEvents(op, evs)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, nil
	}
	out := make([]store.Record, len(evs))
	reprepared := false
	// A server that restarts (or a connection it drops) is ridden out:
	// the append is tried again on a new connection, a bounded number of
	// times. It is safe: an event the lost attempt did commit is found
	// stored with the same bytes, a redelivery.
	for attempt := 0; ; attempt++ {
		err = s.write(ctx, op, func(t *wtx) error {
			row, stored, err := lockAndFind(ctx, t, op, sessionID, evs)
			if err != nil {
				return err
			}
			if err := rules.Fence(op, sessionID, row.holder, who); err != nil {
				return err
			}
			_, err = appendIn(ctx, t, op, row, stored, evs, effects, out, s.env().Now)
			return err
		})
		if err == nil {
			return out, nil
		}
		if stale(err) && !reprepared {
			// The connection had lost the append's statements (forget):
			// they are prepared again at once.
			reprepared = true
			attempt--
			continue
		}
		if !wentAway(err) {
			return nil, err
		}
		if attempt == len(appendRetries) {
			return nil, &errcode.Error{Code: errcode.SessClosed, Op: op, Err: err,
				Message: fmt.Sprintf("the store server went away and did not come back within %s: %s", retryWindow(), errcode.Message(err))}
		}
		select {
		case <-ctx.Done():
			return nil, translate(op, ctx.Err())
		case <-time.After(appendRetries[attempt]):
		}
	}
}

// appendRetries are the waits before each new attempt of an append whose
// server went away: about 15 s in all, what a restart takes.
var appendRetries = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}

func retryWindow() time.Duration {
	var d time.Duration
	for _, w := range appendRetries {
		d += w
	}
	return d
}

// StartSession implements store.Store: the first batch inserts the
// session with its holder, the second locks its appends and looks up the
// events' IDs (lockAndFind), the third is an append's (appendIn).
func (s *Store) StartSession(ctx context.Context, init store.SessionInit, who store.Owner, first []store.EventIn) (store.Owner, []store.Record, error) {
	const op = "postgres.StartSession"
	init, h, effects, err := rules.Start(op, init, who, first, s.env())
	if err != nil {
		return store.Owner{}, nil, err
	}
	out := make([]store.Record, len(first))
	err = s.write(ctx, op, func(t *wtx) error {
		inserted := false
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO sessions (id, title, metadata, created_at, updated_at, status)
			VALUES ($1, $2, $3, $4, $4, $5) ON CONFLICT (id) DO NOTHING`,
			init.ID, init.Title, rules.EncodeMetadata(init.Metadata), init.CreatedAt, store.StatusIdle).
			Exec(func(tag pgconn.CommandTag) error { inserted = tag.RowsAffected() == 1; return nil })
		// Should the session exist, this changes its holder only inside
		// the transaction that the refusal below rolls back.
		queueHolder(b, init.ID, h.Owner.Epoch, &h, store.StatusIdle)
		if err := t.send(ctx, b, false); err != nil {
			return err
		}
		if !inserted {
			return rules.Exists(op, init.ID)
		}
		row, stored, err := lockAndFind(ctx, t, op, init.ID, first)
		if err != nil {
			return err
		}
		wrote, err := appendIn(ctx, t, op, row, stored, first, effects, out, s.env().Now)
		if err == nil && !wrote {
			err = rules.EventConflict(op, first[0].ID, "another session")
		}
		return err
	})
	if err != nil {
		return store.Owner{}, nil, err
	}
	return h.Owner, out, nil
}

// RemoveEmpty implements store.Store.
func (s *Store) RemoveEmpty(ctx context.Context, before time.Time) ([]string, error) {
	const op = "postgres.RemoveEmpty"
	var out []string
	err := s.write(ctx, op, func(t *wtx) error {
		out = nil
		var rows []*sessionRow
		b := &pgx.Batch{}
		b.Queue(`SELECT `+leaseCols+` FROM sessions WHERE created_at < $1 AND last_seq = -1
			AND NOT EXISTS (SELECT 1 FROM events WHERE session_id = sessions.id)
			AND NOT EXISTS (SELECT 1 FROM checkpoints WHERE session_id = sessions.id)
			ORDER BY id FOR UPDATE SKIP LOCKED`, before).Query(func(r pgx.Rows) error {
			for r.Next() {
				var row sessionRow
				if err := row.scan(r); err != nil {
					return err
				}
				rows = append(rows, &row)
			}
			return r.Err()
		})
		if err := t.send(ctx, b, false); err != nil {
			return err
		}
		env := s.env()
		for _, row := range rows {
			if !env.Live(row.Holder) {
				out = append(out, row.ID)
			}
		}
		if len(out) == 0 {
			return nil
		}
		w := &pgx.Batch{}
		w.Queue(`DELETE FROM sessions WHERE id = ANY($1::text[])`, out)
		return t.send(ctx, w, true)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// queuePut queues the writes of checkpoint cp whose payload is the first
// keep bytes of the current one (cut at keep), then tail as a part of its
// own.
func queuePut(w *pgx.Batch, sessionID string, cp store.Checkpoint, keep int64, tail []byte) {
	w.Queue(`DELETE FROM checkpoint_parts WHERE session_id = $1 AND off >= $2`, sessionID, keep)
	w.Queue(`UPDATE checkpoint_parts SET bytes = substring(bytes from 1 for ($2 - off)::int)
		WHERE session_id = $1 AND off < $2 AND off + length(bytes) > $2`, sessionID, keep)
	if len(tail) > 0 {
		w.Queue(`INSERT INTO checkpoint_parts (session_id, off, bytes) VALUES ($1, $2, $3)`, sessionID, keep, tail)
	}
	w.Queue(`INSERT INTO checkpoints (session_id, revision, after_seq, payload, saved_at, size) VALUES ($1, $2, $3, ''::bytea, $4, $5)
		ON CONFLICT (session_id) DO UPDATE SET revision = excluded.revision, after_seq = excluded.after_seq,
		saved_at = excluded.saved_at, size = excluded.size`,
		sessionID, cp.Revision, cp.AfterSeq, cp.SavedAt, keep+int64(len(tail)))
}

// AppendCheckpoint implements store.Store.
func (s *Store) AppendCheckpoint(ctx context.Context, sessionID string, who store.Owner, expectedRevision, afterSeq, keep int64, tail []byte) (store.Checkpoint, error) {
	const op = "postgres.AppendCheckpoint"
	if err := rules.CheckAppendInput(op, expectedRevision, afterSeq, keep, tail); err != nil {
		return store.Checkpoint{}, err
	}
	var out store.Checkpoint
	err := s.write(ctx, op, func(t *wtx) error {
		// Lock the session and read the checkpoint's head in one round
		// trip; the payload from keep on is shipped only when the save may
		// be an identical retry, the one case that compares it.
		var (
			row    *sessionRow
			cur    *rules.Head
			suffix []byte
			at     time.Time
		)
		b := &pgx.Batch{}
		b.Queue(qLockLease, sessionID).QueryRow(func(r pgx.Row) (err error) { row, err = loadRow(r, op, sessionID); return err })
		b.Queue(`SELECT revision, after_seq, size, saved_at, CASE WHEN revision = $2::bigint + 1 AND after_seq = $3::bigint AND size = $4::bigint + $5::bigint
				THEN coalesce((SELECT string_agg(substring(bytes from (greatest($4::bigint - off, 0) + 1)::int), ''::bytea ORDER BY off)
					FROM checkpoint_parts WHERE session_id = $1 AND off + length(bytes) > $4::bigint), ''::bytea) END
			FROM checkpoints WHERE session_id = $1`, sessionID, expectedRevision, afterSeq, keep, int64(len(tail))).
			QueryRow(func(r pgx.Row) error {
				var h rules.Head
				err := r.Scan(&h.Revision, &h.AfterSeq, &h.Size, &at, &suffix)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				cur = &h
				return err
			})
		if err := t.send(ctx, b, false); err != nil {
			return err
		}
		if err := rules.Fence(op, sessionID, row.Holder, who); err != nil {
			return err
		}
		same, err := rules.DecideAppend(op, sessionID, cur, row.LastSeq, expectedRevision, afterSeq, keep, tail,
			func() ([]byte, error) { return suffix, nil })
		if err != nil {
			return err
		}
		if same {
			out = store.Checkpoint{SessionID: sessionID, Revision: cur.Revision, AfterSeq: cur.AfterSeq, SavedAt: utc(at)}
			return nil
		}
		now := s.env().Now
		out = store.Checkpoint{SessionID: sessionID, Revision: expectedRevision + 1, AfterSeq: afterSeq, SavedAt: now}
		return sendCheckpoint(ctx, t, sessionID, row, out, keep, tail)
	})
	if err != nil {
		return store.Checkpoint{}, err
	}
	return out, nil
}

// sendCheckpoint writes cp's row (the first keep bytes of the old payload,
// then tail) and extends the lease, in one round trip.
func sendCheckpoint(ctx context.Context, t *wtx, sessionID string, row *sessionRow, cp store.Checkpoint, keep int64, tail []byte) error {
	w := &pgx.Batch{}
	queuePut(w, sessionID, cp, keep, tail)
	if h := row.Holder; rules.Extend(h, cp.SavedAt) {
		w.Queue(`UPDATE sessions SET lease_expires_at = $2 WHERE id = $1`, sessionID, h.ExpiresAt)
	}
	return t.send(ctx, w, true)
}

// SaveCheckpoint implements store.Store.
func (s *Store) SaveCheckpoint(ctx context.Context, sessionID string, who store.Owner, expectedRevision, afterSeq int64, payload []byte) (store.Checkpoint, error) {
	const op = "postgres.SaveCheckpoint"
	if err := rules.CheckCheckpointInput(op, expectedRevision, afterSeq, payload); err != nil {
		return store.Checkpoint{}, err
	}
	var out store.Checkpoint
	err := s.write(ctx, op, func(t *wtx) error {
		// Lock the session and read its checkpoint in one round trip. The
		// payload is shipped only when the save may be an identical retry
		// of it, the one case that compares it.
		var (
			row *sessionRow
			cur *store.Checkpoint
		)
		b := &pgx.Batch{}
		b.Queue(qLockLease, sessionID).QueryRow(func(r pgx.Row) (err error) { row, err = loadRow(r, op, sessionID); return err })
		b.Queue(`SELECT revision, after_seq, CASE WHEN revision = $2::bigint + 1 AND after_seq = $3::bigint
				THEN coalesce((SELECT string_agg(bytes, ''::bytea ORDER BY off) FROM checkpoint_parts WHERE session_id = $1), ''::bytea) END, saved_at
			FROM checkpoints WHERE session_id = $1`, sessionID, expectedRevision, afterSeq).
			QueryRow(func(r pgx.Row) (err error) { cur, err = loadCheckpoint(r, sessionID); return err })
		if err := t.send(ctx, b, false); err != nil {
			return err
		}
		if err := rules.Fence(op, sessionID, row.Holder, who); err != nil {
			return err
		}
		same, err := rules.DecideCheckpoint(op, sessionID, cur, row.LastSeq, expectedRevision, afterSeq, payload)
		if err != nil {
			return err
		}
		if same {
			out = *cur
			return nil
		}
		now := s.env().Now
		out = store.Checkpoint{SessionID: sessionID, Revision: expectedRevision + 1, AfterSeq: afterSeq, Payload: slices.Clone(payload), SavedAt: now}
		return sendCheckpoint(ctx, t, sessionID, row, out, 0, payload)
	})
	if err != nil {
		return store.Checkpoint{}, err
	}
	return out, nil
}
