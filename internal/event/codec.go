package event

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// timeLayout is the one form of "at": UTC, milliseconds, a literal Z.
const timeLayout = "2006-01-02T15:04:05.000Z"

// maxAt is the last instant timeLayout can write with a four-digit year.
var maxAt = time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC)

// envelopeKeys in canonical order.
var envelopeKeys = [...]string{"v", "type", "eventId", "at", "actor", "data"}

// wireOut is the envelope as written; field order is key order.
type wireOut struct {
	V       int    `json:"v"`
	Type    Type   `json:"type"`
	EventID string `json:"eventId"`
	At      string `json:"at"`
	Actor   string `json:"actor"`
	Data    Data   `json:"data"`
}

// typeInfo is what the codec knows of one event type.
type typeInfo struct {
	goType reflect.Type // the value type that carries its data
	obj    *object      // its key schema
	decode func([]byte) (Data, error)
}

func entry[T validator]() typeInfo {
	return typeInfo{
		goType: reflect.TypeFor[T](),
		obj:    objectOf(reflect.TypeFor[T]()),
		decode: func(b []byte) (Data, error) {
			var v T
			err := json.Unmarshal(b, &v)
			return v, err
		},
	}
}

var registry = map[Type]typeInfo{
	TypeAgentStarted:        entry[AgentStarted](),
	TypeTurnStarted:         entry[TurnStarted](),
	TypeMessageCompleted:    entry[MessageCompleted](),
	TypeMessageDelta:        entry[MessageDelta](),
	TypeSteeringQueued:      entry[SteeringQueued](),
	TypeSteeringApplied:     entry[SteeringApplied](),
	TypeContextAccounted:    entry[ContextAccounted](),
	TypeContextCheckpoint:   entry[ContextCheckpoint](),
	TypeContextCompacted:    entry[ContextCompacted](),
	TypeRuntimeCheckpoint:   entry[RuntimeCheckpoint](),
	TypeModelRequest:        entry[ModelRequest](),
	TypeModelResponse:       entry[ModelResponse](),
	TypeToolCall:            entry[ToolCall](),
	TypePolicyDecision:      entry[PolicyDecision](),
	TypePermissionRequested: entry[PermissionRequested](),
	TypePermissionResolved:  entry[PermissionResolved](),
	TypeToolResult:          entry[ToolResult](),
	TypeBudgetWarning:       entry[BudgetWarning](),
	TypeWorkspaceLifecycle:  entry[WorkspaceLifecycle](),
	TypeTurnCompleted:       entry[TurnCompleted](),
	TypeAgentStopped:        entry[AgentStopped](),
	TypeInputQueued:         entry[InputQueued](),
	TypeInputWithdrawn:      entry[InputWithdrawn](),
	TypeModelRetry:          entry[ModelRetry](),
	TypeSessionForked:       entry[SessionForked](),
	TypeSettingsChanged:     entry[SettingsChanged](),
	TypeToolOutput:          entry[ToolOutput](),
	TypeWorkspaceRecovered:  entry[WorkspaceRecovered](),
	TypeSessionRewound:      entry[SessionRewound](),
	TypePatchApplied:        entry[PatchApplied](),
	TypePermissionRevoked:   entry[PermissionRevoked](),
	TypeJobStarted:          entry[JobStarted](),
	TypeJobExited:           entry[JobExited](),
}

const (
	opEncode = "event.Encode"
	opDecode = "event.Decode"
)

func withOp(op string, e *errcode.Error) error {
	e.Op = op
	return e
}

