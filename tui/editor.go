package tui

import (
	"os"
	"os/exec"
	"strings"

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
	return tea.ExecProcess(cmd, func(err error) tea.Msg { return readEdited(path, err) })
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
