package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/internal/rules"
)

// qLockAppendRow is what an append reads of its session's row, locked
// (as qLockLease): the summary it folds its events into, the last seq,
// and what the fence and the lease's extension read of the holder.
const qLockAppendRow = `SELECT title, turns, tokens, status, last_seq, epoch, owner_id, lease_expires_at, lease_ttl_us
	FROM sessions WHERE id = $1 FOR NO KEY UPDATE`

// The append's statements, by index into appendConn.sds.
const (
	sBegin = iota
	sLockAppend
	sLockRow
	sStoredOne
	sStored
	sInsert
	sUpdate
	sCommit
	nStmts
)

// appendStmts are the append's statements with the types of their
// parameters and columns, which the append's encoding and scan plans
// assume and the preparation checks.
var appendStmts = [nStmts]struct {
	sql          string
	params, cols []uint32
}{
	sBegin:      {sql: "BEGIN"},
	sLockAppend: {sql: qLockAppend, params: []uint32{pgtype.TextOID}, cols: []uint32{oidVoid}},
	sLockRow: {sql: qLockAppendRow, params: []uint32{pgtype.TextOID},
		cols: []uint32{pgtype.TextOID, pgtype.Int4OID, pgtype.Int8OID, pgtype.TextOID, pgtype.Int8OID, pgtype.Int8OID,
			pgtype.TextOID, pgtype.TimestamptzOID, pgtype.Int8OID}},
	sStoredOne: {sql: qStoredEvent, params: []uint32{pgtype.TextOID}, cols: storedCols},
	sStored:    {sql: qStoredEvents, params: []uint32{pgtype.TextArrayOID}, cols: storedCols},
	sInsert: {sql: qInsertEvents,
		params: []uint32{pgtype.TextOID, pgtype.Int8OID, pgtype.TimestamptzOID, pgtype.TextArrayOID, pgtype.TextArrayOID, pgtype.ByteaArrayOID},
		cols:   []uint32{pgtype.Int8OID, pgtype.Int8OID}},
	sUpdate: {sql: qUpdateAfterAppend, params: []uint32{pgtype.TextOID, pgtype.Int8OID, pgtype.TimestamptzOID, pgtype.TextOID,
		pgtype.Int4OID, pgtype.Int8OID, pgtype.TextOID, pgtype.TimestamptzOID}},
	sCommit: {sql: "COMMIT"},
}

// storedCols are the columns of qStoredEvent and qStoredEvents.
var storedCols = []uint32{pgtype.TextOID, pgtype.TextOID, pgtype.Int8OID, pgtype.Int8OID, pgtype.TextOID, pgtype.ByteaOID, pgtype.TimestamptzOID}

// oidVoid is the type of pg_advisory_xact_lock's result (pgtype names
// no constant for it).
const oidVoid = 2278

// binaryFormat asks for every parameter or column in binary.
var binaryFormat = []int16{pgtype.BinaryFormatCode}

// appendConnKey keys a connection's appendConn in its CustomData.
const appendConnKey = "harness.appendConn"

// appendConn is one connection's append machinery: the statements,
// prepared on it once (named harness_append_N), the parameters' buffer
// reused by every append on it, and the plans that scan the columns. The
// connection is used by one caller at a time, and so is its appendConn.
type appendConn struct {
	sds    [nStmts]*pgconn.StatementDescription
	p      params
	scan   scanPlans
	ids    []string // the new events' IDs, types and bodies: the insert's arrays
	types  []string
	bodies [][]byte
	r      round // the round trip under way
}

