package transcript

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/tui/diffview"
	"github.com/harness-dev/harness/tui/markdown"
)

const fixture = "../testdata/session.jsonl"

// all renders every block of t at width, top to bottom.
func all(t *Transcript, width int) []string {
	c := ctxAt(width)
	var out []string
	for i := range t.blocks {
		out = append(out, t.blocks[i].lines(c, false)...)
	}
	return out
}

func TestReplayRecordedSession(t *testing.T) {
	evs := mustLoadLog(t, fixture)
	tr := New()
	var want model.Usage
	for _, e := range evs {
		tr.Apply(e)
		if r, ok := e.Data.(event.ModelResponse); ok {
			want = want.Add(r.Usage)
		}
	}
	if got := tr.Usage(); got != want {
		t.Errorf("usage = %+v, want the sum of model.response usage %+v", got, want)
	}
	if tr.ActiveRun() != "" || len(tr.Pending()) != 0 || tr.Awaiting() {
		t.Errorf("after the log: active %q, pending %v, awaiting %v; want none", tr.ActiveRun(), tr.Pending(), tr.Awaiting())
	}
	if tr.LastStatus() != event.StatusCanceled {
		t.Errorf("last status = %q, want canceled", tr.LastStatus())
	}
	if ws := tr.Workspace(); ws.Backend != "docker" || !strings.HasPrefix(ws.ImageID, "sha256:") {
		t.Errorf("workspace = %+v, want docker with an image ID", ws)
	}
	text := plain(all(tr, 120))
	for _, want := range []string{
		"you  Add a --verbose flag to the CLI",
		"you · steering · applied ✓",     // steering went queued → applied
		"you · from the queue",           // the input queued for the next turn started it
		"fs.write  main.go  +9 −1",       // a real diff: main.go was read first
		"fs.write  README.md  +5 −0",     // README.md was not read: shown whole
		"fs.read  docs/missing.md",       // a failed call …
		"✗ WORKSPACE_NOT_FOUND",          // … with its code
		"✗ exit 2",                       // a non-zero exit
		"main.go:9: undefined: flag",     // its stderr, shown collapsed
		"✗ TOOL_BAD_INPUT",               // a shell string instead of argv
		"git.diff  2 files +11 −1",       // the workspace patch
		"context compacted",              // the compaction marker …
		"the originals stay above",       // … that says where the originals are
		"budget: 53% of the tokens used", // a budget warning
		"✓ completed · 5 model requests", // turn endings with their facts
		"✗ failed · MODEL_HTTP_ERROR",    // an error with its code
		"⊘ canceled",                     // the canceled turn
		"(interrupted)",                  // and its cut-off answer
	} {
		if !strings.Contains(text, want) {
			t.Errorf("replayed transcript lacks %q", want)
		}
	}
	if strings.Contains(text, "running") {
		t.Errorf("a finished session shows a running call:\n%s", text)
	}
}

// The whole recorded session, every block, at two widths.
func TestSessionGolden(t *testing.T) {
	for _, w := range []int{80, 120} {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			tr := mustReplay(t, fixture)
			golden.RequireEqual(t, strings.Join(all(tr, w), "\n")+"\n")
		})
	}
}

