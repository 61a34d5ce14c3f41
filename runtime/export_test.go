package runtime

import "time"

// SetDiffTimeout sets the end-of-turn diff's deadline for a test and
// returns the function that restores it.
func SetDiffTimeout(d time.Duration) func() {
	old := diffTimeout
	diffTimeout = d
	return func() { diffTimeout = old }
}
