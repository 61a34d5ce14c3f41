package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// Limits of DESIGN §7.
const (
	MaxInputChars = checkpoint.MaxInputChars // steering and prompt length in characters
	MaxQueue      = 1024                     // pending steering plus queued inputs per session
)

// Status of a finished turn.
type Status string

// Statuses, as written in turn.completed.
const (
	StatusCompleted      Status = "completed"
	StatusFailed         Status = "failed"
	StatusCanceled       Status = "canceled"
	StatusBudgetExceeded Status = "budget_exceeded"
)

// Outcome is how a turn ended.
type Outcome struct {
	RunID           string
	TurnID          string
	Status          Status
	ErrorCode       errcode.Code // "" when completed
	Message         string       // safe text for the user
	OutputMessageID string
	Usage           model.Usage // this turn's usage, summaries included
	ModelRequests   int
	ToolCalls       int
	Truncated       bool // completed, but the last answer was cut by the output limit
}

// Runtime is the process's registry of what is live: the sessions opened
// through it (one Session per ID) and their active runs (see Ownership in
// the package documentation), with the clock and the IDs they share. A
// session leaves the registry when it closes and a run when it ends; the
// outcomes of the last KeptOutcomes runs stay for Wait. What a session
// runs with (model, workspace, policy) is its own SessionConfig, so one
// Runtime serves every session of a process: package app builds one.
type Runtime struct {
	cfg Config

	mu       sync.Mutex
	sessions map[string]*Session  // guarded by mu: the open sessions, by ID
	runs     map[string]*run      // guarded by mu: the active runs
	ended    map[string]Outcome   // guarded by mu: the outcomes of the last KeptOutcomes runs that ended
	endedIDs [KeptOutcomes]string // guarded by mu: ended's keys, a ring, oldest at endedAt
	endedAt  int                  // guarded by mu
}

// KeptOutcomes is how many ended runs' outcomes a Runtime keeps for Wait.
// An older run's outcome is its turn.completed in the session's log.
const KeptOutcomes = 64

// New returns a Runtime with no session open.
func New(cfg Config) *Runtime {
	cfg.defaults()
	return &Runtime{cfg: cfg, sessions: map[string]*Session{}, runs: map[string]*run{}, ended: map[string]Outcome{}}
}

// providerNamer is implemented by models that know which server they send
// to (model/openai: its base URL). The calibration of the occupancy is
// keyed on it and the model name, so that the same model name behind
// another server starts afresh.
type providerNamer interface{ Provider() string }

// run is one turn's control block.
type run struct {
	id, turnID, agentID string
	sess                *Session
	canceled            atomic.Bool
	cancel              context.CancelCauseFunc
	admitted            chan struct{}   // closed when the admission events are durable (or failed)
	done                chan struct{}   // closed when the turn has released the session
	outcome             Outcome         // written by the turn goroutine before done closes
	grants              map[string]bool // tools granted for this run; turn goroutine only
}

var errCanceled = errors.New("turn canceled by the user")

// Wait blocks until the run ends and returns its outcome; a run that has
// ended already answers at once while it is among the last KeptOutcomes.
// Session.Wait waits for the session instead, queued turns included.
// Codes: RUNTIME_RUN_NOT_FOUND (never started here, or ended longer ago),
// and the context's error.
func (rt *Runtime) Wait(ctx context.Context, runID string) (Outcome, error) {
	rt.mu.Lock()
	r, ok := rt.runs[runID]
	out, ended := rt.ended[runID]
	rt.mu.Unlock()
	switch {
	case ended:
		return out, nil
	case !ok:
		return Outcome{}, errcode.Errorf(errcode.RuntimeRunNotFound, "wait for run %s", runID)
	}
	select {
	case <-r.done:
		return r.outcome, nil
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

// Done returns a channel closed when the run ends (at once when it is
// not active).
func (rt *Runtime) Done(runID string) <-chan struct{} {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if r, ok := rt.runs[runID]; ok {
		return r.done
	}
	return closedChan()
}

// register makes r an active run, unless its ID is taken: by an active
// run, or one whose outcome is kept.
func (rt *Runtime) register(r *run) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	_, live := rt.runs[r.id]
	if _, ended := rt.ended[r.id]; live || ended {
		return errcode.Errorf(errcode.RuntimeRunExists, "start turn: run %s exists", r.id)
	}
	rt.runs[r.id] = r
	return nil
}

// forget moves an ended run out of the registry, keeping its outcome
// among the last KeptOutcomes: the registry holds what is live, and does
// not grow with the turns a process runs.
func (rt *Runtime) forget(r *run) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	delete(rt.runs, r.id)
	if old := rt.endedIDs[rt.endedAt]; old != "" {
		delete(rt.ended, old)
	}
	rt.endedIDs[rt.endedAt] = r.id
	rt.endedAt = (rt.endedAt + 1) % KeptOutcomes
	rt.ended[r.id] = r.outcome
}

func validText(what, text string) error { return checkpoint.CheckText(what, text) }

func (rt *Runtime) newEvent(data event.Data) event.Event {
	return event.Event{
		Type:  data.EventType(),
		ID:    rt.cfg.NewID("evt"),
		At:    rt.cfg.Now(),
		Actor: "kernel",
		Data:  data,
	}
}