// states builds a transcript with the states a finished recording cannot
// show: running, awaiting approval, denied, withdrawn, streaming.
func states() *Transcript {
	tr := New()
	i := 0
	next := func(d event.Data) {
		i++
		tr.Apply(ev(i, d))
	}
	ids := event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", InputMessageID: "msg-u"}
	next(ids)
	next(event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "Make the build faster.\nIt takes minutes on CI and the cache is never reused, which is a shame because most of the tree does not change between commits."})
	next(event.MessageDelta{RunID: "run-1", RequestID: "req-1", MessageID: "msg-a", Sequence: 0, Delta: "Looking at the **build** first"})
	next(event.MessageDelta{RunID: "run-1", RequestID: "req-1", MessageID: "msg-a", Sequence: 0, Delta: "Looking at the **build** first"}) // redelivered
	next(event.MessageDelta{RunID: "run-1", RequestID: "req-1", MessageID: "msg-a", Sequence: 1, Delta: " — `make -j`"})
	next(event.ToolCall{CallID: "call-1", Tool: "process.exec", Input: raw(`{"argv":["make","-j","8","all"],"cwd":"src"}`), RunID: "run-1"})
	next(event.ToolCall{CallID: "call-2", Tool: "fs.write", Input: raw(`{"path":"Makefile","contents":"all:\n\tgo build ./...\n"}`), RunID: "run-1"})
	next(event.PolicyDecision{CallID: "call-2", Action: "fs.write", Effect: event.EffectAsk})
	next(event.PermissionRequested{PermissionID: "perm-1", CallID: "call-2", Action: "fs.write", Subject: "Makefile", Scope: event.ScopeOnce})
	next(event.ToolCall{CallID: "call-3", Tool: "process.exec", Input: raw(`{"argv":["rm","-rf","build dir"]}`), RunID: "run-1"})
	next(event.PermissionRequested{PermissionID: "perm-2", CallID: "call-3", Action: "process.exec", Subject: "rm", Scope: event.ScopeOnce})
	next(event.PermissionResolved{PermissionID: "perm-2", CallID: "call-3", Action: "process.exec", Scope: event.ScopeOnce, Decision: event.DecisionDeny, Note: "denied in the TUI"})
	next(event.ToolResult{CallID: "call-3", Tool: "process.exec", Error: &event.ToolError{Code: "TOOL_PERMISSION_DENIED", Message: "the user denied this call"}, DurationMs: 4})
	next(event.ToolCall{CallID: "call-4", Tool: "git.diff", Input: raw(`{}`), RunID: "run-1"})
	next(event.ToolResult{CallID: "call-4", Tool: "git.diff", Error: &event.ToolError{Code: "TOOL_CANCELED", Message: "not run: the turn was canceled"}})
	next(event.SteeringQueued{RunID: "run-1", MessageID: "msg-s1", Content: "only the Go part"})
	next(event.SteeringQueued{RunID: "run-1", MessageID: "msg-s2", Content: "never mind"})
	next(event.InputWithdrawn{RunID: "run-1", MessageID: "msg-s2"})
	next(event.InputQueued{RunID: "run-1", MessageID: "msg-n1", Content: "then write the changelog"})
	next(event.ContextAccounted{RunID: "run-1", RequestID: "req-2", OccupancyTokens: 98100, WindowTokens: 128000, SummaryRequest: true})
	next(event.MessageDelta{RunID: "run-1", RequestID: "req-2", MessageID: "msg-sum", Delta: "The user wants"})
	tr.Note(NoteError, "RUNTIME_RUN_TERMINAL", "steering not accepted: the turn is ending")
	tr.Note(NoteInfo, "", "applied the patch to /src/app: 1 file(s), +3 −1")
	return tr
}

func TestLiveStates(t *testing.T) {
	tr := states()
	if tr.ActiveRun() != "run-1" || !tr.Awaiting() || tr.Resolved("perm-1") || !tr.Resolved("perm-2") || !tr.Live() {
		t.Fatalf("active %q awaiting %v perm-1 resolved %v perm-2 resolved %v live %v", tr.ActiveRun(), tr.Awaiting(), tr.Resolved("perm-1"), tr.Resolved("perm-2"), tr.Live())
	}
	var got []string
	for _, p := range tr.Pending() {
		got = append(got, fmt.Sprintf("%s next=%v", p.MessageID, p.Next))
	}
	if want := "msg-s1 next=false,msg-n1 next=true"; strings.Join(got, ",") != want {
		t.Errorf("pending = %v, want %s (the withdrawn one gone)", got, want)
	}
	text := plain(all(tr, 100))
	for _, want := range []string{
		"Looking at the build first — make -j▍", // the redelivered delta is not doubled
		"make -j 8 all  (in src)",
		"⠋ running 1.9 s",
		"? awaiting approval",
		"'build dir'", // argv quoted as a reader would type it
		"denied in the TUI",
		"✗ TOOL_PERMISSION_DENIED",
		"⊘ canceled",
		"you · steering · queued",
		"you · steering · withdrawn",
		"compacting the context (98.1k tokens) ⠋",
		"✗ RUNTIME_RUN_TERMINAL steering not accepted",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q:\n%s", want, text)
		}
	}
	// The turn ends: what was running or waiting is canceled, streaming stops.
	tr.Apply(ev(99, event.TurnCompleted{RunID: "run-1", Status: event.StatusCanceled, Usage: usage}))
	text = plain(all(tr, 100))
	if strings.Contains(text, "running") || strings.Contains(text, "awaiting") || strings.Contains(text, "▍") || tr.Live() {
		t.Errorf("after turn.completed something still runs:\n%s", text)
	}
	if !tr.Resolved("perm-1") || !tr.Completed("run-1") || tr.ActiveRun() != "" {
		t.Errorf("resolved %v completed %v active %q", tr.Resolved("perm-1"), tr.Completed("run-1"), tr.ActiveRun())
	}
}

