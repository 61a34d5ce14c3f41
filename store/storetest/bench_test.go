package storetest_test

import (
	"bytes"
	"testing"

	"github.com/harness-dev/harness/store/storetest"
)

// BenchEvents builds the same events as BenchEvent, byte for byte.
func TestBenchEvents(t *testing.T) {
	var e storetest.BenchEvents
	for _, i := range []int{0, 7, 99_999_999, 100_000_000, 12_345_678_901, 3, 10_000_000, 9_999_999} {
		want, got := storetest.BenchEvent(i), e.Event(i)
		if got.ID != want.ID || got.Type != want.Type || !bytes.Equal(got.Body, want.Body) {
			t.Errorf("Event(%d) = %q %q %s, want %q %q %s", i, got.ID, got.Type, got.Body, want.ID, want.Type, want.Body)
		}
	}
}

func BenchmarkBenchEvents(b *testing.B) {
	var e storetest.BenchEvents
	for i := 0; b.Loop(); i++ {
		_ = e.Event(i)
	}
}
