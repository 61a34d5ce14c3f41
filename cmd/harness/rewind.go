package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/headless"
)

// rewind brings a session back to the end of a turn (pos[1]), or undoes
// its last rewind (--undo); with no TURN it lists the turns.
func (a *cli) rewind(ctx context.Context, pos []string) int {
	id := pos[0]
	if len(pos) == 1 && !a.opts.Undo {
		return a.listTurns(ctx, id)
	}
	req := app.RewindRequest{Undo: a.opts.Undo}
	if len(pos) == 2 {
		req.Turn = pos[1]
	}
	r, err := a.Rewind(ctx, id, req)
	if err != nil {
		return a.fail(err)
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
	fmt.Fprintf(a.stderr, "harness: %s; its workspace holds that turn's changes (%d file(s), +%d −%d: `harness diff %s`); later turns stay in the log, out of the model's view\n",
		what, len(files), added, deleted, id)
	if line := r.HostLine(id); line != "" {
		fmt.Fprintf(a.stderr, "harness: %s\n", line)
	}
	return 0
}

// listTurns prints a session's turns, the one it is at and those rewound.
func (a *cli) listTurns(ctx context.Context, id string) int {
	tl, err := app.ReadTimeline(ctx, a.Store, id)
	if err != nil {
		return a.fail(err)
	}
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
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
			len(t.Files), t.Added(), t.Deleted(), headless.Short(t.Prompt, 48))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(a.stderr, "harness: write the turn list: %v\n", err)
		return exitFailed
	}
	return 0
}
