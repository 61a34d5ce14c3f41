package event

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/jsonword"
	"github.com/harness-dev/harness/internal/model"
)

// spliceMin is the size from which a raw JSON field is spliced into the
// encoded event rather than handed to encoding/json, which validates and
// compacts every json.RawMessage byte by byte: for a tool result or a
// checkpoint of tens of KiB that pass cost more than the rest of the
// event's encoding together.
const spliceMin = 512

// placeholder stands in for a spliced raw field while the rest of the
// event is encoded.
var placeholder = json.RawMessage("0")

// piece is a large field left out of encoding/json's pass over an event:
// marker is what stands in its place in that encoding, its key and then a
// stub value stub bytes long; the value put back is raw as it is (raw
// JSON) or str escaped.
type piece struct {
	marker string
	stub   int
	raw    []byte
	str    string
}

// put appends the field's value.
func (p piece) put(dst []byte) []byte {
	if p.raw != nil {
		return append(dst, p.raw...)
	}
	return model.AppendCanonicalString(dst, p.str)
}

// size is the room splice reserves for the value: exactly a raw value's
// length; for a string its length, its quotes and an eighth more for
// escapes, so that most contents are escaped without growing the buffer.
func (p piece) size() int {
	if p.raw != nil {
		return len(p.raw)
	}
	return len(p.str) + len(p.str)/8 + 2
}

// spliceable returns d with its one large field replaced by a small
// placeholder, and the piece that puts the field back; ok is false when d
// has none. The fields are raw JSON that is already compact and valid
// (tool.call input, tool.result output, runtime.checkpoint payload), which
// is copied as it is, and a message's content, which is escaped here, as
// encoding/json would, at twice its speed. Only fields whose key occurs
// once in their event type qualify: the key, with its opening quote, can
// then only be that field's (inside a JSON string a quote is escaped).
func spliceable(d Data) (out Data, p piece, ok bool) {
	stub := len(placeholder)
	switch v := d.(type) {
	case ToolResult:
		if spliceableRaw(v.Output) {
			p, v.Output = piece{marker: `"output":0`, stub: stub, raw: v.Output}, placeholder
			return v, p, true
		}
	case RuntimeCheckpoint:
		if spliceableRaw(v.Payload) {
			p, v.Payload = piece{marker: `"payload":0`, stub: stub, raw: v.Payload}, placeholder
			return v, p, true
		}
	case ToolCall:
		if spliceableRaw(v.Input) {
			p, v.Input = piece{marker: `"input":0`, stub: stub, raw: v.Input}, placeholder
			return v, p, true
		}
	case MessageCompleted:
		if content := v.Content; len(content) >= spliceMin && utf8.ValidString(content) {
			v.Content = ""
			return v, piece{marker: `"content":""`, stub: len(`""`), str: content}, true
		}
	}
	return d, piece{}, false
}

// spliceableRaw reports whether raw can be copied into an event as it is:
// large, compact valid JSON, valid UTF-8 (which encoding/json would copy
// verbatim too, so the frame's own check need not scan it again).
func spliceableRaw(raw []byte) bool {
	return isCompactJSON(raw) && utf8.Valid(raw)
}

// marshalSpliced encodes e, whose envelope is w, with its large field
// spliced in (see spliceable); ok is false when it has none or the splice
// fails, and then the caller encodes it whole. Only the small encoding
// around the field gets checkWritten's scan: the field itself is valid
// UTF-8 and, escaped here or copied, holds no replacement character.
func marshalSpliced(e Event, w wireOut) ([]byte, *errcode.Error, bool) {
	data, p, ok := spliceable(w.Data)
	if !ok {
		return nil, nil, false
	}
	w.Data = data
	small, err := model.MarshalCanonical(w)
	if err != nil {
		return nil, nil, false
	}
	if _, cerr := checkWritten(e, small, nil); cerr != nil {
		return nil, cerr, true
	}
	b, ok := splice(small, p)
	return b, nil, ok
}

// splice puts p's value in place of its marker in b; ok is false when b
// holds no such marker (then the caller encodes the event whole).
func splice(b []byte, p piece) ([]byte, bool) {
	before, after, found := bytes.Cut(b, []byte(p.marker))
	if !found || len(after) == 0 || (after[0] != ',' && after[0] != '}') {
		return nil, false
	}
	upToKey := b[:len(before)+len(p.marker)-p.stub]
	out := make([]byte, 0, len(upToKey)+p.size()+len(after))
	out = append(out, upToKey...)
	out = p.put(out)
	return append(out, after...), true
}

