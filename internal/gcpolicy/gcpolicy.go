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
// live heap: Percent's heap goal for the heap live after the last
// collection (three times it) less Allowance, never under Floor, and
// never under what the runtime holds that no collection can give back
// plus one and a half times the live heap (LimitFor), so that a limit
// out of reach after a large peak never makes the collector run back to
// back. The
// limit counts the runtime's own memory (about 11 MiB) besides the heap,
// so under it a collection starts that much and Allowance before
// Percent's goal would start it, and the runtime returns freed memory to
// the system rather than keep it; the room left to allocate between
// collections is the smallest, about 4 MiB, with a live heap near 13 MiB
// (where the limit leaves Floor), and grows by twice as much as the live
// heap from there, so a large session keeps Percent's pace and the
// collector never runs back to back. A long TUI turn (1,000 rounds of
// 20 KB reads, live heap 15–17 MiB: BenchmarkTUILongTurnRSS in
// cmd/harness) peaks at 60–61 MiB resident under it against 83–84 MiB
// with no limit, for four times as many collections (0.28–0.29 a round
// against 0.07; 0.9–1.1 ms of the collector's CPU a round against 0.25).
// The limit of twice the live heap this package set before held that
// turn at 55–56 MiB but collected twice as often again (0.60 a round,
// 1.7–2.4 ms of CPU; 14.6–17.3 ms a round in all against 13.8–14.0), and
// at any size left at most half of Percent's room. Resident size follows
// the live heap: the turn's second half adds 1–2 MiB live (its own cards
// on the screen) and about 8 % resident (6–11 % over ten runs; 5–7 %
// under twice the live heap, 5–9 % with no limit).
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

// Allowance is what Limit leaves under Percent's heap goal, in bytes.
const Allowance = 12 << 20

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
// collection: the heap goal of Percent for it, less Allowance, never
// under Floor.
func Limit(live uint64) int64 {
	l := int64(min(live, 1<<50))
	return max(Floor, l+l*Percent/100-Allowance)
}

// LimitFor is Limit for a heap of live bytes when the runtime holds held
// bytes that neither a collection nor returning memory to the system can
// give back (stacks, its metadata, the unused parts of spans still in
// use: after a large peak, such as a long session's resume, tens of
// MiB). It is never under held plus one and a half times the live heap,
// so that a collection always leaves room to allocate half the live heap
// before the next: under a limit the runtime cannot reach, it would
// collect back to back (observed: 4.5 collections and 20 ms of the
// collector's CPU a round of the long turn, resumed, against 0.07).
func LimitFor(live, held uint64) int64 {
	l, h := int64(min(live, 1<<50)), int64(min(held, 1<<50))
	return max(Limit(live), h+l+l/2)
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
		if live, held, ok := readHeap(); ok {
			debug.SetMemoryLimit(LimitFor(live, held))
		}
		follow(n)
	}, n)
}

// heapSamples are what readHeap reads: the live heap, and the memory the
// limit counts (all the runtime holds less what it returned to the
// system) split into what a collection and the scavenger can give back
// (objects, free spans) and the rest.
var heapSamples = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
}

// readHeap returns the heap live after the last collection and the
// memory the runtime holds that neither a collection nor returning free
// memory can give back.
func readHeap() (live, held uint64, ok bool) {
	s := make([]metrics.Sample, len(heapSamples))
	for i, name := range heapSamples {
		s[i].Name = name
	}
	metrics.Read(s)
	var v [5]uint64
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0, 0, false
		}
		v[i] = s[i].Value.Uint64()
	}
	counted := v[1] - min(v[2], v[1])
	free := v[3] + v[4]
	return v[0], counted - min(free, counted), true
}
