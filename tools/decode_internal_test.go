package tools

import "testing"

// The integer rule of the strict decoder, on its own: an optional minus,
// then digits only, no leading zero (but "0" itself), no fraction, no
// exponent, nothing else. (Through Parse the JSON decoder has already
// refused most of these; this states the rule isIntSyntax keeps.)
func TestIntSyntax(t *testing.T) {
	for in, want := range map[string]bool{
		"0": true, "9": true, "10": true, "1999": true, "-1": true, "-90": true, "30000": true,
		"": false, "-": false, "01": false, "-01": false, "00": false, "1.5": false, "1e3": false,
		"100.0": false, "+1": false, "1a": false, " 1": false, "--1": false, ":": false, "/": false,
	} {
		if got := isIntSyntax([]byte(in)); got != want {
			t.Errorf("isIntSyntax(%q) = %v, want %v", in, got, want)
		}
	}
}

// The surrogate rule of the strict decoder: a \u escape of U+D800..U+DBFF
// must be followed at once by a \u escape of U+DC00..U+DFFF (a pair, one
// character), and one of U+DC00..U+DFFF must follow such a high half;
// anything else is a lone surrogate that encoding/json would silently turn
// into U+FFFD. Each end of both ranges, and the code points just outside
// them, are checked.
func TestLoneSurrogateRanges(t *testing.T) {
	for lit, want := range map[string]bool{
		`"\ud800"`: true, `"\udbff"`: true, `"\udc00"`: true, `"\udfff"`: true,
		`"a\ud800b"`: true, `"\ud800\ud800"`: true, `"\ud800\udbff"`: true, `"\udbff\ue000"`: true,
		`"\ud800\u0041"`: true, `"\ud800\n"`: true, `"\ud800\ud"`: true,
		`"\ud800\udc00"`: false, `"\ud800\udfff"`: false, `"\udbff\udc00"`: false, `"\udbff\udfff"`: false,
		`"\ud83d\ude00x"`: false, `"\ud7ff"`: false, `"\ue000"`: false, `"\u0041\\u"`: false,
		`"plain"`: false, `"\\ud800"`: false, `"\n\u00e9"`: false,
	} {
		if got := loneSurrogate([]byte(lit)); got != want {
			t.Errorf("loneSurrogate(%s) = %v, want %v", lit, got, want)
		}
	}
}
