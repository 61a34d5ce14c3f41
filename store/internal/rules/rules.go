// Package rules holds the session-store contract as pure decisions, shared
// by every implementation (store/memstore, store/sqlite, store/postgres) so
// that they cannot drift: what an event does to its session's summary, who
// may acquire a lease, whether a write is fenced out, whether a checkpoint
// save is a conflict, an idempotent retry or new. Implementations load the
// state inside their transaction, ask these functions, and write the answer.
//
// Every error is an *errcode.Error with a SESS_* code and the caller's op.
package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/internal/proc"
)

// Metadata limits.
const (
	maxMetaKeyBytes   = 256
	maxMetaValueBytes = 64 << 10
	maxMetaBytes      = 1 << 20
	maxTypeBytes      = 128
)

func fail(code errcode.Code, op, format string, args ...any) error {
	return &errcode.Error{Code: code, Op: op, Message: fmt.Sprintf(format, args...)}
}

// Now reads a clock at the store's precision, in UTC.
func Now(clock func() time.Time) time.Time {
	return clock().UTC().Truncate(store.TimePrecision)
}

// NewSessionID returns a fresh, time-ordered session ID.
func NewSessionID() string {
	u, err := uuid.NewV7()
	if err != nil {
		u = uuid.New()
	}
	return "sess-" + u.String()
}

// CheckID accepts 1..MaxIDBytes bytes of printable, non-space UTF-8.
func CheckID(op, what, id string) error {
	if id == "" || len(id) > store.MaxIDBytes || !utf8.ValidString(id) {
		return fail(errcode.SessInvalidRecord, op, "check %s: want 1..%d bytes of UTF-8", what, store.MaxIDBytes)
	}
	for _, r := range id {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fail(errcode.SessInvalidRecord, op, "check %s %q: want no space or control character", what, id)
		}
	}
	return nil
}

// CheckMetadata bounds metadata: non-empty keys, bounded sizes, UTF-8.
func CheckMetadata(op string, md map[string]string) error {
	total := 0
	for k, v := range md {
		if k == "" || len(k) > maxMetaKeyBytes || len(v) > maxMetaValueBytes || !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fail(errcode.SessInvalidRecord, op, "check metadata key %q: want a key of 1..%d bytes and a value of at most %d bytes, UTF-8", k, maxMetaKeyBytes, maxMetaValueBytes)
		}
		total += len(k) + len(v)
	}
	if total > maxMetaBytes {
		return fail(errcode.SessInvalidRecord, op, "check metadata: %d bytes, want at most %d", total, maxMetaBytes)
	}
	return nil
}

