package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
)

// ApplyPlan is a session's patch checked against the host tree.
type ApplyPlan struct {
	Root     string // the host directory the patch applies to
	Patch    string
	Stat     string // git apply --stat, when the check passed
	Conflict string // why the check failed; "" when it passed
}

// CheckApply checks patch against the host tree at root with `git apply
// --check` and, when it applies cleanly, describes it with --stat.
func CheckApply(ctx context.Context, root, patch string) ApplyPlan {
	plan := ApplyPlan{Root: root, Patch: patch}
	if strings.TrimSpace(patch) == "" {
		return plan
	}
	if out, err := gitApply(ctx, root, patch, "--check"); err != nil {
		plan.Conflict = out
		if plan.Conflict == "" {
			plan.Conflict = err.Error()
		}
		return plan
	}
	plan.Stat, _ = gitApply(ctx, root, patch, "--stat")
	return plan
}

// Apply checks the plan's patch again (the host may have changed since)
// and applies it. Codes: WORKSPACE_SCOPE when the host tree refuses it.
func Apply(ctx context.Context, plan ApplyPlan) error {
	if out, err := gitApply(ctx, plan.Root, plan.Patch, "--check"); err != nil {
		return errcode.Errorf(errcode.WorkspaceScope, "the host tree at %s changed under this patch; nothing was applied: %s", plan.Root, strings.TrimSpace(out))
	}
	if out, err := gitApply(ctx, plan.Root, plan.Patch); err != nil {
		return errcode.Errorf(errcode.WorkspaceScope, "git apply failed in %s: %s", plan.Root, strings.TrimSpace(out))
	}
	return nil
}

// gitApply runs `git apply` in the project directory dir. The patch's paths
// are relative to dir, which may be a subdirectory of a repository: git is
// kept from finding a repository above dir, where it would read the paths as
// relative to that repository's top and skip them without an error.
func gitApply(ctx context.Context, dir, patch string, flags ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"apply"}, flags...)...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(patch)
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(filepath.Clean(dir)))
	out, err := cmd.CombinedOutput()
	return string(out), err
}
