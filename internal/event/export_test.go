package event

import (
	"reflect"

	"github.com/harness-dev/harness/internal/model"
)

// IsCompactJSON exposes the check that lets a large raw field be spliced
// into an encoded event.
var IsCompactJSON = isCompactJSON

// EncodeWhole encodes e as Encode does but never splices a raw field in:
// all of it goes through encoding/json.
func EncodeWhole(e Event) ([]byte, error) {
	e, perr := prepare(e)
	if perr != nil {
		return nil, perr
	}
	b, err := model.MarshalCanonical(wire(e))
	b, cerr := checkWritten(e, b, err)
	if cerr != nil {
		return nil, cerr
	}
	return b, nil
}

// DecodeStrict exposes the slow, step-by-step path of Decode, so tests can
// check that it agrees with the fast path.
func DecodeStrict(b []byte) (Event, error) {
	e, err := decodeStrict(b)
	if err != nil {
		return Event{}, err
	}
	return e, nil
}

// Registered returns the EventType of the zero data value registered for
// t, and how many types are registered.
func Registered(t Type) (Type, int) {
	info, ok := registry[t]
	if !ok {
		return "", len(registry)
	}
	return reflect.Zero(info.goType).Interface().(Data).EventType(), len(registry)
}

// DecodeFast exposes the fast path of Decode alone: ok is false when the
// frame must go to the strict path.
func DecodeFast(b []byte) (Event, bool) { return decodeFast(b) }

// EncodeSpliced encodes e only by splicing its large field in: ok is false
// when Encode would write it whole instead.
func EncodeSpliced(e Event) ([]byte, bool) {
	e, perr := prepare(e)
	if perr != nil {
		return nil, false
	}
	b, cerr, ok := marshalSpliced(e, wire(e))
	if cerr != nil {
		return nil, false
	}
	return b, ok
}

// SpliceMin is the size from which a field is spliced.
const SpliceMin = spliceMin

// IsCode and IsSHA256 expose the syntax rules of error codes and digests.
var (
	IsCode   = isCode
	IsSHA256 = isSHA256
)

// Join, FirstDiff and Truncate expose what error messages are made of.
var (
	Join      = join
	FirstDiff = firstDiff
	Truncate  = truncate
)
