// Package inspect is the command line's front end for stored sessions:
// the commands that run no turn. `harness sessions` lists them (export
// and import move one between stores); events, request and diff show what
// one recorded; apply and discard settle its workspace patch with the
// host tree; rewind takes it back to the end of an earlier turn. Each
// reads or records through internal/app and prints for a person (or JSON
// lines); cmd/harness only routes the command word here.
package inspect

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// ErrReported is a failure already told on Stderr (a declined apply, a
// listing that could not be written): the command exits with 1 and
// prints nothing more.
var ErrReported = errors.New("reported")

// Commands runs the commands on stored sessions for one process.
type Commands struct {
	App    *app.App
	Flags  app.Flags
	Stdin  io.Reader // apply's question, import's -
	Stdout io.Writer // what was asked for: the listing, the events, the patch
	Stderr io.Writer // what a person reads about it
}

// Names are the command words Run takes.
var Names = []string{"sessions", "events", "request", "diff", "apply", "discard", "rewind"}

// Run runs command cmd with its positional arguments pos. A wrong number
// of arguments is an *app.UsageError (nothing was run); a failure is its
// coded error, or ErrReported.
func (c *Commands) Run(ctx context.Context, cmd string, pos []string) error {
	switch cmd {
	case "sessions":
		switch {
		case len(pos) == 0:
			return c.listSessions(ctx)
		case pos[0] == "export" && len(pos) == 2:
			return app.Export(ctx, c.App.Store, pos[1], c.Stdout)
		case pos[0] == "import" && len(pos) == 2:
			return c.importSession(ctx, pos[1])
		}
		return &app.UsageError{Msg: "sessions [--json] | sessions export ID | sessions import FILE|-"}
	case "rewind":
		if len(pos) < 1 || len(pos) > 2 || (c.Flags.Undo && len(pos) != 1) {
			return &app.UsageError{Msg: "rewind takes a session ID and a TURN (its number from 1, or its ID), or --undo"}
		}
		return c.rewind(ctx, pos)
	}
	if len(pos) != 1 {
		return &app.UsageError{Msg: cmd + " takes one session ID"}
	}
	switch cmd {
	case "events":
		return app.WriteEvents(ctx, c.App.Store, pos[0], c.Stdout)
	case "request":
		return c.printRequest(ctx, pos[0])
	case "diff":
		return c.printDiff(ctx, pos[0])
	case "discard":
		return c.discardKept(ctx, pos[0])
	case "apply":
		return c.applyDiff(ctx, pos[0])
	}
	return &app.UsageError{Msg: fmt.Sprintf("unknown command %q", cmd)}
}

func (c *Commands) listSessions(ctx context.Context) error {
	here := ""
	if c.Flags.Here {
		here = app.ProjectRoot(c.App.Root) // from any directory of the project
	}
	n := app.SessionsShown
	if c.Flags.All {
		n = 0
	}
	list, more, err := app.RecentSessions(ctx, c.App.Store, here, n)
	if err != nil {
		return err
	}
	if more {
		defer fmt.Fprintf(c.Stderr, "harness: the %d most recently updated sessions; --all lists every one\n", n)
	}
	if c.Flags.JSON {
		for _, s := range list {
			b, _ := model.MarshalCanonical(map[string]any{"id": s.ID, "title": s.Title, "updated": s.UpdatedAt.UTC().Format(time.RFC3339),
				"turns": s.Turns, "tokens": s.Tokens, "status": s.Status, "dir": s.Metadata["root"]})
			fmt.Fprintln(c.Stdout, string(b))
		}
		return nil
	}
	w := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTITLE\tUPDATED\tTURNS\tTOKENS\tSTATUS\tDIRECTORY")
	for _, s := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", s.ID, headless.Short(s.Title, 48), s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.Turns, s.Tokens, s.Status, s.Metadata["root"])
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(c.Stderr, "harness: write the session list: %v\n", err)
		return ErrReported
	}
	return nil
}

func (c *Commands) printRequest(ctx context.Context, id string) error {
	req, err := app.Request(ctx, c.App.Store, id)
	if err != nil {
		return err
	}
	b, err := model.MarshalCanonical(req)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, b, "", "  ")
	fmt.Fprintln(c.Stdout, pretty.String())
	return nil
}

func (c *Commands) printDiff(ctx context.Context, id string) error {
	patch, _, err := c.App.RecoverPatch(ctx, id)
	if err != nil {
		return err
	}
	if left := app.LeftOutLine(workspace.LeftOut(patch)); left != "" {
		fmt.Fprintf(c.Stderr, "harness: warning: %s\n", left)
	}
	if _, err := io.WriteString(c.Stdout, patch); err != nil {
		fmt.Fprintf(c.Stderr, "harness: write the patch: %v\n", err)
		return ErrReported
	}
	return nil
}

