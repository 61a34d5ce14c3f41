package apptest

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/store"
)

// Scripts of the cases.
const (
	// hangScript's turn streams a little, then waits until canceled.
	hangScript = `[{"content": "thinking", "hang": true}]`
	// askScript's turn asks to run ls, then answers; a queued turn answers
	// after it.
	askScript = `[
		{"toolCalls": [{"id": "c1", "name": "process.exec", "arguments": {"argv": ["ls"]}}]},
		{"content": "first done"},
		{"content": "queued done"}
	]`
	// askThenFailScript's turn asks to run ls; its next request fails.
	askThenFailScript = `[
		{"toolCalls": [{"id": "c1", "name": "process.exec", "arguments": {"argv": ["ls"]}}]},
		{"error": "MODEL_AUTH_ERROR"}
	]`
	// writeScript's turn writes b.txt, then answers.
	writeScript = `[
		{"toolCalls": [{"id": "c1", "name": "fs.write", "arguments": {"path": "b.txt", "contents": "beta\n"}}]},
		{"content": "written"}
	]`
	twoTurnsScript = `[{"content": "first done"}, {"content": "second done"}]`
	// okScript answers every process's first request (a resumed session's
	// process starts the script again).
	okScript = `[{"content": "ok"}]`
	// catWriteScript's turn shows b.txt, then writes it; every open of
	// the session reads the script from its start, so that a turn after a
	// reopen shows what the workspace was rebuilt with.
	// lostScript's first turn shows and writes a.txt; its second writes
	// b.txt and hangs in a command until the container goes; a turn after a
	// reopen (the script read from its start) shows what the workspace
	// was rebuilt with.
	lostScript = `[
		{"toolCalls": [{"id": "c1", "name": "process.exec", "arguments": {"argv": ["sh", "-c", "echo \"a=$(cat a.txt) b=$(cat b.txt 2>/dev/null || echo none)\"; echo one > a.txt"]}}]},
		{"content": "first done"},
		{"toolCalls": [{"id": "c2", "name": "process.exec", "arguments": {"argv": ["sh", "-c", "echo two > b.txt; echo started; exec sleep 600"]}}]},
		{"content": "second done"}
	]`
	// guardScript's first turn asks to run ls, then fails; the two turns
	// after it answer.
	guardScript = `[
		{"toolCalls": [{"id": "c1", "name": "process.exec", "arguments": {"argv": ["ls"]}}]},
		{"error": "MODEL_AUTH_ERROR"},
		{"content": "second done"},
		{"content": "queued done"}
	]`
	// thenHangScript's first turn answers; its second waits until
	// canceled.
	thenHangScript = `[{"content": "first done"}, {"content": "thinking", "hang": true}]`
	catWriteScript = `[
		{"toolCalls": [{"id": "c1", "name": "process.exec", "arguments": {"argv": ["sh", "-c", "cat b.txt 2>/dev/null || echo none; echo beta > b.txt"]}}]},
		{"content": "done"}
	]`
)

