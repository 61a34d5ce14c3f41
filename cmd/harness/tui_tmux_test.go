package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// terminal is a real terminal: a private tmux server running a shell in the
// user's project directory, 120×40. Tests type into it with send-keys and
// read it with capture-pane; they wait by polling the screen until a
// deadline, never by sleeping a fixed time.
type terminal struct {
	t    *testing.T
	sock string
}

const (
	termWidth  = 120
	termHeight = 40
	// screenDeadline bounds every wait for the screen (the race detector
	// and a cold Docker make the slow cases slow).
	screenDeadline = 90 * time.Second
)

func newTerminal(t *testing.T, u *userEnv) *terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("the TUI end-to-end tests need tmux: %v", err)
	}
	tm := &terminal{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	args := []string{"-f", "/dev/null", "new-session", "-d", "-s", "e2e", "-x", strconv.Itoa(termWidth), "-y", strconv.Itoa(termHeight), "-c", u.project}
	for _, kv := range u.environ() {
		args = append(args, "-e", kv)
	}
	args = append(args, "-e", "TERM=xterm-256color", "-e", "PS1="+prompt, "-e", "HISTFILE=/dev/null", "bash", "--norc", "--noprofile")
	tm.tmux(args...)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", tm.sock, "kill-server").Run() })
	tm.tmux("set-option", "-t", "e2e", "status", "off")
	return tm
}

func (tm *terminal) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names: "Enter", "C-c", "Escape", "M-Enter".
func (tm *terminal) keys(keys ...string) {
	tm.t.Helper()
	tm.tmux(append([]string{"send-keys", "-t", "e2e"}, keys...)...)
}

// typeText types text literally (no key names).
func (tm *terminal) typeText(text string) {
	tm.t.Helper()
	tm.tmux("send-keys", "-t", "e2e", "-l", text)
}

// line types text and presses Enter.
func (tm *terminal) line(text string) {
	tm.t.Helper()
	tm.typeText(text)
	tm.keys("Enter")
}

func (tm *terminal) screen() string {
	tm.t.Helper()
	return tm.tmux("capture-pane", "-p", "-t", "e2e")
}

// scrollback is the terminal's last 200 lines of history and its screen:
// what a user scrolling back after the program left would see.
func (tm *terminal) scrollback() string {
	tm.t.Helper()
	return tm.tmux("capture-pane", "-p", "-t", "e2e", "-S", "-200")
}

// waitFor polls the screen until every sub is on it, and returns it.
func (tm *terminal) waitFor(subs ...string) string {
	tm.t.Helper()
	return tm.waitUntil(strings.Join(subs, " + "), func(s string) bool {
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				return false
			}
		}
		return true
	})
}

// waitGone polls until sub is no longer on the screen.
func (tm *terminal) waitGone(sub string) string {
	tm.t.Helper()
	return tm.waitUntil("no "+sub, func(s string) bool { return !strings.Contains(s, sub) })
}

func (tm *terminal) waitUntil(what string, ok func(string) bool) string {
	tm.t.Helper()
	deadline := time.NewTimer(screenDeadline)
	defer deadline.Stop()
	poll := time.NewTicker(25 * time.Millisecond)
	defer poll.Stop()
	for {
		s := tm.screen()
		if ok(s) {
			return s
		}
		select {
		case <-deadline.C:
			tm.t.Fatalf("waited %s for %s; the screen:\n%s", screenDeadline, what, s)
		case <-poll.C:
		}
	}
}

var resumeLine = regexp.MustCompile(`harness resume (sess-[0-9a-f-]+)`)

// prompt is the shell's prompt: its return means the program exited.
const prompt = "e2e$ "

// quit waits for an idle screen (the footer offers "ctrl+c quit" only
// when no turn runs: a turn's last lines can be on the screen before its
// end is, and a ctrl+c then cancels the turn instead), presses Ctrl+C and
// waits for harness to exit: the n-th resume line, then the shell prompt
// under it. It returns the session ID printed.
func (tm *terminal) quit(n int) string {
	tm.t.Helper()
	tm.waitFor("ctrl+c quit")
	tm.keys("C-c")
	s := tm.waitUntil("the resume line and the prompt", func(s string) bool {
		lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
		return len(resumeLine.FindAllString(s, -1)) >= n && strings.TrimSpace(lines[len(lines)-1]) == strings.TrimSpace(prompt)
	})
	all := resumeLine.FindAllStringSubmatch(s, -1)
	return all[len(all)-1][1]
}

// harnessCmd is the shell command line that starts the binary under test.
func harnessCmd(u *userEnv, args ...string) string {
	q := make([]string, 0, len(args)+3)
	q = append(q, shellQuote(harnessBin))
	for _, a := range args {
		q = append(q, shellQuote(a))
	}
	q = append(q, "--db", shellQuote(u.db))
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " '\"$`\\*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// answer gives the approval box the keys with Tab (on the empty input),
// then presses key, and waits for the prompt to go.
func (tm *terminal) answer(key, prompt string) {
	tm.t.Helper()
	tm.keys("Tab")
	tm.waitFor("y/a/s/n/r answer", "back to the input")
	tm.keys(key)
	tm.waitGone(prompt)
}
