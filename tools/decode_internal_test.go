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
