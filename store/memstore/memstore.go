// Package memstore is an in-memory store.Store: the whole contract of
// package store (ordering, redelivery, checkpoint CAS, leases and fencing)
// without durability. Runtime unit tests use it; it passes the same
// conformance suite (store/storetest) as store/sqlite.
//
// One mutex serializes every call, so seq and GlobalSeq follow the order in
// which calls took it. Values going in and out are copied. Codes: those of
// package store; SESS_CLOSED after Close.
package memstore

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/internal/rules"
)

var _ store.Store = (*Store)(nil)

// Options configure a Store. Zero values mean time.Now and this host.
type Options struct {
	Now       func() time.Time
	LocalHost string
}

// Store is an in-memory session store, safe for concurrent use.
type Store struct {
	now  func() time.Time
	host string

	mu        sync.Mutex
	closed    bool                     // guarded by mu
	sessions  map[string]*session      // guarded by mu
	events    map[string]*store.Record // by event ID; guarded by mu
	globalSeq int64                    // guarded by mu
}

type session struct {
	id        string
	sum       rules.Summary
	metadata  map[string]string
	createdAt time.Time
	updatedAt time.Time
	epoch     int64
	holder    *rules.Holder
	log       []*store.Record
	cp        *store.Checkpoint // Payload nil: the payload is parts
	parts     [][]byte          // the checkpoint's payload in the pieces it was saved in
}

// New returns an empty store.
func New(opts Options) *Store {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LocalHost == "" {
		opts.LocalHost = rules.LocalHost()
	}
	return &Store{
		now:      opts.Now,
		host:     opts.LocalHost,
		sessions: map[string]*session{},
		events:   map[string]*store.Record{},
	}
}

func (s *Store) env() rules.Env {
	return rules.Env{Now: rules.Now(s.now), LocalHost: s.host}
}

// lock takes mu and fails once the store is closed.
func (s *Store) lock(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return rules.Canceled(op, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return rules.Closed(op)
	}
	return nil
}

func (s *Store) sessionLocked(op, id string) (*session, error) {
	ss, ok := s.sessions[id]
	if !ok {
		return nil, rules.NotFound(op, id)
	}
	return ss, nil
}

func (ss *session) view(env rules.Env) store.Session {
	return store.Session{
		ID:        ss.id,
		Title:     ss.sum.Title,
		Metadata:  rules.CopyMetadata(ss.metadata),
		CreatedAt: ss.createdAt,
		UpdatedAt: ss.updatedAt,
		Turns:     ss.sum.Turns,
		Tokens:    ss.sum.Tokens,
		Status:    rules.ReportStatus(ss.sum.Status, ss.holder, env),
		LastSeq:   int64(len(ss.log)) - 1,
		Lease:     ss.holder.Lease(),
	}
}

func copyRecord(r store.Record) store.Record {
	r.Body = slices.Clone(r.Body)
	return r
}

// checkpointLocked returns the session's checkpoint with its payload, a
// fresh copy; nil when none.
func (ss *session) checkpointLocked() *store.Checkpoint {
	if ss.cp == nil {
		return nil
	}
	c := *ss.cp
	c.Payload = slices.Concat(ss.parts...)
	return &c
}

// suffixLocked returns the checkpoint's payload from byte keep on.
func (ss *session) suffixLocked(keep int64) []byte {
	var out []byte
	off := int64(0)
	for _, p := range ss.parts {
		end := off + int64(len(p))
		if end > keep {
			out = append(out, p[max(keep-off, 0):]...)
		}
		off = end
	}
	return out
}

// CreateSession implements store.Store.
func (s *Store) CreateSession(ctx context.Context, init store.SessionInit) (store.Session, error) {
	const op = "memstore.CreateSession"
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
	if err := s.lock(ctx, op); err != nil {
		return store.Session{}, err
	}
	defer s.mu.Unlock()
	env := s.env()
	if ss, ok := s.sessions[init.ID]; ok {
		same := ss.sum.Title == title && mapsEqual(ss.metadata, init.Metadata) &&
			(init.CreatedAt.IsZero() || ss.createdAt.Equal(init.CreatedAt.UTC().Truncate(store.TimePrecision)))
		if !same {
			return store.Session{}, rules.EventConflict(op, init.ID, "this store")
		}
		return ss.view(env), nil
	}
	created := env.Now
	if !init.CreatedAt.IsZero() {
		created = init.CreatedAt.UTC().Truncate(store.TimePrecision)
	}
	ss := &session{
		id:        init.ID,
		sum:       rules.Summary{Title: title, Status: store.StatusIdle},
		metadata:  rules.CopyMetadata(init.Metadata),
		createdAt: created,
		updatedAt: created,
	}
	s.sessions[init.ID] = ss
	return ss.view(env), nil
}

