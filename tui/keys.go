package tui

import "charm.land/bubbles/v2/key"

// keyMap is every key the root handles. Its help texts change with the
// state (Enter sends when idle and steers when busy); disabled bindings are
// left out of the help.
type keyMap struct {
	Send     key.Binding
	Queue    key.Binding
	Newline  key.Binding
	History  key.Binding
	Cancel   key.Binding
	Quit     key.Binding
	Withdraw key.Binding
	Scroll   key.Binding
	Select   key.Binding
	Expand   key.Binding
	Commands key.Binding
	Complete key.Binding
	Help     key.Binding
	Clear    key.Binding
	Search   key.Binding
	Editor   key.Binding
	EditLast key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Send:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send")),
		Queue:    key.NewBinding(key.WithKeys("alt+enter"), key.WithHelp("alt+enter", "queue after turn")),
		Newline:  key.NewBinding(key.WithKeys("ctrl+j"), key.WithHelp("ctrl+j", "newline")),
		History:  key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "history")),
		Cancel:   key.NewBinding(key.WithKeys("esc", "ctrl+c"), key.WithHelp("esc", "cancel")),
		Quit:     key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		Withdraw: key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "withdraw last queued")),
		Scroll:   key.NewBinding(key.WithKeys("pgup", "pgdown", "home", "end"), key.WithHelp("pgup/pgdn/home/end/wheel", "scroll")),
		Select:   key.NewBinding(key.WithKeys("alt+up", "alt+down"), key.WithHelp("alt+↑/↓", "select card")),
		Expand:   key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "expand/collapse")),
		Commands: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "commands")),
		Complete: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "complete /cmd, @path")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")), // "?" then enter: a message may start with "?"
		Clear:    key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "clear the input")),
		Search:   key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "search history")),
		Editor:   key.NewBinding(key.WithKeys("ctrl+g"), key.WithHelp("ctrl+g", "edit in $EDITOR")),
		EditLast: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc esc", "edit last message")),
	}
}

// setState adapts the bindings to a busy or idle screen and to whether
// anything is pending.
func (k *keyMap) setState(busy, pending bool) {
	if busy {
		k.Send.SetHelp("enter", "steer")
	} else {
		k.Send.SetHelp("enter", "send")
	}
	k.Queue.SetEnabled(busy)
	k.Cancel.SetEnabled(busy)
	k.Quit.SetEnabled(!busy)
	k.Withdraw.SetEnabled(pending)
}

// ShortHelp is the one-line help under the input.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Send, k.Queue, k.Cancel, k.Quit, k.Withdraw, k.Newline, k.Commands, k.Help}
}

// FullHelp is the help overlay.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Send, k.Queue, k.Newline, k.History, k.Complete},
		{k.Clear, k.Search, k.Editor, k.EditLast},
		{k.Cancel, k.Quit, k.Withdraw},
		{k.Scroll, k.Select, k.Expand, k.Help},
	}
}

// slashCommands are the commands typed at the input, with their help.
var slashCommands = []struct{ name, help string }{
	{"/diff", "the whole workspace patch, scrollable"},
	{"/apply", "check the patch, show it, apply it to the host tree on confirmation"},
	{"/model", "NAME switches the model for the following requests"},
	{"/compact", "[focus] compact the context before the next model request, keeping the focus in detail"},
	{"/sessions", "pick another session to resume"},
	{"/new", "start a new session"},
	{"/fork", "continue in a new session from the last finished turn"},
	{"/help", "keys and commands"},
	{"/quit", "leave (the session can be resumed)"},
	{"/rewind", "back to the end of a turn, files and conversation (or undo the last rewind)"},
	{"/permissions", "what is allowed for this session; revoke TOOL (or all) takes it back"},
	{"/jobs", "the background jobs: command, age, state, last lines; stop ID stops one"},
}
