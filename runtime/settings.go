package runtime

import (
	"context"

	"github.com/harness-dev/harness/internal/event"
)

// ChangeSettings records settings.changed as given (the application's
// resume flags) and makes its settings the session's from the next model
// request on (Settings.WithChange); SetSettings is the command that
// builds the event from a change. The session must be idle: with a turn
// active it fails with RUNTIME_RUN_EXISTS and changes nothing. A policy
// that does not validate is RUNTIME_INVALID_INPUT, a closed session
// SESS_CLOSED. The settings it starts from are read under mu, like every
// other command's.
func (s *Session) ChangeSettings(ctx context.Context, d event.SettingsChanged) error {
	if _, err := s.lockDecide(ctx, cmdChangeSettings, nil); err != nil {
		return err
	}
	defer s.mu.Unlock()
	next := s.settings.WithChange(d)
	if err := next.Context.Validate(); err != nil {
		return err
	}
	d.SessionID = s.id
	if _, err := s.append(ctx, d); err != nil {
		return err
	}
	s.settings = next
	s.baseURL, s.approve = d.BaseURL, d.Approve
	return nil
}
