package checkpoint

import (
	"bytes"
	"strconv"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// The store's checkpoint row holds the whole checkpoint, laid out so that
// a save writes only what it adds: the history's messages first, one
// canonical message per line, then the rest of the checkpoint (its head)
// on the last line — the canonical payload with history.base set to the
// number of messages and an empty message list. A new checkpoint keeps the
// row's message lines, cuts the old head and appends the new messages and
// the new head (store.AppendCheckpoint). Load turns the row back into the
// canonical payload and parses it strictly; a row without a newline is a
// canonical payload as written before this layout, and parses as it is.

// Row tracks what the store's checkpoint row holds: how many message lines
// and where its head starts. The zero Row is an unknown row: the next save
// writes it whole.
type Row struct {
	msgs int
	keep int64
}

// Save returns what to append to the row for cp, a whole checkpoint whose
// history was built with NewHistory (its cached message bytes): keep is
// where the old head starts, tail the new message lines and head. next is
// the row once the save is stored. Code: RUNTIME_CHECKPOINT_INVALID for a
// checkpoint that does not encode, a history that does not extend the
// row's, or a payload over MaxBytes.
func (r Row) Save(cp *Checkpoint) (keep int64, tail []byte, next Row, err error) {
	h := cp.History
	if h.Base != 0 {
		return 0, nil, Row{}, errcode.New(errcode.RuntimeCheckpointInvalid, "store checkpoint: a delta; store whole checkpoints")
	}
	// (>= is equivalent: a reset row only encodes again what it had.)
	if r.msgs > len(h.Messages) {
		r = Row{}
	}
	raw := h.raw
	if len(raw) != len(h.Messages) {
		raw = make([][]byte, len(h.Messages))
		for i := range h.Messages {
			if raw[i], err = model.MarshalCanonical(h.Messages[i]); err != nil {
				return 0, nil, Row{}, errcode.Wrap(errcode.RuntimeCheckpointInvalid, "encode checkpoint", err)
			}
		}
	}
	c := *cp
	c.History = History{Version: h.Version, Revision: h.Revision, Base: len(h.Messages), Messages: []model.Message{}}
	head, err := model.MarshalCanonical(&c)
	if err != nil {
		return 0, nil, Row{}, errcode.Wrap(errcode.RuntimeCheckpointInvalid, "encode checkpoint", err)
	}
	// The canonical payload is the head with `,"base":N` dropped and the
	// messages, comma-separated, in the empty list.
	size := len(head) - len(`,"base":`) - len(strconv.Itoa(len(h.Messages)))
	for i, m := range raw {
		size += len(m)
		if i > 0 {
			size++
		}
	}
	if len(h.Messages) == 0 {
		size = len(head)
	}
	if size > MaxBytes {
		return 0, nil, Row{}, errcode.Errorf(errcode.RuntimeCheckpointInvalid, "checkpoint of %d bytes is over the %d byte bound", size, MaxBytes)
	}
	n := len(head)
	for _, m := range raw[r.msgs:] {
		n += len(m) + 1 // a capacity: its mutants are equivalent
	}
	tail = make([]byte, 0, n)
	next = r
	for _, m := range raw[r.msgs:] {
		tail = append(append(tail, m...), '\n')
		next.keep += int64(len(m) + 1)
	}
	next.msgs = len(h.Messages)
	return r.keep, append(tail, head...), next, nil
}

// Load parses the store's checkpoint row strictly (see Parse) into a whole
// checkpoint, and returns the Row that describes it. Codes: those of Parse.
func Load(row []byte) (*Checkpoint, Row, error) {
	bad := func(format string, args ...any) error {
		return errcode.Errorf(errcode.RuntimeCheckpointInvalid, "load checkpoint: "+format, args...)
	}
	// (i <= 0, at <= 0 and end <= 0 below are equivalent mutants: a row
	// never starts with a newline, a head never with its history key, and
	// the history key is never at the messages key.)
	i := bytes.LastIndexByte(row, '\n')
	if i < 0 {
		cp, err := Parse(row)
		if err == nil && cp.History.Base != 0 {
			return nil, Row{}, bad("a delta of %d messages, not a whole checkpoint", cp.History.Base)
		}
		return cp, Row{}, err
	}
	msgs, head := row[:i+1], row[i+1:]
	n := bytes.Count(msgs, []byte{'\n'})
	// A shortcut: the payload is over MaxBytes too, or not a checkpoint.
	// (>= for either is an equivalent mutant: a head or message lines of
	// exactly MaxBytes make, with the rest, a payload that Parse refuses
	// with the same code.)
	if len(head) > MaxBytes || len(msgs) > MaxBytes {
		return nil, Row{}, bad("%d bytes is over the %d byte bound", len(row), MaxBytes)
	}
	// The head's history is {"version":V,"revision":R,"base":n,"messages":[]};
	// find it by its key, whose quote cannot occur unescaped in a string.
	key := []byte(`"history":{"version":`)
	at := bytes.Index(head, key)
	if at < 0 {
		return nil, Row{}, bad("no history in the head")
	}
	end := bytes.Index(head[at:], []byte(`"messages":[]}`))
	if end < 0 {
		return nil, Row{}, bad("the head's history is not empty")
	}
	end += at
	base := []byte(`,"base":` + strconv.Itoa(n) + `,`)
	mid := head[at+len(`"history":`) : end]
	j := bytes.Index(mid, base)
	// (j <= 0 is equivalent: mid opens with '{', never with the base.)
	if j < 0 || j+len(base) != len(mid) {
		return nil, Row{}, bad("the head's base does not count the %d message lines", n)
	}
	var b bytes.Buffer
	b.Grow(len(row) + 16) // a capacity: its mutant is equivalent
	b.Write(head[:at+len(`"history":`)])
	b.Write(mid[:j+1])
	b.WriteString(`"messages":[`)
	for k, line := range bytes.SplitAfter(msgs[:len(msgs)-1], []byte{'\n'}) {
		if k > 0 {
			b.WriteByte(',')
		}
		b.Write(bytes.TrimSuffix(line, []byte{'\n'}))
	}
	b.WriteString(`]}`)
	b.Write(head[end+len(`"messages":[]}`):])
	cp, err := Parse(b.Bytes())
	if err != nil {
		return nil, Row{}, err
	}
	if cp.History.Base != 0 || len(cp.History.Messages) != n {
		return nil, Row{}, bad("%d message lines make %d messages", n, len(cp.History.Messages))
	}
	return cp, Row{msgs: n, keep: int64(len(msgs))}, nil
}
