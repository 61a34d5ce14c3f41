package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A successful command keeps the end of its output in its card (stderr in
// its place, how many lines, ctrl+o; the runtime records a command's
// streams every 100 ms, so the order shown is the order at that grain:
// the command pauses around its stderr line), a Markdown table in the answer is
// drawn as a table, and after /quit the terminal's scrollback holds the
// session as it was shown (the table drawn, no Markdown marks), then the
// resume line.
func TestTUICommandTailTableAndScrollback(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# tail\n")
	script := u.script(`[
  {"content": "Running it.", "toolCalls": [{"id": "c1", "name": "process.exec",
    "arguments": {"argv": ["sh", "-c", "i=1; while [ $i -le 30 ]; do echo out-$i; if [ $i = 28 ]; then sleep 1; echo warn-28 >&2; sleep 1; fi; i=$((i+1)); done"]}}]},
  {"content": "The **sizes**:\n\n| file | lines |\n| --- | ---: |\n| main.go | 120 |\n| parse.go | 4400 |\n\nAll done."}
]`)
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--image", "harness-busybox", "--fake-model", script))
	tm.waitFor("Ready.")
	tm.line("count the lines")
	s := tm.waitFor("… 31 lines (1 on stderr) · ctrl+o", "│ out-27", "│ warn-28", "│ out-30", "file     │ lines", "parse.go │  4400", "✓ completed")
	if strings.Contains(s, "│ out-25") || strings.Contains(s, "| ---") || strings.Contains(s, "**sizes**") {
		t.Fatalf("the card shows more than its tail, or the table or emphasis is raw:\n%s", s)
	}
	if strings.Index(s, "│ warn-28") > strings.Index(s, "│ out-29") {
		t.Errorf("stderr is not where it came:\n%s", s)
	}
	tm.line("/quit")
	id := tm.waitUntil("the resume line and the prompt", func(s string) bool {
		return resumeLine.MatchString(s) && strings.HasSuffix(strings.TrimRight(s, "\n "), strings.TrimSpace(prompt))
	})
	back := tm.scrollback()
	sid := resumeLine.FindStringSubmatch(id)[1]
	at := -1
	for _, want := range []string{"you  count the lines", "│ out-30", "The sizes:", "file     │ lines", "parse.go │  4400", "All done.", "harness resume " + sid} {
		i := strings.Index(back, want)
		if i < at {
			t.Fatalf("the scrollback lacks %q after what came before it:\n%s", want, back)
		}
		at = i
	}
	if strings.Contains(back, "| ---") || strings.Contains(back, "**sizes**") {
		t.Errorf("the scrollback holds raw Markdown:\n%s", back)
	}
}

// Esc on an approval: an expanded box collapses first; on the box Esc
// denies the call and stops the turn.
func TestTUIEscCollapsesThenDenies(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# esc\n")
	long := strings.Repeat("echo step; ", 40)
	script := u.script(fmt.Sprintf(`[
  {"content": "Cleaning up.", "toolCalls": [{"id": "c1", "name": "process.exec", "arguments": {"argv": ["sh", "-c", %q]}}]},
  {"content": "Never asked."}
]`, long+"rm -rf build"))
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--image", "harness-busybox", "--approve", "ask", "--fake-model", script))
	tm.waitFor("Ready.")
	tm.line("clean up")
	tm.waitFor("? process.exec wants to run", "rm -rf build", "esc deny and stop")
	tm.keys("C-o")
	tm.waitFor("ctrl+o/esc collapse")
	tm.keys("Escape")
	s := tm.waitGone("ctrl+o/esc collapse")
	if !strings.Contains(s, "wants to run") {
		t.Fatalf("esc on an expanded box did more than collapse it:\n%s", s)
	}
	tm.keys("Escape")
	s = tm.waitFor("⊘ canceled", "✗ TOOL_PERMISSION_DENIED")
	if strings.Contains(s, "Never asked.") || strings.Contains(s, "wants to run") {
		t.Fatalf("the turn went on after esc denied:\n%s", s)
	}
	tm.quit(1)
}

// The input's keys in a real terminal: ↑ after a paste recalls its marker
// (and sends the paste), ctrl+r finds an earlier message, ctrl+g edits the
// draft in $EDITOR, and a non-ASCII @path completes and attaches.
func TestTUIInputKeysInATerminal(t *testing.T) {
	u := newUser(t)
	u.write("notes/日本語.txt", "こんにちは from the notes\n")
	// The editor edits the first line in place: the file ends with a newline.
	editor := filepath.Join(u.home, "edit.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i '1s/$/ and more from the editor/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := u.script(`[{"content": "First answer."}, {"content": "Second answer."}, {"content": "Third answer."}, {"content": "Fourth answer."}, {"content": "Fifth answer."}]`)
	tm := newTerminal(t, u)
	tm.line("export EDITOR=" + shellQuote(editor))
	tm.line(harnessCmd(u, "--workspace", "local", "--fake-model", script))
	tm.waitFor("Ready.")

	// A non-ASCII @path: tab completes it, the file is attached.
	tm.typeText("read @notes/日")
	tm.keys("Tab")
	tm.waitFor("› read @notes/日本語.txt")
	tm.keys("Enter")
	tm.waitFor("attached @notes/日本語.txt", "First answer.", "✓ completed")

	// A paste of 300 lines, sent; ↑ brings its marker back.
	var paste strings.Builder
	for i := range 300 {
		fmt.Fprintf(&paste, "pasted line %03d\n", i)
	}
	tm.tmux("set-buffer", "-b", "p", paste.String())
	tm.typeText("look at this: ")
	tm.tmux("paste-buffer", "-p", "-b", "p", "-t", "e2e")
	tm.waitFor("› look at this: [pasted 300 lines]")
	tm.keys("Enter")
	tm.waitFor("Second answer.")
	tm.keys("Up")
	tm.waitFor("› look at this: [pasted 300 lines]")
	tm.keys("C-u")
	tm.waitGone("› look at this:")

	// ctrl+r finds the first message; enter takes it into the input.
	tm.keys("C-r")
	tm.typeText("notes")
	tm.waitFor("history search: notes", "› read @notes/日本語.txt")
	tm.keys("Enter")
	tm.waitGone("history search")
	tm.keys("C-u")
	tm.waitGone("› read @notes")

	// ctrl+g: the draft goes through $EDITOR and comes back edited.
	tm.typeText("a draft")
	tm.waitFor("› a draft")
	tm.keys("C-g")
	tm.waitFor("› a draft and more from the editor")
	tm.keys("Enter")
	tm.waitFor("you  a draft and more from the editor", "Third answer.")
	tm.quit(1)
}
