package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
)

// The key schema of each data type is read once from its struct tags, so the
// keys Decode accepts are exactly the keys Encode writes: the json name,
// omitempty for optional, and the Go type for the JSON kind.

type kind uint8

const (
	kindString kind = iota + 1
	kindInt
	kindBool
	kindRaw // any JSON value, kept verbatim
	kindObject
	kindArray
)

// shape is the JSON kind of a Go type.
type shape struct {
	kind kind
	ptr  bool    // the Go value is a pointer to the shape
	elem *shape  // kindArray
	obj  *object // kindObject
}

// field is one key of an object.
type field struct {
	name     string
	index    int // Go struct field index
	optional bool
	shape
}

// object is the key schema of a struct.
type object struct {
	fields []field
	byName map[string]int
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func objectOf(t reflect.Type) *object {
	o := &object{byName: make(map[string]int, t.NumField())}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" || (opts != "" && opts != "omitempty") {
			panic("event: field " + t.String() + "." + sf.Name + " needs a plain json tag")
		}
		o.byName[name] = len(o.fields)
		o.fields = append(o.fields, field{name: name, index: i, optional: opts == "omitempty", shape: shapeOf(sf.Type)})
	}
	return o
}

func shapeOf(t reflect.Type) shape {
	if t == rawMessageType {
		return shape{kind: kindRaw}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := shapeOf(t.Elem())
		s.ptr = true
		return s
	case reflect.String:
		return shape{kind: kindString}
	case reflect.Int:
		return shape{kind: kindInt}
	case reflect.Bool:
		return shape{kind: kindBool}
	case reflect.Slice:
		e := shapeOf(t.Elem())
		return shape{kind: kindArray, elem: &e}
	case reflect.Struct:
		return shape{kind: kindObject, obj: objectOf(t)}
	}
	panic("event: no JSON shape for " + t.String())
}

// member is one key and its raw value, in input order.
type member struct {
	key string
	val json.RawMessage
}

var errNotObject = errors.New("not a JSON object")