// Run plays every case against the front end fe.
func Run(t *testing.T, fe FrontEnd) {
	t.Run("TypedWhileAdmitted", func(t *testing.T) { typedWhileAdmitted(t, fe) })
	t.Run("TypedWhileEnding", func(t *testing.T) { typedWhileEnding(t, fe) })
	t.Run("QueuedAfterCompleted", func(t *testing.T) { queuedAfter(t, fe, askScript, true) })
	t.Run("QueuedAfterFailed", func(t *testing.T) { queuedAfter(t, fe, askThenFailScript, false) })
	t.Run("QuestionAnswered", func(t *testing.T) { questionAnswered(t, fe) })
	t.Run("QuestionCanceled", func(t *testing.T) { questionCanceled(t, fe) })
	t.Run("WriteAnsweredOnDocker", func(t *testing.T) { writeAnsweredOnDocker(t, fe) })
	t.Run("TakeOverTellsTheHolder", func(t *testing.T) { takeOverTellsTheHolder(t, fe) })
	t.Run("SettingsOnResume", func(t *testing.T) { settingsOnResume(t, fe) })
	t.Run("UnrecordedEndIsTold", func(t *testing.T) { unrecordedEndIsTold(t, fe) })
	// What only some front ends offer is played where offered: the suite
	// starts one driver to ask.
	probe := fe(t, NewEnv(t).App(t, okScript, app.Options{}))
	if _, ok := probe.(Withdrawer); ok {
		t.Run("Withdraw", func(t *testing.T) { withdraw(t, fe) })
	}
	if _, ok := probe.(Holder); ok {
		t.Run("TakeOverIsToldAtOnce", func(t *testing.T) { takeOverIsToldAtOnce(t, fe) })
		t.Run("LostWorkspaceIsRebuilt", func(t *testing.T) { lostWorkspaceIsRebuilt(t, fe) })
		t.Run("LostDuringATurnIsDiscarded", func(t *testing.T) { lostDuringATurnIsDiscarded(t, fe) })
	}
	if _, ok := probe.(Switcher); ok {
		t.Run("NewWhileBusyIsRefused", func(t *testing.T) { newWhileBusyIsRefused(t, fe) })
	}
	if _, ok := probe.(Rewinder); ok {
		t.Run("Rewind", func(t *testing.T) { rewind(t, fe) })
	}
	if _, ok := probe.(Guarded); ok {
		t.Run("GuardedWhileTurnRuns", func(t *testing.T) { guardedWhileTurnRuns(t, fe) })
		t.Run("GuardedWhileMessageOnItsWay", func(t *testing.T) { guardedWhileMessageOnItsWay(t, fe) })
		t.Run("SessionChoiceWhileTurnRuns", func(t *testing.T) { sessionChoiceWhileTurnRuns(t, fe) })
		t.Run("RewindChoiceAfterTurnStarted", func(t *testing.T) { rewindChoiceAfterTurnStarted(t, fe) })
	}
}

// Text typed while the turn is being admitted (its turn.started held)
// steers that turn: no second turn starts from it.
func typedWhileAdmitted(t *testing.T, fe FrontEnd) {
	a := NewEnv(t).App(t, hangScript, app.Options{})
	g := NewGate(t, a, event.TypeTurnStarted)
	d := fe(t, a)
	d.Start(app.OpenRequest{}, "go")
	Await(t, g.Reached, "the turn's admission")
	d.Type("and be quick")
	g.Open()
	sq := Shows(t, d, "the steering", func(v event.SteeringQueued) bool { return v.Content == "and be quick" })
	started := Shows[event.TurnStarted](t, d, "the turn", nil)
	if sq.RunID != started.RunID {
		t.Errorf("the text steered run %s, want the admitted run %s", sq.RunID, started.RunID)
	}
	d.Cancel()
	id := d.End(t, 1)
	log := Log(t, a.Store, id)
	if n := len(Of[event.TurnStarted](log)); n != 1 {
		t.Errorf("%d turns started, want the one the text steered", n)
	}
	if ends := Of[event.TurnCompleted](log); len(ends) != 1 || ends[0].Status != event.StatusCanceled {
		t.Errorf("turns ended: %+v, want one, canceled", ends)
	}
}

// Text typed while the turn is ending (its turn.completed held) starts the
// next turn once that one has ended; each ends once, completed.
func typedWhileEnding(t *testing.T, fe FrontEnd) {
	a := NewEnv(t).App(t, twoTurnsScript, app.Options{})
	g := NewGate(t, a, event.TypeTurnCompleted)
	d := fe(t, a)
	d.Start(app.OpenRequest{}, "go")
	Await(t, g.Reached, "the turn's end")
	Await(t, d.Type("and then"), "the text taken")
	g.Open()
	id := d.End(t, 2)
	log := Log(t, a.Store, id)
	ends := Of[event.TurnCompleted](log)
	if len(ends) != 2 || ends[0].Status != event.StatusCompleted || ends[1].Status != event.StatusCompleted || ends[0].RunID == ends[1].RunID {
		t.Errorf("turns ended: %+v, want two, completed", ends)
	}
	if got := userInputs(log); !slices.Equal(got, []string{"go", "and then"}) {
		t.Errorf("user inputs %q, want the text as the second turn's", got)
	}
	if n := len(Of[event.SteeringQueued](log)); n != 0 {
		t.Errorf("%d steering messages: the text steered the ending turn", n)
	}
}