// MergeMetadata returns base with md applied: a key with an empty value is
// deleted, others are set. base is not modified.
func MergeMetadata(base, md map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(md))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range md {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// EncodeMetadata is the stored form of a session's metadata: JSON with
// sorted keys, so the same map always encodes the same.
func EncodeMetadata(md map[string]string) string {
	if md == nil {
		md = map[string]string{}
	}
	b, err := json.Marshal(md)
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return string(b)
}

// DecodeMetadata reads stored metadata. Code: SESS_INVALID_RECORD.
func DecodeMetadata(op, id, stored string) (map[string]string, error) {
	if md, ok := decodePlainMetadata(stored); ok {
		return md, nil
	}
	md := map[string]string{}
	if err := json.Unmarshal([]byte(stored), &md); err != nil {
		return nil, &errcode.Error{Code: errcode.SessInvalidRecord, Op: op, Message: "read metadata of " + id, Err: err}
	}
	return md, nil
}

// decodePlainMetadata reads metadata as EncodeMetadata writes it when no
// string needs an escape: {"k":"v",...}, no spaces, valid UTF-8. It gives
// what json.Unmarshal would; false for anything else, which json.Unmarshal
// then reads (or refuses). Listing sessions decodes one object per row:
// json.Unmarshal was a fifth of a listed row's cost.
func decodePlainMetadata(s string) (map[string]string, bool) {
	if s == "{}" {
		return map[string]string{}, true
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' || !utf8.ValidString(s) {
		return nil, false
	}
	md := make(map[string]string, strings.Count(s, `":"`))
	rest := s[1:]
	str := func() (string, bool) {
		if len(rest) == 0 || rest[0] != '"' {
			return "", false
		}
		for i := 1; i < len(rest); i++ {
			switch c := rest[i]; {
			case c == '"':
				v := rest[1:i]
				rest = rest[i+1:]
				return v, true
			case c == '\\' || c < 0x20:
				return "", false
			}
		}
		return "", false
	}
	for {
		k, ok := str()
		if !ok || len(rest) == 0 || rest[0] != ':' {
			return nil, false
		}
		rest = rest[1:]
		v, ok := str()
		if !ok || len(rest) == 0 {
			return nil, false
		}
		md[k] = v
		switch rest[0] {
		case ',':
			rest = rest[1:]
		case '}':
			return md, len(rest) == 1
		default:
			return nil, false
		}
	}
}

// UpdateMetadata applies md to stored metadata (see MergeMetadata), checks
// the result and returns its stored form. Codes: SESS_INVALID_RECORD.
func UpdateMetadata(op, id, stored string, md map[string]string) (string, error) {
	base, err := DecodeMetadata(op, id, stored)
	if err != nil {
		return "", err
	}
	merged := MergeMetadata(base, md)
	if err := CheckMetadata(op, merged); err != nil {
		return "", err
	}
	return EncodeMetadata(merged), nil
}

// CheckEvents checks a batch and each of its events (CheckBatch, CheckEvent)
// and returns the events' effects on the session summary, in order.
func CheckEvents(op string, evs []store.EventIn) ([]Effect, error) {
	if err := CheckBatch(op, len(evs)); err != nil {
		return nil, err
	}
	effects := make([]Effect, len(evs))
	for i, ev := range evs {
		e, err := CheckEvent(op, ev)
		if err != nil {
			return nil, err
		}
		effects[i] = e
	}
	return effects, nil
}

// Row is a session's row as the SQL stores read it, before it becomes a
// store.Session: the fields every store keeps, in the same shapes.
type Row struct {
	ID                   string
	Sum                  Summary
	Metadata             string // JSON object (EncodeMetadata)
	CreatedAt, UpdatedAt time.Time
	LastSeq, Epoch       int64
	Holder               *Holder
}

// View is the session as the port returns it. Code: SESS_INVALID_RECORD.
func (r *Row) View(env Env) (store.Session, error) {
	md, err := DecodeMetadata("", r.ID, r.Metadata)
	if err != nil {
		return store.Session{}, err
	}
	return store.Session{
		ID:        r.ID,
		Title:     r.Sum.Title,
		Metadata:  md,
		CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt,
		Turns:     r.Sum.Turns,
		Tokens:    r.Sum.Tokens,
		Status:    ReportStatus(r.Sum.Status, r.Holder, env),
		LastSeq:   r.LastSeq,
		Lease:     r.Holder.Lease(),
	}, nil
}

// CopyMetadata returns a copy of md, never nil.
func CopyMetadata(md map[string]string) map[string]string {
	return MergeMetadata(md, nil)
}

// Title turns text into a session title: its first non-blank line, trimmed,
// control characters as spaces, at most MaxTitleChars characters (a cut one
// ends with "…").
func Title(text string) string {
	line := ""
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(line, "\uFFFD"))
	if utf8.RuneCountInString(line) <= store.MaxTitleChars {
		return line
	}
	n := 0
	for i := range line {
		if n == store.MaxTitleChars-1 {
			return strings.TrimSpace(line[:i]) + "…"
		}
		n++
	}
	return line
}

// Summary is the part of a session the store derives from its events.
type Summary struct {
	Title  string
	Turns  int
	Tokens int64
	Status string
}

// Effect is what one event does to its session's summary.
type Effect struct {
	Status      string // "" leaves the status alone
	Turns       int
	Tokens      int64
	UserText    string // the content of a user message, a title candidate
	HasUserText bool
}

// Apply folds e into s: a user message names an untitled session.
func (e Effect) Apply(s *Summary) {
	if e.Status != "" {
		s.Status = e.Status
	}
	s.Turns += e.Turns
	s.Tokens += e.Tokens
	if e.HasUserText && s.Title == "" {
		s.Title = Title(e.UserText)
	}
}

