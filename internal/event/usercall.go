package event

import (
	"strconv"
	"strings"
)

// The calls a user's own message makes (a !command, its @path mentions)
// go through the tools as the model's do. Their tool.call carries the
// user message's ID as its requestId and one of these model call IDs,
// which is how a reader of the log tells them from the model's.

// UserShellCallID is the model call ID of the !command of user message
// messageID (process.exec).
func UserShellCallID(messageID string) string { return "user-" + messageID + "-shell" }

// UserMentionCallID is the model call ID of the i-th @path mention of user
// message messageID (fs.read).
func UserMentionCallID(messageID string, i int) string {
	return "user-" + messageID + "-at" + strconv.Itoa(i)
}

// Kinds of call UserCallKind reports.
const (
	UserShell   = "shell"
	UserMention = "mention"
)

// UserCallKind reports which of a user message's own calls d is
// (UserShell, UserMention), or "" for a model's call. The request must be a
// message (msg-…): a model's calls are made under its request (req-…), so
// a model that names its call like a user's is still the model's.
func UserCallKind(d ToolCall) string {
	if !strings.HasPrefix(d.RequestID, "msg-") {
		return ""
	}
	switch own := "user-" + d.RequestID; {
	case d.ModelCallID == own+"-shell":
		return UserShell
	case strings.HasPrefix(d.ModelCallID, own+"-at"):
		return UserMention
	}
	return ""
}
