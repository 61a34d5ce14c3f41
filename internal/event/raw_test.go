package event_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// padded wraps v in an object large enough to be spliced.
func padded(v string) []byte {
	return []byte(`{"pad":"` + strings.Repeat("x", 600) + `","v":` + v + `}`)
}

// compactAsEncodingJSON reports whether encoding/json accepts b and would
// write a json.RawMessage of it unchanged.
func compactAsEncodingJSON(b []byte) bool {
	var out bytes.Buffer
	return json.Valid(b) && json.Compact(&out, b) == nil && bytes.Equal(out.Bytes(), b)
}

// nesting is the deepest bracket nesting of JSON text b outside strings.
func nesting(b []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == '{' || c == '['):
			depth++
			deepest = max(deepest, depth)
		case !inString && (c == '}' || c == ']'):
			depth--
		}
	}
	return deepest
}

// The splice check says yes only for bytes encoding/json would leave as
// they are, and yes for every such value nested at most 64 levels deep
// (the bound keeps the scan's recursion short).
func TestIsCompactJSON(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{`"plain"`, true}, {`"esc \" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00"`, true}, {`"caf` + "\u00e9" + `"`, true},
		{`0`, true}, {`-0`, true}, {`12.5e-3`, true}, {`1E+9`, true}, {`-7.25`, true}, {`[10.09e10,-90,0.5]`, true},
		{`"\u09af\uAF9F"`, true}, // every end of the three hex digit ranges
		{`true`, true}, {`false`, true}, {`null`, true}, {`[]`, true}, {`{}`, true}, {`[1,"a",{"b":[null]}]`, true},
		{`01`, false}, {`1.`, false}, {`.5`, false}, {`1e`, false}, {`-`, false}, {`+1`, false}, {`0x1`, false},
		{`"bad \x"`, false}, {`"bad \u12"`, false}, {`"bad \u12g4"`, false}, {"\"tab\tinside\"", false}, {`"open`, false},
		{`tru`, false}, {`nul`, false}, {`[1,]`, false}, {`{"a"}`, false}, {`{"a":}`, false}, {`{1:2}`, false},
		{`[1 ,2]`, false}, {`{"a": 1}`, false}, {"[1,\n2]", false}, {`[1]]`, false}, {`[`, false}, {``, false},
		{strings.Repeat("[", 63) + strings.Repeat("]", 63), true}, // 64 levels, padded's object included
	} {
		b := padded(tc.v)
		got := event.IsCompactJSON(b)
		if got != tc.want {
			t.Errorf("IsCompactJSON(%s) = %v, want %v", tc.v, got, tc.want)
		}
		if got && !compactAsEncodingJSON(b) {
			t.Errorf("IsCompactJSON(%s) but encoding/json would change or refuse it", tc.v)
		}
	}
	if event.IsCompactJSON([]byte(`{"short":1}`)) {
		t.Error("a value under the splice size is spliced")
	}
	deep := padded(strings.Repeat("[", 64) + strings.Repeat("]", 64)) // 65 levels
	if event.IsCompactJSON(deep) || !json.Valid(deep) {
		t.Error("nesting over 64 levels is not left to encoding/json")
	}
}

// FuzzIsCompactJSON: whatever the bytes, the check agrees with
// encoding/json up to its nesting limit.
func FuzzIsCompactJSON(f *testing.F) {
	for _, v := range []string{`"a"`, `[1,2.5e3,"\u00e9"]`, `{"a":{"b":null}}`, `{"a": 1}`, `01`, `"\q"`, "\"\x01\""} {
		f.Add(padded(v))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, want := event.IsCompactJSON(b), compactAsEncodingJSON(b)
		switch {
		case got && !want:
			t.Fatalf("IsCompactJSON(%q) = true; encoding/json would change or refuse it", b)
		case !got && want && len(b) >= 512 && nesting(b) <= 64:
			t.Fatalf("IsCompactJSON(%q) = false for compact JSON", b)
		}
	})
}

// rawEvents are events whose one raw field is large enough to be spliced,
// with other fields that mention the raw field's key.
func rawEvents(t *testing.T, raw []byte, other string) []event.Event {
	return []event.Event{
		edit(t, "tool.result", func(d *event.ToolResult) { d.Output, d.CallID = raw, other }),
		edit(t, "runtime.checkpoint", func(d *event.RuntimeCheckpoint) { d.Payload, d.TurnID = raw, other }),
		edit(t, "tool.call", func(d *event.ToolCall) { d.Input, d.CallID = raw, other }),
		edit(t, "message.completed/assistant", func(d *event.MessageCompleted) { d.Content, d.MessageID = string(raw), "msg-"+other }),
	}
}

