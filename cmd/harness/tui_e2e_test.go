package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

func tuiScript(name string) string { return filepath.Join("testdata", "tui", name) }

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The end-to-end run, in a real terminal with Docker and SQLite:
// start harness, send a prompt, see the tool cards, steer while the model
// works and see the steering go queued → applied, cancel a turn with
// Ctrl+C, quit, resume the session by ID and continue it, then reopen it
// from the picker of `harness resume`.
func TestTUIEndToEnd(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("notes.md", "# Notes\n\n- nothing yet\n")
	tm := newTerminal(t, u)
	first, resume := mustAbs(t, tuiScript("first.json")), mustAbs(t, tuiScript("resume.json"))

	tm.line(harnessCmd(u, "--image", "harness-busybox", "--fake-model", first))
	tm.waitFor("Ready.", "docker harness-busybox@sha256:")

	// A prompt; the tool cards appear with their outcome.
	tm.line("update the notes")
	s := tm.waitFor("you  update the notes", "fs.read  notes.md", "fs.write  notes.md  +2 −1", "process.exec  ls", "+- the TUI works")
	if strings.Count(s, "✓") < 3 {
		tm.waitUntil("three finished cards", func(s string) bool { return strings.Count(s, "✓") >= 3 })
	}

	// The model is working on its second answer (4 s): steer it.
	tm.line("keep it short")
	tm.waitFor("you · steering · queued", "keep it short", "[steer · queued]")
	tm.waitFor("you · steering · applied ✓", "Noted, I kept the notes short.", "✓ completed · 3 model requests · 3 tool calls")
	tm.waitGone("[steer · queued]")

	// A turn that hangs, canceled with Ctrl+C.
	tm.line("now the slow part")
	tm.waitFor("Starting the slow part", "esc cancel")
	tm.keys("C-c")
	tm.waitFor("⊘ canceled", "(interrupted)", "ctrl+c quit")

	// Ctrl+C on the idle screen quits and prints how to resume.
	id := tm.quit(1)

	// Resume by ID: the earlier transcript is there; a follow-up continues.
	tm.line(harnessCmd(u, "resume", id, "--image", "harness-busybox", "--fake-model", resume))
	// "Ask anything" is the resumed screen's own (the scrollback left by
	// the first run holds the rest).
	tm.waitFor("Starting the slow part", "⊘ canceled", "Noted, I kept the notes short.", id[len(id)-12:], "Ask anything")
	tm.line("and one more thing")
	tm.waitFor("you  and one more thing", "Welcome back: the notes are updated.")
	tm.waitUntil("the follow-up's ending", func(s string) bool {
		return strings.Count(s, "✓ completed") >= 2 || strings.Contains(s, "✓ completed · 1 model request · 0 tool calls")
	})
	if got := tm.quit(2); got != id {
		t.Errorf("resumed session printed %s, want %s", got, id)
	}

	// `harness resume` without an ID opens the picker; Enter reopens it.
	tm.line(harnessCmd(u, "resume", "--image", "harness-busybox", "--fake-model", resume))
	tm.waitFor("Resume a session", "update the notes", "completed")
	tm.keys("Enter")
	tm.waitFor("Welcome back: the notes are updated.", "ctrl+c quit")
	if got := tm.quit(3); got != id {
		t.Errorf("picked session printed %s, want %s", got, id)
	}

	// The SQLite log agrees with the screen.
	r := u.run("", "events", id)
	if r.code != 0 {
		t.Fatalf("harness events: exit %d\n%s", r.code, r.stderr)
	}
	var statuses []string
	steered := false
	for _, e := range decodeLines(t, r.stdout) {
		switch d := e.Data.(type) {
		case event.TurnCompleted:
			statuses = append(statuses, d.Status)
		case event.SteeringApplied:
			steered = true
		}
	}
	if got := strings.Join(statuses, ","); got != "completed,canceled,completed" || !steered {
		t.Errorf("stored turns %s (steering applied: %v), want completed,canceled,completed with steering", got, steered)
	}
	// The host tree is untouched until /apply.
	if b, _ := os.ReadFile(filepath.Join(u.project, "notes.md")); string(b) != "# Notes\n\n- nothing yet\n" {
		t.Errorf("the host notes.md changed without /apply:\n%s", b)
	}
}

