package store

import (
	"context"
	"fmt"
	"time"
)

// Limits every implementation enforces.
const (
	// MaxBodyBytes bounds one event body; a larger one is SESS_INVALID_RECORD.
	MaxBodyBytes = 16 << 20
	// MaxPayloadBytes bounds one checkpoint payload; a larger one is SESS_INVALID_RECORD.
	MaxPayloadBytes = 16 << 20
	// MaxPage bounds the limit of ReadEvents and ListSessions.
	MaxPage = 10000
	// MaxBatch bounds the number of events in one AppendBatch.
	MaxBatch = 10000
	// MaxIDBytes bounds session and event IDs.
	MaxIDBytes = 256
	// MaxTitleChars bounds a session title, in characters.
	MaxTitleChars = 80
	// DefaultLease is the lease length when AcquireOptions.LeaseFor or a
	// Renew duration is zero.
	DefaultLease = 30 * time.Second
	// TimePrecision is the precision of every stored time; the clock's
	// readings are truncated to it so that all implementations agree.
	TimePrecision = time.Microsecond
)

// Session statuses. A session is idle until its first turn starts, running
// while a turn is open, then takes the status of its last turn.completed.
// A running session whose lease is gone (released, expired, its holder
// dead or taken over) is reported interrupted.
const (
	StatusIdle           = "idle"
	StatusRunning        = "running"
	StatusCompleted      = "completed"
	StatusFailed         = "failed"
	StatusCanceled       = "canceled"
	StatusBudgetExceeded = "budget_exceeded"
	StatusInterrupted    = "interrupted"
)

// Owner is a writer of a session: one process (or one runtime inside it).
// ID names the writer and must be unique to it; Host and PID locate its
// process so that a dead holder on this host can be recognized; Epoch is
// the fencing token Acquire hands out, larger at every change of holder.
type Owner struct {
	ID    string
	Host  string
	PID   int
	Epoch int64
}

// SessionInit describes a new session. An empty ID is replaced by a fresh
// sess-<uuid>; a zero CreatedAt by the store's clock.
type SessionInit struct {
	ID        string
	Title     string
	Metadata  map[string]string // workspace root, model, image…
	CreatedAt time.Time
}

// Session is a session's summary as the store keeps it. Turns, Tokens,
// Status and an empty Title are maintained by the store from the events
// appended (see the package doc).
type Session struct {
	ID        string
	Title     string
	Metadata  map[string]string
	CreatedAt time.Time
	UpdatedAt time.Time
	Turns     int
	Tokens    int64
	Status    string
	LastSeq   int64  // -1 when the session has no event
	Lease     *Lease // nil when nobody holds the session
}

// ListCursor is where a ListSessions page starts: after the session
// updated at UpdatedAt with the ID ID, in the listing's order. The zero
// value starts at the most recently updated session.
type ListCursor struct {
	UpdatedAt time.Time
	ID        string
}

// PageAfter is the cursor of the page that follows s.
func PageAfter(s Session) ListCursor { return ListCursor{UpdatedAt: s.UpdatedAt, ID: s.ID} }

// Lease is the current holder of a session and how long its claim lasts.
type Lease struct {
	Owner      Owner
	AcquiredAt time.Time
	ExpiresAt  time.Time
}

// AcquireOptions tune Acquire. LeaseFor zero means DefaultLease. TakeOver
// takes the session from a live holder; it is the explicit act a user asks
// for, never a default.
type AcquireOptions struct {
	LeaseFor time.Duration
	TakeOver bool
	// IfLastSeq, when set, grants the session only while its last seq is
	// still *IfLastSeq (-1: no event): a take-over decided on what the log
	// held does not happen once the log has moved on (another process
	// started a turn meanwhile); SESS_BUSY then.
	IfLastSeq *int64
}

// EventIn is an event to append. Body is the canonical envelope bytes: a
// JSON object whose "type" and "eventId" equal Type and ID.
type EventIn struct {
	ID   string
	Type string
	Body []byte
}

