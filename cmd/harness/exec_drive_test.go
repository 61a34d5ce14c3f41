package main

import (
	"bufio"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/event"
)

// The exec driver in this process (so the race detector sees it), over a
// real app: a line typed after an interrupt — while the canceled turn is
// still ending, where steering used to be refused as terminal — starts
// the next turn through the same session command, and exec exits with
// that turn's outcome. Each turn ends exactly once.
func TestExecLineAfterInterruptStartsNextTurn(t *testing.T) {
	u := newUser(t)
	s := u.script(`[{"content":"thinking","hang":true},{"content":"done instead"}]`)
	home := t.TempDir()
	e := app.Env{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	o := app.Flags{Options: app.Options{DB: filepath.Join(home, "h.db"), FakeModel: s, Workspace: "local"}, JSON: true}
	outR, outW := io.Pipe()
	a, err := newCLI(t.Context(), o, e, outW, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	inR, inW := io.Pipe()
	interrupts := make(chan struct{})
	code := make(chan int, 1)
	go func() {
		code <- runExec(t.Context(), a, "start", inR, interrupts)
		outW.Close()
	}()

	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var evs []event.Event
	next := func() event.Event {
		t.Helper()
		if !sc.Scan() {
			t.Fatalf("exec output ended after %v", typesOf(evs))
		}
		ev, err := event.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("exec printed a line that is not an event: %v", err)
		}
		evs = append(evs, ev)
		return ev
	}
	for next().Type != event.TypeMessageDelta {
	}
	interrupts <- struct{}{} // taken by the drive loop: the turn is canceled
	if _, err := inW.Write([]byte("do this instead\n")); err != nil {
		t.Fatal(err)
	}
	var ends []event.TurnCompleted
	for len(ends) < 2 {
		if d, ok := next().Data.(event.TurnCompleted); ok {
			ends = append(ends, d)
		}
	}
	for sc.Scan() { // the rest, until exec closes its output
		ev, err := event.Decode(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	inW.Close()
	if c := <-code; c != exitCompleted {
		t.Errorf("exit %d, want %d (the last turn completed)", c, exitCompleted)
	}
	if ends[0].Status != event.StatusCanceled || ends[1].Status != event.StatusCompleted {
		t.Errorf("turns ended %s then %s, want canceled then completed", ends[0].Status, ends[1].Status)
	}
	started := 0
	for _, ev := range evs {
		switch d := ev.Data.(type) {
		case event.TurnStarted:
			started++
		case event.SteeringQueued:
			t.Errorf("the line steered a canceled turn: %+v", d)
		case event.MessageCompleted:
			if d.Role == "user" && d.TurnID == ends[1].TurnID && d.Content != "do this instead" {
				t.Errorf("the next turn's message = %q", d.Content)
			}
		}
	}
	if started != 2 || len(ends) != 2 {
		t.Errorf("%d turns started, %d ended: %v", started, len(ends), typesOf(evs))
	}
}

// In text mode, an answer canceled mid-line ends its line before the
// outcome, so the next turn's answer starts on a line of its own.
func TestExecTextCanceledAnswerEndsItsLine(t *testing.T) {
	u := newUser(t)
	s := u.script(`[{"content":"thinking","hang":true},{"content":"done instead"}]`)
	home := t.TempDir()
	e := app.Env{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	o := app.Flags{Options: app.Options{DB: filepath.Join(home, "h.db"), FakeModel: s, Workspace: "local"}}
	outR, outW := io.Pipe()
	a, err := newCLI(t.Context(), o, e, outW, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	inR, inW := io.Pipe()
	interrupts := make(chan struct{})
	code := make(chan int, 1)
	go func() {
		code <- runExec(t.Context(), a, "start", inR, interrupts)
		outW.Close()
	}()
	var out []byte
	buf := make([]byte, 4096)
	for !strings.Contains(string(out), "thinking") {
		n, err := outR.Read(buf)
		if err != nil {
			t.Fatalf("exec output ended before the first answer: %q (%v)", out, err)
		}
		out = append(out, buf[:n]...)
	}
	interrupts <- struct{}{}
	if _, err := inW.Write([]byte("do this instead\n")); err != nil {
		t.Fatal(err)
	}
	inW.Close()
	rest, err := io.ReadAll(outR)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, rest...)
	if c := <-code; c != exitCompleted {
		t.Errorf("exit %d, want %d", c, exitCompleted)
	}
	if got := string(out); got != "thinking\ndone instead\n" {
		t.Errorf("stdout = %q, want the canceled answer's line ended before the next answer", got)
	}
}
