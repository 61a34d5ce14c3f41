// Package gcpolicy is how often the harness binary collects garbage.
//
// A session's live heap is small (a few MiB of history and state) while a
// long turn allocates about 400 KiB per tool round (tool results, their
// events and checkpoints), so at Go's default (GOGC=100) the collector
// runs every few rounds and costs more CPU than the rest of the runtime's
// work (BenchmarkTurn60Reads20KB: about 1.1 ms per round against 0.8 ms
// at 200). Twice the default trades that for a larger peak heap: the TUI
// with a 10,000-block session peaks at 56 MiB RSS against 42 MiB.
package gcpolicy

import (
	"os"
	"runtime/debug"
)

// Percent is the binary's GOGC.
const Percent = 200

// Apply sets Percent, unless the user set GOGC, which then stands.
func Apply() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(Percent)
	}
}