// Record is a stored event. Seq counts from 0 per session with no gap.
// GlobalSeq is unique across the whole store and grows with Seq within a
// session; in SQLite and in memory it is also gapless and in commit order
// across sessions, in Postgres it may have gaps and commit out of order
// across sessions (store/postgres's Feed gives a store-wide order to follow).
type Record struct {
	SessionID string
	Seq       int64
	GlobalSeq int64
	ID        string
	Type      string
	Body      []byte
	StoredAt  time.Time
}

// Checkpoint is a session's latest checkpoint. Revision starts at 1 and
// grows by one at each save; AfterSeq is the last event it covers (-1 for
// none) and never goes backwards.
type Checkpoint struct {
	SessionID string
	Revision  int64
	AfterSeq  int64
	Payload   []byte
	SavedAt   time.Time
}

// Reader reads a store without owning anything: the `harness sessions` and
// `harness events` commands and the session picker use it. Every returned
// value is the caller's own copy.
type Reader interface {
	// Session returns one session's summary. Codes: SESS_NOT_FOUND, SESS_CLOSED.
	Session(ctx context.Context, id string) (Session, error)
	// ListSessions returns up to limit (1..MaxPage) sessions, most recently
	// updated first, ties by ID, starting after the cursor (the zero
	// ListCursor: from the most recent; PageAfter of a page's last
	// session: the next page). Codes: SESS_INVALID_CURSOR, SESS_CLOSED.
	ListSessions(ctx context.Context, after ListCursor, limit int) ([]Session, error)
	// ReadEvents returns up to limit (1..MaxPage) events of a session with
	// seq > afterSeq, in seq order; afterSeq -1 reads from the start, and a
	// cursor at or past the end yields an empty page. Codes:
	// SESS_INVALID_CURSOR (afterSeq < -1, bad limit), SESS_NOT_FOUND, SESS_CLOSED.
	ReadEvents(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]Record, error)
	// LoadCheckpoint returns the session's latest checkpoint. Codes:
	// SESS_NOT_FOUND (no session, or no checkpoint yet), SESS_CLOSED.
	LoadCheckpoint(ctx context.Context, sessionID string) (Checkpoint, error)
	// Close releases the store's resources; later calls fail with SESS_CLOSED.
	Close() error
}

