// Package app is the application layer of Harness: what a front end (the
// command line, the TUI) does with sessions. An App is built once (New)
// and does not change after; what differs from one open to the next
// travels in the OpenRequest. A Session is the one handle a front end
// drives: it owns the session's lease, workspace, runtime session and
// event subscription, and closes them with one Close. It resolves the
// configuration (flags > environment > config file > defaults), opens the
// store, builds the process's one runtime, builds each session's model,
// opens, resumes and forks sessions in that runtime (taking and renewing
// their lease), rebuilds a resumed session's Docker workspace
// from its recorded patch, applies a session's patch to the host tree
// (recorded as patch.applied, and reverted from that record), rewinds a
// session to the end of one of its finished turns (session.rewound and
// that turn's checkpoint appended; nothing removed), exports and imports
// sessions, and rebuilds the next model request of a stored session.
//
// It reads no flags and no process environment: the caller passes
// Options and Env. It prints nothing but warnings, to the writer it is
// given; every outcome is a value or a coded error (internal/errcode).
//
// Commands that only read the store (sessions, events, request, diff,
// apply, rewind, export) use OpenStore alone and never build a model;
// apply and rewind append their record under the session's lease.
package app