// With --approve ask the TUI answers the runtime's permission questions:
// allow once, allow for the run, deny; then /diff shows the patch and
// /apply applies it to the host tree, and refuses once the host changed.
func TestTUIApprovalsDiffApply(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# approvals\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--image", "harness-busybox", "--approve", "ask", "--fake-model", mustAbs(t, tuiScript("approve.json"))))
	tm.waitFor("Ready.", "approve: ask")

	tm.line("write hello")
	tm.waitFor("? fs.write wants to write hello.txt", "+hello", "y allow once", "tab answer")
	tm.answer("y", "? fs.write wants to write hello.txt")
	tm.waitFor("? process.exec wants to run cat hello.txt")
	tm.answer("a", "? process.exec wants to run cat hello.txt")
	tm.waitFor("? fs.write wants to write secret.txt")
	tm.answer("n", "? fs.write wants to write secret.txt") // denies; the turn goes on (esc would stop it)
	s := tm.waitFor("✓ completed", "Done: hello.txt is written.", "✗ TOOL_PERMISSION_DENIED", "approved for this turn")
	if strings.Contains(s, "? process.exec wants to run ls") {
		t.Error("the run-wide grant asked again")
	}

	tm.line("/diff")
	tm.waitFor("Workspace patch", "+hello", "esc close")
	tm.keys("Escape")
	tm.waitGone("Workspace patch")

	tm.line("/apply")
	tm.waitFor("Apply to "+u.project+"?", "hello.txt", "y apply to")
	tm.keys("y")
	// Said once, by the session's log (patch.applied).
	if scr := tm.waitFor("applied the workspace patch to " + u.project); strings.Contains(scr, "applied the patch to") {
		t.Errorf("the apply is said twice:\n%s", scr)
	}
	if b, err := os.ReadFile(filepath.Join(u.project, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("host hello.txt after /apply: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(u.project, "secret.txt")); !os.IsNotExist(err) {
		t.Errorf("the denied write reached the host: %v", err)
	}

	// The host now has the file: the same patch is already applied, and
	// the screen says so (not that the host tree changed under it).
	tm.line("/apply")
	tm.waitFor("Already applied", "already holds these changes")
	tm.keys("Escape")
	tm.waitGone("Already applied")
	tm.quit(1)
}

// The report, in a real terminal: typing "wait, any ideas?" while
// a command waits for approval approved it for the whole run. Now the text
// stays in the input, nothing is approved, and Enter denies the command
// with the typed text as the reason the model reads.
func TestTUITypingDuringApprovalNeverApproves(t *testing.T) {
	u := newUser(t)
	u.write("README.md", "# approvals\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--workspace", "local", "--approve", "ask", "--fake-model", mustAbs(t, tuiScript("deny_reason.json"))))
	tm.waitFor("approve: ask")
	tm.line("clean up")
	tm.waitFor("? process.exec wants to run rm -rf build", "tab answer")
	tm.typeText("wait, any ideas? yes, all of them")
	tm.waitFor("› wait, any ideas? yes, all of them", "enter deny, telling the model what you typed")
	s := tm.screen()
	if !strings.Contains(s, "? process.exec wants to run rm -rf build") || strings.Contains(s, "approved") {
		t.Fatalf("typing answered the question:\n%s", s)
	}
	tm.keys("Enter")
	tm.waitGone("? process.exec wants to run")
	tm.waitFor("✗ TOOL_PERMISSION_DENIED", "Understood, I will not delete anything.", "✓ completed")
	id := tm.quit(1)

	r := u.run("", "events", id)
	if r.code != 0 {
		t.Fatalf("harness events: exit %d\n%s", r.code, r.stderr)
	}
	var told bool
	for _, e := range decodeLines(t, r.stdout) {
		switch d := e.Data.(type) {
		case event.PermissionResolved:
			if d.Decision != "deny" {
				t.Errorf("the permission was resolved %q, want deny", d.Decision)
			}
		case event.MessageCompleted:
			if d.Role == "tool" && strings.Contains(d.Content, "wait, any ideas? yes, all of them") && strings.Contains(d.Content, string(errcode.ToolPermissionDenied)) {
				told = true
			}
		}
	}
	if !told {
		t.Errorf("the model was not told the reason:\n%s", r.stdout)
	}
}

// The audit's report, in a real terminal: "look at @src/main", Tab (meant
// to complete), then " more" approved the command and ate the space. A Tab
// with a draft is the draft's: the question keeps waiting, every typed
// character stays in the input, and Enter denies with the whole text.
func TestTUITabWithADraftNeverApproves(t *testing.T) {
	u := newUser(t)
	u.write("README.md", "# approvals\n")
	u.write("src/main.go", "package main\n")
	u.write("src/main_test.go", "package main\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--workspace", "local", "--approve", "ask", "--fake-model", mustAbs(t, tuiScript("deny_reason.json"))))
	tm.waitFor("approve: ask")
	tm.line("clean up")
	tm.waitFor("? process.exec wants to run rm -rf build", "tab answer")
	tm.typeText("look at @src/main")
	tm.waitFor("› look at @src/main")
	tm.keys("Tab")
	tm.typeText(" more")
	s := tm.waitFor("› look at @src/main more", "enter deny, telling the model what you typed")
	if !strings.Contains(s, "? process.exec wants to run rm -rf build") || strings.Contains(s, "y/a/s/n/r answer") {
		t.Fatalf("the Tab gave the question the keys:\n%s", s)
	}
	tm.keys("Enter")
	tm.waitFor("✗ TOOL_PERMISSION_DENIED", "Understood, I will not delete anything.", "✓ completed")
	id := tm.quit(1)

	r := u.run("", "events", id)
	if r.code != 0 {
		t.Fatalf("harness events: exit %d\n%s", r.code, r.stderr)
	}
	resolved := 0
	for _, e := range decodeLines(t, r.stdout) {
		if d, ok := e.Data.(event.PermissionResolved); ok {
			resolved++
			if d.Decision != "deny" || !strings.Contains(d.Note, "look at @src/main more") {
				t.Errorf("the permission was resolved %q (%q), want a deny with the whole text", d.Decision, d.Note)
			}
		}
	}
	if resolved != 1 {
		t.Errorf("%d permission.resolved events, want 1", resolved)
	}
}

