package tuiengine

import (
	"context"
	"strings"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
	"github.com/harness-dev/harness/tui"
)

var _ tui.StartChecker = (*Engine)(nil)

// StartWarning names the open session's credential-like project files
// that its Docker workspace refuses to copy (app.CredentialFiles: not
// ignored by git, not left out by --exclude), which would fail its first
// tool call with WORKSPACE_CREDENTIAL_INPUT, and the command that goes on
// without them: "" when there are none, or the workspace is not Docker's.
//
// Codes: SESS_NOT_FOUND (no session is open).
func (e *Engine) StartWarning(ctx context.Context) (string, string, error) {
	cur, err := e.current()
	if err != nil {
		return "", "", err
	}
	if cur.sess.WorkspaceInfo().Backend != workspace.BackendDocker {
		return cur.id, "", nil
	}
	files := e.a.CredentialFiles(ctx, cur.sess.Root)
	if len(files) == 0 {
		return cur.id, "", nil
	}
	flags := app.ExcludeFlags(files)
	// A session with a finished turn is resumed with the flags; one
	// without is started again (it may not be stored yet).
	again := "quit and start again with `harness " + flags + "`"
	if row, err := e.a.Store.Session(ctx, cur.id); err == nil && row.Turns > 0 {
		again = "quit and run `harness resume " + cur.id + " " + flags + "`"
	}
	return cur.id, "the project holds credential-like files that are never copied into the sandbox: " + strings.Join(files, ", ") +
		"; the workspace cannot open with them (" + string(errcode.WorkspaceCredentialInput) + "): " + again +
		" to leave them out, or add them to .gitignore", nil
}