// Splicing a raw field in writes exactly the bytes encoding/json writes,
// and refuses what it refuses with the same code.
func TestEncodeSplicesLikeEncodingJSON(t *testing.T) {
	for _, raw := range [][]byte{
		padded(`"output":0`), padded(`{"output":0,"payload":0,"input":0}`), padded(`"` + strings.Repeat(`\"output\":0`, 40) + `"`),
		padded(`{"a": 1}`), // not compact: encoding/json compacts it
		padded(`[1,]`),     // not JSON: refused
		padded(`"caf` + "\xe9" + `"`),
	} {
		for _, other := range []string{"call-1", `"output":0`, `x","payload":0,"y":"`, `"input":0}`} {
			for _, e := range rawEvents(t, raw, other) {
				got, gerr := event.Encode(e)
				want, werr := event.EncodeWhole(e)
				if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
					t.Fatalf("%s with %q: Encode = %s, %v\nencoding/json alone = %s, %v", e.Type, other, got, gerr, want, werr)
				}
				if gerr != nil && errcode.Of(gerr) == "" {
					t.Fatalf("%s: error without a code: %v", e.Type, gerr)
				}
				if d, ok := e.Data.(event.MessageCompleted); ok && gerr == nil {
					want, _ := model.MarshalCanonical(d.Content)
					if c := event.MessageContent(got, d); !bytes.Equal(c, want) {
						t.Fatalf("MessageContent = %s, want %s", c, want)
					}
				}
				if gerr == nil {
					back, err := event.Decode(got)
					if err != nil {
						t.Fatalf("%s: spliced frame does not decode: %v", e.Type, err)
					}
					if again, _ := event.Encode(back); !bytes.Equal(again, got) {
						t.Fatalf("%s: round trip changed the frame", e.Type)
					}
				}
			}
		}
	}
}

// FuzzEncodeRawFields: for any raw bytes and any neighbouring string,
// Encode agrees with encoding/json's own encoding.
//
// The fuzzer's own inputs stay small: a value is padded to the splice
// size here (pad true), not in the seeds. Seeds of 600 bytes made every new
// input a long minimization (quadratic in its length, 60 s each): the
// target ran 4 inputs in 30 s.
func FuzzEncodeRawFields(f *testing.F) {
	f.Add([]byte(`"output":0`), `"output":0`, true)
	f.Add([]byte(`{"a": 1}`), "x", true)
	f.Add([]byte(`[1,]`), `"payload":0,`, true)
	f.Add([]byte(`{"a":"\u00e9"}`), "y", false)
	f.Fuzz(func(t *testing.T, v []byte, other string, pad bool) {
		raw := v
		if pad {
			raw = padded(string(v))
		}
		for _, e := range rawEvents(t, raw, other) {
			got, gerr := event.Encode(e)
			want, werr := event.EncodeWhole(e)
			if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("%s: Encode = %q, %v; encoding/json alone = %q, %v", e.Type, got, gerr, want, werr)
			}
		}
	})
}

// The splice rule: a raw field or a message's content of at least
// SpliceMin bytes (compact JSON, valid UTF-8) is spliced into the encoding
// rather than encoded again, and the spliced frame is byte for byte the
// whole encoding; a smaller one is encoded whole (splicing would not pay).
func TestEncodeSplicesLargeFieldsOnly(t *testing.T) {
	for _, n := range []int{event.SpliceMin, event.SpliceMin + 1, event.SpliceMin - 1} {
		content := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
		raw := []byte(`{"k":"` + strings.Repeat("y", n-8) + `"}`)
		want := n >= event.SpliceMin
		for _, e := range append(rawEvents(t, raw, "call-1"),
			edit(t, "message.completed/user", func(d *event.MessageCompleted) { d.Content = content })) {
			got, ok := event.EncodeSpliced(e)
			if ok != want {
				t.Errorf("%s of %d bytes: spliced = %v, want %v", e.Type, n, ok, want)
			}
			if ok {
				if whole, err := event.EncodeWhole(e); err != nil || !bytes.Equal(got, whole) {
					t.Errorf("%s of %d bytes: spliced %s\nwhole %s (%v)", e.Type, n, got, whole, err)
				}
			}
		}
	}
}

