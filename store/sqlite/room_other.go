//go:build !linux

package sqlite

// noRoom reports false where free space is not read: a disk I/O error
// stays SESS_CLOSED there.
func noRoom(string) bool { return false }

// fileStamp reports false where a file's change time is not read: the
// store file is then checked at every writing command's start.
func fileStamp(string) (stamp [5]int64, ok bool) { return stamp, false }
