package compaction

import (
	"bytes"
	"encoding/json"

	"github.com/harness-dev/harness/internal/model"
)

// Occupied is the part of a model request that occupies the context window.
// Its canonical JSON (model.MarshalCanonical) measured in bytes is the
// occupancy. Nil slices are counted as [] (see Occupancy).
type Occupied struct {
	Messages []model.Message  `json:"messages"`
	Tools    []model.ToolSpec `json:"tools"`
	System   string           `json:"system"`
}

// Occupancy returns the occupancy of a request the naive way, by encoding
// all of it: the byte length of model.MarshalCanonical(Occupied{msgs, tools,
// system}) with nil slices replaced by empty ones, so that no tools and no
// messages both count as []. It is the reference Meter is tested against,
// and it suits one-off requests such as a summary round.
//
// A raw JSON field that is not valid JSON (a tool call's arguments or a
// tool's parameters, which the model or a caller may get wrong) would make
// model.MarshalCanonical fail. Such a field is counted as a JSON string
// holding its bytes, which is never shorter than the raw bytes themselves,
// so the figure stays an upper bound and Occupancy never fails.
func Occupancy(system string, tools []model.ToolSpec, msgs []model.Message) int {
	if msgs == nil {
		msgs = []model.Message{}
	}
	if tools == nil {
		tools = []model.ToolSpec{}
	}
	occ := Occupied{Messages: msgs, Tools: tools, System: system}
	if b, err := model.MarshalCanonical(occ); err == nil {
		return len(b)
	}
	occ.Tools = sanitizeTools(tools)
	clean := make([]model.Message, len(msgs))
	for i, m := range msgs {
		clean[i] = sanitizeMessage(m)
	}
	occ.Messages = clean
	return encodedLen(occ)
}

// Meter keeps the occupancy of a growing conversation. It holds only the
// encoded size of the fixed part (system and tools) and the sum of the
// encoded sizes of the messages, so Add costs the encoding of one message,
// whatever the length of the history.
//
// Exactness: after NewMeter(system, tools) and Add of m1…mn, Tokens equals
// Occupancy(system, tools, []model.Message{m1, …, mn}). It holds because an
// array element is encoded the same alone as inside its array, and the array
// adds one comma between neighbours.
//
// A Meter is a value owned by one goroutine; it is not safe for concurrent
// use. The zero Meter measures nothing: use NewMeter.
//
// Beside the bytes, a Meter keeps AlgorithmRatio's estimate of the same
// encoding (its character mix, in hundredths of a token): Estimate, and
// Scale for another figure of the same conversation.
type Meter struct {
	fixed int // {"messages":[],"tools":[…],"system":"…"}
	n     int // messages counted
	sum   int // bytes of the messages' encodings, without separators

	fixedMix, sumMix int // the same, AlgorithmRatio's hundredths of a token
}

// NewMeter returns a meter for requests with this system prompt and these
// tools, holding no messages.
func NewMeter(system string, tools []model.ToolSpec) *Meter {
	m := &Meter{fixed: Occupancy(system, tools, nil)}
	if b, err := model.MarshalCanonical(Occupied{Messages: []model.Message{}, Tools: sanitizeTools(tools), System: system}); err == nil {
		var x mix
		x.write(b)
		m.fixedMix = x.hundredths
	} else {
		m.fixedMix = m.fixed * MixNonASCII // cannot happen: sanitized tools encode
	}
	return m
}

// Add counts one more message at the end of the conversation and returns
// the new total.
func (m *Meter) Add(msg model.Message) int {
	n, h := messageMeasure(msg)
	m.sum += n
	m.sumMix += h
	m.n++
	return m.Tokens()
}

// AddEncoded counts one more message whose canonical encoding
// (model.MarshalCanonical) the caller already holds, n bytes long, without
// encoding it again, and returns the new total. Its bytes are not seen, so
// the estimate counts each at the highest weight (MixNonASCII): AddRaw
// is exact.
func (m *Meter) AddEncoded(n int) int {
	m.sum += n
	m.sumMix += n * MixNonASCII
	m.n++
	return m.Tokens()
}

// AddRaw counts one more message whose canonical encoding the caller
// already holds, raw, without encoding it again, and returns the new
// total. It costs a pass over raw.
func (m *Meter) AddRaw(raw []byte) int {
	var x mix
	x.write(raw)
	m.sum += len(raw)
	m.sumMix += x.hundredths
	m.n++
	return m.Tokens()
}

// Shrink counts the messages added so far as n bytes shorter in all, as
// when some of them are shown elided (see Elision: the difference of each
// one's two encodings), and returns the new total; the estimate shrinks
// in proportion. It costs O(1).
func (m *Meter) Shrink(n int) int {
	if m.sum > 0 {
		m.sumMix -= min(m.sumMix, int(int64(m.sumMix)*int64(n)/int64(m.sum)))
	}
	m.sum -= n
	return m.Tokens()
}

// Estimate returns AlgorithmRatio's estimate of the occupancy of the
// messages added so far, in tokens, rounded up.
func (m *Meter) Estimate() int {
	h := m.fixedMix + m.sumMix + m.commas()*MixOther
	return ceilDiv(h, 100)
}