// applyDiff checks the patch against the host tree, shows what will
// change, asks (unless --yes), then applies it and records patch.applied
// (with --reverse: reverts the last recorded one).
func (c *Commands) applyDiff(ctx context.Context, id string) error {
	plan, turn, noChange, err := c.App.PlanApply(ctx, id, c.Flags.Reverse)
	if err != nil {
		return err
	}
	if noChange {
		fmt.Fprintln(c.Stderr, "harness: nothing to apply: the workspace has no changes")
		return nil
	}
	left := app.LeftOutLine(plan.LeftOut)
	if left != "" {
		fmt.Fprintf(c.Stderr, "harness: warning: %s\n", left)
	}
	if plan.Patch == "" {
		fmt.Fprintln(c.Stderr, "harness: nothing to apply: the patch carries no file")
		return nil
	}
	if plan.Refused != "" {
		fmt.Fprintf(c.Stderr, "harness: %s: %s\n", errcode.WorkspaceScope, plan.Conflict)
		return ErrReported
	}
	fmt.Fprint(c.Stderr, plan.Stat)
	if line := plan.MassDeleteLine(); line != "" {
		if c.Flags.Yes && !c.Flags.AllowMassDelete {
			return errcode.Errorf(errcode.WorkspaceMassDelete,
				"%s; nothing was applied: the work may have been lost (an emptied workspace deletes everything); if the deletion is meant, add --allow-mass-delete", line)
		}
		fmt.Fprintf(c.Stderr, "harness: warning: %s\n", line)
	}
	verb := "apply to"
	if plan.Reverse {
		verb = "revert in"
	}
	if !c.Flags.Yes {
		fmt.Fprintf(c.Stderr, "%s %s? [y/N] ", verb, plan.Root)
		line, _ := bufio.NewReader(c.Stdin).ReadString('\n')
		if strings.TrimSpace(strings.ToLower(line)) != "y" {
			fmt.Fprintln(c.Stderr, "harness: not applied")
			return ErrReported
		}
	}
	if err := c.App.ApplyRecorded(ctx, id, turn, plan); err != nil {
		return err
	}
	if plan.Reverse {
		fmt.Fprintln(c.Stderr, "harness: reverted")
		return nil
	}
	if left != "" {
		fmt.Fprintf(c.Stderr, "harness: applied, except the %d changed files left out of the patch (see above)\n", len(plan.LeftOut))
		return nil
	}
	fmt.Fprintln(c.Stderr, "harness: applied")
	return nil
}

// discardKept gives up the kept work of a session whose last diff failed.
func (c *Commands) discardKept(ctx context.Context, id string) error {
	removed, err := c.App.Discard(ctx, id)
	if err != nil {
		return err
	}
	what := "its kept container was already gone"
	if len(removed) > 0 {
		what = "removed " + strings.Join(removed, ", ")
	}
	fmt.Fprintf(c.Stderr, "harness: the kept work of session %s is given up (%s); it goes on from what its earlier turns recorded (harness diff %s shows it)\n", id, what, id)
	return nil
}

func (c *Commands) importSession(ctx context.Context, path string) error {
	in := c.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return errcode.Wrap(errcode.SessNotFound, "open the export", err)
		}
		defer func() { _ = f.Close() }() // only read: a failed close loses nothing
		in = f
	}
	id, n, err := app.Import(ctx, c.App.Store, app.NewOwner(c.App.Conf.HostID), c.Flags.TakeOver, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stderr, "harness: imported session %s (%d events)\n", id, n)
	return nil
}

// rewind brings a session back to the end of a turn (pos[1]), or undoes
// its last rewind (--undo); with no TURN it lists the turns.
func (c *Commands) rewind(ctx context.Context, pos []string) error {
	id := pos[0]
	if len(pos) == 1 && !c.Flags.Undo {
		return c.listTurns(ctx, id)
	}
	req := app.RewindRequest{Undo: c.Flags.Undo}
	if len(pos) == 2 {
		req.Turn = pos[1]
	}
	r, err := c.App.Rewind(ctx, id, req)
	if err != nil {
		return err
	}
	e := r.Event
	what := fmt.Sprintf("rewound session %s to the end of turn %d", id, e.ToTurn)
	if e.Undo {
		what = fmt.Sprintf("undid the last rewind of session %s: back at the end of turn %d", id, e.ToTurn)
	}
	files := app.PatchFiles(e.Patch)
	added, deleted := 0, 0
	for _, f := range files {
		added, deleted = added+f.Added, deleted+f.Deleted
	}
	fmt.Fprintf(c.Stderr, "harness: %s; its workspace holds that turn's changes (%d file(s), +%d −%d: `harness diff %s`); later turns stay in the log, out of the model's view\n",
		what, len(files), added, deleted, id)
	if line := r.HostLine(id); line != "" {
		fmt.Fprintf(c.Stderr, "harness: %s\n", line)
	}
	return nil
}

// listTurns prints a session's turns, the one it is at and those rewound.
func (c *Commands) listTurns(ctx context.Context, id string) error {
	tl, err := app.ReadTimeline(ctx, c.App.Store, id)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TURN\tID\tSTARTED\tSTATUS\tCHANGES\tPROMPT")
	for _, t := range tl.Turns {
		status := t.Status
		switch {
		case !t.Finished():
			status = "unfinished"
		case t.Current:
			status += " (current)"
		case t.Rewound:
			status += " (rewound)"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d file(s) +%d −%d\t%s\n", t.N, t.ID, t.At.Local().Format("2006-01-02 15:04"), status,
			t.Own.Files, t.Own.Added, t.Own.Deleted, headless.Short(t.Prompt, 48))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(c.Stderr, "harness: write the turn list: %v\n", err)
		return ErrReported
	}
	return nil
}