func TestStatesGolden(t *testing.T) {
	for _, w := range []int{60, 100} {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			golden.RequireEqual(t, strings.Join(all(states(), w), "\n")+"\n")
		})
	}
}

// Expanded cards show their output; the golden pins each tool's form.
func TestExpandedGolden(t *testing.T) {
	for _, w := range []int{60, 100} {
		t.Run(fmt.Sprintf("w%d", w), func(t *testing.T) {
			tr := mustReplay(t, fixture)
			for i := range tr.blocks {
				if _, ok := tr.blocks[i].b.(*toolCard); ok {
					tr.blocks[i].b.toggle()
					tr.touch(i)
				}
				if c, ok := tr.blocks[i].b.(*compactBlock); ok && c.done && !c.failed {
					c.toggle()
					tr.touch(i)
				}
			}
			var out []string
			c := ctxAt(w)
			for i := range tr.blocks {
				switch tr.blocks[i].b.(type) {
				case *toolCard, *compactBlock:
					out = append(out, tr.blocks[i].lines(c, false)...)
				}
			}
			golden.RequireEqual(t, strings.Join(out, "\n")+"\n")
		})
	}
}

func TestQueuedInputStartsTurn(t *testing.T) {
	tr := New()
	tr.Apply(ev(1, event.InputQueued{RunID: "run-1", MessageID: "msg-q", Content: "next please"}))
	if p := tr.Pending(); len(p) != 1 || !p[0].Next || p[0].RunID != "run-1" {
		t.Fatalf("pending = %+v", p)
	}
	tr.Apply(ev(2, event.TurnStarted{RunID: "run-2", InputMessageID: "msg-q"}))
	tr.Apply(ev(3, event.MessageCompleted{RunID: "run-2", MessageID: "msg-q", Role: model.RoleUser, Content: "next please"}))
	if len(tr.Pending()) != 0 || tr.ActiveRun() != "run-2" || tr.LastRun() != "run-2" {
		t.Fatalf("pending %v active %q", tr.Pending(), tr.ActiveRun())
	}
	if text := plain(all(tr, 80)); !strings.Contains(text, "you · from the queue") || !strings.Contains(text, "next please") {
		t.Errorf("queued input not shown as the turn's message:\n%s", text)
	}
}

