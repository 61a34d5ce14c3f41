package main

import (
	"context"
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/harness-dev/harness/internal/tuiengine"
	"github.com/harness-dev/harness/tui"
)

// afterQuitLines bounds the transcript printed when the TUI quits.
const afterQuitLines = 2000

// runTUI runs the terminal UI on a new session, on session id, or (resume
// without an ID) on one picked from a list. On the way out it cancels a
// running turn, closes the session and prints how to resume it. held is
// where the app's warnings go (newCLI) while the TUI owns the terminal.
// prompt, when set, is the new session's first message.
func runTUI(ctx context.Context, a *cli, held *tuiengine.Held, resume bool, id, prompt string) int {
	if resume && id != "" {
		// A bad ID fails before the screen opens, like every other command.
		if _, err := a.Store.Session(ctx, id); err != nil {
			return a.fail(err)
		}
	}
	// Nothing may write to the terminal behind the TUI's back: what the
	// app warns of goes to the session's banner, then to stderr after.
	realErr := a.stderr
	eng := tuiengine.New(a.App, held)
	defer func() {
		eng.Close()
		held.Release(realErr)
	}()

	opts := tui.Options{Open: tui.OpenRequest{ID: id, Fork: a.opts.Fork}, Pick: resume && id == "", Prompt: prompt}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := tui.New(pctx, eng, opts)
	p := tea.NewProgram(m, tea.WithContext(pctx), tea.WithOutput(a.stdout), tea.WithoutSignalHandler(), tea.WithFPS(120))
	final, err := p.Run()
	cancel()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(realErr, "harness: terminal: %v\n", err)
		return exitFailed
	}
	eng.Close()
	fm, _ := final.(*tui.Model)
	sid := eng.SessionID()
	if sid != "" {
		// Left on the terminal (the screen was the alternate one): what
		// this process showed of the session, rendered, and how to come
		// back.
		if fm != nil {
			if text := fm.Scrollback(afterQuitLines); text != "" {
				w := &colorprofile.Writer{Forward: a.stdout, Profile: fm.Profile()}
				fmt.Fprintf(w, "%s\n\n", text)
			}
		}
		fmt.Fprintf(a.stdout, "harness resume %s\n", sid)
		return exitCompleted
	}
	if fm != nil && fm.OpenErr() != nil {
		held.Release(realErr)
		return a.failTo(realErr, fm.OpenErr())
	}
	return exitCompleted
}
