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

// fileStamp is what identifies the state of a file without reading it:
// its device and inode, size, and modification and change times (ns).
// ok is false when it cannot be read.
func fileStamp(path string) (stamp [5]int64, ok bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return stamp, false
	}
	return [5]int64{int64(st.Dev), int64(st.Ino), st.Size, st.Mtim.Nano(), st.Ctim.Nano()}, true
}
