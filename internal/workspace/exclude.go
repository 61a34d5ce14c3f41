package workspace

import (
	"context"
	"fmt"
	"os/exec"
	"path"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
)

// Excludes are compiled --exclude patterns: the paths both workspaces
// leave out (the Docker copy does not copy them, the local workspace
// neither reads nor lists them).
type Excludes []excludePattern

type excludePattern struct {
	segs    []string // glob per path segment; "**" spans any number of them
	dirOnly bool     // the pattern ended in "/"
	rooted  bool     // the pattern had a "/" before its end: matched from the root
}

// CompileExcludes parses gitignore-like patterns: a pattern with no slash
// (other than a trailing one) matches a file or directory of that name at
// any depth; one with a slash matches from the project root; a trailing
// slash matches directories only; "*", "?" and "[...]" work within a
// segment and "**" spans segments. Blank lines and "#" comments are
// ignored. A bad pattern fails with WORKSPACE_PATH.
func CompileExcludes(pats []string) (Excludes, error) {
	var out Excludes
	for _, raw := range pats {
		p := strings.TrimSpace(raw)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		var e excludePattern
		if strings.HasSuffix(p, "/") {
			e.dirOnly = true
			p = strings.TrimRight(p, "/")
		}
		if strings.Contains(p, "/") {
			e.rooted = true
			p = strings.TrimLeft(p, "/")
		}
		if p == "" {
			continue
		}
		e.segs = strings.Split(p, "/")
		for _, seg := range e.segs {
			if _, err := path.Match(seg, ""); err != nil {
				return nil, &errcode.Error{Code: errcode.WorkspacePath, Op: "exclude",
					Message: fmt.Sprintf("bad exclude pattern %q", raw), Err: err}
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Match reports whether the slash path p (a directory when isDir) is
// excluded by a pattern itself, not through a parent directory.
func (x Excludes) Match(p string, isDir bool) bool {
	segs := strings.Split(p, "/")
	for _, e := range x {
		if e.dirOnly && !isDir {
			continue
		}
		if e.rooted {
			if matchSegs(e.segs, segs) {
				return true
			}
			continue
		}
		if len(e.segs) == 1 {
			if ok, _ := path.Match(e.segs[0], segs[len(segs)-1]); ok {
				return true
			}
		}
	}
	return false
}

// Excluded reports whether the file p or one of its parent directories is
// excluded.
func (x Excludes) Excluded(p string) bool {
	if len(x) == 0 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && x.Match(p[:i], true) {
			return true
		}
	}
	return x.Match(p, false)
}

// matchSegs matches path segments against glob segments, "**" spanning
// zero or more segments.
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// GitIgnored lists what the project's git ignores under root (files, and
// directories with a trailing slash), relative to root, when root is
// inside a git work tree and git is installed; otherwise nothing. Build
// outputs and dependency trees stay out of both workspaces the way they
// stay out of commits. git runs with HostEnv(secretEnv).
func GitIgnored(ctx context.Context, root string, secretEnv []string) map[string]bool {
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	cmd.Env = HostEnv(secretEnv, "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return nil // not a work tree
	}
	set := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			set[p] = true
		}
	}
	return set
}

// IgnoredPath reports whether the slash path p, or one of its parent
// directories, is in ignored (as GitIgnored lists it: directories with a
// trailing slash).
func IgnoredPath(ignored map[string]bool, p string, isDir bool) bool {
	if len(ignored) == 0 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && ignored[p[:i+1]] {
			return true
		}
	}
	if isDir {
		return ignored[p+"/"]
	}
	return ignored[p]
}