// The report: overwriting a 140-line README the model never read
// with 3 lines showed "+3 −0" on the card while the question said
// otherwise. Both count against the workspace file: +3 −140, before and
// after the write, and again when the session is resumed. The question
// shows the new lines too, not only the head of the old ones.
func TestTUIWriteCardCountsTheRealFile(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	var readme strings.Builder
	for i := range 140 {
		readme.WriteString("line " + strconv.Itoa(i+1) + " of a long README\n")
	}
	u.write("README.md", readme.String())
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--image", "harness-busybox", "--approve", "ask", "--fake-model", mustAbs(t, tuiScript("overwrite.json"))))
	tm.waitFor("Ready.", "approve: ask")
	tm.line("shorten the README")
	// The collapsed question shows what gets written, not only the old lines.
	s := tm.waitFor("? fs.write wants to write README.md  +3 −140", "fs.write  README.md  +3 −140",
		"-line 1 of a long README", "more removed lines", "+A tiny README.", "+The end.")
	if strings.Contains(s, "+3 −0") {
		t.Fatalf("a count against nothing is on screen:\n%s", s)
	}
	tm.answer("y", "? fs.write wants to write")
	s = tm.waitFor("The README is three lines now.", "✓ completed", "fs.write  README.md  +3 −140")
	if strings.Contains(s, "+3 −0") {
		t.Fatalf("the finished card counts against nothing:\n%s", s)
	}
	id := tm.quit(1)
	tm.line(harnessCmd(u, "resume", id, "--image", "harness-busybox", "--fake-model", mustAbs(t, tuiScript("overwrite.json"))))
	tm.waitFor("The README is three lines now.", "fs.write  README.md  +3 −140", "Ask anything") // the resumed screen, not the scrollback
	tm.quit(2)
}

// The keys people bring from other agents, in a real terminal: Esc
// interrupts a running turn; Ctrl+C with a draft clears it and keeps the
// app open (↑ brings the draft back), and the next Ctrl+C quits.
func TestTUIEscCancelsAndCtrlCClearsTheDraft(t *testing.T) {
	u := newUser(t)
	u.write("README.md", "# keys\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--workspace", "local", "--fake-model", mustAbs(t, tuiScript("keys.json"))))
	tm.waitFor("Ready.")
	tm.line("do the slow thing")
	tm.waitFor("Starting the slow part", "esc cancel")
	tm.keys("Escape")
	tm.waitFor("⊘ canceled", "(interrupted)", "ctrl+c quit")

	tm.typeText("a draft I regret")
	tm.waitFor("› a draft I regret")
	tm.keys("C-c")
	s := tm.waitFor("Draft cleared", "ctrl+c again quits")
	if strings.Contains(s, "› a draft I regret") || strings.Contains(s, prompt) {
		t.Fatalf("ctrl+c with a draft did not just clear it:\n%s", s)
	}
	tm.keys("Up")
	tm.waitFor("› a draft I regret")
	tm.keys("C-c")
	tm.waitGone("› a draft I regret")
	tm.quit(1)
}