// appendConnOf returns conn's appendConn, preparing the statements in one
// round trip on the connection's first append (and again after the server
// lost them: forget).
func appendConnOf(ctx context.Context, conn *pgx.Conn) (*appendConn, error) {
	pc := conn.PgConn()
	if ac, ok := pc.CustomData()[appendConnKey].(*appendConn); ok {
		return ac, nil
	}
	p := pc.StartPipeline(ctx)
	for i, st := range appendStmts {
		// A statement of the name left by an earlier preparation that
		// was forgotten is closed first (closing none is no error).
		p.SendDeallocate(stmtName(i))
		p.SendPrepare(stmtName(i), st.sql, nil)
	}
	if err := p.Sync(); err != nil {
		return nil, err
	}
	m := conn.TypeMap()
	ac := &appendConn{p: params{m: m}, scan: newScanPlans(m)}
	var err error
	for i, st := range appendStmts {
		if _, err = p.GetResults(); err != nil {
			break
		}
		var res any
		if res, err = p.GetResults(); err != nil {
			break
		}
		sd, ok := res.(*pgconn.StatementDescription)
		if !ok {
			err = contractError(fmt.Sprintf("prepare %s: got %T", stmtName(i), res))
			break
		}
		if err = checkTypes(st.sql, st.params, st.cols, sd); err != nil {
			break
		}
		sd.Name, sd.SQL = stmtName(i), st.sql
		ac.sds[i] = sd
	}
	if err == nil {
		var res any
		if res, err = p.GetResults(); err == nil {
			if _, ok := res.(*pgconn.PipelineSync); !ok {
				err = contractError(fmt.Sprintf("prepare the append: got %T, not the sync", res))
			}
		}
	}
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	pc.CustomData()[appendConnKey] = ac
	return ac, nil
}

func stmtName(i int) string { return "harness_append_" + strconv.Itoa(i) }

// checkTypes refuses a prepared statement whose parameter or column types
// are not the ones the append encodes and scans (a schema that differs
// from this code's).
func checkTypes(sql string, params, cols []uint32, sd *pgconn.StatementDescription) error {
	same := len(sd.ParamOIDs) == len(params) && len(sd.Fields) == len(cols)
	for i := 0; same && i < len(params); i++ {
		same = sd.ParamOIDs[i] == params[i]
	}
	for i := 0; same && i < len(cols); i++ {
		same = sd.Fields[i].DataTypeOID == cols[i]
	}
	if same {
		return nil
	}
	got := make([]uint32, 0, len(sd.Fields))
	for _, f := range sd.Fields {
		got = append(got, f.DataTypeOID)
	}
	return &errcode.Error{Code: errcode.SessSchemaVersion, Op: "postgres.Append",
		Message: fmt.Sprintf("prepare %.40q: parameter types %v and column types %v, want %v and %v: the schema differs from this Harness's",
			sql, sd.ParamOIDs, got, params, cols)}
}

// forget drops pc's prepared append after a stale error: the next append
// prepares them again.
func forget(pc *pgconn.PgConn, err error) {
	if stale(err) {
		delete(pc.CustomData(), appendConnKey)
	}
}

// stale reports whether err says the server no longer has the append's
// statements as they were prepared: gone (a DISCARD or DEALLOCATE on the
// connection, 26000) or planned for a table that changed since (0A000,
// "cached plan must not change result type").
func stale(err error) bool {
	pe, ok := errors.AsType[*pgconn.PgError](err)
	return ok && (pe.Code == "26000" || pe.Code == "0A000")
}

// params are a statement's parameters, encoded in binary by the
// connection's type map into one buffer reused by every statement.
type params struct {
	m    *pgtype.Map
	buf  []byte
	ends []int // where each parameter's bytes end in buf; -1: NULL
	vals [][]byte
	err  error // the first failure to encode
}

func (p *params) reset() {
	if p.buf == nil {
		// Never nil: the type map's nil answer means NULL, and an
		// empty string appended to a nil buffer would look like one.
		p.buf = make([]byte, 0, 1024)
	}
	p.buf, p.ends = p.buf[:0], p.ends[:0]
}

// add encodes v as a value of type oid.
func (p *params) add(oid uint32, v any) {
	if p.err != nil {
		return
	}
	buf, err := p.m.Encode(oid, pgtype.BinaryFormatCode, v, p.buf)
	switch {
	case err != nil:
		p.err = &errcode.Error{Code: errcode.SessInvalidRecord, Op: "postgres.Append", Message: "encode a parameter of the append", Err: err}
	case buf == nil:
		p.ends = append(p.ends, -1)
	default:
		p.buf = buf
		p.ends = append(p.ends, len(buf))
	}
}

