package gcpolicy_test

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/harness-dev/harness/internal/gcpolicy"
)

// Apply sets the binary's GOGC unless the user set one.
func TestApply(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer func() { gcpolicy.Follow()() }() // ends Apply's follower
	t.Setenv("GOGC", "")                   // restored after the test
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	debug.SetGCPercent(100)
	gcpolicy.Apply()
	if got := debug.SetGCPercent(100); got != gcpolicy.Percent {
		t.Errorf("without GOGC: percent %d, want %d", got, gcpolicy.Percent)
	}
	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50) // what the runtime read from it at start
	gcpolicy.Apply()
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("with GOGC=50: percent %d, want 50", got)
	}
}

// Apply sets the soft memory limit unless the user set GOMEMLIMIT, and
// the limit then follows the live heap (Limit of it, never under Floor).
func TestApplyLimitFollowsLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer func() { gcpolicy.Follow()() }() // ends Apply's follower
	t.Setenv("GOMEMLIMIT", "")
	if err := os.Unsetenv("GOMEMLIMIT"); err != nil {
		t.Fatal(err)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	gcpolicy.Apply()
	if got := debug.SetMemoryLimit(-1); got < gcpolicy.Floor || got == math.MaxInt64 {
		t.Fatalf("limit after Apply: %d, want at least %d", got, gcpolicy.Floor)
	}
	// A live heap of 64 MiB: after collections the limit is at least
	// Limit of it (the test binary's own heap adds to it).
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = byte(i)
	}
	want := gcpolicy.Limit(uint64(len(held)))
	for i := 0; debug.SetMemoryLimit(-1) < want; i++ {
		if i == 10000 {
			t.Fatalf("limit %d after %d collections with 64 MiB live, want at least %d", debug.SetMemoryLimit(-1), i, want)
		}
		runtime.GC()
		runtime.Gosched()
	}
	runtime.KeepAlive(held) // unreachable from here on
	// Freed again: the limit comes back down to Floor.
	for i := 0; debug.SetMemoryLimit(-1) > gcpolicy.Floor; i++ {
		if i == 10000 {
			t.Fatalf("limit %d after the heap was freed, want %d", debug.SetMemoryLimit(-1), gcpolicy.Floor)
		}
		runtime.GC()
		runtime.Gosched()
	}
}

// With GOMEMLIMIT set, Apply leaves the limit the runtime read from it.
func TestApplyKeepsUserLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30) // what the runtime read from it at start
	gcpolicy.Apply()
	runtime.GC()
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("with GOMEMLIMIT=1GiB: limit %d", got)
	}
}

func TestLimit(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, gcpolicy.Floor},
		{12 << 20, gcpolicy.Floor},       // 36 MiB less 12
		{16 << 20, 36 << 20},             // 48 MiB less 12
		{1 << 30, 3<<30 - 12<<20},        // 3 GiB less 12 MiB
		{math.MaxUint64, 3<<50 - 12<<20}, // capped at 1 PiB live
		{1<<50 + 1, 3<<50 - 12<<20},      // the cap
		{gcpolicy.Floor, 72 << 20},       // 84 MiB less 12
	} {
		if got := gcpolicy.Limit(c.live); got != c.want {
			t.Errorf("Limit(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// The limit is never more than Allowance under Percent's heap goal, from
// a live heap of 1 MiB to 1 TiB: the heap's room to grow between
// collections is Percent's less a constant, not a fraction of it. (A
// limit of twice the live heap left it half of Percent's room less the
// runtime's own memory, and collected about eight times as often as
// Percent alone with 16 MiB live: BenchmarkTUILongTurnRSS.)
func TestLimitFollowsPercentsGoal(t *testing.T) {
	for live := uint64(1 << 20); live <= 1<<40; live += live / 8 {
		goal := int64(live + live*gcpolicy.Percent/100)
		if got := gcpolicy.Limit(live); got < goal-gcpolicy.Allowance {
			t.Fatalf("Limit(%d MiB) = %d MiB, more than %d MiB under GOGC=%d's heap goal of %d MiB", live>>20, got>>20, gcpolicy.Allowance>>20, gcpolicy.Percent, goal>>20)
		}
	}
}

// After stop, collections no longer move the limit.
func TestFollowStop(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	stop := gcpolicy.Follow()
	if got := debug.SetMemoryLimit(-1); got != gcpolicy.Floor {
		t.Fatalf("limit after Follow: %d, want %d", got, gcpolicy.Floor)
	}
	stop()
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = byte(i)
	}
	for range 5 {
		runtime.GC()
		runtime.Gosched()
	}
	runtime.KeepAlive(held)
	if got := debug.SetMemoryLimit(-1); got != gcpolicy.Floor {
		t.Errorf("limit after stop and collections with 64 MiB live: %d, want %d", got, gcpolicy.Floor)
	}
}

// The limit never sits under what the runtime holds and cannot give back
// plus one and a half times the live heap: after a large peak (a long
// session's resume leaves tens of MiB of unused span and metadata) a
// limit at Percent's goal less Allowance is out of reach, and the
// collector would run back to back. Where the runtime holds little, the
// limit is Limit's.
func TestLimitForLeavesRoomAboveWhatIsHeld(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live, held uint64
		want       int64
	}{
		{17 * mib, 11 * mib, gcpolicy.Limit(17 * mib)},   // 36.5 MiB of need under the goal's 39
		{17 * mib, 40 * mib, 40*mib + 17*mib + 17*mib/2}, // after a peak: 65.5 MiB
		{0, 0, gcpolicy.Floor},
		{100 * mib, 300 * mib, 300*mib + 150*mib},
	} {
		if got := gcpolicy.LimitFor(tc.live, tc.held); got != tc.want {
			t.Errorf("gcpolicy.LimitFor(%d MiB live, %d MiB held) = %.1f MiB, want %.1f", tc.live/mib, tc.held/mib, float64(got)/mib, float64(tc.want)/mib)
		}
	}
}