// StartSession implements store.Store.
func (s *Store) StartSession(ctx context.Context, init store.SessionInit, who store.Owner, first []store.EventIn) (store.Owner, []store.Record, error) {
	const op = "memstore.StartSession"
	init, h, effects, err := rules.Start(op, init, who, first, s.env())
	if err != nil {
		return store.Owner{}, nil, err
	}
	if err := s.lock(ctx, op); err != nil {
		return store.Owner{}, nil, err
	}
	defer s.mu.Unlock()
	if _, ok := s.sessions[init.ID]; ok {
		return store.Owner{}, nil, rules.Exists(op, init.ID)
	}
	ss := &session{
		id:        init.ID,
		sum:       rules.Summary{Title: init.Title, Status: store.StatusIdle},
		metadata:  rules.CopyMetadata(init.Metadata),
		createdAt: init.CreatedAt,
		updatedAt: init.CreatedAt,
		epoch:     h.Owner.Epoch,
		holder:    &h,
	}
	out, err := s.appendLocked(op, ss, first, effects)
	if err != nil {
		return store.Owner{}, nil, err
	}
	s.sessions[init.ID] = ss
	return h.Owner, out, nil
}

// RemoveEmpty implements store.Store.
func (s *Store) RemoveEmpty(ctx context.Context, before time.Time) ([]string, error) {
	const op = "memstore.RemoveEmpty"
	if err := s.lock(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	env := s.env()
	var out []string
	for id, ss := range s.sessions {
		if len(ss.log) == 0 && ss.cp == nil && ss.createdAt.Before(before) && !env.Live(ss.holder) {
			out = append(out, id)
			delete(s.sessions, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Session implements store.Reader.
func (s *Store) Session(ctx context.Context, id string) (store.Session, error) {
	const op = "memstore.Session"
	if err := s.lock(ctx, op); err != nil {
		return store.Session{}, err
	}
	defer s.mu.Unlock()
	ss, err := s.sessionLocked(op, id)
	if err != nil {
		return store.Session{}, err
	}
	return ss.view(s.env()), nil
}

// ListSessions implements store.Reader.
func (s *Store) ListSessions(ctx context.Context, after store.ListCursor, limit int) ([]store.Session, error) {
	const op = "memstore.ListSessions"
	if err := rules.CheckLimit(op, limit); err != nil {
		return nil, err
	}
	if err := s.lock(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	env := s.env()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		if after.ID == "" || ss.updatedAt.Before(after.UpdatedAt) || ss.updatedAt.Equal(after.UpdatedAt) && ss.id > after.ID {
			all = append(all, ss)
		}
	}
	slices.SortFunc(all, func(a, b *session) int {
		if c := b.updatedAt.Compare(a.updatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	out := make([]store.Session, 0, min(limit, len(all)))
	for _, ss := range all[:min(limit, len(all))] {
		out = append(out, ss.view(env))
	}
	return out, nil
}

// update runs fn on session id under the store's lock.
func (s *Store) update(ctx context.Context, op, id string, fn func(*session) error) error {
	if err := s.lock(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	ss, err := s.sessionLocked(op, id)
	if err != nil {
		return err
	}
	return fn(ss)
}

// SetTitle implements store.Store.
func (s *Store) SetTitle(ctx context.Context, id, title string) error {
	const op = "memstore.SetTitle"
	return s.update(ctx, op, id, func(ss *session) error {
		ss.sum.Title = rules.Title(title)
		ss.updatedAt = s.env().Now
		return nil
	})
}

// SetMetadata implements store.Store.
func (s *Store) SetMetadata(ctx context.Context, id string, who store.Owner, md map[string]string) error {
	const op = "memstore.SetMetadata"
	return s.update(ctx, op, id, func(ss *session) error {
		if err := rules.Fence(op, id, ss.holder, who); err != nil {
			return err
		}
		merged := rules.MergeMetadata(ss.metadata, md)
		if err := rules.CheckMetadata(op, merged); err != nil {
			return err
		}
		ss.metadata = merged
		ss.updatedAt = s.env().Now
		return nil
	})
}

// Acquire implements store.Store.
func (s *Store) Acquire(ctx context.Context, sessionID string, who store.Owner, opts store.AcquireOptions) (store.Owner, error) {
	const op = "memstore.Acquire"
	var got store.Owner
	err := s.update(ctx, op, sessionID, func(ss *session) error {
		if err := rules.Unmoved(op, sessionID, int64(len(ss.log))-1, opts); err != nil {
			return err
		}
		g, err := rules.Acquire(op, sessionID, ss.epoch, ss.holder, who, opts, s.env())
		if err != nil {
			return err
		}
		if g.Displaced {
			ss.sum.Status = rules.Displace(ss.sum.Status)
		}
		h := g.Holder
		ss.holder, ss.epoch = &h, h.Owner.Epoch
		got = h.Owner
		return nil
	})
	return got, err
}

// Renew implements store.Store.
func (s *Store) Renew(ctx context.Context, sessionID string, who store.Owner, d time.Duration) error {
	const op = "memstore.Renew"
	return s.update(ctx, op, sessionID, func(ss *session) error {
		h, err := rules.Renew(op, sessionID, ss.holder, who, d, s.env().Now)
		if err != nil {
			return err
		}
		ss.holder = &h
		return nil
	})
}

// Release implements store.Store.
func (s *Store) Release(ctx context.Context, sessionID string, who store.Owner) error {
	const op = "memstore.Release"
	return s.update(ctx, op, sessionID, func(ss *session) error {
		if err := rules.Fence(op, sessionID, ss.holder, who); err != nil {
			return err
		}
		ss.holder = nil
		ss.sum.Status = rules.Displace(ss.sum.Status)
		return nil
	})
}

// Append implements store.Store.
func (s *Store) Append(ctx context.Context, sessionID string, who store.Owner, ev store.EventIn) (store.Record, error) {
	recs, err := s.appendAll(ctx, "memstore.Append", sessionID, who, []store.EventIn{ev})
	if err != nil {
		return store.Record{}, err
	}
	return recs[0], nil
}

// AppendBatch implements store.Store.
func (s *Store) AppendBatch(ctx context.Context, sessionID string, who store.Owner, evs []store.EventIn) ([]store.Record, error) {
	return s.appendAll(ctx, "memstore.AppendBatch", sessionID, who, evs)
}

func (s *Store) appendAll(ctx context.Context, op, sessionID string, who store.Owner, evs []store.EventIn) ([]store.Record, error) {
	effects, err := rules.CheckEvents(op, evs)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, nil
	}
	if err := s.lock(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	ss, err := s.sessionLocked(op, sessionID)
	if err != nil {
		return nil, err
	}
	if err := rules.Fence(op, sessionID, ss.holder, who); err != nil {
		return nil, err
	}
	return s.appendLocked(op, ss, evs, effects)
}

// appendLocked appends evs to ss (fenced by the caller): it decides
// everything first, so that a conflict anywhere stores nothing.
func (s *Store) appendLocked(op string, ss *session, evs []store.EventIn, effects []rules.Effect) ([]store.Record, error) {
	sessionID := ss.id
	now := s.env().Now
	// Decide everything first so that a conflict anywhere stores nothing.
	out := make([]store.Record, len(evs))
	var fresh []*store.Record
	pending := map[string]*store.Record{}
	sum := ss.sum
	next, global := int64(len(ss.log)), s.globalSeq
	for i, ev := range evs {
		old, ok := s.events[ev.ID]
		if !ok {
			old, ok = pending[ev.ID]
		}
		if ok {
			if old.SessionID != sessionID || old.Type != ev.Type || string(old.Body) != string(ev.Body) {
				return nil, rules.EventConflict(op, ev.ID, old.SessionID)
			}
			out[i] = copyRecord(*old)
			continue
		}
		global++
		r := &store.Record{
			SessionID: sessionID, Seq: next, GlobalSeq: global,
			ID: ev.ID, Type: ev.Type, Body: slices.Clone(ev.Body), StoredAt: now,
		}
		next++
		effects[i].Apply(&sum)
		pending[ev.ID] = r
		fresh = append(fresh, r)
		out[i] = copyRecord(*r)
	}
	if len(fresh) == 0 {
		return out, nil
	}
	for _, r := range fresh {
		s.events[r.ID] = r
		ss.log = append(ss.log, r)
	}
	s.globalSeq = global
	ss.sum = sum
	ss.updatedAt = now
	rules.Extend(ss.holder, now)
	return out, nil
}

// ReadEvents implements store.Reader.
func (s *Store) ReadEvents(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]store.Record, error) {
	const op = "memstore.ReadEvents"
	if err := rules.CheckRead(op, afterSeq, limit); err != nil {
		return nil, err
	}
	if err := s.lock(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	ss, err := s.sessionLocked(op, sessionID)
	if err != nil {
		return nil, err
	}
	from := afterSeq + 1
	if from >= int64(len(ss.log)) {
		return []store.Record{}, nil
	}
	page := ss.log[from:min(int64(len(ss.log)), from+int64(limit))]
	out := make([]store.Record, len(page))
	for i, r := range page {
		out[i] = copyRecord(*r)
	}
	return out, nil
}

// SaveCheckpoint implements store.Store.
func (s *Store) SaveCheckpoint(ctx context.Context, sessionID string, who store.Owner, expectedRevision, afterSeq int64, payload []byte) (store.Checkpoint, error) {
	const op = "memstore.SaveCheckpoint"
	if err := rules.CheckCheckpointInput(op, expectedRevision, afterSeq, payload); err != nil {
		return store.Checkpoint{}, err
	}
	if err := s.lock(ctx, op); err != nil {
		return store.Checkpoint{}, err
	}
	defer s.mu.Unlock()
	ss, err := s.sessionLocked(op, sessionID)
	if err != nil {
		return store.Checkpoint{}, err
	}
	if err := rules.Fence(op, sessionID, ss.holder, who); err != nil {
		return store.Checkpoint{}, err
	}
	cur := ss.checkpointLocked()
	same, err := rules.DecideCheckpoint(op, sessionID, cur, int64(len(ss.log))-1, expectedRevision, afterSeq, payload)
	if err != nil {
		return store.Checkpoint{}, err
	}
	if same {
		return *cur, nil
	}
	now := s.env().Now
	ss.cp = &store.Checkpoint{SessionID: sessionID, Revision: expectedRevision + 1, AfterSeq: afterSeq, SavedAt: now}
	ss.parts = [][]byte{slices.Clone(payload)}
	rules.Extend(ss.holder, now)
	return *ss.checkpointLocked(), nil
}

// AppendCheckpoint implements store.Store: the payload is kept in the
// pieces it was saved in, so an append copies only tail.
func (s *Store) AppendCheckpoint(ctx context.Context, sessionID string, who store.Owner, expectedRevision, afterSeq, keep int64, tail []byte) (store.Checkpoint, error) {
	const op = "memstore.AppendCheckpoint"
	if err := rules.CheckAppendInput(op, expectedRevision, afterSeq, keep, tail); err != nil {
		return store.Checkpoint{}, err
	}
	if err := s.lock(ctx, op); err != nil {
		return store.Checkpoint{}, err
	}
	defer s.mu.Unlock()
	ss, err := s.sessionLocked(op, sessionID)
	if err != nil {
		return store.Checkpoint{}, err
	}
	if err := rules.Fence(op, sessionID, ss.holder, who); err != nil {
		return store.Checkpoint{}, err
	}
	var head *rules.Head
	if ss.cp != nil {
		head = &rules.Head{Revision: ss.cp.Revision, AfterSeq: ss.cp.AfterSeq, Size: ss.size()}
	}
	same, err := rules.DecideAppend(op, sessionID, head, int64(len(ss.log))-1, expectedRevision, afterSeq, keep, tail,
		func() ([]byte, error) { return ss.suffixLocked(keep), nil })
	if err != nil {
		return store.Checkpoint{}, err
	}
	if same {
		return *ss.cp, nil
	}
	// Cut the pieces at keep, then add tail as a piece of its own.
	off, i := int64(0), 0
	for ; i < len(ss.parts) && off+int64(len(ss.parts[i])) <= keep; i++ {
		off += int64(len(ss.parts[i]))
	}
	parts := ss.parts[:i:i]
	if off < keep {
		parts = append(parts, ss.parts[i][:keep-off:keep-off])
	}
	if len(tail) > 0 {
		parts = append(parts, slices.Clone(tail))
	}
	now := s.env().Now
	ss.cp = &store.Checkpoint{SessionID: sessionID, Revision: expectedRevision + 1, AfterSeq: afterSeq, SavedAt: now}
	ss.parts = parts
	rules.Extend(ss.holder, now)
	return *ss.cp, nil
}

func (ss *session) size() int64 {
	n := int64(0)
	for _, p := range ss.parts {
		n += int64(len(p))
	}
	return n
}

// LoadCheckpoint implements store.Reader.
func (s *Store) LoadCheckpoint(ctx context.Context, sessionID string) (store.Checkpoint, error) {
	const op = "memstore.LoadCheckpoint"
	if err := s.lock(ctx, op); err != nil {
		return store.Checkpoint{}, err
	}
	defer s.mu.Unlock()
	ss, err := s.sessionLocked(op, sessionID)
	if err != nil {
		return store.Checkpoint{}, err
	}
	if ss.cp == nil {
		return store.Checkpoint{}, rules.NoCheckpoint(op, sessionID)
	}
	return *ss.checkpointLocked(), nil
}

// Close implements store.Reader. The data is dropped.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.sessions, s.events = nil, nil
	return nil
}
