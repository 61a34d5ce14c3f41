//go:build linux

package sqlite

import "syscall"

// lowRoom is the free space under which a disk I/O error on the store
// file is taken for a full disk: no room for the WAL index (32 KiB) and a
// few pages.
const lowRoom = 1 << 20

// noRoom reports whether the file system holding dir has (almost) no free
// space left for this process.
func noRoom(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Bavail*uint64(st.Bsize) < lowRoom
}
