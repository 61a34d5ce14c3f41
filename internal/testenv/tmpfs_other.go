//go:build !linux

package testenv

import "testing"

// Tmpfs needs Linux: elsewhere t skips, or fails when
// HARNESS_REQUIRE_TMPFS is 1.
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	Unavailable(t, RequireTmpfs, "tmpfs", "mounting a tmpfs needs Linux")
	return ""
}
