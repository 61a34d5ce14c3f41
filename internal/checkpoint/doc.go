// Package checkpoint is the runtime.checkpoint format, version 1, as pure
// functions: its types, the strict parser (Parse), the canonical encoder
// (Marshal), the fold of the delta events of a session's log into whole
// checkpoints (Chain), the one scan of a log that finds what restore, fork
// and `harness request` need (Scan), the decision whether a session can be
// resumed (Restore, RestoreLog), and the layout of the store's checkpoint
// row, kept up to date by appends (Row.Save) and read back whole (Load).
//
// A checkpoint is everything needed to rebuild a session and the exact next
// model request without calling the model, Docker or the clock. The package
// reads bytes and returns values: it does no I/O and imports only event,
// model, compaction (the policy and calibration types), errcode and the standard library.
//
// Codes returned: RUNTIME_CHECKPOINT_INVALID (a payload or log that breaks
// the format: unknown keys, non-canonical bytes, inconsistent usage, a turn
// missing from sessionTurns, a compaction cursor past the history,
// duplicates, wrong phase fields, more than MaxBytes, a delta whose base
// does not match the previous checkpoint), RUNTIME_CHECKPOINT_VERSION (a
// version other than 1), RUNTIME_CHECKPOINT_INTERRUPTED (a log whose last
// turn did not reach a terminal checkpoint matched by its turn.completed),
// and the EVENT_* codes of an event that does not decode.
package checkpoint

//go:generate go run ./internal/record
