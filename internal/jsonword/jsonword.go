// Package jsonword holds the word-at-a-time tests that Harness's JSON
// string scanners share — event's check of a compact encoding and model's
// escaping of a string: they go eight bytes at a time (a little-endian
// word) through text that needs nothing, and find a hit byte by byte.
package jsonword

const ones, highs = 0x0101010101010101, 0x8080808080808080

// Special reports whether any of the eight bytes of x is a quote, a
// backslash or a control character: exact zero-byte and less-than tests on
// the word.
func Special(x uint64) bool {
	control := (x - ones*0x20) & ^x & highs
	return control|zero(x^(ones*'"'))|zero(x^(ones*'\\')) != 0
}

// SpecialOrNonASCII reports whether any of the eight bytes of x is
// special or not ASCII: what a string escaped for ASCII-only fast paths
// must look at. One expression, as Special's.
func SpecialOrNonASCII(x uint64) bool {
	control := (x - ones*0x20) & ^x & highs
	return (control|zero(x^(ones*'"'))|zero(x^(ones*'\\'))|x)&highs != 0
}

func zero(v uint64) uint64 { return (v - ones) & ^v & highs }

// Plain marks the bytes a JSON string holds as they are: all but the
// quote, the backslash and the control characters (bytes of UTF-8
// sequences included).
var Plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
