package main

import (
	"context"
	"fmt"
)

// runTUI starts the terminal UI. The TUI is not part of this build yet
// (it is tracked as its own issue); until it lands this says so and points
// at the headless command, which has every capability.
func runTUI(ctx context.Context, a *app, resume bool, id string) int {
	fmt.Fprintln(a.stderr, "harness: the terminal UI is not built yet.")
	fmt.Fprintln(a.stderr, "Use the headless command meanwhile: harness exec \"your request\" (stdin lines steer it; see harness help).")
	if a.demo {
		fmt.Fprintln(a.stderr, "No provider is configured: set OPENAI_API_KEY (and --model, --base-url for a local server) to use a real model; without one, harness exec runs the built-in demo model.")
	}
	return exitUsage
}