// A turn queued while one runs (here: queued during its admission, the
// turn then waiting on a question) is started by the session once the
// running turn completes; after a failed turn it stays queued, unstarted.
func queuedAfter(t *testing.T, fe FrontEnd, script string, completes bool) {
	a := NewEnv(t).App(t, script, app.Options{Approve: "ask"})
	g := NewGate(t, a, event.TypeTurnStarted)
	d := fe(t, a)
	queueWhileAdmitted(t, d, g, "then this")
	d.Answer(false)
	turns := 1
	if completes {
		turns = 2
	}
	id := d.End(t, turns)
	log := Log(t, a.Store, id)
	ends := Of[event.TurnCompleted](log)
	if !completes {
		if len(ends) != 1 || ends[0].Status != event.StatusFailed || ends[0].ErrorCode != "MODEL_AUTH_ERROR" {
			t.Errorf("turns ended: %+v, want one, failed with MODEL_AUTH_ERROR", ends)
		}
		if n := len(Of[event.TurnStarted](log)); n != 1 {
			t.Errorf("%d turns started: the queued turn started after a failed one", n)
		}
		return
	}
	if len(ends) != 2 || ends[0].Status != event.StatusCompleted || ends[1].Status != event.StatusCompleted {
		t.Errorf("turns ended: %+v, want two, completed", ends)
	}
	if got := userInputs(log); !slices.Equal(got, []string{"go", "then this"}) {
		t.Errorf("user inputs %q, want the queued text as the second turn's", got)
	}
}

// queueWhileAdmitted starts d's session with "go", queues line while that
// turn is being admitted (g holds its turn.started), and waits until d
// shows the queued input and the turn's question.
func queueWhileAdmitted(t *testing.T, d Driver, g *Gate, line string) {
	t.Helper()
	d.Start(app.OpenRequest{}, "go")
	Await(t, g.Reached, "the turn's admission")
	d.Queue(line)
	g.Open()
	Shows(t, d, "the queued input", func(v event.InputQueued) bool { return v.Content == line })
	Shows[event.PermissionRequested](t, d, "the question", nil)
}

// A question answered allow lets the call run; the turn goes on.
func questionAnswered(t *testing.T, fe FrontEnd) {
	a := NewEnv(t).App(t, askScript, app.Options{Approve: "ask"})
	d := fe(t, a)
	d.Start(app.OpenRequest{}, "go")
	q := Shows[event.PermissionRequested](t, d, "the question", nil)
	if q.CallID == "" || q.Action != "process.exec" || len(q.Input) == 0 {
		t.Errorf("question %+v: want the call's process.exec with its input", q)
	}
	d.Answer(true)
	id := d.End(t, 1)
	log := Log(t, a.Store, id)
	res := Of[event.PermissionResolved](log)
	if len(res) != 1 || res[0].PermissionID != q.PermissionID || res[0].Decision != "allow" {
		t.Errorf("resolved %+v, want %s allowed", res, q.PermissionID)
	}
	if calls := Of[event.ToolResult](log); len(calls) != 1 || calls[0].CallID != q.CallID {
		t.Errorf("tool results %+v, want %s's", calls, q.CallID)
	}
	if ends := Of[event.TurnCompleted](log); len(ends) != 1 || ends[0].Status != event.StatusCompleted {
		t.Errorf("turns ended: %+v, want one, completed", ends)
	}
}

// On the Docker workspace a write asks with its diff; allowed, it lands in
// the workspace, in the turn's recorded patch, and not on the host.
func writeAnsweredOnDocker(t *testing.T, fe FrontEnd) {
	NeedDocker(t)
	env := NewEnv(t)
	a := env.App(t, writeScript, app.Options{Approve: "ask", Workspace: "docker", Image: DockerImage})
	d := fe(t, a)
	d.Start(app.OpenRequest{}, "write b.txt")
	q := Shows[event.PermissionRequested](t, d, "the question", nil)
	if q.Action != "fs.write" || !strings.Contains(q.Patch, "+beta") {
		t.Errorf("question %+v: want the write with its diff", q)
	}
	d.Answer(true)
	id := d.End(t, 1)
	log := Log(t, a.Store, id)
	if res := Of[event.ToolResult](log); len(res) != 1 || res[0].CallID != q.CallID || res[0].Error != nil {
		t.Errorf("tool results %+v, want %s's, done", res, q.CallID)
	}
	patch, _, err := a.RecoverPatch(t.Context(), id)
	if err != nil || !strings.Contains(patch, "b.txt") || !strings.Contains(patch, "+beta") {
		t.Errorf("the session's patch %q, %v: want b.txt written", patch, err)
	}
	if _, err := os.Stat(filepath.Join(env.Project, "b.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the host has b.txt (%v): the write left the workspace", err)
	}
}

