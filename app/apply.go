package app

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/workspace"
)

// ApplyPlan is a session's patch checked against the host tree.
type ApplyPlan struct {
	Root string // the host directory the patch applies to
	// SecretEnv names the variables, beyond those workspace.HostEnv drops,
	// that host git must not see (the configured key variable:
	// App.SecretEnv).
	SecretEnv []string
	Patch     string
	Stat      string  // git apply --stat, when the check passed
	Refused   Refusal // why the check failed; "" when it passed
	Conflict  string  // what to tell the user when it failed, with git's words
}

// Refusal says why the host tree refused a patch.
type Refusal string

// Refusals.
const (
	RefusedChanged Refusal = "changed" // the host files differ from what the patch expects
	RefusedApplied Refusal = "applied" // the host tree already has these changes
	RefusedSymlink Refusal = "symlink" // the patch would write through a symbolic link
	RefusedMissing Refusal = "missing" // the project directory is gone
	RefusedOutside Refusal = "outside" // the patch names a path outside the project ("../x", "/x")
	RefusedExists  Refusal = "exists"  // the patch creates a file the host has and the copy left out
)

// CheckApply checks patch against the host tree at root with `git apply
// --check` and, when it applies cleanly, describes it with --stat. A
// refused patch says whether it was already applied, goes through a
// symbolic link, or meets changed files. Host git runs without the
// environment's secrets and without the variables secretEnv names.
func CheckApply(ctx context.Context, root, patch string, secretEnv []string) ApplyPlan {
	plan := ApplyPlan{Root: root, Patch: patch, SecretEnv: secretEnv}
	if strings.TrimSpace(patch) == "" {
		return plan
	}
	if link := symlinkOnPath(root, patch); link != "" {
		plan.Refused, plan.Conflict = RefusedSymlink, symlinkRefusal(root, link)
		return plan
	}
	if out, err := gitApply(ctx, root, secretEnv, patch, "--check"); err != nil {
		plan.Refused, plan.Conflict = refusal(ctx, root, secretEnv, patch, out, err)
		return plan
	}
	plan.Stat, _ = gitApply(ctx, root, secretEnv, patch, "--stat")
	return plan
}

// symlinkOnPath returns the first path the patch names (old or new) that
// is, or goes through, a symbolic link under root — every component
// checked with lstat, the file itself included — relative to root; ""
// when there is none. git apply refuses a link on the way to a file
// ("beyond a symbolic link"), not a patched file that is itself a link.
func symlinkOnPath(root, patch string) string {
	files, _, err := gitdiff.Parse(strings.NewReader(patch))
	if err != nil {
		return "" // git apply says what is wrong with it
	}
	for _, f := range files {
		for _, name := range []string{f.OldName, f.NewName} {
			if name == "" {
				continue
			}
			p := root
			for _, seg := range strings.Split(filepath.ToSlash(name), "/") {
				p = filepath.Join(p, seg)
				fi, err := os.Lstat(p)
				if err != nil {
					break // not there (yet): nothing further down is a link
				}
				if fi.Mode()&fs.ModeSymlink != 0 {
					rel, _ := filepath.Rel(root, p)
					return filepath.ToSlash(rel)
				}
			}
		}
	}
	return ""
}

func symlinkRefusal(root, link string) string {
	return fmt.Sprintf("the patch writes through a symbolic link in %s (%s is a symbolic link), which harness never follows on the host; nothing was applied", root, link)
}

func refusal(ctx context.Context, root string, secretEnv []string, patch, out string, err error) (Refusal, string) {
	why := strings.TrimSpace(out)
	if why == "" {
		why = err.Error()
	}
	if st, serr := os.Stat(root); serr != nil || !st.IsDir() {
		return RefusedMissing, fmt.Sprintf("the project directory %s no longer exists (moved or deleted?); nothing was applied; restore it, or run harness diff and apply the patch by hand", root)
	}
	files, _, _ := gitdiff.Parse(strings.NewReader(patch))
	for _, f := range files {
		for _, name := range []string{f.OldName, f.NewName} {
			if name != "" && (workspace.CheckPath(name) != nil || name == ".") {
				return RefusedOutside, fmt.Sprintf("the patch names %q, a path outside the project at %s; nothing was applied", name, root)
			}
		}
	}
	for _, f := range files {
		if f.IsNew && f.NewName != "" {
			if _, serr := os.Lstat(filepath.Join(root, filepath.FromSlash(f.NewName))); serr == nil {
				return RefusedExists, fmt.Sprintf("the patch creates %s, which exists in %s but was not in the workspace (the copy left it out: a credential-like name, an --exclude pattern, or a file over --max-file-bytes); nothing was applied; move the host file aside and apply again", f.NewName, root)
			}
		}
	}
	switch {
	case strings.Contains(out, "beyond a symbolic link"):
		return RefusedSymlink, fmt.Sprintf("the patch writes through a symbolic link in %s, which harness never follows on the host; nothing was applied: %s", root, why)
	default:
		if _, rerr := gitApply(ctx, root, secretEnv, patch, "--check", "--reverse"); rerr == nil {
			return RefusedApplied, fmt.Sprintf("already applied: the host tree at %s already has these changes; nothing was applied", root)
		}
		return RefusedChanged, fmt.Sprintf("the host tree at %s changed under this patch; nothing was applied: %s", root, why)
	}
}

// Apply checks the plan's patch again (the host may have changed since)
// and applies it. Codes: WORKSPACE_SCOPE when the host tree refuses it,
// with the reason CheckApply would give.
func Apply(ctx context.Context, plan ApplyPlan) error {
	if link := symlinkOnPath(plan.Root, plan.Patch); link != "" {
		return errcode.New(errcode.WorkspaceScope, symlinkRefusal(plan.Root, link))
	}
	if out, err := gitApply(ctx, plan.Root, plan.SecretEnv, plan.Patch, "--check"); err != nil {
		_, msg := refusal(ctx, plan.Root, plan.SecretEnv, plan.Patch, out, err)
		return errcode.New(errcode.WorkspaceScope, msg)
	}
	if out, err := gitApply(ctx, plan.Root, plan.SecretEnv, plan.Patch); err != nil {
		return errcode.Errorf(errcode.WorkspaceScope, "git apply failed in %s: %s", plan.Root, strings.TrimSpace(out))
	}
	return nil
}

// gitApply runs `git apply` in the project directory dir. The patch's paths
// are relative to dir, which may be a subdirectory of a repository: git is
// kept from finding a repository above dir, where it would read the paths as
// relative to that repository's top and skip them without an error.
func gitApply(ctx context.Context, dir string, secretEnv []string, patch string, flags ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"apply"}, flags...)...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(patch)
	cmd.Env = workspace.HostEnv(secretEnv, "GIT_CEILING_DIRECTORIES="+filepath.Dir(filepath.Clean(dir)))
	out, err := cmd.CombinedOutput()
	return string(out), err
}