// MessageContent's rule: it returns the content exactly as Encode wrote it
// for d, quotes included, and nil for any frame that is not what Encode
// wrote for d: another type, a frame cut short, one written for another
// message, or one whose content is not a whole JSON string.
func TestMessageContentOnlyFromItsOwnFrame(t *testing.T) {
	e := goldenEvent(t, "message.completed/assistant")
	d := e.Data.(event.MessageCompleted)
	frame := mustEncode(t, e)
	want, _ := model.MarshalCanonical(d.Content)
	if got := event.MessageContent(frame, d); !bytes.Equal(got, want) {
		t.Fatalf("MessageContent = %s, want %s", got, want)
	}
	other := d
	other.MessageID = "msg-other"
	content := []byte(`"content":` + string(want))
	for name, c := range map[string]struct {
		frame []byte
		d     event.MessageCompleted
	}{
		"empty frame":          {nil, d},
		"another type":         {[]byte(goldenLine(t, "turn.started")), d},
		"cut short":            {frame[:len(frame)-1], d},
		"another message":      {frame, other},
		"no closing quote":     {bytes.Replace(frame, content, append(bytes.Clone(content[:len(content)-1]), 'x'), 1), d},
		"a lone quote":         {bytes.Replace(frame, content, []byte(`"content":"`), 1), d},
		"content key missing":  {bytes.Replace(frame, content, []byte(`"kontent":`+string(want)), 1), d},
		"content not a string": {bytes.Replace(frame, content, []byte(`"content":12`), 1), d},
	} {
		if bytes.Equal(c.frame, frame) && c.d.MessageID == d.MessageID {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if got := event.MessageContent(c.frame, c.d); got != nil {
			t.Errorf("%s: MessageContent = %s, want nil", name, got)
		}
	}
}

// An assistant message that only calls tools has empty content, and
// MessageContent returns it as written: "".
func TestMessageContentEmpty(t *testing.T) {
	e := edit(t, "message.completed/assistant", func(d *event.MessageCompleted) { d.Content = "" })
	if got := event.MessageContent(mustEncode(t, e), e.Data.(event.MessageCompleted)); string(got) != `""` {
		t.Fatalf("MessageContent = %q, want %q", got, `""`)
	}
}

// A value cut short anywhere (inside a string or one of its escapes, after
// a colon or a comma, before a closing bracket) is never taken for compact
// JSON.
func TestIsCompactJSONCutShort(t *testing.T) {
	for _, v := range []string{`[1,"a",{"b":[null,true,false,-1.5e3]}]`, `{"k":{"a":"é\n\u00e9"}}`} {
		whole := padded(v)
		if !event.IsCompactJSON(whole) {
			t.Fatalf("IsCompactJSON(%s) = false for the whole value", whole)
		}
		for n := event.SpliceMin; n < len(whole); n++ {
			if event.IsCompactJSON(whole[:n]) {
				t.Errorf("IsCompactJSON took the first %d bytes of %s", n, v)
			}
		}
	}
}

// A spliced frame is built in one buffer sized up front: a raw field's
// frame fills its buffer exactly, and a message's content gets its length,
// its two quotes and an eighth more for escapes, so a content whose escapes
// take exactly that eighth fills the buffer too.
func TestEncodeSplicedFillsItsBuffer(t *testing.T) {
	raw := []byte(`{"k":"` + strings.Repeat("y", event.SpliceMin) + `"}`)
	escapes := event.SpliceMin / 8 // each '"' is written as \"
	content := strings.Repeat(`"`, escapes) + strings.Repeat("x", event.SpliceMin-escapes)
	var es []event.Event
	for _, e := range rawEvents(t, raw, "call-1") {
		if _, ok := e.Data.(event.MessageCompleted); !ok {
			es = append(es, e)
		}
	}
	es = append(es, edit(t, "message.completed/user", func(d *event.MessageCompleted) { d.Content = content }))
	for _, e := range es {
		got, ok := event.EncodeSpliced(e)
		if !ok {
			t.Fatalf("%s: not spliced", e.Type)
		}
		if len(got) != cap(got) {
			t.Errorf("%s: frame of %d bytes in a buffer of %d", e.Type, len(got), cap(got))
		}
	}
}