// MessageContent returns the content of frame, the encoded
// message.completed event whose data is d (what Encode wrote for it), as
// the JSON string it was written as, quotes included, or nil when frame is
// not that. A message's own canonical encoding holds the same bytes, so
// the runtime need not escape a large content twice. The content is found
// by what surrounds it, d encoded without it, rather than by scanning it.
func MessageContent(frame []byte, d MessageCompleted) []byte {
	if !bytes.HasPrefix(frame, []byte(`{"v":1,"type":"message.completed",`)) || len(frame) == 0 || frame[len(frame)-1] != '}' {
		return nil
	}
	d.Content = ""
	b, err := model.MarshalCanonical(d)
	if err != nil {
		return nil
	}
	const key = `"content":`
	before, after, found := bytes.Cut(b, []byte(key+`""`)) // only strings come before it
	if !found {
		return nil
	}
	// The key included: the bytes after before in b are the key, so this
	// append writes them over themselves.
	before = append(before, key...)
	head, _, found := bytes.Cut(frame, []byte(key+`"`)) // the first content key
	body := frame[:len(frame)-1]                        // the envelope's closing brace
	start := len(head) + len(key)
	end := len(body) - len(after)
	if !found || end < start+2 || !bytes.HasSuffix(body, after) ||
		!bytes.HasSuffix(frame[:start], before) || frame[start] != '"' || frame[end-1] != '"' {
		return nil
	}
	return frame[start:end]
}

// isCompactJSON reports whether b, of at least spliceMin bytes, is one
// JSON value with no whitespace outside its strings: exactly the bytes
// encoding/json would write for it as a json.RawMessage (it compacts and
// copies verbatim; with HTML escaping off it changes nothing else). It may
// say false for a value that is (nesting over 64 levels): that only sends
// the value down the slower path.
func isCompactJSON(b []byte) bool {
	if len(b) < spliceMin {
		return false
	}
	i, ok := compactValue(b, 0, 0)
	return ok && i == len(b)
}

// compactValue scans the value at b[i] and returns the index after it.
func compactValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return compactString(b, i)
	case c == '{' || c == '[':
		// At most 64 levels: the bound keeps the recursion short.
		if depth >= 64 {
			return i, false
		}
		return compactContainer(b, i, depth+1)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return compactNumber(b, i)
	}
	return i, false
}

func compactContainer(b []byte, i, depth int) (int, bool) {
	obj := b[i] == '{'
	closer := byte(']')
	if obj {
		closer = '}'
	}
	i++
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for {
		var ok bool
		if obj {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i, ok = compactString(b, i); !ok || i >= len(b) || b[i] != ':' {
				return i, false
			}
			i++
		}
		if i, ok = compactValue(b, i, depth); !ok || i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i++
		case closer:
			return i + 1, true
		default:
			return i, false
		}
	}
}

func compactString(b []byte, i int) (int, bool) {
	i++ // the opening quote
	for {
		// Eight plain bytes at a time while eight are left. (i+8 < len(b)
		// is an equivalent mutant: the byte loop below takes the last
		// eight as well, only more slowly.)
		for i+8 <= len(b) && !jsonword.Special(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && jsonword.Plain[b[i]] {
			i++
		}
		if i >= len(b) {
			return i, false // cut short
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if !isHex4(b[i+2 : min(i+6, len(b))]) {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		default: // a control character
			return i, false
		}
	}
}

// isHex4 reports whether h is four hex digits.
func isHex4(h []byte) bool {
	if len(h) != 4 {
		return false
	}
	for _, c := range h {
		if !isHex(c) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func literal(b []byte, i int, word string) (int, bool) {
	if !bytes.HasPrefix(b[i:], []byte(word)) {
		return i, false
	}
	return i + len(word), true
}

// compactNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func compactNumber(b []byte, i int) (int, bool) {
	digits := func(i int) (int, bool) {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i, i > start
	}
	if b[i] == '-' {
		i++
	}
	var ok bool
	switch {
	case i < len(b) && b[i] == '0':
		i++
	default:
		if i, ok = digits(i); !ok {
			return i, false
		}
	}
	if i < len(b) && b[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return i, false
		}
	}
	return i, true
}
