package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/internal/rules"
)

// schemaVersion is the PRAGMA user_version this code writes and reads.
//
//	1: sessions, events, checkpoints; leases by owner, host and pid.
//	2: the session summary (turns, tokens, status), maintained on append
//	   and back-filled from the events; the holder's process identity and
//	   lease length; last_seq dropped (read off the events index).
//	3: a checkpoint's payload in checkpoint_parts, the pieces it was saved
//	   in, so that an append save writes only what it adds; checkpoints
//	   keeps revision, cursor and size (its payload column stays empty).
//	4: the session's last seq and last append time back as columns,
//	   written by every append and back-filled from the events, and the
//	   sessions_recent index on the time it was last updated: listing the
//	   newest sessions reads those rows only, whatever the store holds.
//	5: the sessions_empty index on the sessions without events: removing
//	   the empty ones at a session's start reads those rows only (it read
//	   every session row, which stayed in the process's page cache).
const schemaVersion = 5

// migrations[v] takes a schema from version v to v+1.
var migrations = []func(ctx context.Context, tx *sql.Tx) error{
	migrate0to1,
	migrate1to2,
	migrate2to3,
	migrate3to4,
	migrate4to5,
}

// schemaV1 is the first schema. Times are Unix microseconds (UTC); bodies
// are TEXT so that the sqlite3 tool prints them and json_extract reads them.
// global_seq is the rowid: a new row takes the largest plus one, so, as
// events are never deleted, it grows in commit order without the extra
// page write per commit that AUTOINCREMENT costs.
const schemaV1 = `
CREATE TABLE sessions (
	id                TEXT PRIMARY KEY,
	title             TEXT NOT NULL DEFAULT '',
	metadata          TEXT NOT NULL DEFAULT '{}',
	created_at        INTEGER NOT NULL,
	updated_at        INTEGER NOT NULL,
	last_seq          INTEGER NOT NULL DEFAULT -1,
	epoch             INTEGER NOT NULL DEFAULT 0,
	owner_id          TEXT,
	owner_host        TEXT,
	owner_pid         INTEGER,
	lease_acquired_at INTEGER,
	lease_expires_at  INTEGER
) STRICT;
CREATE TABLE events (
	global_seq INTEGER PRIMARY KEY,
	session_id TEXT NOT NULL REFERENCES sessions (id),
	seq        INTEGER NOT NULL,
	event_id   TEXT NOT NULL UNIQUE,
	type       TEXT NOT NULL,
	body       TEXT NOT NULL,
	stored_at  INTEGER NOT NULL,
	UNIQUE (session_id, seq)
) STRICT;
CREATE TABLE checkpoints (
	session_id TEXT PRIMARY KEY REFERENCES sessions (id),
	revision   INTEGER NOT NULL,
	after_seq  INTEGER NOT NULL,
	payload    BLOB NOT NULL,
	saved_at   INTEGER NOT NULL
) STRICT;
`

func migrate0to1(ctx context.Context, tx *sql.Tx) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
		return err
	}
	if n != 0 {
		return &errcode.Error{Code: errcode.SessSchemaVersion, Op: "sqlite.migrate", Message: "open store file: it holds another application's tables"}
	}
	_, err := tx.ExecContext(ctx, schemaV1)
	return err
}

func migrate1to2(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `
ALTER TABLE sessions ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN status TEXT NOT NULL DEFAULT 'idle';
ALTER TABLE sessions ADD COLUMN owner_proc TEXT;
ALTER TABLE sessions ADD COLUMN lease_ttl INTEGER;
UPDATE sessions SET lease_ttl = lease_expires_at - lease_acquired_at WHERE owner_id IS NOT NULL;
`); err != nil {
		return err
	}
	// Back-fill each session's summary by folding its events, as appends
	// maintain it from now on. An old event the summary cannot read
	// contributes nothing rather than failing the migration.
	type session struct {
		id, title string
	}
	var sessions []session
	rows, err := tx.QueryContext(ctx, `SELECT id, title FROM sessions`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var s session
		if err := rows.Scan(&s.id, &s.title); err != nil {
			rows.Close()
			return err
		}
		sessions = append(sessions, s)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, s := range sessions {
		sum := rules.Summary{Title: s.title, Status: store.StatusIdle}
		evs, err := tx.QueryContext(ctx, `SELECT event_id, type, body FROM events WHERE session_id = ? ORDER BY seq`, s.id)
		if err != nil {
			return err
		}
		for evs.Next() {
			var ev store.EventIn
			if err := evs.Scan(&ev.ID, &ev.Type, &ev.Body); err != nil {
				evs.Close()
				return err
			}
			if eff, err := rules.CheckEvent("sqlite.migrate", ev); err == nil {
				eff.Apply(&sum)
			}
		}
		if err := evs.Close(); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET title = ?, turns = ?, tokens = ?, status = ? WHERE id = ?`,
			sum.Title, sum.Turns, sum.Tokens, sum.Status, s.id); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `ALTER TABLE sessions DROP COLUMN last_seq`)
	return err
}

func migrate2to3(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `
CREATE TABLE checkpoint_parts (
	session_id TEXT NOT NULL REFERENCES sessions (id),
	off        INTEGER NOT NULL,
	bytes      BLOB NOT NULL,
	PRIMARY KEY (session_id, off)
) STRICT;
ALTER TABLE checkpoints ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
INSERT INTO checkpoint_parts (session_id, off, bytes) SELECT session_id, 0, payload FROM checkpoints;
UPDATE checkpoints SET size = length(payload), payload = x'';
`)
	return err
}

func migrate3to4(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `
ALTER TABLE sessions ADD COLUMN last_seq INTEGER NOT NULL DEFAULT -1;
ALTER TABLE sessions ADD COLUMN appended_at INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET (last_seq, appended_at) =
	(SELECT seq, stored_at FROM events WHERE session_id = sessions.id ORDER BY seq DESC LIMIT 1)
	WHERE EXISTS (SELECT 1 FROM events WHERE session_id = sessions.id);
CREATE INDEX sessions_recent ON sessions (max(updated_at, appended_at) DESC, id);
`)
	return err
}

func migrate4to5(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `CREATE INDEX sessions_empty ON sessions (created_at) WHERE last_seq = -1`)
	return err
}

func userVersion(ctx context.Context, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
	return v, err
}

func newerSchema(v int) error {
	return &errcode.Error{Code: errcode.SessSchemaVersion, Op: "sqlite.migrate",
		Message: fmt.Sprintf("open store file: schema version %d is newer than this Harness's %d; upgrade Harness", v, schemaVersion)}
}

// migrate brings the file to schemaVersion in one transaction. Two
// processes opening an older file at once are ordered by the write lock;
// the second finds the work done.
func migrate(ctx context.Context, db *sql.DB) error {
	const op = "sqlite.migrate"
	v, err := userVersion(ctx, db)
	if err != nil {
		return translate(op, err)
	}
	if v > schemaVersion {
		return newerSchema(v)
	}
	if v == schemaVersion {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return translate(op, err)
	}
	defer func() { _ = tx.Rollback() }()
	if v, err = userVersion(ctx, tx); err != nil {
		return translate(op, err)
	}
	if v > schemaVersion {
		return newerSchema(v)
	}
	if v == schemaVersion {
		return nil
	}
	for ; v < schemaVersion; v++ {
		if err := migrations[v](ctx, tx); err != nil {
			return translate(op, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return translate(op, err)
	}
	return translate(op, tx.Commit())
}
