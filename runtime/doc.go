// Package runtime is the kernel of Harness: it runs turns, applies steering
// at model-request boundaries, cancels, continues sessions in follow-up
// turns, enforces budgets and writes checkpoints.
//
// Ownership. A Runtime is the process's: one clock and one source of IDs
// (Config), and a registry of what is live in the process: the sessions
// opened through it (one Session per ID: a second open of a live ID is
// refused) and their active runs. A session leaves the registry when it
// closes, a run when it ends (the outcomes of the last KeptOutcomes runs
// stay for Runtime.Wait, whichever session ran them), so the registry
// grows neither with the sessions nor with the turns a process runs. What
// a session runs with — its model, workspace, policy and guards — is its
// own SessionConfig, given when it is opened, restored or forked. Package
// app builds one Runtime per process and opens every session through it.
//
// A Session is the one owner of what decides what happens next in it:
// pending steering, inputs queued for the next turn, the active turn,
// starting the queued next turn, permission questions, settings changes
// and cancellation. Its state is named (SessionState: idle, admitting,
// running, ending, closed) and what a command does in each is one pure
// function, decide (decide.go), held to an exhaustive table test; the
// commands only carry its decision out, and every change of the state
// goes through setState, which publishes it (Session.State) so that
// front ends never guess whether a turn is active. That state is guarded
// by the session's mutex, which every command takes and holds across the
// append that records its decision, so the log order is the order in
// which the session accepted input. Each live turn is run by one
// goroutine, which owns the session's message state, usage and budget
// counters while the turn runs, and meets the owner only at request
// boundaries (steering, settings), to ask a question and to end.
//
// Commands (commands.go). Front ends — the TUI engine, harness exec — use
// only these; none of them tracks run IDs to route text:
//
//	Send(text)          steering while a turn runs; a new turn while idle;
//	                    waits for a turn being admitted (then steers) or
//	                    ending (then steers the queued turn the session
//	                    started, or starts one)
//	Queue(text)         input of the turn after the running one; a new turn
//	                    while idle
//	StartQueued()       the oldest queued input as a turn, while idle
//	Withdraw(msgID)     drop pending steering or a queued input
//	Cancel()            end the active turn now (never waits on the lock)
//	Answer(permID, a)   answer a permission.requested question; a note
//	                    reaches the model
//	Revoke(tool)        take back a grant for the session (permission.revoked)
//	Compact(focus)      compact the context now: while idle, a compaction
//	                    turn; while a turn runs, before its next request
//	SetSettings(change) model and settings of the following requests
//	                    (settings.changed, recorded before they apply);
//	                    ChangeSettings(event) records one built by the
//	                    application (resume flags), between turns
//	Events(afterSeq)    the stored events after afterSeq, then live ones,
//	                    without gaps or repeats
//	State()             the owner's state, and a channel closed when it
//	                    changes
//	Idle(), Wait()      the end of the current busy spell, and its outcome
//	Close()             cancel, wait for the end, refuse later commands,
//	                    leave the Runtime
//
// Send, Queue, Withdraw and SetSettings return once their event is
// durable. When a turn completes and an input is queued, the session
// starts the next turn itself; after a turn that did not complete the
// queue waits for StartQueued. Commands never write after a turn's
// terminal checkpoint except between turns (input.withdrawn,
// settings.changed), which restore folds into the checkpoint it resumes.
//
// Adding a command: a method on Session, a command in decide's table
// (and its cells in the table's test), its decision taken with lockDecide
// (which waits while a turn is admitted or ending, and refuses what the
// state refuses), its event appended while s.mu is held, and the guarded
// state changed only once the append is durable. Document it in the list
// above and name the codes it returns.
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
// way out. The files steering mentions (@path) are attached right after
// steering.applied — per file tool.call, policy.decision,
// (permission.requested, permission.resolved)?, tool.result, then one
// message.completed(user) holding them — before context.accounted, as a
// turn's own message has them attached after it is admitted.
//
// A compaction turn (Compact while idle) is the smallest turn that fits
// this contract: agent.started, turn.started with compact {focus} instead
// of inputMessageId (it has no user message), then a compaction in the
// order of DESIGN §3 (context.accounted with summaryRequest,
// model.request, runtime.checkpoint of phase summary, message.delta*,
// model.response, context.checkpoint, context.compacted), then
// runtime.checkpoint (phase terminal), turn.completed and agent.stopped.
// It completes whether it compacted or not, and turn.completed's note says
// which: "compacted: …", "nothing to compact: …" (no request was sent) or
// "not compacted (the summary was charged): …"; a failed summary fails it
// with RUNTIME_SUMMARY_FAILED. Being a turn, it is resumed, forked and
// rebuilt (harness request) like any other, with no new event type and no
// new rule in restore.
//
// Steering. Pending steering is applied, oldest first, at the next model
// request, never into a request already sent, and recorded by
// steering.applied. Steering accepted while the final answer streams
// causes another round. Once Cancel has been called, or the turn has
// decided to complete, text is no longer steering: Send waits for the end
// and then starts (or steers) the next turn. A steering append that had
// already begun when Cancel came completes, stays in the log, and is
// inherited by the next turn as pending steering.
//
// Compaction (DESIGN §8, extended). The compacted view keeps word for word
// not only the session's first request but also the current turn's
// request (the user message the turn was admitted with), after the first
// and before the tail, bounded at 8 KiB and marked when cut, whenever the
// kept tail does not hold it: a compaction inside turn 5 (or at its start,
// after steering) would otherwise leave turn 5's task only in the summary.
// The checkpoint records it by message ID (context.turnRequest), so
// ReconstructModelRequest rebuilds the view exactly; checkpoints written
// before it have none and rebuild as they were sent. A summary that is
// spent but not committed is charged (a budget it exhausted ends the turn
// at once) and no automatic summary is tried again in that turn.
//
// Permissions. A policy's Ask effect appends permission.requested and
// waits for Session.Answer or for the turn to be canceled (then it is
// denied with the note "turn canceled"); permission.resolved records the
// answer. Every front end learns the question from the event and answers
// through the session (the TUI's box; harness exec --approve ask, the next
// line typed). An answer's scope once allows the call; run, the tool for
// the rest of the turn; session, the tool for the rest of the session —
// later turns, and a resume, since the checkpoint carries it — until
// Revoke (grants.go). A fork starts with no grant.
//
// Codes returned: RUNTIME_INVALID_INPUT, RUNTIME_RUN_EXISTS,
// RUNTIME_RUN_NOT_FOUND, RUNTIME_EVENT_APPEND_FAILED,
// RUNTIME_MODEL_STREAM_INVALID, RUNTIME_MODEL_TIMEOUT,
// RUNTIME_BUDGET_EXCEEDED, RUNTIME_CONTEXT_OVERFLOW, RUNTIME_SUMMARY_FAILED,
// RUNTIME_INVALID_MESSAGE_STATE, RUNTIME_CHECKPOINT_VERSION,
// RUNTIME_CHECKPOINT_INVALID, RUNTIME_CHECKPOINT_INTERRUPTED,
// RUNTIME_ROUND_LIMIT (SessionConfig.MaxRounds), RUNTIME_LOOP_DETECTED
// (the same call and result SessionConfig.LoopRepeats times in a row);
// model errors (MODEL_*) end a turn as failed with their own code, except
// a first MODEL_CONTEXT_LENGTH in a turn, answered by one compaction and
// the request once more. Text sent to an ending turn waits and starts (or
// steers) the next one; a closed session refuses every command with
// SESS_CLOSED.
//
// The runtime never imports the TUI, Bubble Tea, dockerws or a concrete
// store (internal/deptest checks it): package app opens the store and
// builds the process's Runtime, then opens each Session through it over
// the workspace and the model it opens for that session; the front ends
// (tuiengine, headless) drive the Session app returns.
package runtime
