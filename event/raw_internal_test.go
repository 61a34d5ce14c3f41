package event

import (
	"encoding/binary"
	"testing"
)

// hasSpecial agrees with the byte table for every byte value at every
// position, among neighbours that sit just beside the tested ranges.
func TestHasSpecial(t *testing.T) {
	for _, fill := range []byte{'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff} {
		for c := range 256 {
			for pos := range 8 {
				var w [8]byte
				for i := range w {
					w[i] = fill
				}
				w[pos] = byte(c)
				want := !stringPlain[fill] || !stringPlain[c]
				if got := hasSpecial(binary.LittleEndian.Uint64(w[:])); got != want {
					t.Fatalf("hasSpecial(% x) = %v, want %v", w, got, want)
				}
			}
		}
	}
}
