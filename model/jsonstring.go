package model

import (
	"encoding/binary"
	"unicode/utf8"
)

// AppendCanonicalString appends s as MarshalCanonical encodes a string
// (of s's bytes, for a byte slice):
// the bytes encoding/json writes with HTML escaping off (\b \f \n \r \t
// and \" \\ escaped, other control characters as \u00XX, U+2028 and
// U+2029 as \u2028 and \u2029, invalid UTF-8 as \ufffd). It runs eight
// bytes at a time through text that needs no escaping, about twice as
// fast as encoding/json on source code, for the tool results of tens of
// KiB that a turn records.
func AppendCanonicalString[T string | []byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start, i := 0, 0
	for i < len(s) {
		for i+8 <= len(s) && !needsEscape(binary.LittleEndian.Uint64([]byte(s[i:i+8]))) {
			i += 8
		}
		for i < len(s) && plainASCII[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainASCII marks the ASCII bytes a string holds as they are.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// needsEscape reports whether any of the eight bytes in x is a quote, a
// backslash, a control character or not ASCII (exact word tests; the byte
// is then found one by one).
func needsEscape(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return ((x-ones*0x20)&^x|zero(x^(ones*'"'))|zero(x^(ones*'\\'))|x)&highs != 0
}