// Store is the session store port. Implementations: store/memstore,
// store/sqlite (and later store/postgres); store/storetest is the
// conformance suite they all pass.
//
// Every write that changes a session's log or checkpoint names its Owner and
// is fenced inside the store's transaction: it succeeds only while the
// session's holder ID and epoch equal who's, identical retries included;
// otherwise SESS_OWNERSHIP_LOST.
type Store interface {
	Reader

	// CreateSession creates a session. Creating an existing ID again with
	// the same title and metadata returns it unchanged. Codes:
	// SESS_INVALID_RECORD (bad ID, metadata), SESS_EVENT_CONFLICT (the ID
	// exists with other settings), SESS_CLOSED.
	CreateSession(ctx context.Context, init SessionInit) (Session, error)
	// StartSession creates the new session init describes, makes who its
	// holder (as Acquire does, for the default lease) and appends its first
	// events, all in one transaction: the session exists with its events or
	// not at all, so a process that dies while starting a session leaves
	// nothing behind. It returns who with its epoch and the records. Codes:
	// SESS_INVALID_RECORD (no event, a bad ID, metadata, owner or event),
	// SESS_EVENT_CONFLICT (the session exists, or an event ID is stored
	// already), SESS_READ_ONLY, SESS_DISK_FULL, SESS_CLOSED.
	StartSession(ctx context.Context, init SessionInit, who Owner, first []EventIn) (Owner, []Record, error)
	// RemoveEmpty removes the sessions created before before that hold no
	// event and no checkpoint and that nobody live holds (no lease, an
	// expired one, or a dead process on this host): the rows a process
	// killed between CreateSession and its first append leaves. It returns
	// their IDs, sorted. Codes: SESS_READ_ONLY, SESS_BUSY, SESS_CLOSED.
	RemoveEmpty(ctx context.Context, before time.Time) ([]string, error)
	// SetTitle renames a session (first line, at most MaxTitleChars). A
	// title is a label, not part of the log: it needs no ownership. Codes:
	// SESS_NOT_FOUND, SESS_CLOSED.
	SetTitle(ctx context.Context, id, title string) error
	// SetMetadata sets the given keys of a session's metadata; an empty
	// value deletes its key. Fenced. Codes: SESS_NOT_FOUND,
	// SESS_OWNERSHIP_LOST, SESS_INVALID_RECORD, SESS_CLOSED.
	SetMetadata(ctx context.Context, id string, who Owner, md map[string]string) error

	// Acquire makes who the session's holder and returns who with its
	// epoch (and Host, PID filled in when empty). It is granted when the
	// session is free, its lease has expired, its holder is a dead process
	// on this host, or opts.TakeOver is set; the epoch then grows by one.
	// The holder acquiring again keeps its epoch and renews. Codes:
	// SESS_BUSY (a live holder, named in the message and by a *BusyError
	// cause; or a log that moved past opts.IfLastSeq), SESS_NOT_FOUND,
	// SESS_INVALID_RECORD (an owner without ID, or naming a local process
	// that does not exist), SESS_CLOSED.
	Acquire(ctx context.Context, sessionID string, who Owner, opts AcquireOptions) (Owner, error)
	// Renew extends the holder's lease to now+d (DefaultLease when d is 0).
	// Codes: SESS_OWNERSHIP_LOST, SESS_NOT_FOUND, SESS_CLOSED.
	Renew(ctx context.Context, sessionID string, who Owner, d time.Duration) error
	// Release gives the session up; the epoch is kept so the next holder's
	// is larger. Codes: SESS_OWNERSHIP_LOST, SESS_NOT_FOUND, SESS_CLOSED.
	Release(ctx context.Context, sessionID string, who Owner) error

	// Append stores one event durably at the next seq and returns its
	// record; an identical redelivery returns the stored record and creates
	// nothing. Codes: SESS_INVALID_RECORD, SESS_EVENT_CONFLICT,
	// SESS_OWNERSHIP_LOST, SESS_NOT_FOUND, SESS_BUSY (the file stayed
	// locked by another process), SESS_CLOSED.
	Append(ctx context.Context, sessionID string, who Owner, ev EventIn) (Record, error)
	// AppendBatch appends up to MaxBatch events in one transaction: all are
	// stored or none. Codes: as Append.
	AppendBatch(ctx context.Context, sessionID string, who Owner, evs []EventIn) ([]Record, error)

	// SaveCheckpoint replaces the session's checkpoint when its revision is
	// expectedRevision (0: none yet) and returns the new one, revision+1.
	// An identical retry of the current checkpoint returns it. Codes:
	// SESS_CHECKPOINT_CONFLICT (stale revision, afterSeq going backwards),
	// SESS_INVALID_RECORD (afterSeq past the last event, payload empty or
	// too large), SESS_INVALID_CURSOR (afterSeq < -1), SESS_OWNERSHIP_LOST,
	// SESS_NOT_FOUND, SESS_CLOSED.
	SaveCheckpoint(ctx context.Context, sessionID string, who Owner, expectedRevision, afterSeq int64, payload []byte) (Checkpoint, error)
	// AppendCheckpoint saves a checkpoint whose payload is the first keep
	// bytes of the current one followed by tail, with the CAS, cursor and
	// fencing rules of SaveCheckpoint; with no checkpoint yet keep must be
	// 0. Its cost is that of keep's position and tail, not of the payload's
	// size: a writer that lays its payload out so that what changes comes
	// last saves in proportion to what it added. The returned checkpoint
	// has no Payload. An identical retry (same revision, cursor, keep and
	// tail) returns it. Codes: those of SaveCheckpoint; SESS_INVALID_RECORD
	// also for keep past the current payload or a result over
	// MaxPayloadBytes.
	AppendCheckpoint(ctx context.Context, sessionID string, who Owner, expectedRevision, afterSeq, keep int64, tail []byte) (Checkpoint, error)
}

// BusyError is the cause inside the SESS_BUSY error of Acquire: the live
// lease that refused it. Find it with errors.As to show who holds a session.
type BusyError struct {
	SessionID string
	Lease     Lease
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("held by %s (pid %d on host %s) until %s",
		e.Lease.Owner.ID, e.Lease.Owner.PID, e.Lease.Owner.Host, e.Lease.ExpiresAt.Format(time.RFC3339))
}
