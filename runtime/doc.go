// Package runtime is the kernel of Harness: it runs turns, applies steering
// at model-request boundaries, cancels, continues sessions in follow-up
// turns, enforces budgets and writes checkpoints.
//
// Ownership. A Runtime owns the sessions opened in this process. Each live
// turn is run by one goroutine, which owns the session's message state,
// usage and budget counters while the turn runs. The only state shared with
// other goroutines is the session's input queue (pending steering, inputs
// queued for the next turn, the active run and its terminal flag); it is
// guarded by session.mu, and every append that changes it happens while
// holding that lock, so the log order is the order in which input was
// accepted.
//
// Ordering. Events of a turn are appended in the order of DESIGN §3:
// agent.started, turn.started, message.completed(user); then per round
// steering.applied?, context.accounted, model.request, runtime.checkpoint
// (phase model), message.delta*, model.response, message.completed
// (assistant), and per tool call tool.call, policy.decision,
// (permission.requested, permission.resolved)?, tool.result,
// message.completed(tool); at the end runtime.checkpoint (phase terminal),
// turn.completed and agent.stopped. Exactly one turn.completed is written
// per turn whatever races: only the turn goroutine writes it, once, on its
// way out.
//
// Steering. Steer appends steering.queued and returns only when the append
// is durable. Pending steering is applied, oldest first, at the next model
// request, never into a request already sent, and recorded by
// steering.applied. Steering accepted while the final answer streams causes
// another round. Once Cancel has been called, or the turn has decided to
// complete, Steer fails with RUNTIME_RUN_TERMINAL; a Steer whose append had
// already begun completes, stays in the log, and is inherited by the next
// turn as pending steering. QueueNext stores a message for the next turn
// (input.queued); the driver (harness exec, the TUI) starts that turn when
// the current one ends.
//
// Codes returned: RUNTIME_INVALID_INPUT, RUNTIME_RUN_EXISTS,
// RUNTIME_RUN_NOT_FOUND, RUNTIME_RUN_TERMINAL, RUNTIME_EVENT_APPEND_FAILED,
// RUNTIME_MODEL_STREAM_INVALID, RUNTIME_MODEL_TIMEOUT,
// RUNTIME_BUDGET_EXCEEDED, RUNTIME_CONTEXT_OVERFLOW, RUNTIME_SUMMARY_FAILED,
// RUNTIME_INVALID_MESSAGE_STATE, RUNTIME_CHECKPOINT_VERSION,
// RUNTIME_CHECKPOINT_INVALID, RUNTIME_CHECKPOINT_INTERRUPTED; model errors
// (MODEL_*) end a turn as failed with their own code.
//
// The runtime never imports the TUI, Bubble Tea, dockerws or a concrete
// store; cmd/harness wires those in.
package runtime
