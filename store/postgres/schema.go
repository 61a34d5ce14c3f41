package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store/internal/rules"
)

// schemaVersion is the version this code writes and reads: the largest
// version in the schema_version table.
//
//	1: sessions (summary, metadata, lease), events (append-only),
//	   checkpoints, the global event counter.
//	2: global sequence numbers from a SEQUENCE instead of the counter row
//	   (appends to different sessions no longer commit one at a time);
//	   events.tx, the writing transaction, for the commit-safe feed.
//	3: a checkpoint's payload in checkpoint_parts, the pieces it was saved
//	   in, so that an append save writes only what it adds; checkpoints
//	   keeps revision, cursor and size (its payload column stays empty).
//	4: sessions_recent, an index on the time a session was last updated,
//	   so that listing the newest sessions reads those rows only, whatever
//	   the store holds.
const schemaVersion = 4

// migrations[v] takes a schema from version v to v+1, inside the
// migration's transaction.
var migrations = []func(ctx context.Context, tx pgx.Tx) error{
	migrate0to1,
	migrate1to2,
	migrate2to3,
	migrate3to4,
}

// ownTables are the tables the store creates; finding one of them in a
// schema without a schema_version table means someone else's data.
var ownTables = []string{"sessions", "events", "checkpoints", "event_counter", "checkpoint_parts"}

// schemaV1 is the first schema. Times are timestamptz (microseconds, as the
// store's clock); IDs sort bytewise (COLLATE "C") so that every server lists
// sessions in the same order; bodies and payloads are bytea, stored and
// returned byte for byte whatever the database's encoding.
//
// event_counter is a single row: an append raises it by the number of
// events it inserts and numbers them from it, inside its transaction. The
// row stays locked until the append commits, so global sequence numbers are
// gapless and taken in commit order (a SEQUENCE would hand them out before
// commit, and a reader tailing by global_seq could see 11 before 10).
//
// The events trigger refuses UPDATE, DELETE and TRUNCATE, whoever runs
// them (the table's owner can still drop the trigger: it guards against
// mistakes, not against the owner).
const schemaV1 = `
CREATE TABLE schema_version (
	version    integer PRIMARY KEY,
	applied_at timestamptz NOT NULL
);
CREATE TABLE sessions (
	id                text COLLATE "C" PRIMARY KEY,
	title             text NOT NULL DEFAULT '',
	metadata          text NOT NULL DEFAULT '{}',
	created_at        timestamptz NOT NULL,
	updated_at        timestamptz NOT NULL,
	appended_at       timestamptz,
	last_seq          bigint NOT NULL DEFAULT -1,
	turns             integer NOT NULL DEFAULT 0,
	tokens            bigint NOT NULL DEFAULT 0,
	status            text NOT NULL DEFAULT 'idle',
	epoch             bigint NOT NULL DEFAULT 0,
	owner_id          text,
	owner_host        text,
	owner_pid         integer,
	owner_proc        text,
	lease_acquired_at timestamptz,
	lease_expires_at  timestamptz,
	lease_ttl_us      bigint,
	CHECK (last_seq >= -1),
	CHECK ((owner_id IS NULL) = (lease_expires_at IS NULL))
);
CREATE TABLE events (
	global_seq bigint PRIMARY KEY,
	session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
	seq        bigint NOT NULL CHECK (seq >= 0),
	event_id   text COLLATE "C" NOT NULL UNIQUE,
	type       text NOT NULL,
	body       bytea NOT NULL,
	stored_at  timestamptz NOT NULL,
	UNIQUE (session_id, seq)
);
CREATE TABLE checkpoints (
	session_id text COLLATE "C" PRIMARY KEY REFERENCES sessions (id),
	revision   bigint NOT NULL CHECK (revision >= 1),
	after_seq  bigint NOT NULL CHECK (after_seq >= -1),
	payload    bytea NOT NULL,
	saved_at   timestamptz NOT NULL
);
CREATE TABLE event_counter (
	one             boolean PRIMARY KEY DEFAULT true CHECK (one),
	last_global_seq bigint NOT NULL
);
INSERT INTO event_counter (last_global_seq) VALUES (0);
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'events are append-only: % refused', TG_OP
		USING ERRCODE = 'HA001', TABLE = TG_TABLE_NAME;
END
$$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON events
	FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
`

func migrate0to1(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, schemaV1)
	return err
}

