package runtime

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

// The cycle guard fires on a block of calls repeated cycleRounds times,
// and on staleCalls calls in a row that are none of them new; a call
// whose result changed is new, and one call again and again is left to
// the repeats guard.
func TestCycles(t *testing.T) {
	key := func(s string) callKey { return sha256.Sum256([]byte(s)) }
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name  string
		calls []string
		trips int // the call (1-based) that ends the turn; 0: none
	}{
		{"period three", []string{"a", "b", "c", "a", "b", "c", "a", "b", "c", "a"}, 9},
		{"period eight", seq(40, func(i int) string { return fmt.Sprint(i % 8) }), 24},
		{"an irregular cycle", seq(80, func(int) string { return fmt.Sprint(rng.IntN(5)) }), 0 /* set below */},
		{"the results change", seq(60, func(i int) string { return fmt.Sprint("read a:", i/2, " list b") }), 0},
		{"one call over and over", seq(20, func(int) string { return "a" }), staleCalls + 1},
		{"distinct calls", seq(200, func(i int) string { return fmt.Sprint(i) }), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cy cycles
			got := 0
			for i, s := range c.calls {
				if err := cy.see("fs.list", key(s)); err != nil {
					if errcode.Of(err) != errcode.RuntimeLoopDetected {
						t.Fatalf("call %d: %v", i+1, err)
					}
					got = i + 1
					break
				}
			}
			want := c.trips
			if c.name == "an irregular cycle" {
				want = -1 // trips, by the stale count or a period, before the end
			}
			switch {
			case want == -1 && got == 0:
				t.Errorf("%d calls among five, none new after the first five: not caught", len(c.calls))
			case want >= 0 && want <= len(c.calls) && got != want:
				t.Errorf("tripped at call %d, want %d", got, want)
			case want > len(c.calls) && got != 0:
				t.Errorf("tripped at call %d; one call repeated is the repeats guard's", got)
			}
		})
	}
}

func seq(n int, f func(int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}
