package postgres

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"testing/iotest"

	"github.com/jackc/pgx/v5/pgconn"
)

// msg is one message of a server's answer.
func msg(typ byte, body ...[]byte) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	for _, p := range body {
		b = append(b, p...)
	}
	binary.BigEndian.PutUint32(b[1:], uint32(len(b)-1))
	return b
}

// row is a DataRow of cols (nil: NULL).
func row(cols ...[]byte) []byte {
	body := binary.BigEndian.AppendUint16(nil, uint16(len(cols)))
	for _, c := range cols {
		if c == nil {
			body = binary.BigEndian.AppendUint32(body, 0xFFFFFFFF)
			continue
		}
		body = binary.BigEndian.AppendUint32(body, uint32(len(c)))
		body = append(body, c...)
	}
	return msg('D', body)
}

func done(tag string) []byte { return msg('C', []byte(tag+"\x00")) }

var (
	bindDone = msg('2')
	idle     = msg('Z', []byte("I"))
	inTx     = msg('Z', []byte("T"))
)

// firstTripAnswer is what the server answers lockAndFind's trip: BEGIN,
// the advisory lock, the session's row, no stored event.
func firstTripAnswer() []byte {
	var b []byte
	for _, m := range [][]byte{
		bindDone, done("BEGIN"),
		bindDone, row([]byte{}), done("SELECT 1"),
		bindDone, row([]byte("title"), binary.BigEndian.AppendUint32(nil, 2), binary.BigEndian.AppendUint64(nil, 10),
			[]byte("idle"), binary.BigEndian.AppendUint64(nil, 7), binary.BigEndian.AppendUint64(nil, 1),
			[]byte("me"), binary.BigEndian.AppendUint64(nil, 1<<50), nil), done("SELECT 1"),
		msg('N', []byte("SNOTICE\x00Mhello\x00\x00")),
		bindDone, done("SELECT 0"),
		inTx,
	} {
		b = append(b, m...)
	}
	return b
}

// parse reads answer as a trip of n statements does and returns their
// tags, the rows' columns, and the trip's failure.
func parse(answer []byte, n int, r io.Reader) (tags []string, cols [][][]byte, q *trip) {
	q = &trip{ac: &appendConn{}}
	if err := q.readAnswer(r); err != nil {
		q.fail(q.fatal(err))
		return nil, nil, q
	}
	for range n {
		rr := q.next()
		if rr == nil {
			break
		}
		for rr.nextRow() {
			var c [][]byte
			for _, v := range rr.values() {
				c = append(c, bytes.Clone(v))
			}
			cols = append(cols, c)
		}
		tags = append(tags, q.close(rr))
	}
	if q.err == nil {
		if typ := q.peek(); typ != 'Z' {
			q.unexpected(typ, "the answer's end")
		}
	}
	return tags, cols, q
}

// The answer is read whole, however the socket cuts it, and taken
// statement by statement; notices are passed over.
func TestTripReadsAnAnswer(t *testing.T) {
	a := firstTripAnswer()
	for _, r := range []io.Reader{bytes.NewReader(a), iotest.OneByteReader(bytes.NewReader(a)), iotest.HalfReader(bytes.NewReader(a))} {
		tags, cols, q := parse(a, 4, r)
		if q.err != nil || q.broken {
			t.Fatalf("err %v, broken %v", q.err, q.broken)
		}
		if want := []string{"BEGIN", "SELECT 1", "SELECT 1", "SELECT 0"}; len(tags) != 4 || tags[0] != want[0] || tags[1] != want[1] || tags[2] != want[2] || tags[3] != want[3] {
			t.Fatalf("tags %q, want %q", tags, want)
		}
		if len(cols) != 2 || len(cols[1]) != 9 || string(cols[1][0]) != "title" || cols[1][8] != nil || cols[0][0] == nil {
			t.Fatalf("rows %q", cols)
		}
	}
}

// A server's error ends the trip's results with it; the connection stays
// usable (its ReadyForQuery came).
func TestTripServerError(t *testing.T) {
	var a []byte
	for _, m := range [][]byte{bindDone, done("BEGIN"),
		msg('E', []byte("SERROR\x00VERROR\x00C55P03\x00Mlock timeout\x00\x00")), msg('Z', []byte("E"))} {
		a = append(a, m...)
	}
	_, _, q := parse(a, 3, bytes.NewReader(a))
	pe, ok := q.err.(*pgconn.PgError)
	if !ok || pe.Code != "55P03" || q.broken {
		t.Fatalf("err %v (%T), broken %v; want the server's 55P03, not broken", q.err, q.err, q.broken)
	}
}

// A connection that ends says why when the server did; a short answer, a
// report pgx keeps, or bytes after the ReadyForQuery leave the connection
// to be closed.
func TestTripBrokenAnswers(t *testing.T) {
	fatal := msg('E', []byte("SFATAL\x00VFATAL\x00C57P01\x00Mterminating connection\x00\x00"))
	for _, tc := range []struct {
		name   string
		answer []byte
		code   string // the PgError's, "" for another error
		broken bool   // left for finish to close (a read error is the caller's to mark)
		fails  bool
	}{
		{"ended by the server", append(append([]byte{}, bindDone...), fatal...), "57P01", false, true},
		{"cut short", firstTripAnswer()[:40], "", false, true},
		{"a parameter report", append(append(msg('S', []byte("in_hot_standby\x00on\x00")), bindDone...), append(done("BEGIN"), idle...)...), "", true, false},
		{"bytes after the end", append(append(append([]byte{}, bindDone...), done("BEGIN")...), append(idle, msg('N', []byte("x\x00"))...)...), "", true, false},
		{"a row that does not add up", append(append(append([]byte{}, bindDone...), msg('D', []byte{0, 2, 0, 0, 0, 9, 1})...), idle...), "", true, true},
		{"a message too short for its header", append([]byte{}, 'C', 0, 0, 0, 2), "", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, q := parse(tc.answer, 1, bytes.NewReader(tc.answer))
			if (q.err != nil) != tc.fails || q.broken != tc.broken {
				t.Fatalf("err %v, broken %v; want failing %v, broken %v", q.err, q.broken, tc.fails, tc.broken)
			}
			if pe, ok := q.err.(*pgconn.PgError); tc.code != "" && (!ok || pe.Code != tc.code) {
				t.Fatalf("err %v, want the server's %s", q.err, tc.code)
			}
		})
	}
}

// FuzzTripAnswer: any answer, cut anyhow, is read without a panic, and
// every column handed out lies inside it.
func FuzzTripAnswer(f *testing.F) {
	f.Add(firstTripAnswer(), 4)
	f.Add(append(append(append([]byte{}, bindDone...), row([]byte("a"), nil)...), append(done("INSERT 0 1"), idle...)...), 1)
	f.Add([]byte{'Z', 0, 0, 0, 5, 'I'}, 0)
	f.Fuzz(func(t *testing.T, answer []byte, n int) {
		n = min(max(n, 0), 8)
		_, cols, q := parse(answer, n, iotest.HalfReader(bytes.NewReader(answer)))
		total := 0
		for _, c := range cols {
			for _, v := range c {
				total += len(v)
			}
		}
		if total > len(answer) {
			t.Fatalf("%d bytes of columns from an answer of %d", total, len(answer))
		}
		if q.err == nil && q.at > q.end {
			t.Fatalf("read to %d past the answer's end %d", q.at, q.end)
		}
	})
}
