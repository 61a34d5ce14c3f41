// Package compaction measures how much of the context window a conversation
// occupies, decides when to compact it, chooses what to keep, and builds the
// compacted view (DESIGN §8). It is pure: no I/O, no clock, no model calls.
// The runtime runs the summary round and records every step as events.
//
// Occupancy (Algorithm, "utf8-upper-bound/v1") is the byte length of the
// canonical JSON (model.MarshalCanonical) of Occupied{messages, tools,
// system}, the part of the next request that fills the window; nil slices
// count as []. Events call the figure tokens; it is bytes, a conservative
// upper bound, not a tokenizer. A Meter keeps it incrementally: adding a
// message costs the encoding of that message only, and the figure equals a
// full encoding byte for byte. A raw JSON field that is not valid JSON is
// counted as a JSON string of its bytes (see Occupancy).
//
// Before any usage report, AlgorithmRatio ("char-mix/v1") estimates the
// tokens of those bytes from their character mix (words, other bytes,
// non-ASCII bytes; MixTokens), which a Meter keeps beside the bytes: an
// upper bound with a margin, for prose as for code and JSON.
//
// Calibration turns those bytes into the tokens the model sees, once the
// provider has reported usage (AlgorithmReported, "reported-usage/v1"):
// the prompt tokens of the last plausible report, scaled to the request's
// bytes at that report's ratio, plus a 10 % margin on the bytes added
// since. A calibration is keyed on the provider (its base URL) and the
// model: before any report, for estimated usage, for another model or the
// same model name behind another provider, and after an implausible
// report (fewer tokens than a tenth of the bytes, or more tokens than
// bytes) the byte count stands (Algorithm). The runtime records which rule
// produced each context.accounted.
//
// A Policy {windowTokens, thresholdTokens, tailMessages, reserveTokens}
// drives it: compaction is Due at occupancy ≥ threshold; a request Fits
// when occupancy + reserve ≤ window; the answer is limited by OutputLimit.
//
// A compaction goes: Boundary picks where the kept tail starts (at least
// tailMessages, moved back so that an assistant's tool calls and their
// results are never split; the runtime asks for shorter tails, down to the
// newest complete round, when a longer one leaves nothing to summarize,
// which is how a single long turn compacts); SummaryRequest (or
// SummaryRequestFocus, for an on-demand compaction with a focus text)
// turns the prefix into a summary round of two messages and no tool
// calls; View builds the new history from the prefix's system messages, one "Conversation summary
// (v1): …" system message replacing any earlier one, the session's first
// user request word for word (Pin, bounded at PinBound and marked when
// cut) unless the tail holds it, and the tail unchanged; ViewTurn also
// keeps the current turn's request word for word after it (PinTurn, bound
// and marked the same way) unless it is the first request or in the tail; Check rejects a
// view that is not smaller or does not fit. When even the newest complete
// round does not fit, Elide replaces the large tool results (over
// ElideBound bytes) of a range of the history by a note naming the tool
// and the path it read, so the model can read the file again; the runtime
// records the range (elideBefore) in the checkpoint, so the view stays a
// function of what the checkpoint holds. An Elision shows the messages one
// at a time as Elide would, so the runtime finds the shortest range that
// fits in one linear walk, adjusting its Meter (Shrink) instead of
// encoding the view again per candidate. Nothing here deletes or changes
// the original messages.
//
// Codes returned: RUNTIME_INVALID_INPUT (a policy that does not validate, a
// bad tail size, boundary or first request), RUNTIME_CONTEXT_OVERFLOW
// (nothing to summarize before the tail, a view that is not smaller or
// does not fit), RUNTIME_SUMMARY_FAILED (an empty summary).
//
// compaction imports only model and internal/errcode; never runtime or tui.
package compaction
