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
// parameters and columns, which the binary encoding (wire.go) assumes and
// the preparation checks.
var appendStmts = [nStmts]struct {
	sql          string
	params, cols []uint32
}{
	sBegin:      {sql: "BEGIN"},
	sLockAppend: {sql: qLockAppend, params: []uint32{oidText}, cols: []uint32{oidVoid}},
	sLockRow: {sql: qLockAppendRow, params: []uint32{oidText},
		cols: []uint32{oidText, oidInt4, oidInt8, oidText, oidInt8, oidInt8, oidText, oidTimestamptz, oidInt8}},
	sStoredOne: {sql: qStoredEvent, params: []uint32{oidText},
		cols: []uint32{oidText, oidText, oidInt8, oidInt8, oidText, oidBytea, oidTimestamptz}},
	sStored: {sql: qStoredEvents, params: []uint32{oidTextArray},
		cols: []uint32{oidText, oidText, oidInt8, oidInt8, oidText, oidBytea, oidTimestamptz}},
	sInsert: {sql: qInsertEvents, params: []uint32{oidText, oidInt8, oidTimestamptz, oidTextArray, oidTextArray, oidByteaArray},
		cols: []uint32{oidInt8, oidInt8}},
	sUpdate: {sql: qUpdateAfterAppend, params: []uint32{oidText, oidInt8, oidTimestamptz, oidText, oidInt4, oidInt8, oidText, oidTimestamptz}},
	sCommit: {sql: "COMMIT"},
}

// appendConnKey keys a connection's appendConn in its CustomData.
const appendConnKey = "harness.appendConn"

// appendConn is one connection's append machinery: the statements,
// prepared on it once (named harness_append_N), and the parameter buffer
// reused by every append on it. The connection is used by one caller at a
// time, and so is its appendConn.
type appendConn struct {
	sds [nStmts]*pgconn.StatementDescription
	p   params
	out []byte // a round trip's messages (trip)
	in  []byte // its answer
	q   trip
	w   watch
}

