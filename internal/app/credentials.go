package app

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/workspace"
)

// maxCredentialHint bounds the paths CredentialHint names.
const maxCredentialHint = 10

// credentialWalkBound bounds the walk that names a refused open's
// credential-like files.
const credentialWalkBound = 5 * time.Second

// CredentialFiles lists the credential-like paths of the project at root
// that would go into the Docker workspace (workspace.IsCredential): not
// ignored by the project's git, not left out by excludes. These stop the
// copy with WORKSPACE_CREDENTIAL_INPUT; CredentialHint says how to go on.
func (a *App) CredentialFiles(ctx context.Context, root string) []string {
	excl, err := workspace.CompileExcludes(a.Opts.Exclude)
	if err != nil {
		return nil
	}
	ignored := workspace.GitIgnored(ctx, root, a.SecretEnv())
	var out []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root || ctx.Err() != nil || len(out) >= maxCredentialHint {
			if d != nil && d.IsDir() && p != root {
				return fs.SkipDir
			}
			return nil
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		isDir := d.IsDir()
		skip := func() error {
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case isDir && d.Name() == ".git":
			return fs.SkipDir
		case excl.Match(rel, isDir), workspace.IgnoredPath(ignored, rel, isDir):
			return skip()
		case workspace.IsCredential(d.Name()):
			out = append(out, rel)
			return skip()
		}
		return nil
	})
	return out
}

// CredentialHint is what a session start says of the credential-like
// files it found: their names and the flags that leave them out of the
// workspace ("" when there are none).
func CredentialHint(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	return "the project holds credential-like files, which are never copied into the sandbox: " +
		strings.Join(paths, ", ") + "; start again with " + ExcludeFlags(paths) +
		" to leave them out (or add them to .gitignore)"
}

// ExcludeFlags are the flags that leave paths out of the workspace, quoted
// for a shell: "--exclude .env --exclude 'a b/.npmrc'".
func ExcludeFlags(paths []string) string {
	flags := make([]string, len(paths))
	for i, p := range paths {
		flags[i] = "--exclude " + shellWord(p)
	}
	return strings.Join(flags, " ")
}

// shellWord quotes p for a shell when it needs it.
func shellWord(p string) string {
	if strings.IndexFunc(p, func(r rune) bool {
		return !(r == '.' || r == '/' || r == '-' || r == '_' || r == '+' || r == '@' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
