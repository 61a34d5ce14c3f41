package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/headless"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
)

// sessionsShown is how many sessions `harness sessions` lists without
// --all: the listing then reads that many rows whatever the store holds.
const sessionsShown = 100

func (a *cli) listSessions(ctx context.Context) int {
	here := ""
	if a.opts.Here {
		here = app.ProjectRoot(a.Root) // from any directory of the project
	}
	n := sessionsShown
	if a.opts.All {
		n = 0
	}
	list, more, err := app.RecentSessions(ctx, a.Store, here, n)
	if err != nil {
		return a.fail(err)
	}
	if more {
		defer fmt.Fprintf(a.stderr, "harness: the %d most recently updated sessions; --all lists every one\n", n)
	}
	if a.opts.JSON {
		for _, s := range list {
			b, _ := model.MarshalCanonical(map[string]any{"id": s.ID, "title": s.Title, "updated": s.UpdatedAt.UTC().Format(time.RFC3339),
				"turns": s.Turns, "tokens": s.Tokens, "status": s.Status, "dir": s.Metadata["root"]})
			fmt.Fprintln(a.stdout, string(b))
		}
		return 0
	}
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTITLE\tUPDATED\tTURNS\tTOKENS\tSTATUS\tDIRECTORY")
	for _, s := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", s.ID, headless.Short(s.Title, 48), s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.Turns, s.Tokens, s.Status, s.Metadata["root"])
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(a.stderr, "harness: write the session list: %v\n", err)
		return exitFailed
	}
	return 0
}

func (a *cli) printStoredEvents(ctx context.Context, id string) int {
	if err := app.WriteEvents(ctx, a.Store, id, a.stdout); err != nil {
		return a.fail(err)
	}
	return 0
}

func (a *cli) printRequest(ctx context.Context, id string) int {
	req, err := app.Request(ctx, a.Store, id)
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

func (a *cli) printDiff(ctx context.Context, id string) int {
	patch, _, err := a.RecoverPatch(ctx, id)
	if err != nil {
		return a.fail(err)
	}
	if left := app.LeftOutLine(workspace.LeftOut(patch)); left != "" {
		fmt.Fprintf(a.stderr, "harness: warning: %s\n", left)
	}
	if _, err := io.WriteString(a.stdout, patch); err != nil {
		fmt.Fprintf(a.stderr, "harness: write the patch: %v\n", err)
		return exitFailed
	}
	return 0
}

// applyDiff checks the patch against the host tree, shows what will
// change, asks (unless --yes), then applies it and records patch.applied
// (with --reverse: reverts the last recorded one).
func (a *cli) applyDiff(ctx context.Context, id string, stdin io.Reader) int {
	plan, turn, noChange, err := a.PlanApply(ctx, id, a.opts.Reverse)
	if err != nil {
		return a.fail(err)
	}
	if noChange {
		fmt.Fprintln(a.stderr, "harness: nothing to apply: the workspace has no changes")
		return 0
	}
	left := app.LeftOutLine(plan.LeftOut)
	if left != "" {
		fmt.Fprintf(a.stderr, "harness: warning: %s\n", left)
	}
	if plan.Patch == "" {
		fmt.Fprintln(a.stderr, "harness: nothing to apply: the patch carries no file")
		return 0
	}
	if plan.Refused != "" {
		fmt.Fprintf(a.stderr, "harness: %s: %s\n", errcode.WorkspaceScope, plan.Conflict)
		return exitFailed
	}
	fmt.Fprint(a.stderr, plan.Stat)
	if line := plan.MassDeleteLine(); line != "" {
		if a.opts.Yes && !a.opts.AllowMassDelete {
			return a.fail(errcode.Errorf(errcode.WorkspaceMassDelete,
				"%s; nothing was applied: the work may have been lost (an emptied workspace deletes everything); if the deletion is meant, add --allow-mass-delete", line))
		}
		fmt.Fprintf(a.stderr, "harness: warning: %s\n", line)
	}
	verb := "apply to"
	if plan.Reverse {
		verb = "revert in"
	}
	if !a.opts.Yes {
		fmt.Fprintf(a.stderr, "%s %s? [y/N] ", verb, plan.Root)
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if strings.TrimSpace(strings.ToLower(line)) != "y" {
			fmt.Fprintln(a.stderr, "harness: not applied")
			return exitFailed
		}
	}
	if err := a.ApplyRecorded(ctx, id, turn, plan); err != nil {
		return a.fail(err)
	}
	if plan.Reverse {
		fmt.Fprintln(a.stderr, "harness: reverted")
		return 0
	}
	if left != "" {
		fmt.Fprintf(a.stderr, "harness: applied, except the %d changed files left out of the patch (see above)\n", len(plan.LeftOut))
		return 0
	}
	fmt.Fprintln(a.stderr, "harness: applied")
	return 0
}

// discardKept gives up the kept work of a session whose last diff failed.
func (a *cli) discardKept(ctx context.Context, id string) int {
	removed, err := a.Discard(ctx, id)
	if err != nil {
		return a.fail(err)
	}
	what := "its kept container was already gone"
	if len(removed) > 0 {
		what = "removed " + strings.Join(removed, ", ")
	}
	fmt.Fprintf(a.stderr, "harness: the kept work of session %s is given up (%s); it goes on from what its earlier turns recorded (harness diff %s shows it)\n", id, what, id)
	return 0
}

func (a *cli) exportSession(ctx context.Context, id string) int {
	if err := app.Export(ctx, a.Store, id, a.stdout); err != nil {
		return a.fail(err)
	}
	return 0
}

func (a *cli) importSession(ctx context.Context, path string, stdin io.Reader) int {
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return a.fail(errcode.Wrap(errcode.SessNotFound, "open the export", err))
		}
		defer func() { _ = f.Close() }() // only read: a failed close loses nothing
		in = f
	}
	id, n, err := app.Import(ctx, a.Store, app.NewOwner(a.Conf.HostID), a.opts.TakeOver, in)
	if err != nil {
		return a.fail(err)
	}
	fmt.Fprintf(a.stderr, "harness: imported session %s (%d events)\n", id, n)
	return 0
}
