//go:build unix

package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Exclusive holds, until t ends, a lock named name shared by every test
// process of this user on the machine: go test runs packages at once, and
// some tests act on state of the whole machine (harness doctor --clean
// removes every idle spare container of the user), so the tests that make
// or count such state take the same lock.
func Exclusive(t testing.TB, name string) {
	t.Helper()
	path := filepath.Join(os.TempDir(), "harness-test-"+name+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("test lock %s: %v", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		t.Fatalf("test lock %s: %v", name, err)
	}
	t.Cleanup(func() { _ = f.Close() }) // closing releases the lock
}