// Encode returns the canonical bytes of e: compact JSON, keys in catalogue
// order, no HTML escaping, no trailing newline. At is converted to UTC and
// truncated to the millisecond; a nil required array
// (ContextCheckpoint.Tail, SteeringApplied.MessageIDs, SettingsChanged.Changed)
// is written as [].
//
// Encode applies every rule Decode does, in the same order; when the bytes
// of e would break one, it fails with the code Decode gives those bytes.
// Besides: EVENT_UNKNOWN_TYPE for a Type outside the catalogue,
// EVENT_MISSING_FIELD for nil Data, EVENT_INVALID_FIELD for Data whose Go
// type is not the value type of Type (a pointer included), a string that
// is not valid UTF-8 or a raw value that is not valid JSON.
func Encode(e Event) ([]byte, error) {
	e, err := prepare(e)
	if err != nil {
		return nil, withOp(opEncode, err)
	}
	b, err := marshal(e)
	if err != nil {
		return nil, withOp(opEncode, err)
	}
	return b, nil
}

// prepare normalizes e and checks it against every rule.
func prepare(e Event) (Event, *errcode.Error) {
	info, ok := registry[e.Type]
	if !ok {
		return e, errcode.Errorf(errcode.EventUnknownType, "look up type %q: not an event type", truncate(string(e.Type)))
	}
	e.At = e.At.UTC().Truncate(time.Millisecond)
	var c checker
	envelopeRules(&c, e)
	if !c.ok() {
		return e, c.err
	}
	switch {
	case e.Data == nil:
		return e, errcode.New(errcode.EventMissingField, "require data")
	case reflect.TypeOf(e.Data) != info.goType:
		return e, errcode.Errorf(errcode.EventInvalidField, "validate data: must be event.%s for type %s, not %T", info.goType.Name(), e.Type, e.Data)
	}
	// A nil required array would be written as null; write it as the empty
	// array it stands for, and let the rules judge that.
	switch d := e.Data.(type) {
	case ContextCheckpoint:
		if d.Tail == nil {
			d.Tail = []model.Message{}
			e.Data = d
		}
	case SteeringApplied:
		if d.MessageIDs == nil {
			d.MessageIDs = []string{}
			e.Data = d
		}
	case SettingsChanged:
		if d.Changed == nil {
			d.Changed = []string{}
			e.Data = d
		}
	case PatchApplied:
		if d.Files == nil {
			d.Files = []PatchFile{}
			e.Data = d
		}
	}
	e.Data.(validator).validate(&c)
	return e, c.err
}

// envelopeRules checks eventId, at and actor.
func envelopeRules(c *checker, e Event) {
	idRule(c, e.ID)
	atRule(c, e.At)
	c.oneOf("actor", e.Actor, actors)
}

func idRule(c *checker, id string) {
	if c.ok() && (!strings.HasPrefix(id, "evt-") || len(id) == len("evt-") || !utf8.ValidString(id)) {
		c.failf(errcode.EventInvalidField, "validate eventId: must be evt- and an id")
	}
}

func atRule(c *checker, at time.Time) {
	if c.ok() && (!at.After(time.Time{}) || at.After(maxAt)) {
		c.failf(errcode.EventInvalidField, "validate at: must be set, in years 0001..9999")
	}
}

// envelopeString decodes a present envelope value that must be a string.
func envelopeString(raw []byte, key string) (string, *errcode.Error) {
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", errcode.New(errcode.EventInvalidField, "validate "+key+": must be a string")
	}
	return s, nil
}

// wire is e's envelope as written.
func wire(e Event) wireOut {
	return wireOut{V: Version, Type: e.Type, EventID: e.ID, At: e.At.Format(timeLayout), Actor: e.Actor, Data: e.Data}
}

// marshal writes an event that passed prepare.
func marshal(e Event) ([]byte, *errcode.Error) {
	w := wire(e)
	if b, cerr, ok := marshalSpliced(e, w); ok {
		return b, cerr
	}
	b, err := model.MarshalCanonical(w)
	return checkWritten(e, b, err)
}

