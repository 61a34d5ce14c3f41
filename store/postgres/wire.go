package postgres

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
)

// The append's statements speak the wire protocol's binary formats
// directly (appendConn): the parameters are encoded into one reused
// buffer and the answers decoded from the connection's read buffer,
// without pgx's per-value encode and scan plans. These are the formats
// of the types they use, as the server's send and receive functions
// define them.

// Type OIDs of the append's parameters and columns.
const (
	oidBytea       = 17
	oidInt8        = 20
	oidInt4        = 23
	oidText        = 25
	oidVoid        = 2278
	oidByteaArray  = 1001
	oidTextArray   = 1009
	oidTimestamptz = 1184
)

// pgEpoch is the zero of timestamptz's binary form, in Unix microseconds.
const pgEpoch = 946_684_800 * 1_000_000

// params encodes a statement's parameters in binary into one buffer.
type params struct {
	buf  []byte
	ends []int // where each parameter's bytes end in buf; -1: NULL
	vals [][]byte
	arr  int // where the array being built starts (beginArray)
}

func (p *params) reset() {
	p.buf, p.ends = p.buf[:0], p.ends[:0]
}

func (p *params) end() { p.ends = append(p.ends, len(p.buf)) }

func (p *params) text(s string) { p.buf = append(p.buf, s...); p.end() }

func (p *params) int8(v int64) { p.buf = binary.BigEndian.AppendUint64(p.buf, uint64(v)); p.end() }

func (p *params) int4(v int32) { p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(v)); p.end() }

func (p *params) time(t time.Time) { p.int8(pgMicros(t)) }

// pgMicros is t as timestamptz's binary value: microseconds since 2000.
func pgMicros(t time.Time) int64 {
	return t.Unix()*1_000_000 + int64(t.Nanosecond())/1000 - pgEpoch
}

// beginArray starts a one-dimensional array parameter of n elements of
// type elem; elements follow (elem), then endArray.
func (p *params) beginArray(elem uint32, n int) {
	p.arr = len(p.buf)
	p.buf = binary.BigEndian.AppendUint32(p.buf, 1) // dimensions
	p.buf = binary.BigEndian.AppendUint32(p.buf, 0) // no NULLs
	p.buf = binary.BigEndian.AppendUint32(p.buf, elem)
	p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(n))
	p.buf = binary.BigEndian.AppendUint32(p.buf, 1) // lower bound
}

func (p *params) elem(b []byte) {
	p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(len(b)))
	p.buf = append(p.buf, b...)
}

func (p *params) elemString(s string) {
	p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(len(s)))
	p.buf = append(p.buf, s...)
}

func (p *params) endArray() { p.end() }

// values returns the parameters as the Bind message takes them. They
// alias p's buffer: valid until the next reset, which is after the
// message is written into the connection's send buffer.
func (p *params) values() [][]byte {
	p.vals = p.vals[:0]
	start := 0
	for _, e := range p.ends {
		p.vals = append(p.vals, p.buf[start:e:e])
		start = e
	}
	return p.vals
}

// fieldError is an answer the append could not decode: the server's
// tables are not the ones this code reads.
func fieldError(what string, got int) error {
	return &errcode.Error{Code: errcode.SessSchemaVersion, Op: "postgres.Append",
		Message: fmt.Sprintf("read %s: %d bytes, not the expected binary value: the schema differs from this Harness's", what, got)}
}

func getInt8(what string, b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fieldError(what, len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

func getInt4(what string, b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, fieldError(what, len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// getTime decodes a timestamptz, in UTC. The store writes only finite
// times; the infinities decode as the extreme microsecond counts.
func getTime(what string, b []byte) (time.Time, error) {
	v, err := getInt8(what, b)
	if err != nil {
		return time.Time{}, err
	}
	if v > math.MaxInt64-pgEpoch {
		v = math.MaxInt64 - pgEpoch
	}
	us := v + pgEpoch
	return time.Unix(us/1_000_000, (us%1_000_000)*1000).UTC(), nil
}
