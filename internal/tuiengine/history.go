package tuiengine

import (
	"context"
	"slices"
	"time"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/tui"
)

// Bounds of the project's input history: the most recently updated
// sessions read, and the newest prompts kept of them.
const (
	historySessions = 200
	historyPrompts  = 1000
)

var _ tui.PromptHistory = (*Engine)(nil)

// Prompts lists what the user sent in the other sessions of the open
// session's project (app.SessionProject: the same project root), oldest
// first, by the time each was recorded: the ↑ and ctrl+r history of the
// project, as the open session's own log gives its own. It reads the
// store only, the most recently updated sessions first, at most
// historySessions of them and no more once historyPrompts prompts are
// read, and keeps the newest historyPrompts prompts.
//
// Codes: SESS_NOT_FOUND (no session is open), STORE_*.
func (e *Engine) Prompts(ctx context.Context) (string, []string, error) {
	cur, err := e.current()
	if err != nil {
		return "", nil, err
	}
	project := app.ProjectRoot(e.a.Root)
	if s, err := e.a.Store.Session(ctx, cur.id); err == nil {
		project = app.SessionProject(s.Metadata)
	} else if errcode.Of(err) != errcode.SessNotFound {
		// A new session is stored with its first event: until then it
		// works on this process's directory.
		return "", nil, err
	}
	list, _, err := app.RecentSessions(ctx, e.a.Store, project, historySessions)
	if err != nil {
		return "", nil, err
	}
	type prompt struct {
		at   time.Time
		text string
	}
	var all []prompt
	for _, s := range list { // most recently updated first
		if s.ID == cur.id {
			continue
		}
		if len(all) >= historyPrompts {
			break // older sessions' prompts would be cut anyway
		}
		err := store.Each(ctx, e.a.Store, s.ID, -1, func(rec store.Record) error {
			if rec.Type != string(event.TypeMessageCompleted) && rec.Type != string(event.TypeSteeringQueued) {
				return nil
			}
			ev, err := event.Decode(rec.Body)
			if err != nil {
				return nil // a record this version cannot read is no prompt
			}
			text := ""
			switch d := ev.Data.(type) {
			case event.MessageCompleted:
				if d.Role == model.RoleUser {
					text = d.Content
				}
			case event.SteeringQueued:
				text = d.Content
			}
			if tui.IsPrompt(text) {
				all = append(all, prompt{at: ev.At, text: text})
			}
			return nil
		})
		if err != nil {
			return "", nil, err
		}
	}
	slices.SortStableFunc(all, func(a, b prompt) int { return a.at.Compare(b.at) })
	all = all[max(len(all)-historyPrompts, 0):]
	out := make([]string, len(all))
	for i, p := range all {
		out[i] = p.text
	}
	return cur.id, out, nil
}