// values returns the parameters as the batch takes them (it copies them
// at once): they alias p's buffer, valid until the next reset.
func (p *params) values() [][]byte {
	p.vals = p.vals[:0]
	start := 0
	for _, e := range p.ends {
		if e < 0 {
			p.vals = append(p.vals, nil)
			continue
		}
		p.vals = append(p.vals, p.buf[start:e:e])
		start = e
	}
	return p.vals
}

// scanPlans are the type map's plans for the column types the append
// reads, made once per connection: each is the same for every target of
// its Go type.
type scanPlans struct {
	text, int4, int8, time, bytea pgtype.ScanPlan
}

func newScanPlans(m *pgtype.Map) scanPlans {
	var (
		s  string
		i4 int32
		i8 int64
		t  time.Time
		b  []byte
	)
	bin := int16(pgtype.BinaryFormatCode)
	return scanPlans{
		text:  m.PlanScan(pgtype.TextOID, bin, &s),
		int4:  m.PlanScan(pgtype.Int4OID, bin, &i4),
		int8:  m.PlanScan(pgtype.Int8OID, bin, &i8),
		time:  m.PlanScan(pgtype.TimestamptzOID, bin, &t),
		bytea: m.PlanScan(pgtype.ByteaOID, bin, &b),
	}
}

// scanner scans a row's columns in order, keeping the first failure.
type scanner struct {
	v    [][]byte
	i    int
	what string // the row's name, for the failure
	err  error
}

// null reports whether the next column is NULL (and skips it then).
func (r *scanner) null() bool {
	if r.i < len(r.v) && r.v[r.i] == nil {
		r.i++
		return true
	}
	return false
}

// next scans the next column with plan into dst.
func (r *scanner) next(plan pgtype.ScanPlan, dst any) {
	if r.err != nil {
		return
	}
	if r.i >= len(r.v) {
		r.err = fieldError(r.what, fmt.Errorf("%d columns", len(r.v)))
		return
	}
	if err := plan.Scan(r.v[r.i], dst); err != nil {
		r.err = fieldError(r.what, fmt.Errorf("column %d: %w", r.i+1, err))
	}
	r.i++
}

// done returns the first failure, or one for columns left over.
func (r *scanner) done() error {
	if r.err == nil && r.i != len(r.v) {
		r.err = fieldError(r.what, fmt.Errorf("%d columns", len(r.v)))
	}
	return r.err
}

// fieldError is an answer the append could not scan: the server's tables
// are not the ones this code reads.
func fieldError(what string, err error) error {
	return &errcode.Error{Code: errcode.SessSchemaVersion, Op: "postgres.Append",
		Message: fmt.Sprintf("read %s: not the expected values: the schema differs from this Harness's", what), Err: err}
}

// round is one round trip of the append's statements: queued into a
// pgconn batch, which pgx sends with one Sync (ExecBatch), then their
// results read in order. The first failure is kept; the rest is drained
// by finish.
type round struct {
	ac  *appendConn
	pc  *pgconn.PgConn
	b   pgconn.Batch
	mrr *pgconn.MultiResultReader
	err error
}

// startRound starts a round trip on t's connection, with BEGIN first when
// the transaction has not begun (began).
func startRound(ctx context.Context, t *wtx) (q *round, began bool, err error) {
	conn := t.conn.Conn()
	ac, err := appendConnOf(ctx, conn)
	if err != nil {
		forget(conn.PgConn(), err)
		return nil, false, err
	}
	q = &ac.r
	*q = round{ac: ac, pc: conn.PgConn()}
	began = !t.begun
	if began {
		q.send(sBegin, nil)
		t.begun = true
	}
	return q, began, nil
}

// send queues statement stmt with params (binary), its columns asked for
// in binary.
func (q *round) send(stmt int, params [][]byte) {
	var formats []int16
	if len(params) > 0 {
		formats = binaryFormat
	}
	q.b.ExecStatement(q.ac.sds[stmt], params, formats, binaryFormat)
}

