package event

import "reflect"

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
