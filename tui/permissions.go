package tui

import (
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/harness-dev/harness/internal/event"
)

// grants are the tools the open session allows without asking: its
// answers "for this session" (permission.resolved, scope session) less
// its revocations (permission.revoked), folded from its log as the
// runtime folds them, so a resumed session shows what it still allows.
type grants struct{ tools []string }

func (g *grants) apply(ev event.Event) {
	switch d := ev.Data.(type) {
	case event.PermissionResolved:
		if d.Scope == event.ScopeSession && d.Decision == event.DecisionAllow && !slices.Contains(g.tools, d.Action) {
			g.tools = append(g.tools, d.Action)
			slices.Sort(g.tools)
		}
	case event.PermissionRevoked:
		g.tools = slices.DeleteFunc(g.tools, func(t string) bool { return t == d.Action })
	}
}

// permissionsCommand is /permissions: with no argument, a view of what
// the session allows and how to take it back; "revoke TOOL" or "revoke
// all" takes grants back (recorded; the view follows the log).
var permissionsCommand = viewCommand{
	kind: pagerHelp, title: "Permissions", lines: permissionLines,
	verb: "revoke", do: (*Model).revokeGrant,
	usage: "/permissions shows what this session allows; /permissions revoke TOOL (or all) takes it back.",
}

// revokeGrant takes back the session's grant of tool, or every grant
// (all).
func (m *Model) revokeGrant(tool string) tea.Cmd {
	tools := []string{tool}
	if tool == "all" {
		tools = slices.Clone(m.grants.tools)
	}
	if len(tools) == 0 || (tool != "all" && !slices.Contains(m.grants.tools, tool)) {
		m.flash = "Nothing to revoke: " + allowedText(m.grants.tools) + "."
		return nil
	}
	m.flash = strings.Join(tools, ", ") + " will be asked about again."
	return m.revoke(tools)
}

func allowedText(tools []string) string {
	if len(tools) == 0 {
		return "nothing is allowed for this session"
	}
	return "allowed for this session: " + strings.Join(tools, ", ")
}

// permissionLines is the /permissions view.
func permissionLines(m *Model) []string {
	th := m.th
	out := []string{""}
	if len(m.grants.tools) == 0 {
		out = append(out, " "+th.Text.Render("Nothing is allowed for this session: every call the policy asks about is asked."))
	} else {
		out = append(out, " "+th.Bold.Render("Allowed for this session")+th.Muted.Render(" (recorded in the session, kept when it is resumed)"))
		for _, t := range m.grants.tools {
			out = append(out, "   "+th.Key.Render(t)+th.Muted.Render("   /permissions revoke "+t))
		}
	}
	out = append(out, "")
	if m.sess.Approve {
		out = append(out, " "+th.Muted.Render("A question's s answers \"for this session\"; a allows the tool for this turn only, y once."))
	} else {
		out = append(out, " "+th.Muted.Render("This session runs with --approve auto: nothing is asked."))
	}
	out = append(out, " "+th.Muted.Render("/permissions revoke TOOL (or all) takes a grant back; esc closes."))
	return out
}

// revoke takes back the session's grants of tools, one at a time.
func (m *Model) revoke(tools []string) tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		for _, t := range tools {
			if err := eng.Revoke(ctx, t); err != nil {
				return doneMsg{what: "revoke " + t, err: err}
			}
		}
		return doneMsg{what: "revoke"}
	}
}
