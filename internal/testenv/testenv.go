// Package testenv decides, for tests that need a real service, whether to
// skip or fail when the service is absent.
//
// make test runs everything; a test whose service (the Docker daemon, a
// Postgres server) is missing skips with a loud reason, unless the matching
// HARNESS_REQUIRE_* variable is 1, as in CI, where it fails instead. The
// skip line starts with "HARNESS-SKIP" so the Makefile can list every skip
// at the end of a run.
package testenv

import (
	"os"
	"testing"
)

// Variables that turn a skip into a failure.
const (
	RequireDocker   = "HARNESS_REQUIRE_DOCKER"
	RequirePostgres = "HARNESS_REQUIRE_POSTGRES"
	// RequireTmpfs: tests that mount a small tmpfs (a full disk).
	RequireTmpfs = "HARNESS_REQUIRE_TMPFS"
)

// Unavailable skips t, or fails it when the variable named by require is 1.
// service names what is missing ("docker", "postgres"); reason says why.
func Unavailable(t testing.TB, require, service, reason string) {
	t.Helper()
	if os.Getenv(require) == "1" {
		t.Fatalf("%s is required (%s=1) but unavailable: %s", service, require, reason)
	}
	t.Skipf("HARNESS-SKIP %s unavailable: %s (set %s=1 to make this a failure)", service, reason, require)
}
