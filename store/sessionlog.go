package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// SessionLog is one session's log bound to one owner: the event store the
// runtime writes through. It encodes events with the canonical codec,
// keeps the caller's event IDs, and serializes its calls, so the log's
// order is the order in which calls were made. It tracks the checkpoint
// revision itself and never moves the checkpoint backwards.
//
// The owner must have acquired the session (Store.Acquire); every write is
// fenced by the store against that owner's epoch.
type SessionLog struct {
	s   Store
	id  string
	who Owner

	mu    sync.Mutex
	cur   Checkpoint      // guarded by mu; Revision 0 when none
	saved map[cpKey]int64 // guarded by mu: checkpoints this log stored, to their revision
}

// cpKey names a save: its cursor, the bytes it kept of the checkpoint
// before it (0 for a whole save) and the sum of what it wrote.
type cpKey struct {
	afterSeq, keep int64
	sum            [sha256.Size]byte
}

func keyOf(afterSeq, keep int64, tail []byte) cpKey {
	return cpKey{afterSeq: afterSeq, keep: keep, sum: sha256.Sum256(tail)}
}

// NewSessionLog binds a log to sessionID and who, which must hold the
// session. Codes: SESS_NOT_FOUND, SESS_OWNERSHIP_LOST, SESS_CLOSED.
func NewSessionLog(ctx context.Context, s Store, sessionID string, who Owner) (*SessionLog, error) {
	const op = "store.NewSessionLog"
	if err := checkHolder(ctx, s, op, sessionID, who); err != nil {
		return nil, err
	}
	l := &SessionLog{s: s, id: sessionID, who: who, cur: Checkpoint{SessionID: sessionID}, saved: map[cpKey]int64{}}
	cp, err := s.LoadCheckpoint(ctx, sessionID)
	switch errcode.Of(err) {
	case "":
		l.cur = cp
		l.saved[keyOf(cp.AfterSeq, 0, cp.Payload)] = cp.Revision
	case errcode.SessNotFound:
	default:
		return nil, err
	}
	return l, nil
}

// checkHolder reads the session and fails with SESS_OWNERSHIP_LOST unless
// who holds it at its epoch.
func checkHolder(ctx context.Context, s Store, op, sessionID string, who Owner) error {
	sess, err := s.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	if sess.Lease == nil || sess.Lease.Owner.ID != who.ID || sess.Lease.Owner.Epoch != who.Epoch {
		return &errcode.Error{Code: errcode.SessOwnershipLost, Op: op,
			Message: fmt.Sprintf("bind log of %s: %s at epoch %d does not hold it", sessionID, who.ID, who.Epoch)}
	}
	return nil
}

// SessionID returns the session the log writes.
func (l *SessionLog) SessionID() string { return l.id }

// Owner returns the owner the log writes as.
func (l *SessionLog) Owner() Owner { return l.who }

// Append encodes e (event.Encode) and appends it under e.ID; it returns
// once the event is durable. The record is the caller's own copy. Codes:
// the EVENT_* codes of an event that does not encode, and those of
// Store.Append.
func (l *SessionLog) Append(ctx context.Context, e event.Event) (Record, error) {
	body, err := event.Encode(e)
	if err != nil {
		return Record{}, err
	}
	return l.append(ctx, EventIn{ID: e.ID, Type: string(e.Type), Body: body})
}

// AppendRaw appends an already encoded envelope; it must decode strictly
// (event.Decode) to an event with ev's ID and type. Codes: the EVENT_*
// codes of a body that does not decode, SESS_INVALID_RECORD for an ID or
// type that differs from the body's, and those of Store.Append.
func (l *SessionLog) AppendRaw(ctx context.Context, ev EventIn) (Record, error) {
	e, err := event.Decode(ev.Body)
	if err != nil {
		return Record{}, err
	}
	if e.ID != ev.ID || string(e.Type) != ev.Type {
		return Record{}, &errcode.Error{Code: errcode.SessInvalidRecord, Op: "store.AppendRaw",
			Message: fmt.Sprintf("append raw event %s: body has id %s and type %s", ev.ID, e.ID, e.Type)}
	}
	ev.Body = slices.Clone(ev.Body)
	return l.append(ctx, ev)
}

func (l *SessionLog) append(ctx context.Context, ev EventIn) (Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Append(ctx, l.id, l.who, ev)
}

// SaveCheckpoint saves a checkpoint covering events up to afterSeq, at the
// next revision. Delivering the current checkpoint again returns it (the
// store fences the retry); delivering an older checkpoint this log saved
// returns the current one and never moves the cursor back. Codes: those of
// Store.SaveCheckpoint.
func (l *SessionLog) SaveCheckpoint(ctx context.Context, afterSeq int64, payload []byte) (Checkpoint, error) {
	return l.save(ctx, "store.SaveCheckpoint", keyOf(afterSeq, 0, payload), func(expected int64) (Checkpoint, error) {
		return l.s.SaveCheckpoint(ctx, l.id, l.who, expected, afterSeq, payload)
	})
}

// AppendCheckpoint saves a checkpoint whose payload is the first keep bytes
// of the current one followed by tail (Store.AppendCheckpoint), tracking
// the revision and retries as SaveCheckpoint does. The returned checkpoint
// has no Payload. Codes: those of Store.AppendCheckpoint.
func (l *SessionLog) AppendCheckpoint(ctx context.Context, afterSeq, keep int64, tail []byte) (Checkpoint, error) {
	return l.save(ctx, "store.AppendCheckpoint", keyOf(afterSeq, keep, tail), func(expected int64) (Checkpoint, error) {
		return l.s.AppendCheckpoint(ctx, l.id, l.who, expected, afterSeq, keep, tail)
	})
}

func (l *SessionLog) save(ctx context.Context, op string, key cpKey, write func(expected int64) (Checkpoint, error)) (Checkpoint, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	expected := l.cur.Revision
	if rev, ok := l.saved[key]; ok {
		if rev != l.cur.Revision {
			// An older checkpoint delivered again: nothing to write, but
			// only its holder may be told so.
			if err := checkHolder(ctx, l.s, op, l.id, l.who); err != nil {
				return Checkpoint{}, err
			}
			return cloneCheckpoint(l.cur), nil
		}
		expected = rev - 1 // the current one again: an identical retry
	}
	cp, err := write(expected)
	if err != nil {
		return Checkpoint{}, err
	}
	l.cur = cloneCheckpoint(cp)
	l.saved[key] = cp.Revision
	return cp, nil
}

// LoadCheckpoint returns the session's checkpoint. Codes: those of
// Store.LoadCheckpoint.
func (l *SessionLog) LoadCheckpoint(ctx context.Context) (Checkpoint, error) {
	return l.s.LoadCheckpoint(ctx, l.id)
}

// ReadEvents reads the session's events after a cursor. Codes: those of
// Store.ReadEvents.
func (l *SessionLog) ReadEvents(ctx context.Context, afterSeq int64, limit int) ([]Record, error) {
	return l.s.ReadEvents(ctx, l.id, afterSeq, limit)
}

// Renew extends the owner's lease. Codes: those of Store.Renew.
func (l *SessionLog) Renew(ctx context.Context, d time.Duration) error {
	return l.s.Renew(ctx, l.id, l.who, d)
}

// Release gives the session up; the log cannot write afterwards. Codes:
// those of Store.Release.
func (l *SessionLog) Release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Release(ctx, l.id, l.who)
}

func cloneCheckpoint(c Checkpoint) Checkpoint {
	c.Payload = slices.Clone(c.Payload)
	return c
}
