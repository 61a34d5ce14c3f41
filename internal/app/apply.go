package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// ApplyPlan is a session's patch checked against the host tree.
type ApplyPlan struct {
	Root    string // the host directory the patch applies to
	Session string // the session whose patch it is ("" for none): what to do names it
	// SecretEnv names the variables, beyond those workspace.HostEnv drops,
	// that host git must not see (the configured key variable:
	// App.SecretEnv).
	SecretEnv []string
	Patch     string
	// Reverse: the plan reverts Patch on the host (git apply --reverse).
	Reverse  bool
	Stat     string  // git apply --stat, when the check passed
	Refused  Refusal // why the check failed; "" when it passed
	Conflict string  // what to tell the user when it failed, with git's words
	// MassDelete lists the files the patch deletes when they are most of
	// the project (MassDeletion): never applied without the user saying
	// the deletion is meant.
	MassDelete []string
	// ProjectFiles is the number of files in Root (without .git) when
	// MassDelete is set.
	ProjectFiles int
	// LeftOut names the files that changed in the workspace but that the
	// patch could not carry, each "path (why)" (workspace.LeftOut).
	LeftOut []string
}

// LeftOutLine says what the patch left out, naming up to ten files; ""
// when it carries every change.
func LeftOutLine(left []string) string {
	if len(left) == 0 {
		return ""
	}
	shown, more := left, ""
	if len(shown) > 10 {
		shown, more = shown[:10], fmt.Sprintf("; and %d more", len(left)-10)
	}
	files := "files"
	if len(left) == 1 {
		files = "file"
	}
	return fmt.Sprintf("%d changed %s left out of the patch, not applied: %s%s", len(left), files, strings.Join(shown, "; "), more)
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
	return checkPlan(ctx, ApplyPlan{Root: root, Patch: patch, SecretEnv: secretEnv, LeftOut: workspace.LeftOut(patch)})
}

// CheckRevert is CheckApply for reverting patch on the host tree at root
// (git apply --reverse): RefusedApplied then says it is already reverted.
func CheckRevert(ctx context.Context, root, patch string, secretEnv []string) ApplyPlan {
	return checkPlan(ctx, ApplyPlan{Root: root, Patch: patch, SecretEnv: secretEnv, Reverse: true, LeftOut: workspace.LeftOut(patch)})
}

// checkSession is CheckApply (CheckRevert with reverse) of session id's
// patch: a refusal's advice names the session.
func (a *App) checkSession(ctx context.Context, id, root, patch string, reverse bool) ApplyPlan {
	return checkPlan(ctx, ApplyPlan{Root: root, Session: id, Patch: patch, SecretEnv: a.SecretEnv(), Reverse: reverse, LeftOut: workspace.LeftOut(patch)})
}

// args returns git apply's flags for the plan's direction.
func (plan ApplyPlan) args(flags ...string) []string {
	if plan.Reverse {
		return append([]string{"--reverse"}, flags...)
	}
	return flags
}

func checkPlan(ctx context.Context, plan ApplyPlan) ApplyPlan {
	root, patch, secretEnv := plan.Root, plan.Patch, plan.SecretEnv
	if strings.TrimSpace(workspace.Carried(patch)) == "" {
		// Nothing to apply; LeftOut says what changed that the patch
		// could not carry.
		plan.Patch = ""
		return plan
	}
	if link := symlinkOnPath(root, patch); link != "" {
		plan.Refused, plan.Conflict = RefusedSymlink, symlinkRefusal(root, link)
		return plan
	}
	if out, err := gitApply(ctx, root, secretEnv, patch, plan.args("--check")...); err != nil {
		plan.Refused, plan.Conflict = refusal(ctx, plan, out, err)
		return plan
	}
	plan.Stat, _ = gitApply(ctx, root, secretEnv, patch, plan.args("--stat")...)
	if !plan.Reverse {
		plan.MassDelete, plan.ProjectFiles = MassDeletion(root, patch)
	}
	return plan
}

// massDeleteMin is the fewest deleted files that count as deleting most
// of a project.
const massDeleteMin = 3

// MassDeletion returns the files patch deletes, and the number of files in
// the project at root (.git left out), when the patch deletes most of it:
// more than half of its files and at least massDeleteMin. Such a patch is
// what an emptied workspace gives; it is never applied silently. Nil when
// the patch deletes less.
func MassDeletion(root, patch string) ([]string, int) {
	files, _, err := gitdiff.Parse(strings.NewReader(patch))
	if err != nil {
		return nil, 0
	}
	var deleted []string
	for _, f := range files {
		if f.IsDelete {
			deleted = append(deleted, f.OldName)
		}
	}
	if len(deleted) < massDeleteMin {
		return nil, 0
	}
	// Counting stops once the deletions are no longer most of the tree.
	total := 0
	enough := errors.New("enough")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case !d.IsDir():
			if total++; total >= 2*len(deleted) {
				return enough
			}
		}
		return nil
	})
	if 2*len(deleted) <= total {
		return nil, 0
	}
	return deleted, total
}

