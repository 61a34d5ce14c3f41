// Package postgres is the shared session store: store.Store on a
// PostgreSQL database (github.com/jackc/pgx/v5, one pgxpool per Store), for
// sessions that outlive one machine. It keeps the contract of package store
// and passes the same conformance suite (store/storetest) as store/sqlite;
// the decisions themselves (fencing, leases, redelivery, checkpoint CAS,
// the summary) are store/internal/rules, shared with it.
//
// # Database
//
// Open takes a DSN as libpq does (postgres://user:pass@host:5432/db?…);
// its search_path parameter picks the schema, which must exist. The store
// owns the tables schema_version, sessions, events, checkpoints and
// checkpoint_parts and the sequence event_global_seq of that schema
// (schema version 1's event_counter table is dropped by the migration to
// version 2), created and migrated in place by Open in
// one transaction under a per-schema advisory lock
// (pg_advisory_xact_lock), so that processes opening one database at once
// migrate it once. A schema_version newer than this code's is refused
// with SESS_SCHEMA_VERSION, as are tables of the store's names in a schema
// without one. Every connection runs with synchronous_commit=on, whatever
// the server's default: a commit is flushed to the server's WAL before
// Append returns.
//
// Times are timestamptz from the injected clock (Options.Now), never the
// server's. IDs sort bytewise (COLLATE "C"). Bodies and payloads are bytea:
// byte for byte what was appended, whatever the database's encoding; read
// one with
//
//	SELECT seq, convert_from(body, 'UTF8') FROM events WHERE session_id = 'sess-…' ORDER BY seq;
//
// # Ordering
//
// Every write is one transaction whose first statement locks its
// session's row (SELECT … FOR NO KEY UPDATE): writers to one session, on
// any machine, are serialized by the server, and fencing, redelivery and
// the checkpoint CAS decide on state no other writer can change under
// them. The seq of a session is its row's last_seq plus one, under that
// lock. Appends also take a per-session advisory lock first, so that a
// later append to a session always runs in a later transaction.
//
// Global sequence numbers come from a SEQUENCE (event_global_seq): appends
// to different sessions never wait for each other, and their commits are
// flushed together (schema version 1 took them from a counter row locked
// until commit, which made every append in the store commit one at a time:
// 16 sessions appended 3.4× as fast as one, where bare commits scaled 17×).
// The price is that global_seq is unique and grows within a session, but
// may have gaps (a rolled-back append) and may commit out of order across
// sessions. A reader that follows the whole store uses Feed: events in
// (writing transaction, global_seq) order, listed only once every
// transaction older than theirs has ended, so that none can appear behind
// the reader's cursor; every committed event once, each session's in seq
// order, without a lock.
//
// A write costs two round trips: BEGIN travels with its first batch
// (lock the row, read what the decision needs) and COMMIT with its last.
// pgx owns every connection and all of its protocol: the append, the write
// a session makes most, prepares its seven statements once per connection
// and sends each round trip as one pgconn batch of them (append.go), its
// parameters encoded and its columns scanned in binary by the
// connection's type map with plans made once; the other writes go
// through pgx batches. A call whose context ends has pgx ask the server to
// cancel its statement (and wait for that request before the connection
// is used again); if that was the COMMIT, the write may have been
// committed all the same, and an identical retry answers which.
//
// # Leases across machines
//
// Options.LocalHost (default store.HostID: the host name and the machine
// ID of /etc/machine-id; harness --host-id sets it) must name this machine uniquely
// among those sharing the database: a holder recorded on this host whose
// process is gone here is taken as dead. A holder on another host is
// waited out until its lease expires by the reader's clock, so the
// machines' clocks should roughly agree; fencing never depends on them, as
// the epoch, not the clock, is the fence.
//
// The events table is append-only by the database itself: a statement
// trigger refuses UPDATE, DELETE and TRUNCATE on it (SQLSTATE HA001), for
// every role; only dropping the trigger, which needs the table's owner,
// lifts it.
//
// # Codes
//
// Those of package store. SQLSTATEs are translated once, here: 23505
// (a key exists) → SESS_EVENT_CONFLICT; HA001 (an event changed) →
// SESS_EVENT_CONFLICT, the nearest code; lock timeout (Options.LockTimeout),
// deadlock, serialization failure → SESS_BUSY; other class 22, 23 and 54
// errors and corrupt data → SESS_INVALID_RECORD; an undefined table or
// column → SESS_SCHEMA_VERSION; a refused connection or login, a missing
// database or schema, a shutting-down server, a read-only transaction, a
// closed pool, a canceled context → SESS_CLOSED (the store cannot serve
// the call).
package postgres
