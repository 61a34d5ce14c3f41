package workspace

import "strings"

// LeftOutPrefix starts each line of the note a workspace patch begins with
// when it could not carry every change: one line per file, its path (Go
// quoted when it holds anything but printable characters) and why in
// parentheses. git apply and patch parsers pass over such lines before the
// first file; a patch made of the note alone carries no file but says
// that files changed.
const LeftOutPrefix = "# harness: left out of this patch: "

// LeftOut returns the note's lines of patch without the prefix, each
// "path (why)": the changes the patch does not carry. Nil when it carries
// them all.
func LeftOut(patch string) []string {
	var out []string
	for line := range strings.Lines(patch) {
		if !strings.HasPrefix(line, LeftOutPrefix) {
			break
		}
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(line, LeftOutPrefix), "\n"))
	}
	return out
}

// Carried is patch without its left-out note: "" when it carries no file.
func Carried(patch string) string {
	for strings.HasPrefix(patch, LeftOutPrefix) {
		i := strings.IndexByte(patch, '\n')
		if i < 0 {
			return ""
		}
		patch = patch[i+1:]
	}
	return patch
}