// sendParams queues stmt with the parameters encoded in q.ac.p, or fails
// the round with their encoding's failure.
func (q *round) sendParams(stmt int) {
	if p := &q.ac.p; p.err != nil {
		q.fail(p.err)
		p.err = nil
		return
	}
	q.send(stmt, q.ac.p.values())
}

// run sends the queued statements, unless the round failed already.
func (q *round) run(ctx context.Context) {
	if q.err == nil {
		q.mrr = q.pc.ExecBatch(ctx, &q.b)
	}
}

// next returns the next statement's results, nil after a failure.
func (q *round) next() *pgconn.ResultReader {
	if q.err != nil || q.mrr == nil {
		return nil
	}
	if !q.mrr.NextResult() {
		if q.err = q.mrr.Close(); q.err == nil {
			q.err = contractError("read the append's results: fewer than its statements")
		}
		return nil
	}
	return q.mrr.ResultReader()
}

// close finishes reading rr and returns its command tag.
func (q *round) close(rr *pgconn.ResultReader) pgconn.CommandTag {
	tag, err := rr.Close()
	q.fail(err)
	return tag
}

func (q *round) fail(err error) {
	if q.err == nil && err != nil {
		q.err = err
	}
}

// exec reads a statement without rows and returns its command tag.
func (q *round) exec() pgconn.CommandTag {
	if rr := q.next(); rr != nil {
		return q.close(rr)
	}
	return pgconn.CommandTag{}
}

// finish reads the rest of the answer and returns the first failure.
func (q *round) finish() error {
	if q.mrr != nil {
		q.fail(q.mrr.Close())
	}
	if q.err != nil {
		forget(q.pc, q.err)
	}
	return q.err
}

// appendRow is what an append reads of its session's row (qLockAppendRow).
type appendRow struct {
	id      string
	sum     rules.Summary
	lastSeq int64
	holder  *rules.Holder // nil: none; Owner.ID, Epoch, ExpiresAt and TTL only
	h       rules.Holder
}

// decode scans the row's columns.
func (r *appendRow) decode(sp *scanPlans, v [][]byte) error {
	var (
		turns int32
		epoch int64
		sc    = scanner{v: v, what: "the session row"}
	)
	sc.next(sp.text, &r.sum.Title)
	sc.next(sp.int4, &turns)
	sc.next(sp.int8, &r.sum.Tokens)
	sc.next(sp.text, &r.sum.Status)
	sc.next(sp.int8, &r.lastSeq)
	sc.next(sp.int8, &epoch)
	r.sum.Turns = int(turns)
	r.holder = nil
	r.h = rules.Holder{Owner: store.Owner{Epoch: epoch}}
	held := !sc.null()
	if held {
		sc.next(sp.text, &r.h.Owner.ID)
	}
	if sc.null() {
		held = false
	} else {
		sc.next(sp.time, &r.h.ExpiresAt)
		r.h.ExpiresAt = utc(r.h.ExpiresAt)
	}
	if !sc.null() {
		var ttl int64
		sc.next(sp.int8, &ttl)
		r.h.TTL = time.Duration(ttl) * time.Microsecond
	}
	if err := sc.done(); err != nil {
		return err
	}
	if held {
		r.holder = &r.h
	}
	return nil
}

// decodeStored scans one row of qStoredEvents.
func decodeStored(sp *scanPlans, v [][]byte) (store.Record, error) {
	var rec store.Record
	sc := scanner{v: v, what: "a stored event"}
	sc.next(sp.text, &rec.ID)
	sc.next(sp.text, &rec.SessionID)
	sc.next(sp.int8, &rec.Seq)
	sc.next(sp.int8, &rec.GlobalSeq)
	sc.next(sp.text, &rec.Type)
	sc.next(sp.bytea, &rec.Body)
	sc.next(sp.time, &rec.StoredAt)
	rec.StoredAt = utc(rec.StoredAt)
	if err := sc.done(); err != nil {
		return store.Record{}, err
	}
	if rec.Body == nil {
		rec.Body = []byte{}
	}
	return rec, nil
}