// A fork carries its usage from the checkpoint, not from its own log.
func TestSetUsageThenResponsesAdd(t *testing.T) {
	tr := New()
	tr.SetUsage(model.Usage{TotalTokens: 1000})
	tr.Apply(ev(1, event.ModelResponse{Usage: usage}))
	if got := tr.Usage().TotalTokens; got != 1015 {
		t.Errorf("usage = %d, want 1015", got)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0"}, {950, "950"}, {1000, "1k"}, {12400, "12.4k"}, {200000, "200k"}, {1200000, "1.2M"}} {
		if got := Tokens(c.n); got != c.want {
			t.Errorf("Tokens(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// Streaming re-renders only the growing paragraph; at every length the
// lines must equal a whole render of the same text.
func TestStreamingRenderMatchesWhole(t *testing.T) {
	text := "# Plan\n\nFirst I read **main.go**, then:\n\n- add the flag\n- document it\n\n```go\nfunc main() {\n\n\tflag.Parse()\n}\n```\n\n> note\n\nDone, `go test` passes.\n\n\n"
	c := ctxAt(60)
	a := &assistantBlock{text: builder(""), streaming: true} // one block: its cache is reused
	for n := 0; n <= len(text); n++ {
		got := a.streamed(text[:n], 58, c)
		want := indent(markdown.Render(text[:n], 58, c.Theme))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("prefix %d %q:\nstreamed:\n%s\nwhole:\n%s", n, text[:n], plain(got), plain(want))
		}
	}
	// An open fenced block longer than a chunk, rendered a chunk at a
	// time: the same lines (the same text where a language colours it,
	// as a chunk is lexed on its own).
	for _, lang := range []string{"", "go"} {
		var b strings.Builder
		b.WriteString("Here it is:\n```" + lang + "\n")
		for i := range 3*codeChunk + 7 {
			fmt.Fprintf(&b, "\tx%d := f(%d) // a line long enough to be hard-wrapped at this narrow width, %d\n", i, i, i)
		}
		b.WriteString("```\n\nDone.\n")
		text := b.String()
		a := &assistantBlock{text: builder(""), streaming: true}
		for n := 0; n <= len(text); n += 97 {
			got := a.streamed(text[:n], 58, c)
			want := indent(markdown.Render(text[:n], 58, c.Theme))
			g, w := strings.Join(got, "\n"), strings.Join(want, "\n")
			if lang != "" {
				g, w = ansi.Strip(g), ansi.Strip(w)
			}
			if g != w {
				t.Fatalf("lang %q, prefix %d:\nstreamed:\n%s\nwhole:\n%s", lang, n, plain(got), plain(want))
			}
		}
		a.streamed(text, 58, c)
		if len(a.stream.codeLines) != 0 {
			t.Errorf("the closed block still keeps %d chunk lines", len(a.stream.codeLines))
		}
	}
}

// The report: overwriting a 140-line README the session never read
// with 3 lines showed "+3 −0". The card counts against the workspace
// file's previous contents: the approval's preview while it waits, then
// the change the tool recorded.
func TestWriteCardCountsAgainstTheWorkspaceFile(t *testing.T) {
	var old strings.Builder
	for i := range 140 {
		fmt.Fprintf(&old, "line %d of the old README\n", i+1)
	}
	patch := diffview.Unified("README.md", old.String(), "# new\nshort\nREADME\n", false)
	tr := New()
	tr.Apply(ev(1, event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", InputMessageID: "msg-u"}))
	tr.Apply(ev(2, event.ToolCall{CallID: "call-1", Tool: "fs.write", Input: raw(`{"path":"README.md","contents":"# new\nshort\nREADME\n"}`), RunID: "run-1"}))
	tr.Apply(ev(3, event.PermissionRequested{PermissionID: "perm-1", CallID: "call-1", Action: "fs.write", Subject: "README.md", Scope: event.ScopeOnce}))
	if text := plain(all(tr, 100)); strings.Contains(text, "+3 −0") || !strings.Contains(text, "3 lines") {
		t.Errorf("a write of a file never seen is counted against nothing:\n%s", text)
	}
	tr.PreviewWrite("call-1", patch)
	if text := plain(all(tr, 100)); !strings.Contains(text, "fs.write  README.md  +3 −140") {
		t.Errorf("the card does not show the approval's count:\n%s", text)
	}
	tr.Apply(ev(4, event.PermissionResolved{PermissionID: "perm-1", CallID: "call-1", Action: "fs.write", Scope: event.ScopeOnce, Decision: event.DecisionAllow}))
	tr.Apply(ev(5, event.ToolResult{CallID: "call-1", Tool: "fs.write", OK: true, Output: raw(`{"path":"README.md","bytes":20}`), Patch: patch}))
	text := plain(all(tr, 100))
	if !strings.Contains(text, "fs.write  README.md  +3 −140") || !strings.Contains(text, "-line 1 of the old README") {
		t.Errorf("the finished card does not show the recorded change:\n%s", text)
	}
	if strings.Contains(text, "not read in this session") {
		t.Errorf("the card apologises for a diff that is exact:\n%s", text)
	}

	// Replayed from the log (resume), without the preview: the same card.
	re := New()
	for i, d := range []event.Data{
		event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", InputMessageID: "msg-u"},
		event.ToolCall{CallID: "call-1", Tool: "fs.write", Input: raw(`{"path":"README.md","contents":"# new\nshort\nREADME\n"}`), RunID: "run-1"},
		event.ToolResult{CallID: "call-1", Tool: "fs.write", OK: true, Output: raw(`{"path":"README.md","bytes":20}`), Patch: patch},
	} {
		re.Apply(ev(i+1, d))
	}
	if text := plain(all(re, 100)); !strings.Contains(text, "fs.write  README.md  +3 −140") {
		t.Errorf("the replayed card differs:\n%s", text)
	}
}

// A running command's output shows on its card as tool.output events bring
// it, only the last lines while collapsed; a canceled call keeps what it
// printed.
func TestStreamedOutput(t *testing.T) {
	tr := New()
	tr.Apply(ev(1, event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", InputMessageID: "msg-u"}))
	tr.Apply(ev(2, event.ToolCall{CallID: "call-1", Tool: "process.exec", Input: raw(`{"argv":["make","test"]}`), RunID: "run-1"}))
	tr.Apply(ev(3, event.ToolOutput{CallID: "call-1", Stream: event.StreamStdout, Text: "compiling\n"}))
	if text := plain(all(tr, 100)); !strings.Contains(text, "│ compiling") || !strings.Contains(text, "running") {
		t.Fatalf("the first output is not on the running card:\n%s", text)
	}
	var more strings.Builder
	for i := range 20 {
		fmt.Fprintf(&more, "test %d ok\n", i)
	}
	tr.Apply(ev(4, event.ToolOutput{CallID: "call-1", Stream: event.StreamStdout, Offset: 10, Text: more.String()}))
	tr.Apply(ev(5, event.ToolOutput{CallID: "call-1", Stream: event.StreamStderr, Text: "warning: slow\n", Truncated: true}))
	text := plain(all(tr, 100))
	for _, want := range []string{"│ test 19 ok", "│ warning: slow", "not shown live"} {
		if !strings.Contains(text, want) {
			t.Errorf("card lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "│ compiling") || strings.Contains(text, "test 5 ok") {
		t.Errorf("a collapsed card shows more than the tail:\n%s", text)
	}
	tr.Apply(ev(6, event.ToolResult{CallID: "call-1", Tool: "process.exec", Error: &event.ToolError{Code: "TOOL_CANCELED", Message: "canceled"}}))
	if text := plain(all(tr, 100)); !strings.Contains(text, "│ test 19 ok") || !strings.Contains(text, "canceled") {
		t.Errorf("the canceled card lost its output:\n%s", text)
	}
}

// A reasoning model's thinking is one collapsed line above its answer;
// the card key expands it. A length-cut answer says how to get the rest.
func TestThinkingAndTruncation(t *testing.T) {
	tr := New()
	tr.Apply(ev(1, event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", InputMessageID: "msg-u"}))
	tr.Apply(ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "why?"}))
	tr.Apply(ev(3, event.MessageCompleted{RunID: "run-1", MessageID: "msg-t", Role: model.RoleAssistant, RequestID: "req-1",
		FinishReason: model.FinishToolCalls, Reasoning: "The user asks why. I should read the README first."}))
	tr.Apply(ev(4, event.MessageDelta{RunID: "run-1", RequestID: "req-2", MessageID: "msg-a", Sequence: 0, Delta: "Because the"}))
	tr.Apply(ev(5, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a", Role: model.RoleAssistant, RequestID: "req-2",
		FinishReason: model.FinishLength, Content: "Because the", Reasoning: "Short answer."}))
	tr.Apply(ev(6, event.TurnCompleted{RunID: "run-1", Status: event.StatusCompleted, Usage: usage, Truncated: true}))

	text := plain(all(tr, 80))
	for _, want := range []string{"▸ thinking · 10 words (ctrl+o shows it)", "▸ thinking · 2 words", "Because the",
		"answer cut by the output limit: raise --max-tokens"} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "README first") {
		t.Errorf("collapsed thinking shows its text:\n%s", text)
	}
	var v Viewport
	v.Unselect()
	c := ctxAt(80)
	v.Select(tr, c, 40, -1) // the last card: the second thinking block
	v.Select(tr, c, 40, -1)
	if !v.Toggle(tr, c, 40) {
		t.Fatal("nothing to expand")
	}
	text = plain(all(tr, 80))
	if !strings.Contains(text, "▾ thinking · 10 words") || !strings.Contains(text, "I should read the README first.") {
		t.Errorf("expanded thinking:\n%s", text)
	}
}

// A fork says where it continues from: the last finished turn, or the
// start when no turn of the session had finished.
func TestForkNotice(t *testing.T) {
	for _, tc := range []struct {
		from, want string
	}{
		{"turn-a0", "forked from sess-a1 at its last finished turn"},
		{"", "forked from sess-a1 from its start (no turn of it had finished)"},
	} {
		tr := New()
		tr.Apply(ev(1, event.SessionForked{SessionID: "sess-b", FromSessionID: "sess-a1", FromTurnID: tc.from, AbandonedTurnID: "turn-a1"}))
		if got := plain(all(tr, 120)); !strings.Contains(got, tc.want) || !strings.Contains(got, "turn-a1 was not continued") {
			t.Errorf("fork from %q shows:\n%s\nwant %q", tc.from, got, tc.want)
		}
	}
}

// A rewind says where the session went and marks the later turns above as
// rewound; an apply (and its revert) says where and how much.
func TestRewindAndApplyNotices(t *testing.T) {
	tr := New()
	tr.Apply(ev(1, event.SessionRewound{SessionID: "sess-1", FromTurnID: "turn-3", FromTurn: 3, ToTurnID: "turn-1", ToTurn: 1}))
	tr.Apply(ev(2, event.SessionRewound{SessionID: "sess-1", FromTurnID: "turn-1", FromTurn: 1, ToTurnID: "turn-3", ToTurn: 3, Undo: true}))
	files := []event.PatchFile{{Path: "a.txt", Added: 2, Deleted: 1}, {Path: "b.txt", Added: 1}}
	tr.Apply(ev(3, event.PatchApplied{SessionID: "sess-1", TurnID: "turn-1", Root: "/p", SHA256: strings.Repeat("a", 64), Files: files, Patch: "x"}))
	tr.Apply(ev(4, event.PatchApplied{SessionID: "sess-1", TurnID: "turn-1", Root: "/p", SHA256: strings.Repeat("a", 64), Files: files, Patch: "x", Reverse: true}))
	got := strings.Join(strings.Fields(plain(all(tr, 200))), " ")
	for _, want := range []string{
		"rewound to the end of turn 1; turns 2–3 above are rewound",
		"undid the last rewind: back at the end of turn 3",
		"applied the workspace patch to /p: 2 file(s), +3 −1",
		"reverted the workspace patch in /p: 2 file(s), +3 −1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, got)
		}
	}
}

// A retry notice says what failed when the adapter said, not only its code.
func TestRetryNotice(t *testing.T) {
	for _, tc := range []struct {
		msg, want string
	}{
		{"reach http://127.0.0.1:1/v1: connection refused", "MODEL_TRANSPORT_ERROR reach http://127.0.0.1:1/v1: connection refused; retrying the model request (attempt 2, after 500 ms)"},
		{"", "MODEL_TRANSPORT_ERROR retrying the model request (attempt 2, after 500 ms)"},
	} {
		tr := New()
		tr.Apply(ev(1, event.ModelRetry{RequestID: "req-1", Attempt: 2, Code: "MODEL_TRANSPORT_ERROR", DelayMs: 500, Message: tc.msg,
			RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1"}))
		if got := strings.Join(strings.Fields(plain(all(tr, 200))), " "); !strings.Contains(got, tc.want) {
			t.Errorf("retry with message %q shows:\n%s\nwant %q", tc.msg, got, tc.want)
		}
	}
}

// A turn that ends on an empty answer says so (the runtime's note): the
// screen would otherwise show nothing between the request and its end.
func TestEmptyAnswerIsSaid(t *testing.T) {
	tr := New()
	tr.Apply(ev(1, event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", InputMessageID: "msg-u"}))
	tr.Apply(ev(2, event.MessageCompleted{RunID: "run-1", MessageID: "msg-u", Role: model.RoleUser, Content: "hi"}))
	tr.Apply(ev(3, event.MessageCompleted{RunID: "run-1", MessageID: "msg-a", Role: model.RoleAssistant, RequestID: "req-1", FinishReason: "stop"}))
	tr.Apply(ev(4, event.TurnCompleted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1", Status: event.StatusCompleted, OutputMessageID: "msg-a", ModelRequests: 1,
		Note: "the model's answer was empty: it sent no text and no tool call"}))
	if got := plain(all(tr, 100)); !strings.Contains(got, "the model's answer was empty") {
		t.Errorf("an empty answer is not said:\n%s", got)
	}
}

// The user sees what of the host the sandbox has (the go toolchain, the
// module cache): once, not again for a workspace reopened with the same.
func TestSandboxMountsAreSaid(t *testing.T) {
	tr := New()
	mounts := []event.Mount{
		{What: "go toolchain go1.26.8", Source: "/usr/local/go", Target: "/opt/harness/go", ReadOnly: true},
		{What: "go module cache", Source: "/root/go/pkg/mod", Target: "/opt/harness/gomod", ReadOnly: true},
		{What: "build cache volume", Source: "volume harness-cache-x", Target: "/opt/harness/cache"},
	}
	for i, phase := range []string{event.PhaseOpened, event.PhaseDisposed, event.PhaseRestored} {
		tr.Apply(ev(i, event.WorkspaceLifecycle{WorkspaceID: "ws-1", Backend: "docker", Phase: phase, Mounts: mounts}))
	}
	text := plain(all(tr, 200))
	want := "the sandbox sees, besides its copy of the project: go toolchain go1.26.8, go module cache (read-only); build cache volume (writable)"
	if strings.Count(text, want) != 1 {
		t.Fatalf("the mounts are not said once:\n%s", text)
	}
}

// A background job's end is said where it happened, between turns too:
// its ID, how it ended and its command.
func TestJobEndIsSaid(t *testing.T) {
	tr := New()
	code := 143
	tr.Apply(ev(1, event.JobStarted{SessionID: "sess-1", TurnID: "turn-1", CallID: "call-1", JobID: "job-2", Argv: []string{"python3", "-m", "http.server", "8000"}}))
	tr.Apply(ev(2, event.JobExited{SessionID: "sess-1", TurnID: "turn-1", JobID: "job-2", Argv: []string{"python3", "-m", "http.server", "8000"},
		Reason: event.JobReasonStopped, ExitCode: &code}))
	if text := plain(all(tr, 100)); !strings.Contains(text, "⟳ job-2 ended (stopped, exit code 143): python3 -m http.server 8000") {
		t.Errorf("transcript:\n%s", text)
	}
}

// A background job's card says which job it is and where it stands, with
// the piece of its log the call read, not a bare tick.
func TestJobCardNamesTheJob(t *testing.T) {
	tr := New()
	tr.Apply(ev(1, event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1"}))
	tr.Apply(ev(2, event.ToolCall{CallID: "call-1", Tool: "process.exec", RunID: "run-1",
		Input: raw(`{"argv":["python3","-m","http.server"],"background":true}`)}))
	tr.Apply(ev(3, event.ToolResult{CallID: "call-1", Tool: "process.exec", OK: true, DurationMs: 1200,
		Output: raw(`{"jobId":"job-3","argv":["python3","-m","http.server"],"state":"running","bytes":40,"offset":0,"output":"Serving HTTP on 0.0.0.0 port 8000\n","next":40,"note":"running in the background"}`)}))
	tr.Apply(ev(4, event.ToolCall{CallID: "call-2", Tool: "process.exec", RunID: "run-1", Input: raw(`{"action":"stop","job":"job-3"}`)}))
	tr.Apply(ev(5, event.ToolResult{CallID: "call-2", Tool: "process.exec", OK: true, DurationMs: 300,
		Output: raw(`{"jobId":"job-3","argv":["python3","-m","http.server"],"state":"exited","exitCode":143,"reason":"stopped","bytes":40,"offset":0,"output":"Keyboard interrupt\n","next":40}`)}))
	text := plain(all(tr, 100))
	for _, want := range []string{"⟳ job-3 running · 1.2 s", "Serving HTTP on 0.0.0.0 port 8000", "⟳ job-3 ended (stopped, exit 143)", "Keyboard interrupt"} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q:\n%s", want, text)
		}
	}
}

// A turn that failed with its tool call's error does not say the error
// twice: the card shows it whole, the turn's end points at it.
func TestTurnEndDoesNotRepeatTheCardsError(t *testing.T) {
	tr := New()
	msg := "the workspace container is not running (a Docker daemon restart stops it); the TUI rebuilds the workspace by itself at the next prompt"
	tr.Apply(ev(1, event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1"}))
	tr.Apply(ev(2, event.ToolCall{CallID: "call-1", Tool: "process.exec", RunID: "run-1", Input: raw(`{"argv":["sleep","120"]}`)}))
	tr.Apply(ev(3, event.ToolResult{CallID: "call-1", Tool: "process.exec", Error: &event.ToolError{Code: "WORKSPACE_CONTAINER_FAILED", Message: msg}}))
	tr.Apply(ev(4, event.TurnCompleted{RunID: "run-1", Status: event.StatusFailed, ErrorCode: "WORKSPACE_CONTAINER_FAILED", Note: msg}))
	text := plain(all(tr, 400))
	if n := strings.Count(text, "restart stops it"); n != 1 {
		t.Errorf("the error is said %d times:\n%s", n, text)
	}
	if !strings.Contains(text, "(the WORKSPACE_CONTAINER_FAILED above)") {
		t.Errorf("the turn's end does not point at the card:\n%s", text)
	}
}

// A job's card that showed it running says it ended once the log does,
// in words a reader understands.
func TestJobCardFollowsTheJobsEnd(t *testing.T) {
	tr := New()
	tr.Apply(ev(1, event.TurnStarted{RunID: "run-1", SessionID: "sess-1", TurnID: "turn-1"}))
	tr.Apply(ev(2, event.ToolCall{CallID: "call-1", Tool: "process.exec", RunID: "run-1", Input: raw(`{"argv":["sleep","600"],"background":true}`)}))
	tr.Apply(ev(3, event.ToolResult{CallID: "call-1", Tool: "process.exec", OK: true, DurationMs: 1000,
		Output: raw(`{"jobId":"job-1","argv":["sleep","600"],"state":"running","bytes":0,"offset":0,"output":"","next":0}`)}))
	code := 137
	tr.Apply(ev(4, event.JobExited{SessionID: "sess-1", TurnID: "turn-1", JobID: "job-1", Argv: []string{"sleep", "600"},
		Reason: event.JobReasonClosed, ExitCode: &code}))
	text := plain(all(tr, 100))
	if strings.Contains(text, "job-1 running") || !strings.Contains(text, "⟳ job-1 ended (ended with the session, exit code 137) · 1.0 s") {
		t.Errorf("transcript:\n%s", text)
	}
}
