package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/harness-dev/harness/store"
)

// A round trip of the append is spoken on the connection's socket itself,
// while pgx holds the connection idle for it (the pool lent it to this
// write alone, and SyncConn says pgx has nothing buffered): the
// statements' Bind and Execute messages go into one reused buffer and out
// with a Sync in one write, then the whole answer, up to ReadyForQuery,
// is read into another and its results are taken in order, the columns
// aliasing it. pgx's reading of the same answer (a result reader, field
// descriptions and a command tag per statement, a context watch per
// batch) cost more client CPU than the append's own work; with the
// server's CPU per append the same as pgbench's, this client's was the
// difference between the two (BenchmarkAppendVsPgbench).
//
// pgx learns nothing of the trip: its idea of the transaction's status
// stays what it was. The write's end sets it right: COMMIT, or pgx's own
// ROLLBACK (wtx), whose ReadyForQuery pgx reads. A trip that cannot tell
// where the connection stands (a failed read or write, an answer it does
// not understand, bytes after the ReadyForQuery that would be pgx's to
// read, a parameter the server reported) closes the connection, which the
// pool then drops.
//
// Both writes are small enough to sit in the socket's buffer while the
// server answers: the only large message is an insert's Bind, and the
// server reads all of it before answering anything.

// cancelGrace is how long a trip waits for the server's answer after its
// context ended and the server was asked to cancel the statement, as
// pgx's CancelRequestContextWatcherHandler (Open) does: then the
// connection is given up.
const cancelGrace = 5 * time.Second

// maxAnswerMessage bounds one message of an answer: the largest is a row
// of a stored event, its body at most store.MaxBodyBytes.
const maxAnswerMessage = store.MaxBodyBytes + 1<<20

// trip is one round trip of the append's statements (the buffers are its
// appendConn's). The first failure is kept; the statements after it yield
// nothing.
type trip struct {
	ac     *appendConn
	pc     *pgconn.PgConn
	t      *wtx
	at     int // where reading ac.in has got to
	end    int // where the answer's complete messages end
	err    error
	broken bool // the connection's state is unknown: finish closes it
	res    result
}

// result is one statement's answer: its rows, then its command tag.
type result struct {
	q    *trip
	vals [][]byte
	tag  string
	done bool
}

// startTrip starts a round trip on t's connection, with BEGIN first when
// the transaction has not begun (began).
func startTrip(ctx context.Context, t *wtx) (q *trip, began bool, err error) {
	pc := t.conn.Conn().PgConn()
	ac, err := appendConnOf(ctx, pc)
	if err == nil {
		// Nothing of pgx's may be buffered or reading when the trip
		// takes the socket (a cheap check, unless it is).
		err = pc.SyncConn(ctx)
	}
	if err != nil {
		forget(pc, err)
		return nil, false, err
	}
	q = &ac.q
	vals := q.res.vals[:0]
	*q = trip{ac: ac, pc: pc, t: t}
	q.res.vals = vals
	ac.out = ac.out[:0]
	began = !t.begun
	if began {
		q.send(sBegin, nil)
		t.begun = true
	}
	return q, began, nil
}