// CheckEvent validates an event to append and returns its effect on the
// summary. The body must be a JSON object of at most MaxBodyBytes whose
// "type" and "eventId" equal ev's; turn.started, turn.completed and
// message.completed must carry the data fields the summary reads.
func CheckEvent(op string, ev store.EventIn) (Effect, error) {
	if err := CheckID(op, "event id", ev.ID); err != nil {
		return Effect{}, err
	}
	if ev.Type == "" || len(ev.Type) > maxTypeBytes || strings.ContainsFunc(ev.Type, unicode.IsSpace) {
		return Effect{}, fail(errcode.SessInvalidRecord, op, "check event %s: want a type of 1..%d bytes without space", ev.ID, maxTypeBytes)
	}
	if len(ev.Body) == 0 || len(ev.Body) > store.MaxBodyBytes {
		return Effect{}, fail(errcode.SessInvalidRecord, op, "check event %s: body of %d bytes, want 1..%d", ev.ID, len(ev.Body), store.MaxBodyBytes)
	}
	if ev.Body[0] != '{' {
		return Effect{}, fail(errcode.SessInvalidRecord, op, "check event %s: body is not a JSON object", ev.ID)
	}
	if event.CanonicalHead(ev.Body, ev.Type, ev.ID) {
		// The codec's canonical form names type and eventId first; then
		// validity is all that is left to check, and the data is parsed
		// only for the few types the summary reads.
		if !json.Valid(ev.Body) {
			return Effect{}, fail(errcode.SessInvalidRecord, op, "check event %s: body is not a JSON object", ev.ID)
		}
		if !event.SummaryReads(event.Type(ev.Type)) {
			return Effect{}, nil
		}
	}
	sum, err := event.Summarize(ev.Body, ev.Type, ev.ID)
	if err != nil {
		return Effect{}, &errcode.Error{Code: errcode.SessInvalidRecord, Op: op, Message: "check event " + ev.ID + ": " + errcode.Message(err), Err: err}
	}
	e := Effect{Status: sum.TurnStatus, Tokens: sum.TotalTokens, UserText: sum.UserText, HasUserText: sum.HasUserText}
	if sum.TurnStarted {
		e.Status = store.StatusRunning
	}
	if sum.TurnStatus != "" {
		e.Turns = 1
	}
	return e, nil
}

// CheckRead validates a read cursor and page size.
func CheckRead(op string, afterSeq int64, limit int) error {
	if afterSeq < -1 {
		return fail(errcode.SessInvalidCursor, op, "check cursor %d: want -1 or more", afterSeq)
	}
	return CheckLimit(op, limit)
}

// CheckLimit validates a page size.
func CheckLimit(op string, limit int) error {
	if limit < 1 || limit > store.MaxPage {
		return fail(errcode.SessInvalidCursor, op, "check page size %d: want 1..%d", limit, store.MaxPage)
	}
	return nil
}

// CheckBatch validates the size of a batch (each event is checked apart).
func CheckBatch(op string, n int) error {
	if n > store.MaxBatch {
		return fail(errcode.SessInvalidRecord, op, "check batch of %d events: want at most %d", n, store.MaxBatch)
	}
	return nil
}

// Holder is a session's current lease as an implementation stores it.
type Holder struct {
	Owner      store.Owner // Epoch is the session's epoch
	Identity   string      // proc.Identity of Owner.PID when Owner.Host is this host
	AcquiredAt time.Time
	ExpiresAt  time.Time
	TTL        time.Duration // the lease length writes renew it by
}

// Lease returns the public view of h, nil for nil.
func (h *Holder) Lease() *store.Lease {
	if h == nil {
		return nil
	}
	return &store.Lease{Owner: h.Owner, AcquiredAt: h.AcquiredAt, ExpiresAt: h.ExpiresAt}
}

// Env is what lease decisions need from the implementation.
type Env struct {
	Now       time.Time
	LocalHost string
}

