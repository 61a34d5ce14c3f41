package workspace

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
)

// MaxPathBytes is the longest path, in bytes, a tool may name.
const MaxPathBytes = 4096

// CheckPath reports whether p follows the path rules every workspace shares
// (DESIGN §5) and returns a WORKSPACE_PATH error naming the first rule it
// breaks. A valid path is 1..MaxPathBytes bytes of UTF-8, relative and
// slash-separated, with no empty, "." or ".." segment, no backslash, no
// control character (C0, DEL or C1) and no ".git" segment. The ".git" test
// ignores case, because the project may live on a case-insensitive file
// system where ".GIT" opens the same directory.
//
// The whole path "." names the workspace root. CheckPath accepts it so that
// List and an Exec working directory can name the root; callers that need a
// file (reading or writing) must refuse "." themselves.
//
// CheckPath is pure: it never touches a file system. That a valid path stays
// inside the root once symlinks are followed is the backend's job (os.Root
// for the local workspace).
func CheckPath(p string) error {
	switch {
	case p == "":
		return pathError(p, "is empty")
	case len(p) > MaxPathBytes:
		return pathError(p, "is longer than 4096 bytes")
	case p == ".":
		return nil
	case !utf8.ValidString(p):
		return pathError(p, "is not valid UTF-8")
	case p[0] == '/':
		return pathError(p, "is absolute; use a path relative to the workspace root")
	}
	for _, r := range p {
		switch {
		case r == '\\':
			return pathError(p, "contains a backslash; separate segments with /")
		case unicode.IsControl(r):
			return pathError(p, "contains a control character")
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return pathError(p, "has an empty segment (a trailing or doubled /)")
		case seg == ".":
			return pathError(p, `has a "." segment`)
		case seg == "..":
			return pathError(p, `has a ".." segment`)
		case strings.EqualFold(seg, ".git"):
			return pathError(p, "names the .git directory, which tools never touch")
		}
	}
	return nil
}

// pathError returns a WORKSPACE_PATH error whose message quotes the path
// (at most its first 200 bytes, so a hostile path cannot flood a log line).
func pathError(p, msg string) error {
	const show = 200
	q := p
	if len(q) > show {
		q = strings.ToValidUTF8(q[:show], "") + "…"
	}
	return errcode.New(errcode.WorkspacePath, "path "+strconv.Quote(q)+" "+msg)
}