// appendConnOf returns pc's appendConn, preparing the statements in one
// round trip on the connection's first append (and again after the server
// lost them: forget).
func appendConnOf(ctx context.Context, pc *pgconn.PgConn) (*appendConn, error) {
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
	ac := &appendConn{}
	ac.w.init(pc)
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

// stmtNames are the append's statements' names, by index.
var stmtNames = func() (n [nStmts]string) {
	for i := range n {
		n[i] = stmtName(i)
	}
	return n
}()

// checkTypes refuses a prepared statement whose parameter or column types
// are not the ones the append encodes and decodes (a schema that differs
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

// appendRow is what an append reads of its session's row (qLockAppendRow).
type appendRow struct {
	id      string
	sum     rules.Summary
	lastSeq int64
	holder  *rules.Holder // nil: none; Owner.ID, Epoch, ExpiresAt and TTL only
	h       rules.Holder
}

// decode reads the row's columns; who's ID is the holder's expected one
// (its string is reused when it matches).
func (r *appendRow) decode(v [][]byte, who string) error {
	if len(v) != 9 || v[0] == nil || v[1] == nil || v[2] == nil || v[3] == nil || v[4] == nil || v[5] == nil {
		return fieldError("the session row", len(v))
	}
	turns, err := getInt4("turns", v[1])
	if err != nil {
		return err
	}
	if r.sum.Tokens, err = getInt8("tokens", v[2]); err != nil {
		return err
	}
	if r.lastSeq, err = getInt8("last_seq", v[4]); err != nil {
		return err
	}
	epoch, err := getInt8("epoch", v[5])
	if err != nil {
		return err
	}
	r.sum.Title, r.sum.Turns, r.sum.Status = string(v[0]), int(turns), status(v[3])
	r.holder = nil
	if v[6] == nil || v[7] == nil {
		return nil
	}
	r.h = rules.Holder{Owner: store.Owner{ID: who, Epoch: epoch}}
	if string(v[6]) != who {
		r.h.Owner.ID = string(v[6])
	}
	if r.h.ExpiresAt, err = getTime("lease_expires_at", v[7]); err != nil {
		return err
	}
	if v[8] != nil {
		ttl, err := getInt8("lease_ttl_us", v[8])
		if err != nil {
			return err
		}
		r.h.TTL = time.Duration(ttl) * time.Microsecond
	}
	r.holder = &r.h
	return nil
}

// status returns b as a string, without a copy for the statuses the store
// writes.
func status(b []byte) string {
	switch string(b) {
	case store.StatusIdle:
		return store.StatusIdle
	case store.StatusRunning:
		return store.StatusRunning
	case store.StatusCompleted:
		return store.StatusCompleted
	case store.StatusFailed:
		return store.StatusFailed
	case store.StatusCanceled:
		return store.StatusCanceled
	case store.StatusInterrupted:
		return store.StatusInterrupted
	}
	return string(b)
}

// decodeStored reads one row of qStoredEvents.
func decodeStored(v [][]byte) (store.Record, error) {
	var rec store.Record
	if len(v) != 7 || v[0] == nil || v[1] == nil || v[4] == nil || v[5] == nil {
		return rec, fieldError("a stored event", len(v))
	}
	var err error
	if rec.Seq, err = getInt8("seq", v[2]); err != nil {
		return rec, err
	}
	if rec.GlobalSeq, err = getInt8("global_seq", v[3]); err != nil {
		return rec, err
	}
	if rec.StoredAt, err = getTime("stored_at", v[6]); err != nil {
		return rec, err
	}
	rec.ID, rec.SessionID, rec.Type = string(v[0]), string(v[1]), string(v[4])
	rec.Body = append([]byte{}, v[5]...)
	return rec, nil
}

// lockAndFind sends the append's first round trip (after BEGIN when the
// transaction has not begun): lock the session's appends and its row, and
// look up the events of evs' IDs already stored. who is the expected
// holder's ID.
func lockAndFind(ctx context.Context, t *wtx, op, sessionID, who string, evs []store.EventIn) (*appendRow, map[string]store.Record, error) {
	q, began, err := startTrip(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	p := &q.ac.p
	p.reset()
	p.text(sessionID)
	id := p.values()
	q.send(sLockAppend, id)
	q.send(sLockRow, id)
	p.reset()
	if len(evs) == 1 {
		p.text(evs[0].ID)
		q.send(sStoredOne, p.values())
	} else {
		p.beginArray(oidText, len(evs))
		for _, ev := range evs {
			p.elemString(ev.ID)
		}
		p.endArray()
		q.send(sStored, p.values())
	}
	q.run(ctx)
	if began {
		q.exec()
	}
	q.exec()
	var row *appendRow
	if rr := q.next(); rr != nil {
		if rr.nextRow() {
			row = &appendRow{id: sessionID}
			q.fail(row.decode(rr.values(), who))
		}
		q.close(rr)
		if row == nil {
			q.fail(rules.NotFound(op, sessionID))
		}
	}
	var stored map[string]store.Record
	if rr := q.next(); rr != nil {
		for q.err == nil && rr.nextRow() {
			rec, err := decodeStored(rr.values())
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

	q, began, err := startTrip(ctx, t)
	if err != nil {
		return false, err
	}
	p := &q.ac.p
	p.reset()
	p.text(sessionID)
	p.int8(row.lastSeq + 1)
	p.time(now)
	p.beginArray(oidText, len(fresh))
	for _, i := range fresh {
		p.elemString(evs[i].ID)
	}
	p.endArray()
	p.beginArray(oidText, len(fresh))
	for _, i := range fresh {
		p.elemString(evs[i].Type)
	}
	p.endArray()
	p.beginArray(oidBytea, len(fresh))
	for _, i := range fresh {
		p.elem(evs[i].Body)
	}
	p.endArray()
	q.send(sInsert, p.values())
	p.reset()
	p.text(sessionID)
	p.int8(next - 1)
	p.time(now)
	p.text(sum.Title)
	p.int4(int32(sum.Turns))
	p.int8(sum.Tokens)
	p.text(sum.Status)
	p.time(h.ExpiresAt)
	q.send(sUpdate, p.values())
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
		q.fail(readGlobals(rr, row.lastSeq+1, globals))
		q.close(rr)
	}
	q.exec()
	if tag := q.exec(); q.err == nil {
		if tag != "COMMIT" {
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
func readGlobals(rr *result, from int64, globals []int64) error {
	n := 0
	for rr.nextRow() {
		v := rr.values()
		if len(v) != 2 {
			return fieldError("the inserted events", len(v))
		}
		seq, err := getInt8("seq", v[0])
		if err != nil {
			return err
		}
		g, err := getInt8("global_seq", v[1])
		if err != nil {
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
