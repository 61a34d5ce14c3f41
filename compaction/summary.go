package compaction

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/model"
)

// SummaryInstruction is the system message of a summary round.
const SummaryInstruction = `You compact a coding session so that it can go on within a limited context window. The next message holds a transcript of the conversation so far, oldest first. Write a summary from which another assistant can continue the work without the transcript.

Keep:
- the user's goal, and their requests in their own words where the wording matters;
- every constraint, preference and rule the user stated;
- decisions taken and why, including approaches tried and abandoned;
- files read, created or changed, by path, and what changed;
- commands run and their outcome (passed, failed, the key error);
- open work and the next steps, in order.

If the transcript begins with an earlier conversation summary, fold it in: keep what still holds, drop what was superseded. Be concise and factual; do not invent anything. Write plain text with no preamble. Do not call tools.`

// Bounds of the summary transcript, in bytes of each rendered piece.
const (
	// TranscriptToolBound bounds each tool result and each tool call's
	// arguments.
	TranscriptToolBound = 4096
	// TranscriptTextBound bounds each user, assistant or system message's
	// text. An earlier conversation summary is never cut.
	TranscriptTextBound = 16384
)

// SummaryRequest returns the messages of the summary round for a prefix:
// one system message holding SummaryInstruction, then one user message
// holding the prefix as a role-tagged transcript. Tool calls and results
// appear in the transcript as text, each bounded (TranscriptToolBound) and
// marked when cut, so the summary round itself carries no tool calls and no
// tool messages. An earlier conversation summary in the prefix is rendered
// in full, so summaries chain. Messages get no IDs: the runtime assigns
// them if it records these.
func SummaryRequest(prefix []model.Message) []model.Message {
	return SummaryRequestFocus(prefix, "")
}

// FocusBound bounds the focus text of an on-demand compaction, in bytes.
const FocusBound = 2048

// SummaryRequestFocus is SummaryRequest with the user's focus for an
// on-demand compaction (/compact focus): when focus is not blank, the
// instruction ends with a paragraph asking the summary to keep what
// concerns it in most detail. The focus is cut at FocusBound.
func SummaryRequestFocus(prefix []model.Message, focus string) []model.Message {
	instruction := SummaryInstruction
	if f := strings.TrimSpace(focus); f != "" {
		instruction += "\n\nThe user asked for this compaction and wants the summary to keep in most detail what concerns: " + bounded(f, FocusBound)
	}
	return []model.Message{
		{Role: model.RoleSystem, Content: instruction},
		{Role: model.RoleUser, Content: Transcript(prefix)},
	}
}

// Transcript renders messages as the text the summarizer reads:
//
//	[user msg-1]
//	text
//
//	[earlier summary]
//	text of the summary, without SummaryPrefix
//
//	[assistant msg-2]
//	text, if any
//	[tool call call-1 fs.read] {"path":"a.go"}
//
//	[tool result call-1 fs.read]
//	text
//
// Each piece is cut at a UTF-8 boundary at its bound and marked with the
// number of bytes shown and the full size.
func Transcript(msgs []model.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Transcript of the conversation so far (%d messages, oldest first):\n", len(msgs))
	for _, m := range msgs {
		var head, body string
		switch {
		case m.Role == model.RoleTool:
			head, body = tag("tool result", m.ToolCallID, m.Name), bounded(m.Content, TranscriptToolBound)
		case IsSummary(m):
			head, body = tag("earlier summary", m.ID), strings.TrimPrefix(m.Content, SummaryPrefix)
		default:
			head, body = tag(string(m.Role), m.ID), bounded(m.Content, TranscriptTextBound)
		}
		fmt.Fprintf(&b, "\n%s\n", head)
		if body != "" {
			fmt.Fprintf(&b, "%s\n", body)
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "%s %s\n", tag("tool call", c.ID, c.Name), bounded(string(c.Arguments), TranscriptToolBound))
		}
	}
	return b.String()
}

// tag renders "[kind a b]", leaving out empty parts.
func tag(kind string, parts ...string) string {
	s := "[" + kind
	for _, p := range parts {
		if p != "" {
			s += " " + p
		}
	}
	return s + "]"
}

// bounded returns s, or its first bytes up to limit cut at a UTF-8
// boundary followed by a marker saying how much was kept.
func bounded(s string, limit int) string {
	head, cut := cutUTF8(s, limit)
	if !cut {
		return s
	}
	return fmt.Sprintf("%s\n[… cut: %d of %d bytes shown]", head, len(head), len(s))
}

// cutUTF8 returns s when it is at most limit bytes long, and otherwise its
// longest prefix of at most limit bytes that does not end inside a UTF-8
// sequence, with true.
func cutUTF8(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	// Read the runes from UTFMax bytes before the limit, where the one
	// that straddles it starts at the earliest (reading may begin inside
	// an earlier rune: its rest reads as invalid bytes, each a sequence of
	// its own, as all invalid bytes are); the first to end past the limit
	// is left out.
	i := max(limit-utf8.UTFMax, 0)
	for {
		_, size := utf8.DecodeRuneInString(s[i:])
		if i+size > limit {
			return s[:i], true
		}
		i += size
	}
}
