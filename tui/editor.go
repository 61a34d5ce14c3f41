package tui

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/harness-dev/harness/internal/errcode"
)

// ctrl+g edits the draft in the user's editor ($VISUAL, else $EDITOR,
// else vi): the draft (its pastes whole) goes to a temporary file, the
// program hands the terminal to the editor (tea.ExecProcess) and takes it
// back when the editor exits; what the file then holds is the draft.
// Update does no I/O: writing the file, and reading and removing it, are
// commands.

// editorReadyMsg says the draft is in path, for the editor to open.
type editorReadyMsg struct {
	path string
	err  error
}

// editedMsg is the draft as the editor left it.
type editedMsg struct {
	text string
	err  error
}

// editorCommand is the editor to run, as words ("code -w" is two).
func editorCommand() []string {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if f := strings.Fields(os.Getenv(v)); len(f) > 0 {
			return f
		}
	}
	return []string{"vi"}
}

// editDraft writes the draft to a temporary file for the editor.
func (m *Model) editDraft() tea.Cmd {
	draft := m.in.value()
	return func() tea.Msg {
		f, err := os.CreateTemp("", "harness-draft-*.md")
		if err != nil {
			return editorReadyMsg{err: errcode.Wrap(errcode.Internal, "edit the draft", err)}
		}
		// A text file ends with a newline, as the editor will leave it
		// (readEdited takes it off): without one, some editors show
		// "no newline at end of file" or add one at the first write.
		if draft != "" {
			draft += "\n"
		}
		_, err = f.WriteString(draft)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(f.Name())
			return editorReadyMsg{err: errcode.Wrap(errcode.Internal, "edit the draft", err)}
		}
		return editorReadyMsg{path: f.Name()}
	}
}

// runEditor hands the terminal to the editor on the draft's file.
func (m *Model) runEditor(msg editorReadyMsg) tea.Cmd {
	if msg.err != nil {
		m.flash = "ctrl+g: " + errcode.Message(msg.err)
		return nil
	}
	words := editorCommand()
	cmd := exec.Command(words[0], append(words[1:], msg.path)...)
	path := msg.path
	return tea.Exec(&editorProcess{cmd: cmd, settle: editorSettle}, func(err error) tea.Msg { return readEdited(path, err) })
}

// editorSettle is how long the program stays released after the editor
// exits.
//
// Bubble Tea (v2.1.1) stops its renderer before running the process and
// starts it again after: the stopped renderer's goroutine, once it has
// received the stop, stops the frame ticker that the restarted renderer
// shares, whenever it next runs. After an editor that returns at once (a
// script, or a window editor that does not wait for its window), that
// could come after the restart: the new renderer's ticker stopped for
// good, and the screen froze outside the program's screen, keys and
// resizes drawing nothing (seen in a real terminal on a loaded machine:
// TestTUIInputKeysInATerminal once in CI and once in six runs, and ctrl+g
// repeated froze within fifteen rounds in three runs of eight; a
// goroutine dump of a frozen process showed the event loop, the input
// reader and one renderer goroutine all waiting). Waiting a moment before
// the restart lets that goroutine run first.
var editorSettle = 100 * time.Millisecond

// editorProcess is the editor run by tea.Exec: the process, with the
// terminal's streams where the editor did not set its own, then the settle
// pause.
type editorProcess struct {
	cmd    *exec.Cmd
	settle time.Duration
}

func (e *editorProcess) Run() error {
	err := e.cmd.Run()
	time.Sleep(e.settle)
	return err
}

func (e *editorProcess) SetStdin(r io.Reader) {
	if e.cmd.Stdin == nil {
		e.cmd.Stdin = r
	}
}

func (e *editorProcess) SetStdout(w io.Writer) {
	if e.cmd.Stdout == nil {
		e.cmd.Stdout = w
	}
}

func (e *editorProcess) SetStderr(w io.Writer) {
	if e.cmd.Stderr == nil {
		e.cmd.Stderr = w
	}
}

// readEdited reads the draft the editor left in path and removes the file.
func readEdited(path string, runErr error) editedMsg {
	defer func() { _ = os.Remove(path) }()
	if runErr != nil {
		return editedMsg{err: errcode.Wrap(errcode.Internal, "edit the draft", runErr)}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return editedMsg{err: errcode.Wrap(errcode.Internal, "edit the draft", err)}
	}
	// Editors end a file with a newline the draft did not have.
	return editedMsg{text: strings.TrimSuffix(string(b), "\n")}
}

// onEdited puts the edited draft in the input (an editor that failed
// leaves the draft as it was).
func (m *Model) onEdited(msg editedMsg) {
	if msg.err != nil {
		m.flash = "ctrl+g: the editor failed (" + errcode.Message(msg.err) + "); the draft is unchanged."
		return
	}
	m.in.setValue(msg.text)
	m.flash = ""
}
