//go:build !linux

package sqlite

// noRoom reports false where free space is not read: a disk I/O error
// stays SESS_CLOSED there.
func noRoom(string) bool { return false }