// checkWritten returns what marshal wrote for e, or the error it is.
func checkWritten(e Event, b []byte, err error) ([]byte, *errcode.Error) {
	// encoding/json writes an invalid UTF-8 string as \ufffd and copies raw
	// values verbatim; either would break the round trip. Look closer only
	// when the output hints at one of them.
	if err != nil || !utf8.Valid(b) || bytes.Contains(b, []byte(`\ufffd`)) {
		info := registry[e.Type]
		if cerr := checkText(reflect.ValueOf(e.Data), shape{kind: kindObject, obj: info.obj}, "data"); cerr != nil {
			return nil, cerr
		}
		if err != nil {
			return nil, &errcode.Error{Code: errcode.EventInvalidField, Message: "encode data", Err: err}
		}
	}
	return b, nil
}

// Decode parses one frame strictly and returns the event with Data as the
// value type of its Type. It accepts exactly the bytes Encode writes for
// some event; everything else fails, checked in this order:
//
//   - EVENT_NOT_OBJECT: not valid UTF-8, not one JSON object, or data after it;
//   - EVENT_INVALID_FIELD: a duplicate envelope key;
//   - EVENT_MISSING_FIELD / EVENT_VERSION: "v" absent or null / not 1;
//   - EVENT_UNKNOWN_KEY: an envelope key other than v, type, eventId, at,
//     actor, data (exact case);
//   - EVENT_MISSING_FIELD: an envelope key absent or null;
//   - EVENT_UNKNOWN_TYPE: a type outside the catalogue (EVENT_INVALID_FIELD
//     when it is not a string);
//   - EVENT_INVALID_FIELD: eventId, then at, then actor not a string or
//     breaking its rule (at must parse as RFC 3339 first);
//   - then data, and objects nested in it, each checked for duplicate keys
//     (EVENT_INVALID_FIELD), unknown keys (EVENT_UNKNOWN_KEY), missing or
//     null required keys (EVENT_MISSING_FIELD), JSON kinds
//     (EVENT_INVALID_FIELD), and the type's rules (EVENT_INVALID_FIELD, or
//     EVENT_MISSING_FIELD for a key the rest of the value requires);
//   - EVENT_NON_CANONICAL: the frame is valid but is not byte for byte what
//     Encode writes for it (key order, whitespace, escapes, number or time
//     form, an optional key present with its empty value).
//
// Messages name the field path, such as data.toolCalls[0].id.
func Decode(b []byte) (Event, error) {
	if e, ok := decodeFast(b); ok {
		return e, nil
	}
	e, err := decodeStrict(b)
	if err != nil {
		return Event{}, withOp(opDecode, err)
	}
	return e, nil
}

// decodeFast accepts a canonical frame. It reads the envelope by its
// canonical layout, decodes data leniently, re-encodes with every rule and
// compares bytes. Equal bytes prove the frame is what Encode writes for a
// valid event, so no strict check could fail; any other frame (escapes in
// the envelope included) goes to decodeStrict, which finds the reason or
// accepts it.
func decodeFast(b []byte) (Event, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"v":1,"type":"`))
	if !ok {
		return Event{}, false
	}
	var typ, id, at, actor string
	for _, f := range []struct {
		dst  *string
		next string
	}{{&typ, `,"eventId":"`}, {&id, `,"at":"`}, {&at, `,"actor":"`}, {&actor, `,"data":`}} {
		// An escaped field goes to decodeStrict, which unescapes it.
		field, after, found := bytes.Cut(rest, []byte{'"'})
		if !found || bytes.Contains(field, []byte{'\\'}) {
			return Event{}, false
		}
		*f.dst = string(field)
		if rest, ok = bytes.CutPrefix(after, []byte(f.next)); !ok {
			return Event{}, false
		}
	}
	data, ok := bytes.CutSuffix(rest, []byte("}"))
	info, known := registry[Type(typ)]
	if !ok || !known {
		return Event{}, false
	}
	d, err := info.decode(data)
	if err != nil {
		return Event{}, false
	}
	t, err := time.Parse(timeLayout, at)
	if err != nil {
		return Event{}, false
	}
	e := Event{Type: Type(typ), ID: id, At: t, Actor: actor, Data: d}
	out, err := Encode(e)
	if err != nil || !bytes.Equal(out, b) {
		return Event{}, false
	}
	return e, true
}

