//go:build !unix

package testenv

import "testing"

// Exclusive does nothing here: the tests that need it use Docker, which
// these tests reach on Unix only.
func Exclusive(t testing.TB, name string) {}
