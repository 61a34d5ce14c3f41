// Package gcpolicy is how often the harness binary collects garbage.
//
// A session's live heap is small (a few MiB of history and state) while a
// long turn allocates about 400 KiB per tool round (tool results, their
// events and checkpoints), so at Go's default (GOGC=100) the collector
// runs every few rounds and costs more CPU than the rest of the runtime's
// work (BenchmarkTurn60Reads20KB: about 1.1 ms per round against 0.8 ms
// at 200). Twice the default trades that for a larger peak heap: the TUI
// with a 10,000-block session peaks at 56 MiB RSS against 42 MiB.
//
// That larger peak is bounded by a soft memory limit that follows the
// live heap: max(Floor, 2× the heap live after the last collection). A
// long TUI turn (1,000 rounds of 20 KB reads, live heap about 14 MiB)
// otherwise let the heap reach three times its live size between
// collections, and its resident size climb to 87–98 MiB with a live heap
// that stayed flat; under the limit it stayed at 58–60 MiB (peak about
// 64; 49–50 MiB, peak 51, since the binary shed 18 MB of a dependency's
// code), for about six times as many (short) collections
// (BenchmarkTUILongTurnRSS in cmd/harness: about one a round, 6 % of the
// CPU, against 1 %). The limit counts the runtime's own memory too
// (about 11 MiB there), so the room left to allocate is the smallest,
// about 4 MiB, when the live heap is near Floor/2; because the limit is
// never below twice the live heap, a larger session's room grows with it
// and the collector does not run back to back (the runtime also holds
// it to half the CPU at worst).
package gcpolicy

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Percent is the binary's GOGC.
const Percent = 200

// Floor is the least soft memory limit (the Go runtime's whole memory:
// heap, stacks and its own metadata), in bytes.
const Floor = 28 << 20

// Apply sets Percent, unless the user set GOGC, which then stands, and
// the soft memory limit that follows the live heap, unless the user set
// GOMEMLIMIT.
func Apply() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(Percent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		Follow()
	}
}

// Follow sets the soft memory limit to Limit(0) and then, after every
// collection, to Limit of the heap live after it, until stop is called
// (or Follow is called again); the limit then stays where it was.
func Follow() (stop func()) {
	debug.SetMemoryLimit(Limit(0))
	n := chain.Add(1)
	follow(n)
	return func() { chain.CompareAndSwap(n, n+1) }
}

// Limit is the soft memory limit for a heap of live bytes live after a
// collection.
func Limit(live uint64) int64 {
	return max(Floor, 2*int64(min(live, 1<<61)))
}

// sentinel is an object whose cleanup runs after the collection that
// found it unreachable.
type sentinel struct{ _ [16]byte }

// chain numbers the follower: a sentinel of an older one (Apply called
// again) ends it.
var chain atomic.Uint64

// follow sets the limit from the live heap after the next collection and
// again after every later one: each cleanup arms the next sentinel, as
// long as n is the current chain.
func follow(n uint64) {
	runtime.AddCleanup(new(sentinel), func(n uint64) {
		if chain.Load() != n {
			return
		}
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(Limit(s[0].Value.Uint64()))
		}
		follow(n)
	}, n)
}