// decodeStrict checks a frame step by step in the order Decode documents.
func decodeStrict(b []byte) (Event, *errcode.Error) {
	if !utf8.Valid(b) {
		return Event{}, errcode.New(errcode.EventNotObject, "parse frame: not valid UTF-8")
	}
	ms, err := members(b)
	if err != nil {
		return Event{}, &errcode.Error{Code: errcode.EventNotObject, Message: "parse frame: not one JSON object", Err: err}
	}
	if cerr := checkDuplicates(ms, ""); cerr != nil {
		return Event{}, cerr
	}
	var vals [len(envelopeKeys)]json.RawMessage
	for _, m := range ms {
		if i := slices.Index(envelopeKeys[:], m.key); i >= 0 {
			vals[i] = m.val
		}
	}
	rawV, rawType, rawID, rawAt, rawActor, rawData := vals[0], vals[1], vals[2], vals[3], vals[4], vals[5]
	if isNull(rawV) {
		return Event{}, errcode.New(errcode.EventMissingField, "require v")
	}
	// A number equal to 1 in another form (1.0, 1e0) is version 1 written
	// non-canonically; the final comparison reports it.
	var v float64
	if json.Unmarshal(rawV, &v) != nil || v != Version {
		return Event{}, errcode.Errorf(errcode.EventVersion, "check v: must be %d", Version)
	}
	if cerr := checkUnknown(ms, func(k string) bool { return slices.Contains(envelopeKeys[:], k) }, ""); cerr != nil {
		return Event{}, cerr
	}
	for i, raw := range vals {
		if isNull(raw) {
			return Event{}, errcode.New(errcode.EventMissingField, "require "+envelopeKeys[i])
		}
	}
	typ, cerr := envelopeString(rawType, "type")
	if cerr != nil {
		return Event{}, cerr
	}
	info, ok := registry[Type(typ)]
	if !ok {
		return Event{}, errcode.Errorf(errcode.EventUnknownType, "look up type %q: not an event type", truncate(typ))
	}
	e := Event{Type: Type(typ)}
	var c checker
	if e.ID, cerr = envelopeString(rawID, "eventId"); cerr != nil {
		return Event{}, cerr
	}
	if idRule(&c, e.ID); !c.ok() {
		return Event{}, c.err
	}
	atText, cerr := envelopeString(rawAt, "at")
	if cerr != nil {
		return Event{}, cerr
	}
	at, err := time.Parse(time.RFC3339Nano, atText)
	if err != nil {
		return Event{}, errcode.New(errcode.EventInvalidField, "validate at: must be an RFC 3339 time")
	}
	e.At = at.UTC()
	if atRule(&c, e.At); !c.ok() {
		return Event{}, c.err
	}
	if e.Actor, cerr = envelopeString(rawActor, "actor"); cerr != nil {
		return Event{}, cerr
	}
	if c.oneOf("actor", e.Actor, actors); !c.ok() {
		return Event{}, c.err
	}
	if rawData[0] != '{' {
		return Event{}, errcode.New(errcode.EventInvalidField, "validate data: must be an object")
	}
	if cerr := checkObject(rawData, info.obj, "data"); cerr != nil {
		return Event{}, cerr
	}
	d, err := info.decode(rawData)
	if err != nil {
		return Event{}, &errcode.Error{Code: errcode.EventInvalidField, Message: "decode data", Err: err}
	}
	e.Data = d
	e, perr := prepare(e)
	if perr != nil {
		return Event{}, perr
	}
	out, perr := marshal(e)
	if perr != nil {
		return Event{}, perr
	}
	if !bytes.Equal(out, b) {
		return Event{}, errcode.Errorf(errcode.EventNonCanonical, "compare frame with its canonical form: differs at byte %d", firstDiff(out, b))
	}
	return e, nil
}

// firstDiff is the offset an EVENT_NON_CANONICAL message names: the first
// byte at which a and b differ, or the shorter one's length.
func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// truncate cuts a foreign string for an error message after 64 bytes.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