// lockAndFind sends the append's first round trip (after BEGIN when the
// transaction has not begun): lock the session's appends and its row, and
// look up the events of evs' IDs already stored.
func lockAndFind(ctx context.Context, t *wtx, op, sessionID string, evs []store.EventIn) (*appendRow, map[string]store.Record, error) {
	q, began, err := startRound(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	p := &q.ac.p
	p.reset()
	p.add(pgtype.TextOID, sessionID)
	q.sendParams(sLockAppend)
	q.sendParams(sLockRow)
	p.reset()
	if len(evs) == 1 {
		p.add(pgtype.TextOID, evs[0].ID)
		q.sendParams(sStoredOne)
	} else {
		ids := q.ac.ids[:0]
		for _, ev := range evs {
			ids = append(ids, ev.ID)
		}
		q.ac.ids = ids
		p.add(pgtype.TextArrayOID, pgtype.FlatArray[string](ids))
		q.sendParams(sStored)
	}
	q.run(ctx)
	if began {
		q.exec()
	}
	q.exec()
	var row *appendRow
	if rr := q.next(); rr != nil {
		if rr.NextRow() {
			row = &appendRow{id: sessionID}
			q.fail(row.decode(&q.ac.scan, rr.Values()))
		}
		q.close(rr)
		if row == nil {
			q.fail(rules.NotFound(op, sessionID))
		}
	}
	var stored map[string]store.Record
	if rr := q.next(); rr != nil {
		for q.err == nil && rr.NextRow() {
			rec, err := decodeStored(&q.ac.scan, rr.Values())
			if err != nil {
				q.fail(err)
				break
			}
			if stored == nil {
				stored = map[string]store.Record{}
			}
			stored[rec.ID] = rec
		}
		q.close(rr)
	}
	if err := q.finish(); err != nil {
		return nil, nil, err
	}
	return row, stored, nil
}

// appendIn is the second round trip of an append to the session of row
// (fenced by the caller), given the call's events already stored: it
// decides each event, inserts the new ones, folds them into the row and
// commits, filling out. It reports whether it committed (false: nothing
// new to write).
func appendIn(ctx context.Context, t *wtx, op string, row *appendRow, stored map[string]store.Record,
	evs []store.EventIn, effects []rules.Effect, out []store.Record, now time.Time) (bool, error) {
	sessionID := row.id
	sum, next := row.sum, row.lastSeq+1
	var (
		first        map[string]int // a new event's ID → its index in evs (calls of more than one event)
		fresh        []int          // indexes of the new events, in order
		dups         []int          // indexes of repeats of a new event in this call
		returnedOnce map[string]bool
		one          [1]int
	)
	fresh = one[:0]
	for i, ev := range evs {
		if old, ok := stored[ev.ID]; ok {
			if old.SessionID != sessionID || old.Type != ev.Type || !bytes.Equal(old.Body, ev.Body) {
				return false, rules.EventConflict(op, ev.ID, old.SessionID)
			}
			if returnedOnce[ev.ID] {
				old.Body = slices.Clone(old.Body)
			}
			if returnedOnce == nil {
				returnedOnce = map[string]bool{}
			}
			returnedOnce[ev.ID] = true
			out[i] = old
			continue
		}
		if j, ok := first[ev.ID]; ok {
			if evs[j].Type != ev.Type || !bytes.Equal(evs[j].Body, ev.Body) {
				return false, rules.EventConflict(op, ev.ID, sessionID)
			}
			dups = append(dups, i)
			continue
		}
		if len(evs) > 1 {
			if first == nil {
				first = make(map[string]int, len(evs))
			}
			first[ev.ID] = i
		}
		out[i] = store.Record{
			SessionID: sessionID, Seq: next,
			ID: ev.ID, Type: ev.Type, Body: slices.Clone(ev.Body), StoredAt: now,
		}
		fresh = append(fresh, i)
		effects[i].Apply(&sum)
		next++
	}
	if len(fresh) == 0 {
		return false, nil
	}
	if sum.Turns > 1<<31-1 {
		return false, &errcode.Error{Code: errcode.SessInvalidRecord, Op: op, Message: fmt.Sprintf("count %d turns: more than the store holds", sum.Turns)}
	}
	h := row.holder
	rules.Extend(h, now)

	q, began, err := startRound(ctx, t)
	if err != nil {
		return false, err
	}
	ac := q.ac
	ids, types, bodies := ac.ids[:0], ac.types[:0], ac.bodies[:0]
	for _, i := range fresh {
		ids, types, bodies = append(ids, evs[i].ID), append(types, evs[i].Type), append(bodies, evs[i].Body)
	}
	p := &ac.p
	p.reset()
	p.add(pgtype.TextOID, sessionID)
	p.add(pgtype.Int8OID, row.lastSeq+1)
	p.add(pgtype.TimestamptzOID, now)
	p.add(pgtype.TextArrayOID, pgtype.FlatArray[string](ids))
	p.add(pgtype.TextArrayOID, pgtype.FlatArray[string](types))
	p.add(pgtype.ByteaArrayOID, pgtype.FlatArray[[]byte](bodies))
	q.sendParams(sInsert)
	// The bodies are in the batch now: the arrays keep no event's bytes.
	clear(bodies)
	ac.ids, ac.types, ac.bodies = ids[:0], types[:0], bodies[:0]
	p.reset()
	p.add(pgtype.TextOID, sessionID)
	p.add(pgtype.Int8OID, next-1)
	p.add(pgtype.TimestamptzOID, now)
	p.add(pgtype.TextOID, sum.Title)
	p.add(pgtype.Int4OID, int32(sum.Turns))
	p.add(pgtype.Int8OID, sum.Tokens)
	p.add(pgtype.TextOID, sum.Status)
	p.add(pgtype.TimestamptzOID, h.ExpiresAt)
	q.sendParams(sUpdate)
	q.send(sCommit, nil)
	q.run(ctx)
	if began {
		q.exec()
	}
	// Each new event's global number, by seq - (row.lastSeq+1).
	var globals []int64
	var oneGlobal [1]int64
	if len(fresh) == 1 {
		globals = oneGlobal[:]
	} else {
		globals = make([]int64, len(fresh))
	}
	if rr := q.next(); rr != nil {
		q.fail(readGlobals(&ac.scan, rr, row.lastSeq+1, globals))
		q.close(rr)
	}
	q.exec()
	if tag := q.exec(); q.err == nil {
		if tag.String() != "COMMIT" {
			q.fail(pgx.ErrTxCommitRollback)
		} else {
			t.committed = true
		}
	}
	if err := q.finish(); err != nil {
		return false, err
	}
	for k, i := range fresh {
		out[i].GlobalSeq = globals[k]
	}
	for _, i := range dups {
		out[i] = out[first[evs[i].ID]]
		out[i].Body = slices.Clone(out[i].Body)
	}
	return true, nil
}

// readGlobals reads the insert's rows (seq, global_seq) into globals, by
// seq - from, and checks the statement's contract: one row per event,
// numbers growing with seq (doc.go). Failing a check is a server that
// broke it, reported as an error of the append.
func readGlobals(sp *scanPlans, rr *pgconn.ResultReader, from int64, globals []int64) error {
	n := 0
	for rr.NextRow() {
		var seq, g int64
		sc := scanner{v: rr.Values(), what: "the inserted events"}
		sc.next(sp.int8, &seq)
		sc.next(sp.int8, &g)
		if err := sc.done(); err != nil {
			return err
		}
		k := seq - from
		if k < 0 || k >= int64(len(globals)) || globals[k] != 0 {
			return contractError(fmt.Sprintf("insert %d events at seq %d: seq %d returned", len(globals), from, seq))
		}
		globals[k] = g
		n++
	}
	if n != len(globals) {
		return contractError(fmt.Sprintf("insert %d events: %d returned", len(globals), n))
	}
	for k := 1; k < len(globals); k++ {
		if globals[k] <= globals[k-1] {
			return contractError(fmt.Sprintf("insert %d events: global sequence numbers %v do not grow with seq", len(globals), globals))
		}
	}
	return nil
}

// contractError is an answer of the server that breaks the statement's
// contract: not a connection failure (the append is not tried again).
func contractError(msg string) error {
	return &errcode.Error{Code: errcode.SessInvalidRecord, Op: "postgres.Append", Message: msg}
}
