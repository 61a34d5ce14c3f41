//go:build linux

package testenv

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes on a new directory under t.TempDir
// and returns the directory; it is unmounted when t ends. Mounting needs
// root (CI runs the tests as root): without it t skips, or fails when
// HARNESS_REQUIRE_TMPFS is 1.
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.FormatInt(size, 10)+",mode=0700"); err != nil {
		Unavailable(t, RequireTmpfs, "tmpfs", "mount a tmpfs (needs root): "+err.Error())
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount the test tmpfs %s: %v", dir, err)
		}
	})
	return dir
}
