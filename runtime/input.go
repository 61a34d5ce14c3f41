package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/tools"
)

// What a provider sends is made to fit the log before anything of it is
// recorded, so that no answer ends a turn with an event code: bytes that
// are not UTF-8 become U+FFFD (as command output does), JSON null arguments
// are kept as text the tool refuses with TOOL_BAD_INPUT, and a name or
// arguments over their bound are kept as a short note instead of
// megabytes that every later request would carry.

// MaxToolNameBytes bounds a tool name as recorded: a longer one (no tool
// has one) is cut to its start and its length.
const MaxToolNameBytes = 256

// NoteReplacedUTF8 is the turn note when the answer held bytes that are
// not UTF-8.
const NoteReplacedUTF8 = "the model's answer held bytes that are not UTF-8; they were replaced with U+FFFD"

// argsOmitted starts the text that stands for arguments over their bound.
const argsOmitted = "arguments of "

// utf8Text returns s with every byte sequence that is not UTF-8 replaced
// with U+FFFD, and whether any was.
func utf8Text(s string) (string, bool) {
	if utf8.ValidString(s) {
		return s, false
	}
	return strings.ToValidUTF8(s, "\uFFFD"), true
}

// excerpt is the start of provider text for an error message: at most n
// bytes, whole runes, valid UTF-8.
func excerpt(s string, n int) string {
	if len(s) <= n {
		s, _ = utf8Text(s)
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	s, _ = utf8Text(s[:cut])
	return s + "…"
}

// fitCall returns c as it is recorded and sent back, and whether bytes
// that are not UTF-8 were replaced. Arguments that are JSON null become
// the text "null" (BadArguments): the log has no null value, and the tool
// answers TOOL_BAD_INPUT. Arguments over tools.MaxArgsBytes (which no
// valid call reaches) and a name over MaxToolNameBytes are replaced by a
// note of their size.
func fitCall(c model.ToolCall) (model.ToolCall, bool) {
	var replaced bool
	if !utf8.ValidString(c.Name) {
		c.Name, replaced = strings.ToValidUTF8(c.Name, "\uFFFD"), true
	}
	if len(c.Name) > MaxToolNameBytes {
		c.Name = fmt.Sprintf("%s (a name of %d bytes)", excerpt(c.Name, 64), len(c.Name))
	}
	switch {
	case len(c.Arguments) > tools.MaxArgsBytes:
		c.Arguments = quoteText(fmt.Sprintf("%s%d bytes, over the bound of %d, not kept", argsOmitted, len(c.Arguments), tools.MaxArgsBytes))
		c.BadArguments = true
	case !c.BadArguments && string(bytes.TrimSpace(c.Arguments)) == "null":
		c.Arguments, c.BadArguments = quoteText(string(c.Arguments)), true
	case !utf8.Valid(c.Arguments):
		// Valid JSON holds such bytes only inside its strings, where
		// U+FFFD keeps it valid.
		c.Arguments, replaced = bytes.ToValidUTF8(c.Arguments, []byte("\uFFFD")), true
	}
	return c, replaced
}

func quoteText(s string) json.RawMessage {
	q, _ := model.MarshalCanonical(s)
	return q
}

// badArgsMessage is the TOOL_BAD_INPUT message of a call whose arguments
// are kept as text: JSON that is not an object (null), a note that they
// were over their bound, or text that is not JSON.
func badArgsMessage(name string, args json.RawMessage) string {
	var text string
	_ = json.Unmarshal(args, &text)
	switch {
	case strings.HasPrefix(text, argsOmitted):
		return "the " + text + "; call " + name + " again with smaller arguments (write a large file in parts)"
	case json.Valid([]byte(text)):
		if _, perr := tools.Parse(name, json.RawMessage(text)); perr != nil {
			return perr.Message
		}
	}
	return "the arguments are not valid JSON (" + badArgsExcerpt(args) + "); call " + excerpt(name, 80) + " again with one JSON object"
}

// joinNote adds note to a turn's note.
func joinNote(prev, note string) string {
	switch {
	case prev == "":
		return note
	case strings.Contains(prev, note):
		return prev
	}
	return prev + "; " + note
}

// appendDelta records one piece of the answer's text, bytes that are not
// UTF-8 replaced, and adds it to shown.
func (t *turn) appendDelta(requestID, msgID string, seq int, delta string, shown *strings.Builder) error {
	delta, _ = utf8Text(delta)
	shown.WriteString(delta)
	_, err := t.append(event.MessageDelta{RunID: t.r.id, SessionID: t.s.id, TurnID: t.r.turnID, RequestID: requestID,
		MessageID: msgID, Sequence: seq, Delta: delta})
	return err
}

// storeCause is a failed append's code and the store's sentence (which
// names the store file of a full disk, the server that went away): the
// turn's outcome shows it.
func storeCause(err error) string {
	code, msg := string(errcode.Of(err)), errcode.Message(err)
	if msg == "" || msg == code {
		return code
	}
	return code + ": " + excerpt(msg, 400)
}
