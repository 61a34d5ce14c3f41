package compaction

import (
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

// SummaryPrefix opens the system message that carries a conversation
// summary in a compacted view.
const SummaryPrefix = "Conversation summary (v1): "

// PinBound is the most bytes of the session's first user request (and of
// the current turn's request) a compacted view keeps word for word;
// PinMarker follows a first request cut there, TurnPinMarker a current
// turn's request.
const (
	PinBound      = 8192
	PinMarker     = "\n[… first request cut at 8 KiB; the full text is in the session log]"
	TurnPinMarker = "\n[… this turn's request cut at 8 KiB; the full text is in the session log]"
)

// IsSummary reports whether m is a conversation summary written by View: a
// system message that starts with SummaryPrefix.
func IsSummary(m model.Message) bool {
	return m.Role == model.RoleSystem && strings.HasPrefix(m.Content, SummaryPrefix)
}

// Pin returns the message a compacted view keeps for the session's first
// user request: the message itself when its content is at most PinBound
// bytes; otherwise a copy whose content is its first PinBound bytes or
// fewer, cut at a UTF-8 boundary, followed by PinMarker. ID, role and every
// other field are kept. Pin of a pinned message returns it unchanged.
func Pin(first model.Message) model.Message { return pin(first, PinMarker) }

// PinTurn is Pin for the current turn's request, marked with TurnPinMarker
// when cut.
func PinTurn(request model.Message) model.Message { return pin(request, TurnPinMarker) }

func pin(m model.Message, marker string) model.Message {
	if len(m.Content) <= PinBound {
		return m
	}
	// A pinned message's text without its marker is at most PinBound
	// bytes: cut again, it stays as it is. (The marker opens with a line
	// end, so no rune of the text runs on into it.)
	text, _ := strings.CutSuffix(m.Content, marker)
	head, _ := cutUTF8(text, PinBound)
	m.Content = head + marker
	return m
}

// View returns the compacted view of msgs with the tail starting at
// boundary, in this order:
//
//  1. the system messages of the prefix msgs[:boundary], in order, except an
//     earlier conversation summary (IsSummary), which the new one replaces;
//  2. one system message SummaryPrefix + summary (surrounding white space
//     trimmed), without an ID: the runtime may assign one;
//  3. the session's first user request, through Pin, unless it is in the
//     tail;
//  4. the tail msgs[boundary:], unchanged.
//
// first is the session's first user request. When nil, View takes the
// first user message of msgs and pins it if it lies in the prefix. When
// given (after an earlier compaction it may no longer be in msgs), it is
// pinned unless the tail holds a message with its ID (or, for a message
// without an ID, one equal to it).
//
// Codes: RUNTIME_SUMMARY_FAILED for an empty or white-space summary;
// RUNTIME_INVALID_INPUT for a boundary outside 0..len(msgs), one that
// separates tool calls from their results (see Boundary), or a first that
// is not a user message. The result shares no slice with msgs except the
// messages' own tool calls.
func View(msgs []model.Message, boundary int, summary string, first *model.Message) ([]model.Message, error) {
	return ViewTurn(msgs, boundary, summary, first, nil)
}

// ViewTurn is View that also keeps the current turn's request word for
// word: after the pinned first request (step 3) comes turn through
// PinTurn, unless it is nil, is the first request itself (the same ID), or
// is in the tail. So a compaction inside a later turn, or at its start
// after steering, never leaves that turn's task only in the summary.
// Codes as View; RUNTIME_INVALID_INPUT too for a turn that is not a user
// message.
func ViewTurn(msgs []model.Message, boundary int, summary string, first, turn *model.Message) ([]model.Message, error) {
	summary = strings.TrimSpace(summary)
	if summary == "" {
		return nil, &errcode.Error{
			Code:    errcode.RuntimeSummaryFailed,
			Op:      "compaction.view",
			Message: "build compacted view: the summary is empty",
		}
	}
	if boundary < 0 || boundary > len(msgs) {
		return nil, invalid("build compacted view: boundary %d is outside 0..%d", boundary, len(msgs))
	}
	if splits(msgs, boundary) {
		return nil, invalid("build compacted view: boundary %d separates tool calls from their results", boundary)
	}
	if first != nil && first.Role != model.RoleUser {
		return nil, invalid("build compacted view: the first request has role %q, not user", first.Role)
	}
	if turn != nil && turn.Role != model.RoleUser {
		return nil, invalid("build compacted view: the turn's request has role %q, not user", turn.Role)
	}
	prefix, tail := msgs[:boundary], msgs[boundary:]

	pin := first
	if first == nil {
		for i, m := range msgs {
			if m.Role == model.RoleUser {
				if i < boundary {
					pin = &msgs[i]
				}
				break
			}
		}
	} else if inTail(tail, *first) {
		pin = nil
	}
	if turn != nil && (inTail(tail, *turn) || (first != nil && sameMessage(*first, *turn)) || (pin != nil && sameMessage(*pin, *turn))) {
		turn = nil
	}

	view := make([]model.Message, 0, len(prefix)+3+len(tail))
	for _, m := range prefix {
		if m.Role == model.RoleSystem && !IsSummary(m) {
			view = append(view, m)
		}
	}
	view = append(view, model.Message{Role: model.RoleSystem, Content: SummaryPrefix + summary})
	if pin != nil {
		view = append(view, Pin(*pin))
	}
	if turn != nil {
		view = append(view, PinTurn(*turn))
	}
	return append(view, tail...), nil
}

// inTail reports whether tail holds first (sameMessage).
func inTail(tail []model.Message, first model.Message) bool {
	for _, m := range tail {
		if sameMessage(m, first) {
			return true
		}
	}
	return false
}

// sameMessage: the same ID, or for messages without an ID the same role
// and content.
func sameMessage(m, first model.Message) bool {
	if first.ID != "" {
		return m.ID == first.ID
	}
	return m.ID == "" && m.Role == first.Role && m.Content == first.Content
}

func invalid(format string, args ...any) error {
	return &errcode.Error{
		Code:    errcode.RuntimeInvalidInput,
		Op:      "compaction.view",
		Message: fmt.Sprintf(format, args...),
	}
}
