//go:build !unix

package workspace

import "io/fs"

// linkCount reports no count where the platform offers none; Local then
// reads files without the hard-link check (see Local).
func linkCount(fs.FileInfo) (uint64, bool) { return 0, false }
