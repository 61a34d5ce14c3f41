package jsonword

import (
	"encoding/binary"
	"testing"
)

// Special and SpecialOrNonASCII agree with the byte table (and the high
// bit) for every byte value at every position of a word, among neighbours
// that sit just beside the tested ranges.
func TestWordTests(t *testing.T) {
	for _, fill := range []byte{'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff} {
		for c := range 256 {
			for pos := range 8 {
				var w [8]byte
				for i := range w {
					w[i] = fill
				}
				w[pos] = byte(c)
				x := binary.LittleEndian.Uint64(w[:])
				special := !Plain[fill] || !Plain[c]
				if got := Special(x); got != special {
					t.Fatalf("Special(% x) = %v, want %v", w, got, special)
				}
				if got, want := SpecialOrNonASCII(x), special || fill >= 0x80 || c >= 0x80; got != want {
					t.Fatalf("SpecialOrNonASCII(% x) = %v, want %v", w, got, want)
				}
			}
		}
	}
}