// LocalHost returns this machine's name as stores record it (store.HostID).
func LocalHost() string { return store.HostID() }

func (env Env) live(h *Holder) bool {
	if h == nil || !env.Now.Before(h.ExpiresAt) {
		return false
	}
	if h.Owner.Host == env.LocalHost && !proc.Alive(h.Owner.PID, h.Identity) {
		return false
	}
	return true
}

// Live reports whether h is a live claim: a lease not yet expired whose
// holder, when on this host, still runs.
func (env Env) Live(h *Holder) bool { return env.live(h) }

// Start checks a StartSession call and returns the session's ID (a new
// one when init has none), title, creation time (now when init has none),
// holder and the effects of its first events. Codes: SESS_INVALID_RECORD.
func Start(op string, init store.SessionInit, who store.Owner, evs []store.EventIn, env Env) (store.SessionInit, Holder, []Effect, error) {
	if init.ID == "" {
		init.ID = NewSessionID()
	}
	if err := CheckID(op, "session id", init.ID); err != nil {
		return init, Holder{}, nil, err
	}
	if err := CheckMetadata(op, init.Metadata); err != nil {
		return init, Holder{}, nil, err
	}
	init.Title = Title(init.Title)
	if init.CreatedAt.IsZero() {
		init.CreatedAt = env.Now
	}
	init.CreatedAt = init.CreatedAt.UTC().Truncate(store.TimePrecision)
	if len(evs) == 0 {
		return init, Holder{}, nil, fail(errcode.SessInvalidRecord, op, "start session %s: it needs a first event", init.ID)
	}
	effects, err := CheckEvents(op, evs)
	if err != nil {
		return init, Holder{}, nil, err
	}
	g, err := Acquire(op, init.ID, 0, nil, who, store.AcquireOptions{}, env)
	if err != nil {
		return init, Holder{}, nil, err
	}
	return init, g.Holder, effects, nil
}

// Exists is the SESS_EVENT_CONFLICT of a StartSession whose session
// exists already.
func Exists(op, sessionID string) error {
	return fail(errcode.SessEventConflict, op, "start session %s: it exists already", sessionID)
}

func sameClaimant(h *Holder, who store.Owner) bool {
	return h != nil && h.Owner.ID == who.ID && h.Owner.Host == who.Host && h.Owner.PID == who.PID
}

// Grant is the answer to an Acquire.
type Grant struct {
	Holder    Holder
	Displaced bool // another holder's claim was ended (expired, dead, taken over)
}

// Unmoved checks opts.IfLastSeq against the session's last seq.
func Unmoved(op, sessionID string, lastSeq int64, opts store.AcquireOptions) error {
	if opts.IfLastSeq != nil && *opts.IfLastSeq != lastSeq {
		return fail(errcode.SessBusy, op, "acquire %s: its log moved on (last seq %d, not %d) since it was checked: another process wrote to it", sessionID, lastSeq, *opts.IfLastSeq)
	}
	return nil
}

// Acquire decides whether who gets the session, given its epoch (kept after
// release) and current holder (nil when free). who's empty Host and zero PID
// are filled with this host and process.
func Acquire(op, sessionID string, epoch int64, cur *Holder, who store.Owner, opts store.AcquireOptions, env Env) (Grant, error) {
	if err := CheckID(op, "owner id", who.ID); err != nil {
		return Grant{}, err
	}
	if who.Host == "" {
		who.Host = env.LocalHost
	}
	if who.PID == 0 {
		who.PID = os.Getpid()
	}
	if opts.LeaseFor < 0 {
		return Grant{}, fail(errcode.SessInvalidRecord, op, "check lease of %v: want 0 or more", opts.LeaseFor)
	}
	ttl := opts.LeaseFor
	if ttl == 0 {
		ttl = store.DefaultLease
	}
	if sameClaimant(cur, who) {
		h := *cur
		h.ExpiresAt, h.TTL = env.Now.Add(ttl), ttl
		return Grant{Holder: h}, nil
	}
	if !opts.TakeOver && env.live(cur) {
		busy := &store.BusyError{SessionID: sessionID, Lease: *cur.Lease()}
		return Grant{}, &errcode.Error{Code: errcode.SessBusy, Op: op, Message: "acquire " + sessionID + ": " + busy.Error(), Err: busy}
	}
	identity := ""
	if who.Host == env.LocalHost {
		id, err := proc.Identity(who.PID)
		if errors.Is(err, proc.ErrNoProcess) {
			return Grant{}, fail(errcode.SessInvalidRecord, op, "acquire %s: owner pid %d does not run on this host", sessionID, who.PID)
		}
		identity = id
	}
	who.Epoch = epoch + 1
	return Grant{
		Holder:    Holder{Owner: who, Identity: identity, AcquiredAt: env.Now, ExpiresAt: env.Now.Add(ttl), TTL: ttl},
		Displaced: cur != nil,
	}, nil
}

