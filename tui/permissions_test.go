package tui

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

// /permissions lists what the session allows (folded from its log: an
// answer "for this session" adds, permission.revoked takes away) and
// /permissions revoke TOOL asks the engine to take a grant back; a tool
// that is not allowed is refused on the screen, with no call.
func TestPermissionsView(t *testing.T) {
	eng := idleEngine()
	eng.sess.Approve = true
	s := newScreen(t, eng, Options{}, 100, 30)
	s.resetCalls()
	s.typeText("/permissions")
	s.key("enter")
	s.wantText("Nothing is allowed for this session")
	s.key("esc")

	s.events(
		ev(1, event.PermissionResolved{PermissionID: "perm-1", CallID: "call-1", Action: "process.exec", Scope: event.ScopeSession, Decision: event.DecisionAllow}),
		ev(2, event.PermissionResolved{PermissionID: "perm-2", CallID: "call-2", Action: "fs.write", Scope: event.ScopeRun, Decision: event.DecisionAllow}),
		ev(3, event.PermissionResolved{PermissionID: "perm-3", CallID: "call-3", Action: "fs.read", Scope: event.ScopeSession, Decision: event.DecisionDeny}),
	)
	s.typeText("/permissions")
	s.key("enter")
	s.wantText("Allowed for this session", "process.exec   /permissions revoke process.exec")
	if txt := s.text(); strings.Contains(txt, "revoke fs.write") || strings.Contains(txt, "revoke fs.read") {
		t.Errorf("a turn's grant or a denial is listed:\n%s", txt)
	}
	s.key("esc")

	s.typeText("/permissions revoke fs.write")
	s.key("enter")
	s.wantText("Nothing to revoke: allowed for this session: process.exec")
	s.wantCalls()

	s.typeText("/permissions revoke process.exec")
	s.key("enter")
	s.wantCalls("revoke process.exec")
	s.events(ev(4, event.PermissionRevoked{SessionID: sessID, Action: "process.exec"}))
	s.typeText("/permissions")
	s.key("enter")
	s.wantText("Nothing is allowed for this session")
}
