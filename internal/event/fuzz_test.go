package event_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

var eventCodes = []errcode.Code{
	errcode.EventNotObject, errcode.EventUnknownKey, errcode.EventMissingField, errcode.EventVersion,
	errcode.EventUnknownType, errcode.EventInvalidField, errcode.EventNonCanonical,
}

// FuzzDecode checks that Decode never panics, fails only with an EVENT_*
// code, and accepts only frames it re-encodes byte for byte; and that the
// fast path never accepts what the strict path rejects.
func FuzzDecode(f *testing.F) {
	for _, line := range readGolden(f) {
		s := string(line)
		f.Add(line)
		for _, variant := range []string{
			s[:len(s)/2],
			" " + s,
			s + "\n",
			strings.Replace(s, `"v":1`, `"v":2`, 1),
			strings.Replace(s, `"v":1`, `"v":1.0`, 1),
			strings.Replace(s, `"data":{`, `"data":{"x":1,`, 1),
			strings.Replace(s, `"data":{`, `"data":{"runId":"r",`, 1),
			strings.Replace(s, `,"`, `, "`, 1),
			strings.Replace(s, `"runId"`, `"RunId"`, 1),
			strings.Replace(s, `"at":"2026-11-29T20:41:23.123Z"`, `"at":"2026-11-29T20:41:23Z"`, 1),
			strings.Replace(s, `:0`, `:-0`, 1),
			strings.Replace(s, `:1`, `:-1`, 1),
			strings.Replace(s, `"kernel"`, `"\u006bernel"`, 1),
			strings.Replace(s, `}}`, `,"y":null}}`, 1),
		} {
			if variant != s {
				f.Add([]byte(variant))
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := event.Decode(b)
		if err != nil {
			if code := errcode.Of(err); !slices.Contains(eventCodes, code) {
				t.Fatalf("Decode failed with %q (%v), not an EVENT_* code", code, err)
			}
			return
		}
		out, err := event.Encode(ev)
		if err != nil {
			t.Fatalf("Encode(Decode(%q)): %v", b, err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("Decode accepted a frame it does not re-encode identically:\n in %q\nout %q", b, out)
		}
		strict, err := event.DecodeStrict(b)
		if err != nil {
			t.Fatalf("the fast path accepted %q, the strict path rejects it: %v", b, err)
		}
		if diff := cmp.Diff(ev, strict); diff != "" {
			t.Fatalf("fast and strict paths disagree on %q (-fast +strict):\n%s", b, diff)
		}
	})
}
