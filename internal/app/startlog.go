package app

import (
	"context"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// startLog is the log of a session that is not stored yet: its first
// append creates the session, makes this process its holder and stores the
// event in one transaction (store.Store.StartSession). An open that fails
// before its first event, or a process killed at any point of it, leaves
// no session behind; started is called once the session exists, with the
// holder, before the append returns.
type startLog struct {
	st      store.Store
	init    store.SessionInit
	who     store.Owner
	started func(store.Owner)

	mu     sync.Mutex
	log    *store.SessionLog // guarded by mu; nil until the first append
	failed error             // guarded by mu: why the session could not be stored
}

var _ runtime.EventLog = (*startLog)(nil)

func (l *startLog) SessionID() string { return l.init.ID }

// Append stores e; the first call creates the session with it.
func (l *startLog) Append(ctx context.Context, e event.Event) (store.Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log != nil {
		return l.log.Append(ctx, e)
	}
	body, err := event.Encode(e)
	if err != nil {
		return store.Record{}, err
	}
	owner, recs, err := l.st.StartSession(ctx, l.init, l.who, []store.EventIn{{ID: e.ID, Type: string(e.Type), Body: body}})
	if err != nil {
		l.failed = err
		return store.Record{}, err
	}
	l.started(owner)
	log, err := store.NewSessionLog(ctx, l.st, l.init.ID, owner)
	if err != nil {
		return store.Record{}, err
	}
	l.log = log
	return recs[0], nil
}

// stored says whether the session exists: its first event was stored.
func (l *startLog) stored() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log != nil
}

// startErr is why the first append could not store the session, if it
// could not: the store's own error, which the runtime wraps.
func (l *startLog) startErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// AppendCheckpoint saves a checkpoint; a session with no event yet has
// nothing for it to cover (SESS_NOT_FOUND).
func (l *startLog) AppendCheckpoint(ctx context.Context, afterSeq, keep int64, tail []byte) (store.Checkpoint, error) {
	l.mu.Lock()
	log := l.log
	l.mu.Unlock()
	if log == nil {
		return store.Checkpoint{}, errcode.Errorf(errcode.SessNotFound, "save a checkpoint of session %s: it is not stored until its first event", l.init.ID)
	}
	return log.AppendCheckpoint(ctx, afterSeq, keep, tail)
}

// ReadEvents reads the session's events back (none before the first).
func (l *startLog) ReadEvents(ctx context.Context, afterSeq int64, limit int) ([]store.Record, error) {
	l.mu.Lock()
	log := l.log
	l.mu.Unlock()
	if log == nil {
		return nil, nil
	}
	return log.ReadEvents(ctx, afterSeq, limit)
}

// emptyGrace is how old a session without events must be before start-up
// removes it: older than any lease, so that a session another process is
// creating the old way (CreateSession, then its first append) is left alone.
const emptyGrace = store.DefaultLease

// RemoveEmptySessions removes the sessions that hold no event and that no
// live process holds, created more than a lease ago: what a process killed
// while creating a session left behind (an older Harness created the row
// before its first event). It returns their IDs. Codes: those of
// store.Store.RemoveEmpty (SESS_READ_ONLY on a store that cannot be
// written).
func RemoveEmptySessions(ctx context.Context, st store.Store) ([]string, error) {
	return st.RemoveEmpty(ctx, time.Now().Add(-emptyGrace))
}