// schemaV1to2 replaces the counter row by a sequence, starting after the
// last number the counter gave, and records each event's transaction ID
// (events already stored get the migration's: they are all committed, and
// their global_seq orders them among themselves).
//
// A sequence hands numbers out before commit, so global_seq may have gaps
// (a rolled-back append) and two sessions' appends may commit in the other
// order than their numbers. Within a session numbers still grow with seq:
// its appends are serialized by the session's locks. A reader that must
// see every event exactly once follows Store.Feed, which orders by tx and
// reads only below the oldest running transaction, instead of tailing
// global_seq.
const schemaV1to2 = `
CREATE SEQUENCE event_global_seq AS bigint MINVALUE 1;
SELECT setval('event_global_seq', last_global_seq + 1, false) FROM event_counter;
DROP TABLE event_counter;
ALTER TABLE events ADD COLUMN tx xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_feed ON events (tx, global_seq);
`

func migrate1to2(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, schemaV1to2)
	return err
}

func migrate2to3(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `
CREATE TABLE checkpoint_parts (
	session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
	off        bigint NOT NULL CHECK (off >= 0),
	bytes      bytea NOT NULL,
	PRIMARY KEY (session_id, off)
);
ALTER TABLE checkpoints ADD COLUMN size bigint NOT NULL DEFAULT 0;
INSERT INTO checkpoint_parts (session_id, off, bytes) SELECT session_id, 0, payload FROM checkpoints;
UPDATE checkpoints SET size = length(payload), payload = '';
`)
	return err
}

func migrate3to4(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `CREATE INDEX sessions_recent ON sessions ((GREATEST(updated_at, appended_at)) DESC, id)`)
	return err
}

// migrationLock is the advisory lock key of a schema's migration: one per
// schema, so that stores in different schemas of one database migrate
// independently.
const qMigrationLock = `SELECT pg_advisory_xact_lock(hashtextextended('harness store migration ' || current_schema(), 0))`

// readVersion returns the schema's version: 0 when it has no store yet.
// It fails with SESS_SCHEMA_VERSION when the store's tables exist without
// a version, and SESS_CLOSED when no schema of search_path exists.
func readVersion(ctx context.Context, q pgx.Tx) (int, error) {
	const op = "postgres.migrate"
	var (
		schema  *string
		present []string
	)
	if err := q.QueryRow(ctx, `SELECT current_schema(), coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}')
		FROM pg_class c WHERE c.relnamespace = to_regnamespace(current_schema()) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
		AND c.relname::text = ANY($1)`, append([]string{"schema_version"}, ownTables...)).Scan(&schema, &present); err != nil {
		return 0, err
	}
	if schema == nil {
		return 0, &errcode.Error{Code: errcode.SessClosed, Op: op, Message: "open store: no schema of search_path exists; create it first"}
	}
	hasVersion := false
	for _, name := range present {
		hasVersion = hasVersion || name == "schema_version"
	}
	if !hasVersion {
		if len(present) > 0 {
			return 0, &errcode.Error{Code: errcode.SessSchemaVersion, Op: op,
				Message: fmt.Sprintf("open store: schema %s holds tables named like the store's (%v) but no schema_version; use another schema", *schema, present)}
		}
		return 0, nil
	}
	var v int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return 0, err
	}
	return v, nil
}

func newerSchema(v int) error {
	return &errcode.Error{Code: errcode.SessSchemaVersion, Op: "postgres.migrate",
		Message: fmt.Sprintf("open store: schema version %d is newer than this Harness's %d; upgrade Harness", v, schemaVersion)}
}

// migrate brings the schema to schemaVersion in one transaction holding
// the schema's advisory lock: two processes opening an older schema at once
// are ordered by the lock; the second finds the work done.
func (s *Store) migrate(ctx context.Context) error {
	const op = "postgres.migrate"
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return translate(op, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = tx.Rollback(rctx) // after Commit, a no-op
	}()
	v, err := readVersion(ctx, tx)
	if err != nil {
		return translate(op, err)
	}
	if v > schemaVersion {
		return newerSchema(v)
	}
	if v == schemaVersion {
		return nil
	}
	if _, err := tx.Exec(ctx, qMigrationLock); err != nil {
		return translate(op, err)
	}
	// Read again under the lock: another process may have migrated.
	if v, err = readVersion(ctx, tx); err != nil {
		return translate(op, err)
	}
	if v > schemaVersion {
		return newerSchema(v)
	}
	if v == schemaVersion {
		return nil
	}
	now := rules.Now(s.now)
	for ; v < schemaVersion; v++ {
		if err := migrations[v](ctx, tx); err != nil {
			return translate(op, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)`, v+1, now); err != nil {
			return translate(op, err)
		}
	}
	return translate(op, tx.Commit(ctx))
}
