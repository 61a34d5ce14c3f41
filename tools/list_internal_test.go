package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// fitList keeps entries while the listing, counted as if truncated and with
// a comma for every entry, stays within MaxOutputBytes: a listing that
// comes to exactly that is kept whole, one byte more drops its last entry.
func TestFitListBoundIsInclusive(t *testing.T) {
	const n = 100
	all := make([]string, n)
	for i := range all {
		all[i] = strings.Repeat("e", 1000)
	}
	base, err := json.Marshal(listOutput{Path: ".", Entries: []string{}, Total: n, Truncated: true})
	if err != nil {
		t.Fatal(err)
	}
	size := len(base) + n*(len(`"`+all[0]+`"`)+1)
	all[n-1] += strings.Repeat("e", MaxOutputBytes-size) // now exactly MaxOutputBytes counted
	got := fitList(".", all, MaxOutputBytes)
	if len(got.Entries) != n || got.Truncated {
		t.Fatalf("a listing of exactly MaxOutputBytes kept %d of %d entries, truncated %v", len(got.Entries), n, got.Truncated)
	}
	if b, _ := json.Marshal(got); len(b) > MaxOutputBytes {
		t.Fatalf("the listing is %d bytes", len(b))
	}
	all[n-1] += "e"
	if got := fitList(".", all, MaxOutputBytes); len(got.Entries) != n-1 || !got.Truncated || got.Total != n {
		t.Fatalf("one byte over: %d entries of %d, truncated %v", len(got.Entries), got.Total, got.Truncated)
	}
}