// A turn canceled while its question waits ends canceled, the question
// resolved as denied; the call never runs.
func questionCanceled(t *testing.T, fe FrontEnd) {
	a := NewEnv(t).App(t, askScript, app.Options{Approve: "ask"})
	d := fe(t, a)
	d.Start(app.OpenRequest{}, "go")
	q := Shows[event.PermissionRequested](t, d, "the question", nil)
	d.Cancel()
	id := d.End(t, 1)
	log := Log(t, a.Store, id)
	res := Of[event.PermissionResolved](log)
	if len(res) != 1 || res[0].PermissionID != q.PermissionID || res[0].Decision != "deny" {
		t.Errorf("resolved %+v, want %s denied", res, q.PermissionID)
	}
	for _, r := range Of[event.ToolResult](log) {
		if r.Error == nil {
			t.Errorf("the canceled question's call ran: %+v", r)
		}
	}
	if ends := Of[event.TurnCompleted](log); len(ends) != 1 || ends[0].Status != event.StatusCanceled {
		t.Errorf("turns ended: %+v, want one, canceled", ends)
	}
}

// The front end takes over (--take-over) a session another process holds
// between turns: the holder is told at once, with nothing sent, and the
// front end runs its turn.
func takeOverTellsTheHolder(t *testing.T, fe FrontEnd) {
	env := NewEnv(t)
	holder, err := env.App(t, okScript, app.Options{}).Open(t.Context(), app.OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Close(t.Context()) }()
	a := env.App(t, okScript, app.Options{TakeOver: true})
	d := fe(t, a)
	d.Start(app.OpenRequest{ResumeID: holder.ID()}, "mine now")
	Await(t, holder.Lost(), "the holder told of the take-over")
	if holder.LostTo() == "" {
		t.Error("the holder was not told who took the session")
	}
	id := d.End(t, 1)
	if ends := Of[event.TurnCompleted](Log(t, a.Store, id)); id != holder.ID() || len(ends) != 1 || ends[0].Status != event.StatusCompleted {
		t.Errorf("session %s (want %s) turns ended: %+v", id, holder.ID(), ends)
	}
}