// A long command's output shows on its card while it still runs (not only
// "running 10.6 s"), is recorded as tool.output events, and stays on the
// card when the turn is canceled.
func TestTUILiveCommandOutput(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# stream\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--image", "harness-busybox", "--fake-model", mustAbs(t, tuiScript("stream.json"))))
	tm.waitFor("Ready.")
	tm.line("run the long job")
	s := tm.waitFor("│ first-line", "│ warming-up", "running")
	if strings.Contains(s, "│ never-printed") || strings.Contains(s, "✓") {
		t.Fatalf("the command finished before its output was shown:\n%s", s)
	}
	tm.keys("Escape")
	s = tm.waitFor("⊘ canceled", "│ first-line")
	if strings.Contains(s, "│ never-printed") {
		t.Errorf("the canceled command ran on:\n%s", s)
	}
	id := tm.quit(1)

	r := u.run("", "events", id)
	if r.code != 0 {
		t.Fatalf("harness events: exit %d\n%s", r.code, r.stderr)
	}
	var streamed string
	for _, e := range decodeLines(t, r.stdout) {
		if d, ok := e.Data.(event.ToolOutput); ok {
			streamed += d.Text
		}
	}
	if !strings.Contains(streamed, "first-line") || !strings.Contains(streamed, "warming-up") {
		t.Errorf("the log's tool.output events hold %q", streamed)
	}
}

// An @path mention attaches the workspace file: the read goes through the
// tools (recorded as a call), the screen says what was attached, and the
// file's text reaches the model's request on the wire. After quitting, the
// answer is still in the terminal's scrollback.
func TestTUIMentionReachesTheModel(t *testing.T) {
	srv := &chatServer{streams: []string{
		sse(`{"id":"y","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"The notes say nothing yet."},"finish_reason":"stop"}]}`,
			`{"id":"y","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":80,"completion_tokens":4,"total_tokens":84}}`),
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	u := newUser(t)
	u.write("notes.md", "# Notes\n\n- the-secret-plan-is-tea\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--workspace", "local", "--base-url", hs.URL+"/v1", "--model", "m"))
	tm.waitFor("Ready.")
	tm.line("what do @notes.md say?")
	tm.waitFor("you  what do @notes.md say?", "attached @notes.md", "fs.read  notes.md", "The notes say nothing yet.", "✓ completed")
	id := tm.quit(1)
	// The answer stays in the terminal after it left the screen, above
	// the resume command.
	back := tm.scrollback()
	ans, res := strings.Index(back, "The notes say nothing yet."), strings.Index(back, "harness resume "+id)
	if ans < 0 || res < ans {
		t.Errorf("the scrollback lacks the answer before the resume command:\n%s", back)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.bodies) != 1 || !strings.Contains(srv.bodies[0], "the-secret-plan-is-tea") {
		t.Fatalf("the model request lacks the mentioned file:\n%v", srv.bodies)
	}
}

// Tab completes an @path mention from the workspace's files, in a real
// terminal: "@REA" becomes "@README.md", and a directory lists what is in
// it.
func TestTUITabCompletesAMention(t *testing.T) {
	u := newUser(t)
	u.write("README.md", "# completion\n")
	u.write("src/main.go", "package main\n")
	u.write("src/main_test.go", "package main\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--workspace", "local", "--fake-model", mustAbs(t, tuiScript("keys.json"))))
	tm.waitFor("Ready.")
	tm.typeText("what does @REA")
	tm.waitFor("› what does @REA")
	tm.keys("Tab")
	tm.waitFor("› what does @README.md")
	tm.typeText("say about @sr")
	tm.keys("Tab")
	tm.waitFor("› what does @README.md say about @src/")
	tm.keys("Tab")
	tm.waitFor("› what does @README.md say about @src/main", "2 paths match @src/main", "main_test.go")
	tm.keys("C-c")
	tm.waitFor("Draft cleared")
	tm.quit(1)
}