// members splits one JSON object into its members. It fails on anything
// that is not exactly one object, trailing data included (trailing
// whitespace is left to the canonical comparison).
func members(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errNotObject
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errNotObject
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		ms = append(ms, member{key: key, val: val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the object")
	}
	return ms, nil
}

// elements splits one JSON array into its elements.
func elements(raw []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, errors.New("not a JSON array")
	}
	var es []json.RawMessage
	for dec.More() {
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		es = append(es, val)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return es, nil
}

// join names a key under a path: "" + "at" is "at", "data" + "turnId" is
// "data.turnId". Keys that are not plain printable ASCII are quoted, and
// ones over 64 bytes cut, so an error message stays one safe line.
func join(path, key string) string {
	if len(key) > 64 {
		key = key[:64] + "…"
	}
	if strings.ContainsFunc(key, func(r rune) bool { return r < 0x21 || r > 0x7e || r == '"' || r == '.' }) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func isNull(raw []byte) bool { return raw == nil || string(raw) == "null" }

// checkDuplicates rejects a key given twice (after unescaping).
func checkDuplicates(ms []member, path string) *errcode.Error {
	seen := make(map[string]struct{}, len(ms))
	for _, m := range ms {
		if _, dup := seen[m.key]; dup {
			return &errcode.Error{Code: errcode.EventInvalidField, Message: "validate " + join(path, m.key) + ": duplicate key"}
		}
		seen[m.key] = struct{}{}
	}
	return nil
}

// checkUnknown rejects the first key, in input order, that known lacks.
// Keys match exactly: case counts.
func checkUnknown(ms []member, known func(string) bool, path string) *errcode.Error {
	for _, m := range ms {
		if !known(m.key) {
			return &errcode.Error{Code: errcode.EventUnknownKey, Message: "reject unknown key " + join(path, m.key)}
		}
	}
	return nil
}

// checkObject checks one object against its schema: duplicate keys, then
// unknown keys, then missing or null required keys (in schema order), then
// the JSON kind of each present value, depth first.
func checkObject(raw []byte, o *object, path string) *errcode.Error {
	ms, err := members(raw)
	if err != nil {
		return &errcode.Error{Code: errcode.EventInvalidField, Message: "validate " + path + ": must be an object", Err: err}
	}
	if e := checkDuplicates(ms, path); e != nil {
		return e
	}
	if e := checkUnknown(ms, func(k string) bool { _, ok := o.byName[k]; return ok }, path); e != nil {
		return e
	}
	vals := make([]json.RawMessage, len(o.fields))
	for _, m := range ms {
		vals[o.byName[m.key]] = m.val
	}
	for i, f := range o.fields {
		if isNull(vals[i]) && !f.optional {
			return &errcode.Error{Code: errcode.EventMissingField, Message: "require " + join(path, f.name)}
		}
	}
	for i, f := range o.fields {
		// A null optional value decodes to the empty value and so fails
		// the canonical comparison, where it belongs.
		if isNull(vals[i]) {
			continue
		}
		if e := checkShape(vals[i], f.shape, join(path, f.name)); e != nil {
			return e
		}
	}
	return nil
}

func checkShape(raw []byte, s shape, path string) *errcode.Error {
	invalid := func(want string) *errcode.Error {
		return &errcode.Error{Code: errcode.EventInvalidField, Message: "validate " + path + ": must be " + want}
	}
	switch s.kind {
	case kindString:
		if raw[0] != '"' {
			return invalid("a string")
		}
	case kindInt:
		if !isInteger(raw) {
			return invalid("an integer")
		}
		if _, err := strconv.ParseInt(string(raw), 10, strconv.IntSize); err != nil {
			return invalid("an integer in range")
		}
	case kindBool:
		if string(raw) != "true" && string(raw) != "false" {
			return invalid("a boolean")
		}
	case kindRaw:
	case kindObject:
		if raw[0] != '{' {
			return invalid("an object")
		}
		return checkObject(raw, s.obj, path)
	case kindArray:
		if raw[0] != '[' {
			return invalid("an array")
		}
		es, err := elements(raw)
		if err != nil {
			return invalid("an array")
		}
		for i, e := range es {
			if err := checkShape(e, *s.elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// isInteger reports whether a JSON number has no fraction and no exponent.
func isInteger(raw []byte) bool {
	digits := bytes.TrimPrefix(raw, []byte("-"))
	if len(digits) == 0 {
		return false
	}
	for _, b := range digits {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

// checkText finds the value that encoding/json would silently change or
// refuse: a string that is not valid UTF-8 (encoded as \ufffd, so it
// would not decode back to itself) or a raw value that is not valid JSON or
// not valid UTF-8. Encode calls it only when its output looks suspect.
func checkText(v reflect.Value, s shape, path string) *errcode.Error {
	if s.ptr {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	invalid := func(want string) *errcode.Error {
		return &errcode.Error{Code: errcode.EventInvalidField, Message: "validate " + path + ": must be " + want}
	}
	switch s.kind {
	case kindString:
		if !utf8.ValidString(v.String()) {
			return invalid("valid UTF-8")
		}
	case kindRaw:
		b := v.Bytes()
		if len(b) == 0 {
			return nil
		}
		if !json.Valid(b) {
			return invalid("valid JSON")
		}
		if !utf8.Valid(b) {
			return invalid("valid UTF-8")
		}
	case kindObject:
		for _, f := range s.obj.fields {
			if e := checkText(v.Field(f.index), f.shape, join(path, f.name)); e != nil {
				return e
			}
		}
	case kindArray:
		for i := range v.Len() {
			if e := checkText(v.Index(i), *s.elem, fmt.Sprintf("%s[%d]", path, i)); e != nil {
				return e
			}
		}
	}
	return nil
}
