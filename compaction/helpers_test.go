package compaction_test

import (
	"encoding/json"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

func sys(content string) model.Message {
	return model.Message{Role: model.RoleSystem, Content: content}
}

func user(id, content string) model.Message {
	return model.Message{ID: id, Role: model.RoleUser, Content: content}
}

func say(id, content string) model.Message {
	return model.Message{ID: id, Role: model.RoleAssistant, Content: content}
}

// call is an assistant message asking for one fs.read per call ID.
func call(id string, callIDs ...string) model.Message {
	m := model.Message{ID: id, Role: model.RoleAssistant}
	for _, c := range callIDs {
		m.ToolCalls = append(m.ToolCalls, model.ToolCall{ID: c, Name: "fs.read", Arguments: json.RawMessage(`{"path":"a.go"}`)})
	}
	return m
}

// result is the tool message answering callID.
func result(id, callID string) model.Message {
	return model.Message{ID: id, Role: model.RoleTool, ToolCallID: callID, Name: "fs.read", Content: `{"ok":true}`}
}

// mustCode fails unless err carries code ("" for no error).
func mustCode(t *testing.T, err error, code errcode.Code) {
	t.Helper()
	if got := errcode.Of(err); got != code {
		t.Fatalf("code = %q, want %q (err: %v)", got, code, err)
	}
}
