// Package sqlite is the local session store: store.Store on one SQLite
// file (modernc.org/sqlite, no cgo), by default
// $XDG_DATA_HOME/harness/harness.db.
//
// # File
//
// The file is created with mode 0600 (its directory 0700; SQLite gives the
// -wal and -shm files the same mode), journal_mode=WAL, synchronous=FULL:
// a commit is fsynced to the WAL before Append returns. The schema version
// is PRAGMA user_version; an older file is migrated in place, in one
// transaction, when it is opened; a newer one is refused with
// SESS_SCHEMA_VERSION. The file is plain SQLite, readable with the stock
// sqlite3 tool:
//
//	sqlite3 -readonly harness.db "SELECT seq, body FROM events WHERE session_id = 'sess-…' ORDER BY seq"
//
// Tables: sessions (summary, metadata as a JSON object, lease), events
// (global_seq is the store-wide order, (session_id, seq) the session's,
// event_id unique; body is the canonical envelope as TEXT), checkpoints
// (the latest per session). Times are Unix microseconds, UTC. A session's
// last seq and the time of its last append are columns of its row, which
// every append writes, so that the listing walks the sessions_recent index
// (most recently updated first) and reads only the rows it returns.
//
// # Concurrency
//
// Writes go through one connection per Store and begin IMMEDIATE, so the
// check-then-write of fencing, redelivery and checkpoint CAS happens under
// the file's write lock; another process waits up to Options.BusyTimeout
// for it, then gets SESS_BUSY. Reads use a separate pool of query_only
// connections and see committed data only. Reader (OpenReader) reads a
// file without owning anything. OpenReadOnly opens a file that cannot be
// written (read-only file, directory or file system) with mode=ro: it
// reads, and every write is SESS_READ_ONLY; OpenFull does the same for a
// file on a full disk, every write failing with the SESS_DISK_FULL Open
// gave. Store.Check runs PRAGMA
// quick_check (files up to 256 MiB) so that a command about to write can
// refuse a file with corrupt pages, unless the file is exactly as a
// Harness process that knew it sound left it: a Store that checked the
// file (or found it so) records its state at Close in path+".checked"
// (the checked mark, sqlite.go).
//
// # Codes
//
// Those of package store. SQLite errors are translated once, here: busy
// or locked → SESS_BUSY; constraint, too big, corrupt, not a database →
// SESS_INVALID_RECORD; disk full (or the page limit), and a disk I/O
// error (the WAL, its index, a page) on a file system with less than
// 1 MiB free → SESS_DISK_FULL; other I/O, read-only, cannot open, a
// closed pool, a canceled context →
// SESS_CLOSED (the store cannot serve the call); a newer or foreign schema
// → SESS_SCHEMA_VERSION. Errors about the file itself (full, corrupt,
// read-only) name it and say what to do.
package sqlite
