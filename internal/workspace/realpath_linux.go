//go:build linux

package workspace

import (
	"os"
	"strconv"
)

// openedPath is the absolute path the kernel has for the open file f:
// where a path through symlinks really led.
func openedPath(f *os.File) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	return p, err == nil
}
