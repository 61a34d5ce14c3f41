//go:build !linux

package workspace

import "os"

// openedPath reports nothing where the platform does not say where an
// open file is; Local then checks the path as named (see Local).
func openedPath(*os.File) (string, bool) { return "", false }
