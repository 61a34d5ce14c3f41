package main

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

// In a real terminal with --approve ask: "for this session" (s in the
// approval box) answers the next turn's command without a question, and
// after a resume too; /permissions lists the grant and takes it back, and
// the next command is asked about again. The log records the grant and
// the revocation.
func TestTUIPermissionForTheSession(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# grants\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--image", "harness-busybox", "--approve", "ask", "--fake-model", mustAbs(t, tuiScript("session_grant.json"))))
	tm.waitFor("Ready.", "approve: ask")

	tm.line("run one")
	tm.waitFor("? process.exec wants to run echo one", "tab answer")
	tm.keys("Tab")
	tm.waitFor("s for this session", "y/a/s/n/r answer")
	tm.keys("s")
	tm.waitGone("? process.exec wants to run echo one")
	tm.waitFor("Ran one.", "approved for this session")

	// The next turn's command runs without a question.
	tm.line("run two")
	s := tm.waitFor("Ran two.")
	if strings.Contains(s, "? process.exec wants to run echo two") {
		t.Errorf("the session grant asked again:\n%s", s)
	}
	tm.line("/permissions")
	tm.waitFor("Allowed for this session", "process.exec   /permissions revoke process.exec")
	tm.keys("Escape")
	tm.waitGone("Allowed for this session")
	id := tm.quit(1)

	// Resumed: still allowed; then revoked, and asked again.
	tm.line(harnessCmd(u, "resume", id, "--image", "harness-busybox", "--approve", "ask", "--fake-model", mustAbs(t, tuiScript("session_grant_resume.json"))))
	tm.waitFor("Ask anything", id[len(id)-12:]) // the resumed session's header
	tm.line("run three")
	s = tm.waitFor("Ran three.")
	if strings.Contains(s, "? process.exec wants to run echo three") {
		t.Errorf("the session grant asked again after the resume:\n%s", s)
	}
	tm.line("/permissions revoke process.exec")
	tm.waitFor("process.exec will be asked about again.")
	tm.line("/permissions")
	tm.waitFor("Nothing is allowed for this session")
	tm.keys("Escape")
	tm.waitGone("Nothing is allowed for this session")
	tm.line("run four")
	tm.waitFor("? process.exec wants to run echo four", "tab answer")
	tm.answer("y", "? process.exec wants to run echo four")
	tm.waitFor("Ran four.")
	tm.quit(2)

	var asked, revoked int
	var scopes []string
	for _, e := range u.storedEvents(id) {
		switch d := e.Data.(type) {
		case event.PermissionRequested:
			asked++
		case event.PermissionResolved:
			scopes = append(scopes, d.Scope)
		case event.PermissionRevoked:
			revoked++
			if d.Action != "process.exec" {
				t.Errorf("revoked %s", d.Action)
			}
		}
	}
	if asked != 2 || revoked != 1 || strings.Join(scopes, ",") != "session,once" {
		t.Errorf("%d questions, %d revocations, scopes %v; want 2, 1, [session once]", asked, revoked, scopes)
	}
}

// exec --approve ask offers the same answer on its terminal: s allows the
// tool for the session, so `exec --resume` runs the next command of that
// tool without asking.
func TestExecAskForTheSession(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# grants\n")
	one := u.script(`[{"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["echo","one"]}}],"usage":{"promptTokens":10,"completionTokens":3}},
	  {"content":"Ran one.","usage":{"promptTokens":20,"completionTokens":3}}]`)
	two := u.script(`[{"toolCalls":[{"id":"c2","name":"process.exec","arguments":{"argv":["echo","two"]}}],"usage":{"promptTokens":30,"completionTokens":3}},
	  {"content":"Ran two.","usage":{"promptTokens":40,"completionTokens":3}}]`)
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "exec", "--image", "harness-busybox", "--approve", "ask", "--fake-model", one, "run one"))
	tm.waitFor("? process.exec wants to run echo one", "s for this session")
	tm.line("s")
	s := tm.waitUntil("the answer, the resume line and the prompt", func(s string) bool {
		return strings.Contains(s, "Ran one.") && resumeLine.MatchString(s) && strings.HasSuffix(strings.TrimRight(s, "\n "), strings.TrimSpace(prompt))
	})
	id := resumeLine.FindStringSubmatch(s)[1]

	tm.line(harnessCmd(u, "exec", "--image", "harness-busybox", "--approve", "ask", "--fake-model", two, "--resume", id, "run two"))
	s = tm.waitUntil("the second answer and the prompt", func(s string) bool {
		return strings.Contains(s, "Ran two.") && strings.HasSuffix(strings.TrimRight(s, "\n "), strings.TrimSpace(prompt))
	})
	if strings.Contains(s, "? process.exec wants to run echo two") {
		t.Errorf("the session grant asked again:\n%s", s)
	}
	var scopes []string
	for _, e := range u.storedEvents(id) {
		if d, ok := e.Data.(event.PermissionResolved); ok {
			scopes = append(scopes, d.Scope+"/"+d.Decision)
		}
	}
	if strings.Join(scopes, ",") != "session/allow" {
		t.Errorf("answers %v, want [session/allow]", scopes)
	}
}
