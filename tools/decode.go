package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// MaxArgsBytes bounds the raw arguments Parse looks at. The largest valid
// input (128 arguments of 8192 bytes, every byte escaped as \u00XX) is about
// 6.3 MB; anything longer cannot be valid and is refused before decoding.
const MaxArgsBytes = 8 << 20

// kind is the JSON type of one input field.
type kind int

const (
	kindString  kind = iota + 1 // a JSON string; min/max bound its length in bytes
	kindInt                     // a JSON integer; min/max bound its value
	kindStrings                 // a JSON array of strings; min/max bound its length, itemMax each item's bytes
	kindBool                    // a JSON boolean (true or false)
)

// field describes one key of a tool's input object. The same table drives
// the strict decoder, the re-validation in Execute and the JSON Schema the
// provider advertises, so the three cannot disagree.
type field struct {
	name     string
	kind     kind
	required bool
	min, max int64
	itemMax  int      // kindStrings only
	noNUL    bool     // kindStrings only: items may not contain a NUL byte
	def      *int64   // kindInt only: the default when absent
	enum     []string // kindString only: when set, the only values allowed
	desc     string
}

// values holds the decoded fields of one call: string, int64, bool or []string,
// keyed by field name. An absent optional field has no entry.
type values map[string]any

// shellKeys are keys a model uses when it wants a shell; they get a pointed
// message instead of a bare "unknown field".
var shellKeys = map[string]bool{
	"cmd": true, "command": true, "commandLine": true, "command_line": true,
	"shell": true, "script": true, "bash": true, "sh": true, "args": true,
}

// decodeArgs strictly decodes args, which must be exactly one JSON object
// whose keys are exactly field names (case-sensitive, each at most once),
// whose required fields are present and not null, and whose values have the
// declared types and bounds. Whitespace may surround the object; nothing
// else may follow it.
func decodeArgs(tool string, fields []field, args []byte) (values, *ResultError) {
	// Arguments of exactly MaxArgsBytes are decoded (and fail a field's
	// bound: no valid input comes near it).
	if len(args) > MaxArgsBytes {
		return nil, badArgs(tool, "are longer than %d bytes", MaxArgsBytes)
	}
	if !utf8.Valid(args) {
		return nil, badArgs(tool, "are not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, badArgs(tool, "are not a JSON object")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, badArgs(tool, "are not a JSON object (got %s)", jsonKind(tok))
	}
	out := values{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, badArgs(tool, "are not valid JSON")
		}
		key, _ := tok.(string) // inside an object the decoder yields only string keys
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, badArgs(tool, "are not valid JSON")
		}
		if seen[key] {
			return nil, bad(tool, key, "appears more than once")
		}
		seen[key] = true
		f, ok := lookupField(fields, key)
		if !ok {
			return nil, unknownField(tool, fields, key)
		}
		v, rerr := decodeValue(tool, f, raw)
		if rerr != nil {
			return nil, rerr
		}
		if v != nil {
			out[f.name] = v
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, badArgs(tool, "are not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, badArgs(tool, "have data after the JSON object")
	}
	for _, f := range fields {
		if _, ok := out[f.name]; !ok {
			if f.required {
				return nil, bad(tool, f.name, "is missing")
			}
			if f.def != nil {
				out[f.name] = *f.def
			}
		}
	}
	return out, nil
}

// decodeValue decodes and bounds one field's raw JSON. It returns nil for
// null on an optional field, which counts as absent.
func decodeValue(tool string, f field, raw json.RawMessage) (any, *ResultError) {
	if string(raw) == "null" {
		if f.required {
			return nil, bad(tool, f.name, "is null; it is required")
		}
		return nil, nil
	}
	switch f.kind {
	case kindString:
		s, rerr := decodeString(tool, f.name, raw)
		if rerr != nil {
			return nil, rerr
		}
		return s, checkString(tool, f, s)
	case kindInt:
		n, rerr := decodeInt(tool, f.name, raw)
		if rerr != nil {
			return nil, rerr
		}
		return n, checkInt(tool, f, n)
	case kindBool:
		switch string(raw) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, bad(tool, f.name, "must be true or false, not %s", rawKind(raw))
	case kindStrings:
		if raw[0] != '[' {
			msg := "must be an array of strings, not " + rawKind(raw)
			// A model that sends a command line as one string is told why
			// that cannot work.
			if raw[0] == '"' {
				msg += "; commands run without a shell, so split the command into its arguments"
			}
			return nil, bad(tool, f.name, "%s", msg)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, bad(tool, f.name, "is not a valid JSON array")
		}
		ss := make([]string, len(items))
		for i, item := range items {
			name := f.name + "[" + strconv.Itoa(i) + "]"
			if string(item) == "null" {
				return nil, bad(tool, name, "is null; it must be a string")
			}
			s, rerr := decodeString(tool, name, item)
			if rerr != nil {
				return nil, rerr
			}
			ss[i] = s
		}
		return ss, checkStrings(tool, f, ss)
	}
	panic("tools: field " + f.name + " has no kind")
}

func decodeString(tool, name string, raw json.RawMessage) (string, *ResultError) {
	if raw[0] != '"' {
		return "", bad(tool, name, "must be a string, not %s", rawKind(raw))
	}
	if loneSurrogate(raw) {
		return "", bad(tool, name, "holds an unpaired UTF-16 surrogate escape; it is not valid UTF-8 text")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", bad(tool, name, "is not a valid JSON string")
	}
	return s, nil
}

// decodeInt accepts only the JSON integer syntax: no fraction, no exponent.
func decodeInt(tool, name string, raw json.RawMessage) (int64, *ResultError) {
	if !isIntSyntax(raw) {
		// A number is shown as sent, anything else by its kind.
		if rawKind(raw) == "a number" {
			return 0, bad(tool, name, "must be an integer, not %s", raw)
		}
		return 0, bad(tool, name, "must be an integer, not %s", rawKind(raw))
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, bad(tool, name, "is out of range")
	}
	return n, nil
}

func isIntSyntax(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkString bounds a decoded string; Execute calls it again on typed input.
func checkString(tool string, f field, s string) *ResultError {
	switch {
	case !utf8.ValidString(s):
		return bad(tool, f.name, "is not valid UTF-8")
	case int64(len(s)) < f.min && f.min == 1:
		return bad(tool, f.name, "is empty")
	case int64(len(s)) < f.min:
		return bad(tool, f.name, "is shorter than %d bytes", f.min)
	case int64(len(s)) > f.max:
		return bad(tool, f.name, "is %d bytes, over the limit of %d", len(s), f.max)
	case len(f.enum) > 0 && !slices.Contains(f.enum, s):
		shown, _ := cut(s, 64, false)
		return bad(tool, f.name, "is %q; it must be one of %s", shown, strings.Join(f.enum, ", "))
	}
	return nil
}

func checkInt(tool string, f field, n int64) *ResultError {
	if n < f.min || n > f.max {
		return bad(tool, f.name, "is %d, outside %d..%d", n, f.min, f.max)
	}
	return nil
}

func checkStrings(tool string, f field, ss []string) *ResultError {
	if int64(len(ss)) < f.min || int64(len(ss)) > f.max {
		return bad(tool, f.name, "has %d items, outside %d..%d", len(ss), f.min, f.max)
	}
	for i, s := range ss {
		name := f.name + "[" + strconv.Itoa(i) + "]"
		switch {
		case !utf8.ValidString(s):
			return bad(tool, name, "is not valid UTF-8")
		case len(s) > f.itemMax:
			return bad(tool, name, "is %d bytes, over the limit of %d", len(s), f.itemMax)
		case f.noNUL && strings.IndexByte(s, 0) >= 0:
			return bad(tool, name, "contains a NUL byte")
		}
	}
	return nil
}

// loneSurrogate reports whether the JSON string literal lit holds a \u
// escape of a UTF-16 surrogate that is not part of a high-low pair.
// encoding/json would silently turn it into U+FFFD.
func loneSurrogate(lit []byte) bool {
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		r, ok := uEscape(lit[i:])
		if !ok {
			i++ // a two-byte escape, such as \\ or \"
			continue
		}
		i += len(`\uXXXX`) - 1
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := uEscape(lit[i+1:])
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += len(`\uXXXX`)
		}
	}
	return false
}