// Fence returns SESS_OWNERSHIP_LOST unless who is the current holder at its
// epoch. An expired lease nobody has taken yet still admits its holder: the
// epoch, not the clock, is the fence.
func Fence(op, sessionID string, cur *Holder, who store.Owner) error {
	if cur == nil || cur.Owner.ID != who.ID || cur.Owner.Epoch != who.Epoch {
		return fail(errcode.SessOwnershipLost, op, "fence %s: %s at epoch %d no longer holds it", sessionID, who.ID, who.Epoch)
	}
	return nil
}

// Extend renews h by its TTL after a write by its holder, once less than
// half of it is left (so that a stream of writes does not rewrite the lease
// each time), and reports whether it did.
func Extend(h *Holder, now time.Time) bool {
	if h.ExpiresAt.Sub(now) >= h.TTL/2 {
		return false
	}
	if e := now.Add(h.TTL); e.After(h.ExpiresAt) {
		h.ExpiresAt = e
		return true
	}
	return false
}

// Renew fences who and returns the holder with its lease set to now+d.
func Renew(op, sessionID string, cur *Holder, who store.Owner, d time.Duration, now time.Time) (Holder, error) {
	if err := Fence(op, sessionID, cur, who); err != nil {
		return Holder{}, err
	}
	if d < 0 {
		return Holder{}, fail(errcode.SessInvalidRecord, op, "check lease of %v: want 0 or more", d)
	}
	if d == 0 {
		d = store.DefaultLease
	}
	h := *cur
	h.ExpiresAt, h.TTL = now.Add(d), d
	return h, nil
}

// Displace returns the status a session takes when its holder's claim ends
// without a turn.completed: a running session is interrupted.
func Displace(status string) string {
	if status == store.StatusRunning {
		return store.StatusInterrupted
	}
	return status
}

// ReportStatus returns the status to show: a running session nobody live
// holds is interrupted.
func ReportStatus(status string, cur *Holder, env Env) string {
	if status == store.StatusRunning && !env.live(cur) {
		return store.StatusInterrupted
	}
	return status
}

// CheckCheckpointInput validates a save's arguments before any state is read.
func CheckCheckpointInput(op string, expectedRevision, afterSeq int64, payload []byte) error {
	if len(payload) == 0 || len(payload) > store.MaxPayloadBytes {
		return fail(errcode.SessInvalidRecord, op, "check checkpoint payload of %d bytes: want 1..%d", len(payload), store.MaxPayloadBytes)
	}
	if expectedRevision < 0 {
		return fail(errcode.SessInvalidRecord, op, "check expected revision %d: want 0 or more", expectedRevision)
	}
	if afterSeq < -1 {
		return fail(errcode.SessInvalidCursor, op, "check checkpoint cursor %d: want -1 or more", afterSeq)
	}
	return nil
}