// MassDeleteLine says what a mass deletion deletes, naming up to ten files.
func (p ApplyPlan) MassDeleteLine() string {
	if len(p.MassDelete) == 0 {
		return ""
	}
	shown := p.MassDelete
	more := ""
	if len(shown) > 10 {
		shown, more = shown[:10], fmt.Sprintf(" and %d more", len(p.MassDelete)-10)
	}
	return fmt.Sprintf("this patch deletes %d of the %d files in %s: %s%s", len(p.MassDelete), p.ProjectFiles, p.Root, strings.Join(shown, ", "), more)
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

func refusal(ctx context.Context, plan ApplyPlan, out string, err error) (Refusal, string) {
	root, secretEnv, patch := plan.Root, plan.SecretEnv, plan.Patch
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
	// A patch the tree already holds creates files that exist: say that
	// it is applied before blaming a file the copy left out.
	if !plan.Reverse && !strings.Contains(out, "beyond a symbolic link") {
		if _, rerr := gitApply(ctx, root, secretEnv, patch, "--check", "--reverse"); rerr == nil {
			return RefusedApplied, fmt.Sprintf("already applied: the host tree at %s already has these changes; nothing was applied", root)
		}
	}
	for _, f := range files {
		if f.IsNew && f.NewName != "" {
			if _, serr := os.Lstat(filepath.Join(root, filepath.FromSlash(f.NewName))); serr == nil {
				return RefusedExists, fmt.Sprintf("the patch creates %s, which exists in %s: made there after the session copied the tree, or left out of the copy (a credential-like name, an --exclude pattern, a file over --max-file-bytes); nothing was applied; move the host file aside and apply again", f.NewName, root)
			}
		}
	}
	switch {
	case strings.Contains(out, "beyond a symbolic link"):
		return RefusedSymlink, fmt.Sprintf("the patch writes through a symbolic link in %s, which harness never follows on the host; nothing was applied: %s", root, why)
	default:
		if plan.Reverse {
			if _, rerr := gitApply(ctx, root, secretEnv, patch, "--check"); rerr == nil {
				return RefusedApplied, fmt.Sprintf("already reverted: the host tree at %s does not have these changes; nothing was changed", root)
			}
		} else if _, rerr := gitApply(ctx, root, secretEnv, patch, "--check", "--reverse"); rerr == nil {
			return RefusedApplied, fmt.Sprintf("already applied: the host tree at %s already has these changes; nothing was applied", root)
		}
		return RefusedChanged, fmt.Sprintf("the host tree at %s changed under this patch; nothing was applied: %s\n%s", root, why, conflictNext(plan.Session))
	}
}

// conflictNext is what a patch the host tree refuses leaves the user to
// do, on a line of its own after git's words, for session id ("" when
// the patch is no session's). (Session patches carry no blob hashes, so
// `git apply -3` cannot merge them; GNU patch --merge can.)
func conflictNext(id string) string {
	diff := "harness diff ID"
	if id != "" {
		diff = "harness diff " + id
	}
	return "to go on: ask the model to redo the change on the tree as it is now (a new session starts from it), " +
		"or write the patch to a file (`" + diff + " > session.patch`) and merge it with `patch -p1 --merge < session.patch` " +
		"(it applies what still fits and marks real conflicts <<<<<<< … >>>>>>> for you to resolve)"
}

// Apply checks the plan's patch again (the host may have changed since)
// and applies it. Codes: WORKSPACE_SCOPE when the host tree refuses it,
// with the reason CheckApply would give.
func Apply(ctx context.Context, plan ApplyPlan) error {
	if link := symlinkOnPath(plan.Root, plan.Patch); link != "" {
		return errcode.New(errcode.WorkspaceScope, symlinkRefusal(plan.Root, link))
	}
	if out, err := gitApply(ctx, plan.Root, plan.SecretEnv, plan.Patch, plan.args("--check")...); err != nil {
		_, msg := refusal(ctx, plan, out, err)
		return errcode.New(errcode.WorkspaceScope, msg)
	}
	if out, err := gitApply(ctx, plan.Root, plan.SecretEnv, plan.Patch, plan.args()...); err != nil {
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