// send queues statement stmt with params (binary; nil is NULL), its
// columns asked for in binary.
func (q *trip) send(stmt int, params [][]byte) {
	b := q.ac.out
	at := len(b)
	b = append(b, 'B', 0, 0, 0, 0, 0) // length, then the unnamed portal
	b = append(b, stmtNames[stmt]...)
	b = append(b, 0, 0, 1, 0, 1) // one parameter format: binary
	b = binary.BigEndian.AppendUint16(b, uint16(len(params)))
	for _, v := range params {
		if v == nil {
			b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	b = append(b, 0, 1, 0, 1) // one result format: binary
	binary.BigEndian.PutUint32(b[at+1:], uint32(len(b)-at-1))
	b = append(b, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0) // the unnamed portal, every row
	q.ac.out = b
}

// run sends the queued statements with a Sync and reads the whole answer.
// A context that ends meanwhile asks the server to cancel the statement
// running; the answer, a cancellation error in all likelihood, is waited
// for cancelGrace.
func (q *trip) run(ctx context.Context) {
	if err := ctx.Err(); err != nil {
		q.fail(err) // nothing was sent
		return
	}
	q.ac.out = append(q.ac.out, 'S', 0, 0, 0, 4)
	q.ac.w.start(ctx, q.t)
	nc := q.pc.Conn()
	_, err := nc.Write(q.ac.out)
	if err == nil {
		err = q.readAnswer(nc)
	}
	var ne net.Error
	if q.ac.w.fired.Load() && errors.As(err, &ne) && ne.Timeout() {
		err = fmt.Errorf("%w (the server did not answer the cancellation within %s)", ctx.Err(), cancelGrace)
	}
	if err != nil {
		q.broken = true
		// A server that ends the connection says why first (an
		// administrator's shutdown, a crash): its error is the trip's.
		q.fail(q.fatal(err))
	}
}

// watch is the one context watch a write's round trips share: when the
// write's context ends, it asks the server to cancel the statement running
// and gives the socket cancelGrace to answer, as pgx's
// CancelRequestContextWatcherHandler (Open) does. Its parts are made once
// per connection, so that starting it costs no allocation of its own.
type watch struct {
	pc       *pgconn.PgConn
	onCancel func()
	onEnd    func()         // end, as t.unwatch takes it
	done     sync.WaitGroup // the cancellation's part is over
	fired    atomic.Bool
	stop     func() bool // the running watch's, nil when none runs
}

func (w *watch) init(pc *pgconn.PgConn) {
	w.pc = pc
	w.onEnd = w.end
	w.onCancel = func() {
		defer w.done.Done()
		w.fired.Store(true)
		_ = pc.Conn().SetDeadline(time.Now().Add(cancelGrace))
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
			defer cancel()
			_ = pc.CancelRequest(ctx)
		}()
	}
}

// start starts the watch for t's write, unless it runs already or ctx
// cannot end; t.unwatch ends it.
func (w *watch) start(ctx context.Context, t *wtx) {
	if w.stop != nil || ctx.Done() == nil {
		return
	}
	w.done.Add(1)
	w.stop = context.AfterFunc(ctx, w.onCancel)
	t.unwatch = w.onEnd
}

// end ends the watch: once a cancellation that began has done its part,
// the socket's deadline is taken off again.
func (w *watch) end() {
	if w.stop == nil {
		return
	}
	if w.stop() {
		w.done.Done()
	} else {
		w.done.Wait()
		_ = w.pc.Conn().SetDeadline(time.Time{})
	}
	w.stop = nil
	w.fired.Store(false)
}

// readAnswer reads into ac.in until its complete messages end with a
// ReadyForQuery.
func (q *trip) readAnswer(nc io.Reader) error {
	in := q.ac.in[:0]
	if cap(in) > 1<<20 {
		in = nil // a large answer's buffer is not kept for small ones
	}
	scanned := 0
	var readErr error
	for {
		for len(in)-scanned >= 5 {
			n := int(binary.BigEndian.Uint32(in[scanned+1:]))
			if n < 4 || n > maxAnswerMessage {
				q.ac.in, q.end = in, scanned
				return fmt.Errorf("read the append's answer: a message of %d bytes", n)
			}
			if len(in)-scanned < 1+n {
				break // the buffer grows as the message comes, not as its header says
			}
			typ := in[scanned]
			scanned += 1 + n
			if typ == 'Z' {
				if scanned != len(in) {
					q.broken = true
				}
				q.ac.in, q.end = in, scanned
				return nil
			}
		}
		if readErr != nil {
			q.ac.in, q.end = in, scanned
			return readErr
		}
		if cap(in)-len(in) < 4096 {
			in = slices.Grow(in, max(cap(in), 8192))
		}
		var n int
		n, readErr = nc.Read(in[len(in):cap(in)])
		in = in[:len(in)+n]
	}
}

// fatal returns the error the server sent before the connection failed
// with err, if it sent one, else err.
func (q *trip) fatal(err error) error {
	for q.at < q.end {
		typ, body, ok := q.message()
		if !ok {
			break
		}
		if typ == 'E' {
			return errorResponse(body)
		}
	}
	return err
}

// message returns the answer's next message, ok false at its end.
func (q *trip) message() (typ byte, body []byte, ok bool) {
	if q.at >= q.end {
		return 0, nil, false
	}
	in := q.ac.in
	n := int(binary.BigEndian.Uint32(in[q.at+1:]))
	typ, body = in[q.at], in[q.at+5:q.at+1+n]
	q.at += 1 + n
	return typ, body, true
}

// peek returns the type of the answer's next message that is not a
// notice, 0 at its end. A parameter or notification report is passed
// over, and the connection dropped after the append: pgx keeps those.
func (q *trip) peek() byte {
	for q.at < q.end {
		switch typ := q.ac.in[q.at]; typ {
		case 'N':
		case 'S', 'A':
			q.broken = true
		default:
			return typ
		}
		q.message()
	}
	return 0
}

func errorResponse(body []byte) error {
	var er pgproto3.ErrorResponse
	if err := er.Decode(body); err != nil {
		return fmt.Errorf("read the append's answer: an error the server sent: %w", err)
	}
	return pgconn.ErrorResponseToPgError(&er)
}

// unexpected fails the trip on a message the append's statements do not
// answer with.
func (q *trip) unexpected(typ byte, want string) {
	q.broken = true
	if typ == 0 {
		q.fail(contractError(fmt.Sprintf("read the append's results: the answer ended where %s was due", want)))
		return
	}
	q.fail(contractError(fmt.Sprintf("read the append's results: message %q where %s was due", typ, want)))
}

// next returns the next statement's result, nil after a failure.
func (q *trip) next() *result {
	if q.err != nil {
		return nil
	}
	switch typ := q.peek(); typ {
	case '2':
		q.message()
	case 'E':
		_, body, _ := q.message()
		q.fail(errorResponse(body))
		return nil
	default:
		q.unexpected(typ, "a statement's BindComplete")
		return nil
	}
	q.res = result{q: q, vals: q.res.vals[:0]}
	return &q.res
}

// nextRow moves to the result's next row, false after its last (or a
// failure).
func (r *result) nextRow() bool {
	q := r.q
	if r.done || q.err != nil {
		return false
	}
	switch typ := q.peek(); typ {
	case 'D':
		_, body, _ := q.message()
		if !r.decodeRow(body) {
			q.unexpected('D', "a row of the columns it says")
			return false
		}
		return true
	case 'C':
		_, body, _ := q.message()
		if len(body) > 0 && body[len(body)-1] == 0 {
			body = body[:len(body)-1]
		}
		r.tag, r.done = commandTag(body), true
	case 'E':
		_, body, _ := q.message()
		q.fail(errorResponse(body))
	default:
		q.unexpected(typ, "a row or a command's end")
	}
	return false
}

// commandTag returns the tags the append's statements end with without a
// copy.
func commandTag(b []byte) string {
	switch string(b) {
	case "BEGIN":
		return "BEGIN"
	case "COMMIT":
		return "COMMIT"
	case "ROLLBACK":
		return "ROLLBACK"
	case "SELECT 0":
		return "SELECT 0"
	case "SELECT 1":
		return "SELECT 1"
	case "INSERT 0 1":
		return "INSERT 0 1"
	case "UPDATE 1":
		return "UPDATE 1"
	}
	return string(b)
}

// decodeRow splits a DataRow's columns into r.vals, aliasing the answer;
// false when they do not add up.
func (r *result) decodeRow(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	r.vals = r.vals[:0]
	for range n {
		if len(b) < 4 {
			return false
		}
		l := int(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
		if l < 0 {
			r.vals = append(r.vals, nil)
			continue
		}
		if l > len(b) {
			return false
		}
		r.vals = append(r.vals, b[:l:l])
		b = b[l:]
	}
	return len(b) == 0
}

// values returns the current row's columns (nil: NULL), valid until the
// trip ends.
func (r *result) values() [][]byte { return r.vals }

// close reads the rest of r and returns its command tag.
func (q *trip) close(r *result) string {
	for r.nextRow() {
	}
	return r.tag
}

func (q *trip) fail(err error) {
	if q.err == nil {
		q.err = err
	}
}

// exec reads a statement without rows and returns its command tag.
func (q *trip) exec() string {
	if r := q.next(); r != nil {
		return q.close(r)
	}
	return ""
}

// finish checks that the answer ends with its ReadyForQuery once every
// statement's result is read, and returns the trip's first failure. A
// failed trip that left the connection's state unknown closes it; one
// that answered but left something for pgx has it closed when the write
// ends (wtx.drop).
func (q *trip) finish() error {
	if q.err == nil {
		if typ := q.peek(); typ != 'Z' {
			q.unexpected(typ, "the answer's end")
		}
	}
	switch {
	case q.broken && q.err != nil:
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = q.pc.Close(ctx)
		cancel()
	case q.broken:
		q.t.drop = true
	}
	if q.err != nil {
		forget(q.pc, q.err)
	}
	return q.err
}
