package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// The read-only local workspace refuses credential files, to @path
// mentions and to the model's own fs.read alike, and leaves out of fs.list
// what the Docker copy leaves out (credentials, --exclude, what git
// ignores): no secret reaches the log.
func TestLocalWorkspaceKeepsCredentialsAndIgnoredFilesOut(t *testing.T) {
	u := newUser(t)
	u.write("a.txt", "alpha\n")
	u.write(".env", "OPENAI_API_KEY=sk-live-must-not-leak\n")
	u.write(".ssh/id_rsa", "PRIVATE-KEY-must-not-leak\n")
	u.write(".gitignore", "build/\n")
	u.write("build/out.txt", "built-must-not-leak\n")
	u.write("notes.log", "log-must-not-leak\n")
	if out, err := exec.Command("git", "-C", u.project, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	script := u.script(`[
	  {"toolCalls":[
	    {"id":"c1","name":"fs.read","arguments":{"path":".env"}},
	    {"id":"c2","name":"fs.read","arguments":{"path":"build/out.txt"}},
	    {"id":"c3","name":"fs.read","arguments":{"path":"notes.log"}},
	    {"id":"c4","name":"fs.list","arguments":{"path":"."}}]},
	  {"content":"done"}]`)
	r := u.run("", "exec", "--json", "--workspace", "local", "--exclude", "*.log", "--fake-model", script, "look at @.env and @.ssh/id_rsa")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	modelID := map[string]string{} // a call's ID → the model's (or user-… for a mention)
	for _, d := range eventsOf[event.ToolCall](r.events) {
		modelID[d.CallID] = d.ModelCallID
	}
	codes := map[string]string{}
	var listed string
	for _, d := range eventsOf[event.ToolResult](r.events) {
		if d.Error != nil {
			codes[modelID[d.CallID]] = d.Error.Code
		} else if d.Tool == "fs.list" {
			listed = string(d.Output)
		}
	}
	want := map[string]errcode.Code{"c1": errcode.WorkspaceCredentialInput, "c2": errcode.WorkspaceNotFound, "c3": errcode.WorkspaceNotFound}
	for id, code := range want {
		if codes[id] != string(code) {
			t.Errorf("call %s: %q, want %s", id, codes[id], code)
		}
	}
	var mentioned int
	for id, code := range codes {
		if strings.HasPrefix(id, "user-") && code == string(errcode.WorkspaceCredentialInput) {
			mentioned++
		}
	}
	if mentioned != 2 {
		t.Errorf("the @path mentions: %v, want two refused with %s", codes, errcode.WorkspaceCredentialInput)
	}
	var list struct {
		Entries []string `json:"entries"`
	}
	if err := json.Unmarshal([]byte(listed), &list); err != nil {
		t.Fatalf("fs.list output %s: %v", listed, err)
	}
	if strings.Join(list.Entries, ",") != ".gitignore,a.txt" {
		t.Errorf("fs.list: %v", list.Entries)
	}
	id := sessionOf(t, r.events)
	if log := u.run("", "events", id).stdout; strings.Contains(log, "must-not-leak") {
		t.Errorf("a secret or an ignored file is in the log:\n%s", log)
	}
}
