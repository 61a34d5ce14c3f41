package runtime

import (
	"context"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// Session grants: an answer of scope session (permission.resolved, scope
// session) allows that tool's calls for the rest of the session, in every
// later turn and after a resume (the checkpoint carries them), until
// Revoke records permission.revoked. A run grant (scope run) lasts the
// turn. A fork starts with none.

// grantedFor reports whether tool is allowed for the session.
func (s *Session) grantedFor(tool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.granted[tool]
}

// grant allows tool for the session.
func (s *Session) grant(tool string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.granted == nil {
		s.granted = map[string]bool{}
	}
	s.granted[tool] = true
}

// sessionGrants is the checkpoint's list: sorted, nil when empty (the
// field is then absent). Caller holds s.mu.
func sessionGrants(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	return sortedKeys(m)
}

// Grants returns the tools allowed for the session, sorted.
func (s *Session) Grants() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.granted)
}

// Revoke takes back the session's grant of tool (a canonical tool name),
// recorded as permission.revoked: its next call is asked about again,
// in the running turn too unless that turn's own grant (scope run) allows
// it. Codes: RUNTIME_INVALID_INPUT (tool is not granted for the session;
// nothing is recorded), SESS_CLOSED (the session is closed),
// RUNTIME_EVENT_APPEND_FAILED.
func (s *Session) Revoke(ctx context.Context, tool string) error {
	if _, err := s.lockDecide(ctx, cmdRevoke, nil); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if !s.granted[tool] {
		return errcode.Errorf(errcode.RuntimeInvalidInput, "revoke %q: not allowed for this session (allowed: %v)", tool, sortedKeys(s.granted))
	}
	if _, err := s.append(ctx, event.PermissionRevoked{SessionID: s.id, Action: tool}); err != nil {
		return err
	}
	delete(s.granted, tool)
	return nil
}
