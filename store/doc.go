// Package store is the session store port: the contract every store
// implements (Store, Reader and their types), the rules they share
// (store/internal/rules), the conformance suite they all pass
// (store/storetest), and SessionLog, the adapter the runtime writes through.
// Implementations: store/memstore (in memory, for unit tests), store/sqlite
// (the local file), later store/postgres.
//
// The store works on raw bytes; only SessionLog knows the event codec.
//
// # Ordering
//
// The store assigns each appended event the next seq of its session (0, 1,
// 2… with no gap) and a store-wide unique GlobalSeq that grows within the
// session (see Record: only SQLite and memory also make it gapless and
// commit-ordered across sessions).
// AppendBatch is one transaction. A commit is durable before Append returns.
// An identical redelivery (same event ID, same bytes, same session) returns
// the stored record and creates nothing; the same ID with other bytes or in
// another session is SESS_EVENT_CONFLICT.
//
// # Summary
//
// Inside the append's transaction the store folds the event into its
// session's summary: UpdatedAt takes the store clock; turn.started makes the
// status running; turn.completed adds a turn, adds data.usage.totalTokens to
// Tokens and sets the status to data.status; a message.completed with role
// user names an untitled session after the first line of its content (at
// most 80 characters). A running session whose holder is gone is reported,
// and on take-over stored, as interrupted.
//
// # Starting and removing sessions
//
// StartSession creates a session, makes the caller its holder and stores
// its first events in one transaction, so a session never exists without
// an event because its creator died half way. RemoveEmpty removes the
// sessions that hold no event, no checkpoint and no live lease, created
// before a given time: the rows CreateSession alone (an import, an older
// Harness) leaves when its process dies before the first append.
// ListSessions pages by a cursor (ListCursor, PageAfter) in its order.
//
// # Leases and fencing
//
// A session has at most one holder (Owner) with a lease. Acquire grants it
// when the session is free, the lease has expired, the holder is a process
// on this host that no longer exists (PID plus start time, so a reused PID
// is not mistaken for it: nobody is locked out of a session by a crash), or
// TakeOver is set; each grant gives a larger Epoch. A live holder on another
// host is waited out until its lease expires. Every append, checkpoint save
// and metadata change is fenced inside the transaction: it succeeds only
// while the holder's ID and epoch are the caller's, identical retries
// included. The epoch, not the clock, is the fence: an expired lease nobody
// has taken still admits its holder, and each of its writes renews it.
// Reading needs no ownership (Reader). The clock is injected.
//
// # Checkpoints
//
// One checkpoint per session, replaced by compare-and-swap on its revision
// (1, 2, …). Its AfterSeq never goes backwards and must name a committed
// event (or -1). An identical retry of the current checkpoint returns it.
// SaveCheckpoint replaces the payload whole; AppendCheckpoint keeps a
// prefix of it and appends a tail, so a writer whose payload grows at the
// end (the runtime lays its row out so: see package checkpoint) saves in
// proportion to what it added, not to the payload's size. The stores keep
// the payload as the pieces it was saved in and LoadCheckpoint joins them
// in one read.
//
// # SessionLog
//
// NewSessionLog binds a log to one session and one owner that holds it;
// the runtime appends through it. Append encodes an event.Event with
// event.Encode and stores it under the caller's event ID; calls are
// serialized by a mutex, so the log's order is the order of the calls, and
// each returns once durable, with the caller's own copy of the record.
// SaveCheckpoint and AppendCheckpoint track the revision themselves: delivering the current
// checkpoint again is an identical retry the store fences and returns;
// delivering an older checkpoint this log saved is a no-op that returns the
// current one: the cursor never moves back. After a save whose outcome is
// unknown (an error), retrying the same checkpoint returns it if it was
// committed.
//
// # Codes
//
// SESS_NOT_FOUND, SESS_INVALID_RECORD, SESS_CLOSED, SESS_EVENT_CONFLICT,
// SESS_INVALID_CURSOR, SESS_CHECKPOINT_CONFLICT, SESS_OWNERSHIP_LOST,
// SESS_SCHEMA_VERSION, SESS_BUSY; each method's doc names its own. SessionLog
// also passes on the EVENT_* codes of an event that does not encode.
package store