// uEscape returns the code point of the \uXXXX escape b opens with; ok is
// false when b does not open with one.
func uEscape(b []byte) (rune, bool) {
	e := b[:min(len(b), len(`\uXXXX`))]
	if !bytes.HasPrefix(e, []byte(`\u`)) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(e[2:]), 16, 32)
	return rune(n), err == nil && len(e) == len(`\uXXXX`)
}

func lookupField(fields []field, key string) (field, bool) {
	for _, f := range fields {
		if f.name == key {
			return f, true
		}
	}
	return field{}, false
}

// unknownField tells the model which fields the tool takes, shows the key
// (cut after 64 bytes) and, for a key that asks for a shell, that there is
// none.
func unknownField(tool string, fields []field, key string) *ResultError {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	takes := "takes no fields"
	if len(names) > 0 {
		takes = "takes only " + strings.Join(names, ", ")
	}
	shown := key
	if len(shown) > 64 {
		shown = strings.ToValidUTF8(shown[:64], "") + "…"
	}
	msg := fmt.Sprintf("%s: unknown field %q; %s %s (names are case-sensitive)", tool, shown, tool, takes)
	if shellKeys[key] {
		msg += "; there is no shell: use process.exec with argv, an array of strings"
	}
	return &ResultError{Code: errcode.ToolBadInput, Message: msg}
}

func bad(tool, name, format string, args ...any) *ResultError {
	return &ResultError{Code: errcode.ToolBadInput, Message: tool + ": " + name + " " + fmt.Sprintf(format, args...)}
}

func badArgs(tool, format string, args ...any) *ResultError {
	return &ResultError{Code: errcode.ToolBadInput, Message: tool + ": arguments " + fmt.Sprintf(format, args...)}
}

// rawKind names the JSON type of a raw value for messages.
func rawKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "a number"
	}
}

// schema renders the JSON Schema of an input object from its fields.
func schema(fields []field) json.RawMessage {
	props := map[string]any{}
	var required []string
	for _, f := range fields {
		p := map[string]any{"description": f.desc}
		switch f.kind {
		case kindString:
			p["type"] = "string"
			if f.min > 0 {
				p["minLength"] = f.min
			}
			p["maxLength"] = f.max
			if len(f.enum) > 0 {
				p["enum"] = f.enum
			}
		case kindInt:
			p["type"] = "integer"
			p["minimum"] = f.min
			p["maximum"] = f.max
			if f.def != nil {
				p["default"] = *f.def
			}
		case kindBool:
			p["type"] = "boolean"
		case kindStrings:
			p["type"] = "array"
			p["items"] = map[string]any{"type": "string", "maxLength": f.itemMax}
			p["minItems"] = f.min
			p["maxItems"] = f.max
		}
		props[f.name] = p
		if f.required {
			required = append(required, f.name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := model.MarshalCanonical(s)
	if err != nil {
		panic("tools: marshal schema: " + err.Error())
	}
	return b
}

func ptr(n int64) *int64 { return &n }