// DecideCheckpoint compares a save with the current checkpoint (nil when
// none) and the session's last seq. identical reports a retry of the
// current checkpoint, to be returned as is.
func DecideCheckpoint(op, sessionID string, cur *store.Checkpoint, lastSeq, expectedRevision, afterSeq int64, payload []byte) (identical bool, err error) {
	rev := int64(0)
	if cur != nil {
		rev = cur.Revision
		if cur.Revision == expectedRevision+1 && cur.AfterSeq == afterSeq && string(cur.Payload) == string(payload) {
			return true, nil
		}
	}
	if expectedRevision != rev {
		return false, fail(errcode.SessCheckpointConflict, op, "save checkpoint of %s: expected revision %d, current is %d", sessionID, expectedRevision, rev)
	}
	if cur != nil && afterSeq < cur.AfterSeq {
		return false, fail(errcode.SessCheckpointConflict, op, "save checkpoint of %s: cursor %d goes back from %d", sessionID, afterSeq, cur.AfterSeq)
	}
	if afterSeq > lastSeq {
		return false, fail(errcode.SessInvalidRecord, op, "save checkpoint of %s: cursor %d is past the last event %d", sessionID, afterSeq, lastSeq)
	}
	return false, nil
}

// CheckAppendInput validates an append save's arguments before any state
// is read.
func CheckAppendInput(op string, expectedRevision, afterSeq, keep int64, tail []byte) error {
	if keep < 0 || keep+int64(len(tail)) == 0 || keep+int64(len(tail)) > store.MaxPayloadBytes {
		return fail(errcode.SessInvalidRecord, op, "check checkpoint of %d kept and %d new bytes: want 1..%d in all", keep, len(tail), store.MaxPayloadBytes)
	}
	return CheckCheckpointInput(op, expectedRevision, afterSeq, []byte{0})
}

// Head is what an append save needs of the current checkpoint: its
// revision, cursor and payload size, without the payload.
type Head struct {
	Revision, AfterSeq, Size int64
}

// DecideAppend is DecideCheckpoint for an append save (cur nil: no
// checkpoint yet). suffix reads the current payload from byte keep on; it
// is called only when the save may be an identical retry.
func DecideAppend(op, sessionID string, cur *Head, lastSeq, expectedRevision, afterSeq, keep int64, tail []byte, suffix func() ([]byte, error)) (identical bool, err error) {
	rev, size := int64(0), int64(0)
	if cur != nil {
		rev, size = cur.Revision, cur.Size
		if cur.Revision == expectedRevision+1 && cur.AfterSeq == afterSeq && cur.Size == keep+int64(len(tail)) {
			got, err := suffix()
			if err != nil {
				return false, err
			}
			if string(got) == string(tail) {
				return true, nil
			}
		}
	}
	if expectedRevision != rev {
		return false, fail(errcode.SessCheckpointConflict, op, "save checkpoint of %s: expected revision %d, current is %d", sessionID, expectedRevision, rev)
	}
	if keep > size {
		return false, fail(errcode.SessInvalidRecord, op, "save checkpoint of %s: keeps %d bytes of a %d byte payload", sessionID, keep, size)
	}
	if cur != nil && afterSeq < cur.AfterSeq {
		return false, fail(errcode.SessCheckpointConflict, op, "save checkpoint of %s: cursor %d goes back from %d", sessionID, afterSeq, cur.AfterSeq)
	}
	if afterSeq > lastSeq {
		return false, fail(errcode.SessInvalidRecord, op, "save checkpoint of %s: cursor %d is past the last event %d", sessionID, afterSeq, lastSeq)
	}
	return false, nil
}

// NotFound is the error for a missing session.
func NotFound(op, sessionID string) error {
	return fail(errcode.SessNotFound, op, "find session %s", sessionID)
}

// NoCheckpoint is the error for a session without a checkpoint.
func NoCheckpoint(op, sessionID string) error {
	return fail(errcode.SessNotFound, op, "load checkpoint of %s: none saved", sessionID)
}

// Canceled is the error for a call whose context ended: SESS_CLOSED, the
// store is closed to this caller, with the context's error as the cause.
func Canceled(op string, err error) error {
	return &errcode.Error{Code: errcode.SessClosed, Op: op, Message: "cancel call", Err: err}
}

// Closed is the error for a closed store.
func Closed(op string) error {
	return fail(errcode.SessClosed, op, "use closed store")
}

// EventConflict is the error for an event ID stored with other bytes or in
// another session.
func EventConflict(op, eventID, storedIn string) error {
	return fail(errcode.SessEventConflict, op, "append event %s: already stored in %s with other content", eventID, storedIn)
}
