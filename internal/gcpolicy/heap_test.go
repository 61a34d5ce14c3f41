package gcpolicy

import "testing"

// readHeap reads the runtime's metrics: some memory is always held that
// no collection gives back (this goroutine's stack, the runtime's own).
func TestReadHeap(t *testing.T) {
	live, held, ok := readHeap()
	if !ok || held == 0 {
		t.Fatalf("readHeap = %d live, %d held, %v: the runtime's metrics did not read", live, held, ok)
	}
}