// A front end holding a session between turns is told at once when
// another process takes it over.
func takeOverIsToldAtOnce(t *testing.T, fe FrontEnd) {
	env := NewEnv(t)
	h := fe(t, env.App(t, okScript, app.Options{})).(Holder)
	id := h.Hold(app.OpenRequest{})
	other, err := env.App(t, okScript, app.Options{TakeOver: true}).Open(t.Context(), app.OpenRequest{ResumeID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close(t.Context()) }()
	h.Told(t)
}

// A resume with a setting on the command line (the budget) records the
// change as settings.changed before the resumed turn's first request; a
// resume without one keeps what the session recorded.
func settingsOnResume(t *testing.T, fe FrontEnd) {
	env := NewEnv(t)
	id := ranSession(t, fe, env, "first")

	a := env.App(t, okScript, app.Options{BudgetTokens: 123456})
	d := fe(t, a)
	d.Start(app.OpenRequest{ResumeID: id}, "second")
	d.End(t, 1)
	shown := d.Shown()
	i := slices.IndexFunc(shown, func(e event.Event) bool { _, ok := e.Data.(event.SettingsChanged); return ok })
	j := slices.IndexFunc(shown, func(e event.Event) bool { _, ok := e.Data.(event.TurnStarted); return ok })
	if i < 0 || j < 0 || i > j {
		t.Fatalf("shown on resume: %s; want settings.changed before turn.started", types(shown))
	}
	if c := shown[i].Data.(event.SettingsChanged); c.BudgetTokens != 123456 || !slices.Contains(c.Changed, "budgetTokens") {
		t.Errorf("settings.changed %+v, want the budget 123456", c)
	}

	d = fe(t, env.App(t, okScript, app.Options{}))
	d.Start(app.OpenRequest{ResumeID: id}, "third")
	d.End(t, 1)
	if n := len(Of[event.SettingsChanged](d.Shown())); n != 0 {
		t.Errorf("a resume without settings changed them (%d settings.changed)", n)
	}
	if n := len(Of[event.SettingsChanged](Log(t, a.Store, id))); n != 1 {
		t.Errorf("%d settings.changed in the log, want the one resume's", n)
	}
}

// A queued message withdrawn before its turn is never started.
func withdraw(t *testing.T, fe FrontEnd) {
	a := NewEnv(t).App(t, hangScript, app.Options{})
	d := fe(t, a)
	w := d.(Withdrawer)
	d.Start(app.OpenRequest{}, "go")
	Shows[event.TurnStarted](t, d, "the turn", nil)
	msg := w.QueueID("later")
	Shows(t, d, "the queued input", func(v event.InputQueued) bool { return v.MessageID == msg })
	w.Withdraw(msg)
	Shows(t, d, "the withdrawal", func(v event.InputWithdrawn) bool { return v.MessageID == msg })
	d.Cancel()
	id := d.End(t, 1)
	log := Log(t, a.Store, id)
	if n := len(Of[event.TurnStarted](log)); n != 1 {
		t.Errorf("%d turns started: the withdrawn message started one", n)
	}
	if got := userInputs(log); slices.Contains(got, "later") {
		t.Errorf("user inputs %q hold the withdrawn message", got)
	}
}

// A rewind to the end of turn 1 takes turn 2 out of the model's view:
// the request of the turn after it holds the first input, not the second.
func rewind(t *testing.T, fe FrontEnd) {
	env := NewEnv(t)
	id := ranSession(t, fe, env, "first input")
	a := env.App(t, okScript, app.Options{})
	d := fe(t, a)
	d.Start(app.OpenRequest{ResumeID: id}, "second input")
	d.End(t, 1)

	d = fe(t, a)
	d.(Rewinder).Rewind(t, id, "1")
	rw := Of[event.SessionRewound](Log(t, a.Store, id))
	if len(rw) != 1 || rw[0].ToTurn != 1 || rw[0].FromTurn != 2 {
		t.Fatalf("rewound %+v, want from turn 2 to turn 1", rw)
	}
	d = fe(t, a)
	d.Start(app.OpenRequest{ResumeID: id}, "third input")
	d.End(t, 1)
	req, err := app.Request(t.Context(), a.Store, id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(req.Messages)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "first input") || !strings.Contains(string(b), "third input") || strings.Contains(string(b), "second input") {
		t.Errorf("the request after the rewind: %s", b)
	}
}

// A turn whose end the store could not record (its disk full) is still
// told as ended, from the owner's outcome (app.Unrecorded): its turn, its
// status, the failed append's code naming the store's, and that the log
// does not hold it; the log holds no turn.completed.
func unrecordedEndIsTold(t *testing.T, fe FrontEnd) {
	a := NewEnv(t).App(t, okScript, app.Options{})
	NewRefuse(a, event.TypeTurnCompleted, errcode.New(errcode.SessDiskFull, "the case's full disk"))
	d := fe(t, a)
	d.Start(app.OpenRequest{}, "go")
	started := Shows[event.TurnStarted](t, d, "the turn", nil)
	Until(t, d.Grew(), "the unrecorded end told", func() bool { return len(d.Unrecorded()) > 0 },
		func() string { return "shown: " + types(d.Shown()) })
	ends := d.Unrecorded()
	if len(ends) != 1 || ends[0].TurnID != started.TurnID || ends[0].Status != event.StatusCompleted ||
		ends[0].ErrorCode != string(errcode.RuntimeEventAppendFailed) || !strings.Contains(ends[0].Note, string(errcode.SessDiskFull)) ||
		!strings.Contains(ends[0].Note, app.UnrecordedNote) {
		t.Errorf("told %+v, want turn %s's end, completed with %s naming %s, not in the log",
			ends, started.TurnID, errcode.RuntimeEventAppendFailed, errcode.SessDiskFull)
	}
	id := d.End(t, 0)
	if n := len(Of[event.TurnCompleted](Log(t, a.Store, id))); n != 0 {
		t.Errorf("%d turn.completed in the log: the store recorded the end it refused", n)
	}
}

// A front end holding a session whose Docker container went away between
// turns (a Docker daemon restart, a `docker kill`) rebuilds its
// workspace before the next prompt's turn (app.Rebuild), from the project
// and what the last turn recorded, and says so.
func lostWorkspaceIsRebuilt(t *testing.T, fe FrontEnd) {
	NeedDocker(t)
	a := NewEnv(t).App(t, catWriteScript, app.Options{Workspace: "docker", Image: DockerImage, NoSpare: true})
	d := fe(t, a)
	d.Start(app.OpenRequest{}, "first")
	first := Shows[event.TurnCompleted](t, d, "the first turn's end", nil)
	if first.Status != event.StatusCompleted {
		t.Fatalf("the first turn ended %+v", first)
	}
	if out, err := exec.CommandContext(t.Context(), "docker", "kill", "--signal", "KILL", Container(t, first.SessionID)).CombinedOutput(); err != nil {
		t.Fatalf("docker kill: %v\n%s", err, out)
	}
	Await(t, d.Type("second"), "the line taken")
	id := d.End(t, 2)
	notes := d.(Holder).Notes()
	if len(notes) != 1 || !strings.Contains(notes[0], "rebuilt") {
		t.Errorf("notes %q, want one saying the workspace is rebuilt", notes)
	}
	var outs []string
	for _, r := range Of[event.ToolResult](d.Shown()) {
		var o struct{ Stdout string }
		_ = json.Unmarshal(r.Output, &o)
		outs = append(outs, o.Stdout)
	}
	// The rebuilt workspace holds the first turn's b.txt.
	if !slices.Equal(outs, []string{"none\n", "beta\n"}) {
		t.Errorf("the turns' commands showed %q, want none, then the first turn's b.txt in the rebuilt workspace", outs)
	}
	log := Log(t, a.Store, id)
	if ends := Of[event.TurnCompleted](log); len(ends) != 2 || ends[1].Status != event.StatusCompleted {
		t.Errorf("turns ended: %+v, want two, completed", ends)
	}
	if rec := Of[event.WorkspaceRecovered](log); len(rec) != 0 {
		t.Errorf("recovered %+v: nothing was lost during a turn", rec)
	}
}

// A new session asked for while a turn runs is refused: the running turn
// and its session stay the front end's until the turn is canceled.
func newWhileBusyIsRefused(t *testing.T, fe FrontEnd) {
	a := NewEnv(t).App(t, hangScript, app.Options{})
	d := fe(t, a)
	d.Start(app.OpenRequest{}, "go")
	started := Shows[event.TurnStarted](t, d, "the turn", nil)
	Await(t, d.(Switcher).New(), "the request taken")
	cancelRunning(t, d, a.Store, started.SessionID)
	list, err := a.Store.ListSessions(t.Context(), store.ListCursor{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Errorf("%d sessions stored, want the one whose turn ran", len(list))
	}
}

// ranSession runs a new session on env's store, by a front end of its
// own, for one turn of prompt (the scripted model answers it), and
// returns its ID.
func ranSession(t *testing.T, fe FrontEnd, env Env, prompt string) string {
	t.Helper()
	d := fe(t, env.App(t, okScript, app.Options{}))
	d.Start(app.OpenRequest{}, prompt)
	return d.End(t, 1)
}

// cancelRunning cancels the turn running on d, waits until d is done, and
// checks that d ended on session want, whose one turn ended canceled. It
// returns want's log.
func cancelRunning(t *testing.T, d Driver, r store.Reader, want string) []event.Event {
	t.Helper()
	d.Cancel()
	if id := d.End(t, 1); id != want {
		t.Errorf("the front end ended on session %s, want %s, whose turn was running", id, want)
	}
	log := Log(t, r, want)
	if ends := Of[event.TurnCompleted](log); len(ends) != 1 || ends[0].Status != event.StatusCanceled {
		t.Errorf("turns ended: %+v, want one, canceled", ends)
	}
	return log
}

// A front end holding a session whose Docker container went away during a
// turn (its end-of-turn diff failed: the turn's changes were not
// recorded, and no container kept them) gives up that turn's changes
// explicitly before the next prompt's turn (workspace.recovered,
// discarded), rebuilds the workspace from what the turn before recorded,
// and says so.
func lostDuringATurnIsDiscarded(t *testing.T, fe FrontEnd) {
	NeedDocker(t)
	a := NewEnv(t).App(t, lostScript, app.Options{Workspace: "docker", Image: DockerImage, NoSpare: true})
	d := fe(t, a)
	d.Start(app.OpenRequest{}, "first")
	first := Shows[event.TurnCompleted](t, d, "the first turn's end", nil)
	Await(t, d.Type("second"), "the line taken")
	Shows(t, d, "the second turn's command", func(v event.ToolOutput) bool { return strings.Contains(v.Text, "started") })
	if out, err := exec.CommandContext(t.Context(), "docker", "kill", "--signal", "KILL", Container(t, first.SessionID)).CombinedOutput(); err != nil {
		t.Fatalf("docker kill: %v\n%s", err, out)
	}
	Until(t, d.Grew(), "the second turn's end", func() bool { return len(Of[event.TurnCompleted](d.Shown())) >= 2 },
		func() string { return "shown: " + types(d.Shown()) })
	Await(t, d.Type("third"), "the line taken")
	id := d.End(t, 3)
	notes := d.(Holder).Notes()
	if len(notes) != 1 || !strings.Contains(notes[0], "discarded") || !strings.Contains(notes[0], "rebuilt") {
		t.Errorf("notes %q, want one saying the lost turn's changes are discarded and the workspace rebuilt", notes)
	}
	var outs []string
	for _, r := range Of[event.ToolResult](d.Shown()) {
		var o struct{ Stdout string }
		_ = json.Unmarshal(r.Output, &o)
		if r.OK {
			outs = append(outs, o.Stdout)
		}
	}
	// The rebuilt workspace holds the first turn's a.txt, not the lost
	// turn's b.txt.
	if len(outs) != 2 || outs[1] != "a=one b=none\n" {
		t.Errorf("the turns' commands showed %q, want the first turn's a.txt and no b.txt after the rebuild", outs)
	}
	log := Log(t, a.Store, id)
	if rec := Of[event.WorkspaceRecovered](log); len(rec) != 1 || !rec[0].Discarded {
		t.Errorf("recovered %+v, want the lost turn's changes discarded", rec)
	}
	if ends := Of[event.TurnCompleted](log); len(ends) != 3 || ends[2].Status != event.StatusCompleted {
		t.Errorf("turns ended: %+v, want the turn after the rebuild completed", ends)
	}
}

// betweenTurns are the commands a Guarded front end runs only between
// turns; "" is enter on an empty input, which starts the turn a queued
// input waits for, and says nothing when it does not.
var betweenTurns = []string{"/apply", "/fork", "/rewind", "/new", ""}

// refusedAll types each of betweenTurns at g and checks that it refused
// each: said so, asked nothing.
func refusedAll(t *testing.T, g Guarded) {
	t.Helper()
	for _, line := range betweenTurns {
		r := g.Command(line)
		if r.Asked {
			t.Errorf("%q while busy set work going", line)
		}
		if line != "" && !strings.Contains(r.Screen, BusyRefusal) {
			t.Errorf("%q while busy: the screen does not say %q:\n%s", line, BusyRefusal, r.Screen)
		}
	}
}

// refusedLeftNothing checks session id's store after refusedAll: one
// session (no fork, no new one), nothing rewound or applied.
func refusedLeftNothing(t *testing.T, r store.Reader, id string, log []event.Event) {
	t.Helper()
	list, err := r.ListSessions(t.Context(), store.ListCursor{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != id {
		t.Errorf("sessions stored: %+v, want only %s", list, id)
	}
	if rw, ap := Of[event.SessionRewound](log), Of[event.PatchApplied](log); len(rw)+len(ap) != 0 {
		t.Errorf("rewound %+v, applied %+v: a refused command was recorded", rw, ap)
	}
}

// While a turn runs, the commands that work only between turns are
// refused by the front end itself; the turn runs on, the queued input
// waits, and nothing of theirs is recorded.
func guardedWhileTurnRuns(t *testing.T, fe FrontEnd) {
	a := NewEnv(t).App(t, hangScript, app.Options{})
	g := fe(t, a).(Guarded)
	g.Start(app.OpenRequest{}, "go")
	id := Shows[event.TurnStarted](t, g, "the turn", nil).SessionID
	Await(t, g.Queue("later"), "the queued line taken")
	Shows(t, g, "the queued input", func(v event.InputQueued) bool { return v.Content == "later" })
	g.Settled(t, true)
	refusedAll(t, g)
	log := cancelRunning(t, g, a.Store, id)
	if got := userInputs(log); !slices.Equal(got, []string{"go"}) {
		t.Errorf("user inputs %q, want the running turn's alone", got)
	}
	refusedLeftNothing(t, a.Store, id, log)
}

// Between turns, while a typed message is on its way to the session (the
// session's owner is still recording a revoke, so it has not admitted the
// message yet, and no turn is active), the commands that work only between
// turns are refused by the front end all the same; the message then
// starts its turn, and the queued input the turn after it.
func guardedWhileMessageOnItsWay(t *testing.T, fe FrontEnd) {
	a := NewEnv(t).App(t, guardScript, app.Options{Approve: "ask"})
	admit := NewGate(t, a, event.TypeTurnStarted)
	revoke := NewGate(t, a, event.TypePermissionRevoked)
	g := fe(t, a).(Guarded)
	queueWhileAdmitted(t, g, admit, "later")
	g.AllowForSession()
	first := Shows[event.TurnCompleted](t, g, "the first turn's end", nil)
	if first.Status != event.StatusFailed {
		t.Fatalf("the first turn ended %+v, want failed", first)
	}
	g.Settled(t, false)
	Await(t, g.Type("/permissions revoke process.exec"), "the revoke taken")
	Await(t, revoke.Reached, "the revoke's append")
	Await(t, g.Type("second"), "the message taken")
	refusedAll(t, g)
	if n := len(Of[event.TurnStarted](Log(t, a.Store, first.SessionID))); n != 1 {
		t.Errorf("%d turns started before the revoke was recorded: the message was not on its way", n)
	}
	revoke.Open()
	id := g.End(t, 3)
	log := Log(t, a.Store, id)
	if got := userInputs(log); !slices.Equal(got, []string{"go", "second", "later"}) {
		t.Errorf("user inputs %q, want the message's turn, then the queued one", got)
	}
	if n := len(Of[event.PermissionRevoked](log)); n != 1 {
		t.Errorf("%d permission.revoked, want the one typed", n)
	}
	refusedLeftNothing(t, a.Store, id, log)
}

// Another session chosen in the session list while a turn runs is
// refused: the running turn and its session stay the front end's.
func sessionChoiceWhileTurnRuns(t *testing.T, fe FrontEnd) {
	env := NewEnv(t)
	earlier := ranSession(t, fe, env, "earlier")
	a := env.App(t, hangScript, app.Options{})
	g := fe(t, a).(Guarded)
	g.Start(app.OpenRequest{}, "go")
	started := Shows[event.TurnStarted](t, g, "the turn", nil)
	g.Settled(t, true)
	g.List(t, "/sessions")
	r := g.Choose(1) // the earlier session: the running one is the newest
	if r.Asked || !strings.Contains(r.Screen, BusyRefusal) {
		t.Errorf("another session chosen while busy: asked %v, screen:\n%s", r.Asked, r.Screen)
	}
	if n := len(Of[event.TurnStarted](Log(t, a.Store, earlier))); n != 1 {
		t.Errorf("the earlier session has %d turns, want its one", n)
	}
	cancelRunning(t, g, a.Store, started.SessionID)
}

// A turn chosen in the rewind list, opened between turns, once the front
// end has been told that a turn started meanwhile (it heard of it late) is
// refused: nothing is rewound, and the turn runs on.
func rewindChoiceAfterTurnStarted(t *testing.T, fe FrontEnd) {
	a := NewEnv(t).App(t, thenHangScript, app.Options{})
	g := fe(t, a).(Guarded)
	g.Start(app.OpenRequest{}, "first")
	Shows[event.TurnCompleted](t, g, "the first turn's end", nil)
	g.Settled(t, false)
	release := g.Late()
	Await(t, g.Type("second"), "the message taken")
	g.Settled(t, false) // accepted; the front end not yet told the turn runs
	g.List(t, "/rewind")
	release()
	g.Settled(t, true)
	r := g.Choose(1) // turn 1: the newest row is the running turn 2
	if r.Asked || !strings.Contains(r.Screen, BusyRefusal) {
		t.Errorf("a turn chosen to rewind to while busy: asked %v, screen:\n%s", r.Asked, r.Screen)
	}
	g.Cancel()
	id := g.End(t, 2)
	log := Log(t, a.Store, id)
	if rw := Of[event.SessionRewound](log); len(rw) != 0 {
		t.Errorf("rewound %+v while the turn ran", rw)
	}
	if ends := Of[event.TurnCompleted](log); len(ends) != 2 || ends[1].Status != event.StatusCanceled {
		t.Errorf("turns ended: %+v, want the second canceled", ends)
	}
}