// "!ls" runs in the sandbox through the tools and puts its output in the
// conversation, without a model request.
func TestTUIBangCommand(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# bang\n")
	u.write("src/main.go", "package main\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--image", "harness-busybox", "--fake-model", mustAbs(t, tuiScript("keys.json"))))
	tm.waitFor("Ready.")
	tm.line("!ls")
	s := tm.waitFor("you · ran  ls ", "README.md", "src", "✓ completed")
	if strings.Contains(s, "Starting the slow part") || strings.Contains(s, "process.exec") {
		t.Fatalf("the model was asked, or the command shows as two blocks:\n%s", s)
	}
	tm.quit(1)
}

// With no provider configured and no Docker workspace, the TUI opens on the
// demo model with both banners: how to configure a model, and read-only.
func TestTUIDemoAndReadOnlyBanners(t *testing.T) {
	u := newUser(t)
	u.write("README.md", "# demo\n")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--workspace", "local"))
	tm.waitFor("Demo model", "OPENAI_API_KEY", "this session is read-only", "local · read-only", "demo")
	tm.line("hello")
	tm.waitFor("fs.list", "✓ completed")
	tm.quit(1)
}

// A Docker daemon restart stops every container, and the workspace's
// in-memory tree goes with it. Between turns the TUI notices at the next
// prompt and rebuilds the workspace from the project and what the last
// turn recorded, as `harness resume` would, instead of running the turn's
// commands into a stopped container. The container is stopped here by
// hand, as the restart does.
func TestTUIRebuildsALostWorkspace(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# rebuild\n")
	// Every open of the session reads the script from its start: the
	// rebuilt session's turn answers with the first step again, whose
	// command shows what the workspace holds (without the rebuild, the
	// same session would go on with the second, into the stopped
	// container).
	// (A short name: the header has room for the workspace's label.)
	script := filepath.Join(u.home, "r.json")
	step := `{"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["sh","-c","echo \"note: $(cat note.txt 2>/dev/null || echo none)\"; echo kept > note.txt"]}}]},{"content":"Step done."}`
	if err := os.WriteFile(script, []byte("["+step+","+step+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--image", "harness-busybox", "--fake-model", script))
	tm.waitFor("Ready.", "docker harness-busybox@sha256:")
	tm.line("first")
	tm.waitFor("note: none", "Step done.", "✓ completed")

	r := u.run("", "sessions", "--json")
	var row struct{ ID string }
	if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &row); err != nil || row.ID == "" {
		t.Fatalf("sessions: %v\n%s", err, r.stdout)
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	list, err := cli.ContainerList(t.Context(), client.ContainerListOptions{Filters: make(client.Filters).Add("label", dockerws.LabelSession+"="+row.ID)})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("the session's running containers: %v, %v", list.Items, err)
	}
	timeout := 0
	if _, err := cli.ContainerStop(t.Context(), list.Items[0].ID, client.ContainerStopOptions{Timeout: &timeout}); err != nil {
		t.Fatal(err)
	}

	tm.line("second")
	s := tm.waitFor("workspace is rebuilt", "note: kept")
	if strings.Count(s, "Step done.") < 2 {
		s = tm.waitUntil("the second turn's answer", func(s string) bool { return strings.Count(s, "Step done.") >= 2 })
	}
	if strings.Contains(s, "WORKSPACE_CONTAINER_FAILED") {
		t.Errorf("a command ran into the stopped container:\n%s", s)
	}
	tm.quit(1)
}

// harness "fix the bug", as other coding agents take it: the TUI opens
// with the argument as its first message, sent as soon as the session is
// open, and the session records it as the turn's user message.
func TestTUIPromptArgument(t *testing.T) {
	u := newUser(t)
	u.write("README.md", "# prompt\n")
	tm := newTerminal(t, u)
	s := u.script(`[{"content":"Fixed: the bug is gone."}]`)
	tm.line(harnessCmd(u, "fix the bug", "--workspace", "local", "--fake-model", s))
	tm.waitFor("you  fix the bug", "Fixed: the bug is gone.", "✓ completed")
	id := tm.quit(1)
	ev := u.run("", "events", id, "--db", u.db)
	if ev.code != 0 || !strings.Contains(ev.stdout, `"role":"user"`) || !strings.Contains(ev.stdout, `"content":"fix the bug"`) {
		t.Fatalf("the first message is not recorded: exit %d\n%s%s", ev.code, ev.stdout, ev.stderr)
	}
}
