// Package tui is Harness's terminal front end, on Bubble Tea v2, bubbles v2
// and lipgloss v2: the transcript of a session, an input that is always
// live, approvals, the status line and the slash commands.
//
// What it owns. The screen and nothing else. Everything it needs from the
// rest of Harness goes through Engine, a small interface declared here and
// implemented by package tuiengine over the app (runtime and store); the package
// imports neither. Update does no I/O: every engine call is a tea.Cmd that
// captures values (never the model) and answers with a message.
//
// Data flow. One pull loop (STYLE 14): a listen command calls Engine.Next,
// which returns a batch of the open session's events (with their sequence
// numbers) or a permission question, with the session owner's state; the
// update that receives it folds the events into the transcript, keeps the
// state and re-arms the loop. Whether the screen is busy is that state
// (or a message on its way), never a guess from the events. Events at or below the
// last sequence seen, and batches of a session no longer shown, are
// ignored, so a stored log on resume followed by the live stream never
// doubles anything. The screen's state is that fold (package transcript):
// the same events give the same screen, which is what the golden tests of
// a recorded session check.
//
// Layout, top to bottom: the status line (session ID, model, workspace,
// tokens used / budget, context occupancy, queued count, busy mark), the
// demo / read-only / error banners, the body (the transcript, or an
// overlay: /diff and /apply pagers, the help, the session picker), then the
// chips of pending messages, the approval prompt, the input and the short
// key help.
//
// Keys. Enter sends a new turn when idle and steers the running one when
// busy; alt+enter queues the message for the next turn instead (shown as a
// chip until the turn takes it); ctrl+x withdraws the newest message not yet
// applied. ctrl+j (or shift+enter, or a trailing backslash) breaks a line;
// ↑/↓ on the first/last line recall sent messages (those of a resumed
// session too); tab completes a slash command, an @path mention or a word
// that looks like a path (from the workspace's listing, which the engine
// gives, kept and fetched again after each turn; several matches are
// listed above the input), and an unknown /word is never sent. Esc or Ctrl+C cancels a running turn (Ctrl+C twice: quit
// without waiting); on an idle screen Ctrl+C clears a draft first and
// quits on the next press. pgup/pgdn, the mouse wheel and (with an empty
// input) home/end scroll, alt+↑/↓ select a card, ctrl+o expands or collapses it (the last
// one when none is selected). With --approve ask, a question never takes
// keys meant for the input: typing stays in the input, a tab with a draft
// completes the draft, and only tab on an empty input gives the question's
// box the keys, the input then dimmed and without a cursor. In the box y
// allows once, a allows the tool for the rest of the turn, n denies, r
// denies with a reason; the highlight starts on "deny" and enter or space
// act on it only after ←/→ moved it; tab, or any other key that types,
// gives the keys back to the input (and types there). Esc collapses an expanded box, else denies and stops the turn; enter
// with text in the input denies and sends the text to the model as the
// reason; ctrl+o shows the whole command or diff. The box never grows
// past the screen: what of the command and diff does not fit is a window
// that pgup/pgdn move (they scroll the transcript when all of it fits).
//
// Messages: "@path" mentions attach workspace files and "!command" runs a
// command in the sandbox; the runtime does both through the tools (the
// same policy, approvals and refusals as the model's calls) and records
// the result as a user message starting with event.AttachmentsMarker,
// which the transcript shows as "attached …" or the command's output (once,
// with its exit code), drawn from the calls' own events, never from the
// message's text.
//
// The screen is the terminal's alternate one, so nothing of it stays once
// the program quits; Scrollback gives what this process showed of the
// session, rendered at the screen's width (in Profile's colours), for the
// command to print after it (with the resume command), so that it is in
// the scrollback.
//
// More keys: ctrl+u clears the input (↑ brings it back; ↑ recalls a long
// paste as its marker, as it was sent), ctrl+r searches the messages sent,
// ctrl+g edits the draft in $VISUAL or $EDITOR, Esc Esc on an empty input
// brings the last message back (withdrawn when it still waits), and "?"
// alone then Enter opens the help (a message may start with "?").
//
// Text sent as a turn is ending is not lost, and the screen keeps nothing
// for it: the engine's Send (the session's) waits for the ending turn and
// steers the turn the session starts next, or starts one with the text.
// The screen sends one input at a time, the next once the engine answered
// the one before; one refused comes back into an empty input, its code
// noted. After a completed turn, inputs queued for the next turn
// start it; after a canceled or failed one they wait, and an empty Enter
// sends them.
//
// Rendering. Blocks are rendered per width and cached until they change; a
// viewport renders only the blocks that intersect the window (walking back
// from the bottom when following, forward from an anchor when scrolled), so
// a frame costs what is visible, not the session's length. Streaming text
// re-renders only its last paragraph. Markdown is a small lipgloss renderer
// (package markdown) rather than glamour: it must run at every delta in
// microseconds and accept unfinished input without flicker. Fenced code is
// highlighted by its language (package markdown/syntax, on chroma's lexing
// engine with rules of its own), lexed once per text and cached, in a
// palette per colour profile (package theme); body text keeps the
// terminal's own foreground.
package tui
