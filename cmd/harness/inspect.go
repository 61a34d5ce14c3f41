package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

func (a *app) listSessions(ctx context.Context) int {
	list, err := a.store.ListSessions(ctx, store.MaxPage)
	if err != nil {
		return a.fail(err)
	}
	if a.opts.JSON {
		for _, s := range list {
			b, _ := model.MarshalCanonical(map[string]any{"id": s.ID, "title": s.Title, "updated": s.UpdatedAt.UTC().Format(time.RFC3339),
				"turns": s.Turns, "tokens": s.Tokens, "status": s.Status})
			fmt.Fprintln(a.stdout, string(b))
		}
		return 0
	}
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTITLE\tUPDATED\tTURNS\tTOKENS\tSTATUS")
	for _, s := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\n", s.ID, short(s.Title, 48), s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.Turns, s.Tokens, s.Status)
	}
	w.Flush()
	return 0
}

func (a *app) printStoredEvents(ctx context.Context, id string) int {
	if _, err := a.store.Session(ctx, id); err != nil {
		return a.fail(err)
	}
	w := bufio.NewWriter(a.stdout)
	defer w.Flush()
	err := store.Each(ctx, a.store, id, -1, func(r store.Record) error {
		w.Write(r.Body)
		return w.WriteByte('\n')
	})
	if err != nil {
		return a.fail(err)
	}
	return 0
}

// lastRequestCheckpoint finds the newest checkpoint that carries a next
// request: the latest one when the session was interrupted mid-request,
// else the last model round's.
func lastRequestCheckpoint(ctx context.Context, r store.Reader, id string) (*runtime.Checkpoint, error) {
	var found *runtime.Checkpoint
	var chain runtime.Chain
	err := store.Each(ctx, r, id, -1, func(rec store.Record) error {
		if rec.Type != string(event.TypeRuntimeCheckpoint) {
			return nil
		}
		ev, err := event.Decode(rec.Body)
		if err != nil {
			return err
		}
		cp, err := chain.Next(ev.Data.(event.RuntimeCheckpoint).Payload)
		if err != nil {
			return err
		}
		if cp.NextRequest != nil {
			found = cp
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, errcode.Errorf(errcode.SessNotFound, "session %s has no model request yet", id)
	}
	return found, nil
}

func (a *app) printRequest(ctx context.Context, id string) int {
	cp, err := lastRequestCheckpoint(ctx, a.store, id)
	if err != nil {
		return a.fail(err)
	}
	req, err := runtime.ReconstructModelRequest(cp)
	if err != nil {
		return a.fail(err)
	}
	b, err := model.MarshalCanonical(req)
	if err != nil {
		return a.fail(err)
	}
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, b, "", "  ")
	fmt.Fprintln(a.stdout, pretty.String())
	return 0
}

// sessionPatch is the workspace patch at the session's last finished turn.
func (a *app) sessionPatch(ctx context.Context, id string) (string, string, error) {
	s, err := a.store.Session(ctx, id)
	if err != nil {
		return "", "", err
	}
	last, _, err := runtime.LastFinished(ctx, a.store, id)
	if err != nil {
		return "", "", err
	}
	if last == nil || last.Workspace == nil {
		return "", s.Metadata["root"], nil
	}
	return last.Workspace.Patch, s.Metadata["root"], nil
}

func (a *app) printDiff(ctx context.Context, id string) int {
	patch, _, err := a.sessionPatch(ctx, id)
	if err != nil {
		return a.fail(err)
	}
	io.WriteString(a.stdout, patch)
	return 0
}

// applyDiff checks the patch against the host tree with `git apply
// --check`, shows what will change, asks (unless --yes), then applies it.
// A host tree that changed under the patch is refused cleanly.
func (a *app) applyDiff(ctx context.Context, id string, stdin io.Reader) int {
	patch, root, err := a.sessionPatch(ctx, id)
	if err != nil {
		return a.fail(err)
	}
	if patch == "" {
		fmt.Fprintln(a.stderr, "harness: nothing to apply: the workspace has no changes")
		return 0
	}
	if root == "" {
		root = a.root
	}
	if out, err := gitApply(ctx, root, patch, "--check"); err != nil {
		fmt.Fprintf(a.stderr, "harness: %s: the host tree at %s changed under this patch; nothing was applied\n%s", errcode.WorkspaceScope, root, out)
		return exitFailed
	}
	stat, _ := gitApply(ctx, root, patch, "--stat")
	fmt.Fprint(a.stderr, stat)
	if !a.opts.Yes {
		fmt.Fprintf(a.stderr, "apply to %s? [y/N] ", root)
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if strings.TrimSpace(strings.ToLower(line)) != "y" {
			fmt.Fprintln(a.stderr, "harness: not applied")
			return exitFailed
		}
	}
	if out, err := gitApply(ctx, root, patch); err != nil {
		fmt.Fprintf(a.stderr, "harness: apply failed: %s", out)
		return exitFailed
	}
	fmt.Fprintln(a.stderr, "harness: applied")
	return 0
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
