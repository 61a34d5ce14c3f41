package compaction

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/model"
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
// returned when nothing is elided, else a copy.
func Elide(msgs []model.Message, from, before int) []model.Message {
	from, before = max(from, 0), min(before, len(msgs))
	var out []model.Message
	for i := from; i < before; i++ {
		m := msgs[i]
		if m.Role != model.RoleTool || len(m.Content) <= ElideBound {
			continue
		}
		if out == nil {
			out = append([]model.Message(nil), msgs...)
		}
		out[i].Content = elidedNote(msgs[:i], m)
	}
	if out == nil {
		return msgs
	}
	return out
}

// IsElided reports whether m is a tool result Elide replaced.
func IsElided(m model.Message) bool {
	return m.Role == model.RoleTool && strings.HasPrefix(m.Content, ElidedPrefix)
}

// elidedNote is the note for the tool result m; before holds the messages
// before it, where the call that asked for it is looked up (nearest first).
func elidedNote(before []model.Message, m model.Message) string {
	name, path := "", ""
	for i := len(before) - 1; i >= 0 && name == ""; i-- {
		for _, c := range before[i].ToolCalls {
			if c.ID == m.ToolCallID {
				name = c.Name
				var args struct {
					Path string `json:"path"`
				}
				if json.Unmarshal(c.Arguments, &args) == nil {
					path = args.Path
				}
				break
			}
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
