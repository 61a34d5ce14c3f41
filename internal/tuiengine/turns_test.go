package tuiengine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/tui"
)

// The /rewind picker's counts are each turn's own: a second write that
// adds one line to a file counts +1, not the file's +2 since the session
// began, and a turn that changes nothing counts nothing. A rewind then is
// said once, by the transcript's line for its session.rewound.
func TestTurnsCountEachTurnsOwnLines(t *testing.T) {
	if err := dockerws.Ping(t.Context(), ""); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "no daemon answers: "+errcode.Message(err))
	}
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "keep.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(project)
	write := func(id, contents string) string {
		return `{"toolCalls":[{"id":"` + id + `","name":"fs.write","arguments":{"path":"a.txt","contents":"` + contents + `"}}]}`
	}
	script := writeScript(t, `[`+write("w1", `one\n`)+`,{"content":"wrote one"},`+
		write("w2", `one\ntwo\n`)+`,{"content":"wrote two"},{"content":"nothing to do"}]`)
	home := t.TempDir()
	e := app.Env{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	held := &Held{}
	a, err := app.New(t.Context(), app.Options{FakeModel: script, DB: filepath.Join(home, "h.db"), Workspace: "docker",
		Image: "harness-busybox", NoSpare: true}, e, held)
	if err != nil {
		t.Fatal(err)
	}
	eng := New(a, held)
	t.Cleanup(func() {
		eng.Close()
		a.Close()
	})
	if _, err := eng.Open(t.Context(), tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, prompt := range []string{"write one", "add two", "look"} {
		if _, err := eng.Send(t.Context(), prompt); err != nil {
			t.Fatal(err)
		}
		collect(t, eng, nil)
	}
	turns, _, err := eng.Turns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := [][3]int{{1, 1, 0}, {1, 1, 0}, {0, 0, 0}}
	if len(turns) != len(want) {
		t.Fatalf("%d turns, want %d: %+v", len(turns), len(want), turns)
	}
	for i, w := range want {
		if got := [3]int{turns[i].Files, turns[i].Added, turns[i].Deleted}; got != w {
			t.Errorf("turn %d (%q): files, +, − = %v, want %v", i+1, turns[i].Prompt, got, w)
		}
	}

	// The rewind's own words add nothing to the line the reopened
	// transcript shows for its session.rewound. turn.completed is seen
	// before the owner has released the session: wait for it, as the
	// TUI does (its state turns idle only then).
	waitIdle(t, eng)
	s, out, err := eng.Rewind(t.Context(), turns[0].ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if out != "" {
		t.Errorf("rewind said %q besides its session.rewound", out)
	}
	var rewound []event.SessionRewound
	for _, r := range s.History {
		if d, ok := r.Event.Data.(event.SessionRewound); ok {
			rewound = append(rewound, d)
		}
	}
	if len(rewound) != 1 || rewound[0].ToTurn != 1 || rewound[0].FromTurn != 3 {
		t.Errorf("the reopened history's session.rewound: %+v, want one, to turn 1 from 3", rewound)
	}
}

// A session resumed from another directory says so, and its other banner
// message (here: the local workspace is read-only) is a line of its own,
// not run into the first.
func TestMovedSessionBannerKeepsMessagesApart(t *testing.T) {
	home, first, other := t.TempDir(), t.TempDir(), t.TempDir()
	script := writeScript(t, `[{"content":"hello"}]`)
	t.Chdir(first)
	eng, _ := newEngineAt(t, home, app.Options{FakeModel: script})
	if _, err := eng.Open(t.Context(), tui.OpenRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	collect(t, eng, nil)
	id := eng.SessionID()
	eng.Close()

	t.Chdir(other)
	eng2, _ := newEngineAt(t, home, app.Options{FakeModel: script})
	s, err := eng2.Open(t.Context(), tui.OpenRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(s.Note, "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "session "+id+" belongs to the project") || !strings.HasPrefix(lines[1], "--workspace local") {
		t.Errorf("banner note = %q, want the move and the read-only workspace on two lines", s.Note)
	}
}