// Scale returns AlgorithmRatio's estimate of a request of bytes whose
// character mix is that of the messages added so far (a view of the
// same conversation: a compacted or elided one, a summary request):
// bytes at the meter's own ratio of tokens to bytes, rounded up. For
// Tokens() itself it is Estimate().
func (m *Meter) Scale(bytes int) int {
	t := m.Tokens()
	if t <= 0 {
		return ceilDiv(bytes*MixNonASCII, 100)
	}
	if bytes == t {
		return m.Estimate()
	}
	h := m.fixedMix + m.sumMix + m.commas()*MixOther
	return int((int64(bytes)*int64(h) + int64(t)*100 - 1) / (int64(t) * 100))
}

// Tokens returns the occupancy of the messages added so far.
func (m *Meter) Tokens() int {
	return m.fixed + m.sum + m.commas()
}

// commas is how many commas separate the messages added so far.
func (m *Meter) commas() int { return max(m.n-1, 0) }

// Reset forgets every message and counts messages instead, keeping the
// system prompt and tools. After a compaction it is called with the
// compacted view; its cost is linear in that view only.
func (m *Meter) Reset(messages []model.Message) {
	m.n, m.sum, m.sumMix = 0, 0, 0
	for _, msg := range messages {
		m.Add(msg)
	}
}

// Clone returns an independent copy: adding to one does not change the other.
func (m *Meter) Clone() *Meter {
	c := *m
	return &c
}

// MessageLen returns the length in bytes of one message's canonical
// encoding as Meter counts it; the occupancy of messages is the sum of
// their lengths, one comma between neighbours, plus the fixed part.
func MessageLen(msg model.Message) int { return messageLen(msg) }

// messageLen returns the length of one message's canonical encoding.
func messageLen(msg model.Message) int {
	n, _ := messageMeasure(msg)
	return n
}

// messageMeasure returns the length of one message's canonical encoding
// and AlgorithmRatio's estimate of it in hundredths of a token.
func messageMeasure(msg model.Message) (int, int) {
	c := &measurer{}
	if encodeInto(c, msg) {
		return c.n, c.mix.hundredths
	}
	c = &measurer{}
	if !encodeInto(c, sanitizeMessage(msg)) {
		panic("compaction: encoding a sanitized value failed")
	}
	return c.n, c.mix.hundredths
}

// measurer is an io.Writer that counts bytes and their estimate, less the
// newline json.Encoder ends with (MarshalCanonical trims it).
type measurer struct {
	n   int
	mix mix
}

func (c *measurer) Write(p []byte) (int, error) {
	c.n += len(p)
	c.mix.write(bytes.TrimSuffix(p, []byte("\n")))
	return len(p), nil
}

// encodeInto writes v's canonical encoding into c; false when it fails
// (the encoder writes nothing then).
func encodeInto(c *measurer, v any) bool {
	enc := json.NewEncoder(c)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return false
	}
	c.n-- // the newline
	return true
}

// counter is an io.Writer that only counts.
type counter int

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}

// tryEncodedLen returns the length of model.MarshalCanonical(v) without
// keeping the bytes: the same encoder settings, written into a counter. The
// encoder writes nothing when encoding fails.
func tryEncodedLen(v any) (int, bool) {
	var c counter
	enc := json.NewEncoder(&c)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return 0, false
	}
	return int(c) - 1, true // Encode ends with a newline MarshalCanonical trims
}

// encodedLen is tryEncodedLen for values whose raw fields are known valid.
// Should encoding still fail, it panics: that would be a bug here.
func encodedLen(v any) int {
	n, ok := tryEncodedLen(v)
	if !ok {
		panic("compaction: encoding a sanitized value failed")
	}
	return n
}

// sanitizeMessage returns msg with every invalid tool-call argument
// replaced by a JSON string of its bytes. It copies the tool calls it
// changes and leaves msg untouched.
func sanitizeMessage(msg model.Message) model.Message {
	if len(msg.ToolCalls) == 0 {
		return msg
	}
	calls := make([]model.ToolCall, len(msg.ToolCalls))
	for i, c := range msg.ToolCalls {
		c.Arguments = sanitizeRaw(c.Arguments)
		calls[i] = c
	}
	msg.ToolCalls = calls
	return msg
}

// sanitizeTools is sanitizeMessage for tool parameters.
func sanitizeTools(tools []model.ToolSpec) []model.ToolSpec {
	clean := make([]model.ToolSpec, len(tools))
	for i, t := range tools {
		t.Parameters = sanitizeRaw(t.Parameters)
		clean[i] = t
	}
	return clean
}

// sanitizeRaw keeps nil (encoded as null) and valid JSON as they are and
// turns anything else into a JSON string holding the bytes.
func sanitizeRaw(raw json.RawMessage) json.RawMessage {
	if raw == nil || json.Valid(raw) {
		return raw
	}
	b, err := model.MarshalCanonical(string(raw))
	if err != nil {
		panic("compaction: encoding a string failed: " + err.Error())
	}
	return b
}
