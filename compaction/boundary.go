package compaction

import (
	"fmt"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// Boundary returns the index where the kept tail starts: msgs[:b] is the
// prefix to summarize, msgs[b:] is kept verbatim.
//
// It starts at len(msgs)-tailMessages and moves back while the tail would
// begin with a tool message, or while a tool message in the tail answers a
// call made by an assistant message before the boundary: an assistant's tool
// calls and all their results stay on one side. A tool message answers the
// nearest earlier call with its ToolCallID. The result is the largest index
// at or below the start with that property.
//
// The prefix must hold at least one non-system message, since system
// messages are kept anyway; otherwise (also for an empty history or one of
// system messages only) Boundary returns RUNTIME_CONTEXT_OVERFLOW. A
// tailMessages below 1 is RUNTIME_INVALID_INPUT.
func Boundary(msgs []model.Message, tailMessages int) (int, error) {
	if tailMessages < 1 {
		return 0, &errcode.Error{
			Code:    errcode.RuntimeInvalidInput,
			Op:      "compaction.boundary",
			Message: fmt.Sprintf("choose compaction boundary: tail of %d messages is below 1", tailMessages),
		}
	}
	first := firstNonSystem(msgs)
	if first < 0 {
		return 0, &errcode.Error{
			Code:    errcode.RuntimeContextOverflow,
			Op:      "compaction.boundary",
			Message: "choose compaction boundary: nothing to summarize: the history holds no message but system messages",
		}
	}
	start := max(len(msgs)-tailMessages, 0)
	b := moveBack(msgs, start, first)
	if b <= first {
		msg := fmt.Sprintf("choose compaction boundary: nothing before the last %d messages to summarize", tailMessages)
		// Only the words differ with this condition (the code is
		// RUNTIME_CONTEXT_OVERFLOW either way; tests assert codes), so its
		// mutants are equivalent as far as tests go.
		if start > first {
			msg += " once the tail is extended to keep tool calls with their results"
		}
		return 0, &errcode.Error{Code: errcode.RuntimeContextOverflow, Op: "compaction.boundary", Message: msg}
	}
	return b, nil
}

// moveBack returns the largest c ≤ b that does not split a tool-call group
// (see Boundary), or a value ≤ floor when there is none above floor.
func moveBack(msgs []model.Message, b, floor int) int {
	owner := owners(msgs)
	scanned := len(msgs) // owner[scanned:] has been checked already
	// (b >= floor is equivalent: one more round from the floor only moves
	// b further down, and any b at or below the floor is refused alike.)
	for b > floor {
		// A tool result in msgs[b:scanned] answering a call made before b
		// pulls the boundary back to that call; msgs[scanned:] did so already.
		lo := b
		for _, a := range owner[b:scanned] {
			if a >= 0 { // a result whose call is known
				lo = min(lo, a)
			}
		}
		scanned = b
		switch {
		case lo < b:
			b = lo
		case msgs[b].Role == model.RoleTool:
			b-- // a result whose call is unknown still never opens the tail
		default:
			return b
		}
	}
	return b
}

// owners returns, for each tool message, the index of the nearest earlier
// assistant message that made its call, and -1 for other messages and for
// a result whose call is unknown. A call ID used twice belongs to its
// latest use.
func owners(msgs []model.Message) []int {
	owner := make([]int, len(msgs))
	latest := make(map[string]int)
	for i, m := range msgs {
		owner[i] = -1
		switch m.Role {
		case model.RoleTool:
			if a, ok := latest[m.ToolCallID]; ok {
				owner[i] = a
			}
		case model.RoleAssistant:
			for _, c := range m.ToolCalls {
				latest[c.ID] = i
			}
		}
	}
	return owner
}

// splits reports whether a tail starting at b would separate a tool-call
// group: the tail begins with a tool message, or a tool message in it
// answers a call made before b.
func splits(msgs []model.Message, b int) bool {
	if b <= 0 || b >= len(msgs) {
		return false
	}
	if msgs[b].Role == model.RoleTool {
		return true
	}
	for _, a := range owners(msgs)[b:] {
		if a >= 0 && a < b {
			return true
		}
	}
	return false
}

// firstNonSystem returns the index of the first message that is not a
// system message, or -1.
func firstNonSystem(msgs []model.Message) int {
	for i, m := range msgs {
		if m.Role != model.RoleSystem {
			return i
		}
	}
	return -1
}
