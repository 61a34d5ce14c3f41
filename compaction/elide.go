package compaction

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/model"
)

// ElideBound is the most bytes of a tool result Elide keeps; a longer one
// is replaced by a note.
const ElideBound = 2048

// ElidedPrefix opens the note that replaces an elided tool result.
const ElidedPrefix = "[tool output elided to save context: "

// Elide returns msgs with every tool message in msgs[from:before] whose
// content is longer than ElideBound bytes replaced by a copy whose content
// is a note: how long the output was, that the original stays in the
// session log, and, when the call that asked for it named a path, to read
// that path again if it is needed. IDs, roles and call IDs are kept, so a
// view built on the result keeps tool calls with their results. It is pure
// and deterministic; out-of-range bounds are clamped. msgs itself is
// returned when nothing is elided, else a copy. Its cost is linear in
// msgs (an Elision walks the range).
func Elide(msgs []model.Message, from, before int) []model.Message {
	from, before = max(from, 0), min(before, len(msgs))
	var out []model.Message
	el := NewElision(msgs, from)
	for i := from; i < before; i++ {
		m, ok := el.At(i)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]model.Message(nil), msgs...)
		}
		out[i] = m
	}
	if out == nil {
		return msgs
	}
	return out
}

// Elision walks msgs forward from an index and says how Elide shows each
// message, so that a caller can weigh elision ranges one message at a time
// (the runtime extends the range until the request fits). A tool result's
// call is looked up in the assistant message that opened its round (the
// nearest message before it that is not a tool result), so a walk over n
// messages costs O(n), however long the history before it.
type Elision struct {
	msgs  []model.Message
	next  int                       // the next index At may look at
	owner int                       // the assistant message of the round at next, or -1
	calls map[string]model.ToolCall // owner's calls by ID, when it has many
}

// NewElision starts a walk of msgs at index from.
func NewElision(msgs []model.Message, from int) *Elision {
	e := &Elision{msgs: msgs, next: from, owner: -1}
	for i := min(from, len(msgs)) - 1; i >= 0; i-- {
		if msgs[i].Role != model.RoleTool {
			e.setOwner(i)
			break
		}
	}
	return e
}

// At returns msgs[i] as Elide shows it, and true when that is an elided
// copy (a tool result over ElideBound bytes). Indexes must not go back
// between calls; skipping ahead is allowed.
func (e *Elision) At(i int) (model.Message, bool) {
	// (e.next < i is equivalent: msgs[i] itself opens no round for its
	// own lookup, since only a tool result is looked up, and the next call
	// walks from it.)
	for ; e.next <= i; e.next++ {
		if e.msgs[e.next].Role != model.RoleTool {
			e.setOwner(e.next)
		}
	}
	m := e.msgs[i]
	if m.Role != model.RoleTool || len(m.Content) <= ElideBound {
		return m, false
	}
	m.Content = elidedNote(e.call(m.ToolCallID), m)
	return m, true
}

// manyCalls is how many calls an assistant message needs before its calls
// are looked up through a map rather than a scan. The choice changes only
// speed (both find an ID's first call), so mutants of the condition in
// setOwner are equivalent.
const manyCalls = 8

func (e *Elision) setOwner(i int) {
	e.owner, e.calls = i, nil
	if calls := e.msgs[i].ToolCalls; len(calls) > manyCalls {
		e.calls = make(map[string]model.ToolCall, len(calls))
		for _, c := range calls {
			if _, dup := e.calls[c.ID]; !dup {
				e.calls[c.ID] = c
			}
		}
	}
}

// call returns the call of the current round with this ID, if any.
func (e *Elision) call(id string) *model.ToolCall {
	if e.owner < 0 {
		return nil
	}
	if e.calls != nil {
		if c, ok := e.calls[id]; ok {
			return &c
		}
		return nil
	}
	for _, c := range e.msgs[e.owner].ToolCalls {
		if c.ID == id {
			return &c
		}
	}
	return nil
}

// IsElided reports whether m is a tool result Elide replaced.
func IsElided(m model.Message) bool {
	return m.Role == model.RoleTool && strings.HasPrefix(m.Content, ElidedPrefix)
}

// elidedNote is the note for the tool result m, which call (nil: not
// found) asked for.
func elidedNote(call *model.ToolCall, m model.Message) string {
	name, path := "", ""
	if call != nil {
		name = call.Name
		var args struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(call.Arguments, &args) == nil {
			path = args.Path
		}
	}
	note := fmt.Sprintf("%s%d bytes", ElidedPrefix, len(m.Content))
	if name != "" {
		note += " from " + name
	}
	note += "; the original is kept in the session log"
	if path != "" {
		note += fmt.Sprintf(". Read %s again if you need it", path)
	}
	return note + "]"
}
