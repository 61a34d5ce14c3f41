package gcpolicy_test

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/harness-dev/harness/internal/gcpolicy"
)

// Apply sets the binary's GOGC unless the user set one.
func TestApply(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "") // restored after the test
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
