// Package transcript is the TUI's screen state as a fold over session
// events: Apply takes the events of a session in log order — a stored log
// on resume, the live stream while turns run, or a recorded `harness exec
// --json` log in tests — and keeps the blocks the screen shows (user
// messages, streamed assistant text, tool cards, steering, compaction
// markers, notices, turn endings) plus what the status line needs (active
// run, usage, occupancy, pending input).
//
// Apply does no I/O and reads no clock: times come from the events, and
// the caller passes "now" only to render a running call's elapsed time.
// The same events always give the same screen.
//
// Rendering is per block and cached by width (and the block's version), so
// a finished block costs nothing after its first frame; a Viewport renders
// only the blocks that intersect the window, walking back from the bottom
// (when following) or forward from an anchor (when scrolled), so a frame
// costs the visible lines, not the session's length.
package transcript

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/argv"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/subject"
)

// Pending is a message typed while a turn ran that is not applied yet:
// steering (for the next model request) or an input queued for the next
// turn.
type Pending struct {
	MessageID string
	Text      string
	Next      bool   // queued for the next turn, not steering
	RunID     string // the run it was queued on (for Withdraw)
}

// Workspace is what the log says about the session's workspace.
type Workspace struct {
	Backend string // local or docker
	ImageID string
}

// Transcript is the fold. The zero value is not usable; call New.
type Transcript struct {
	blocks []*entry

	byMsg      map[string]int // assistant and steering message ID → block
	byCall     map[string]int // call ID → tool card
	byPerm     map[string]string
	summaryReq map[string]int    // summary request ID → compaction block
	compacting int               // the compaction block in progress, -1 when none
	files      map[string]string // path → last contents seen (fs.read, fs.write)
	listed     map[string]bool   // paths seen in fs.list output
	written    map[string]bool   // paths fs.write wrote
	// What the fold keeps of large outputs and file contents, oldest
	// first, and their bytes: bounded by keepBytes (keep).
	bigCards  []*toolCard
	bigBytes  int
	fileOrder []string
	fileBytes int
	fromQueue map[string]bool // input message IDs that started a turn from the queue
	userCalls []*toolCard     // the calls the user's own message made (@path, !cmd), for its attachments

	sessionID string
	model     string
	runID     string // active run, "" when idle
	turnStart time.Time
	turnFirst int             // first block of the open turn
	completed map[string]bool // run IDs with a turn.completed
	lastRun   string          // the last run seen (withdraw after a turn ends)
	lastTurn  string          // status of the last turn.completed
	usage     model.Usage
	occupancy int
	window    int
	pending   []Pending
	workspace Workspace
	// mounts is what the last notice of the sandbox's mounts named: a
	// workspace opened again with the same ones says nothing new.
	mounts   string
	awaiting map[string]bool // permission IDs asked and not answered
	version  uint64
}

// New returns an empty transcript.
func New() *Transcript {
	return &Transcript{
		byMsg:      map[string]int{},
		byCall:     map[string]int{},
		byPerm:     map[string]string{},
		summaryReq: map[string]int{},
		files:      map[string]string{},
		listed:     map[string]bool{},
		written:    map[string]bool{},
		fromQueue:  map[string]bool{},
		completed:  map[string]bool{},
		compacting: -1,
		awaiting:   map[string]bool{},
	}
}

// Len is the number of blocks.
func (t *Transcript) Len() int { return len(t.blocks) }

// Version grows at every change; the screen compares it to know whether
// something new arrived.
func (t *Transcript) Version() uint64 { return t.version }

// SessionID is the session the events belong to ("" before any).
func (t *Transcript) SessionID() string { return t.sessionID }

// Model is the model the session asks: named by the last agent.started
// or settings.changed.
func (t *Transcript) Model() string { return t.model }

// ActiveRun is the run of the open turn, "" when idle.
func (t *Transcript) ActiveRun() string { return t.runID }

// Compacting reports whether a compaction's summary request is under way.
func (t *Transcript) Compacting() bool { return t.compacting >= 0 }

// LastRun is the most recent run seen, running or not.
func (t *Transcript) LastRun() string { return t.lastRun }

// Completed reports whether runID's turn has ended.
func (t *Transcript) Completed(runID string) bool { return t.completed[runID] }

// LastStatus is the status of the last finished turn ("" before any).
func (t *Transcript) LastStatus() string { return t.lastTurn }

// Usage is the cumulative model usage the events report.
func (t *Transcript) Usage() model.Usage { return t.usage }

// SetUsage replaces the cumulative usage, for a session whose earlier
// usage is not in its own log (a fork); later responses add to it.
func (t *Transcript) SetUsage(u model.Usage) { t.usage = u }

// Occupancy is the last accounted context occupancy and window, in tokens.
func (t *Transcript) Occupancy() (used, window int) { return t.occupancy, t.window }

// SetOccupancy sets the occupancy known before any event says it.
func (t *Transcript) SetOccupancy(used, window int) { t.occupancy, t.window = used, window }

// Pending lists the messages not applied yet, oldest first.
func (t *Transcript) Pending() []Pending { return t.pending }

// Workspace is the workspace the log describes.
func (t *Transcript) Workspace() Workspace { return t.workspace }

// Awaiting reports whether a permission question is open.
func (t *Transcript) Awaiting() bool { return len(t.awaiting) > 0 }

// Note adds a notice that is not an event: an intent the engine refused, a
// command's result. level is NoteInfo, NoteWarn or NoteError; code may be "".
func (t *Transcript) Note(level NoteLevel, code, text string) {
	t.add(&notice{level: level, code: code, text: text})
}

// Apply folds one event in. Unknown and bookkeeping types are ignored.
func (t *Transcript) Apply(ev event.Event) {
	t.version++
	switch d := ev.Data.(type) {
	case event.AgentStarted:
		t.sessionID, t.model = d.SessionID, d.Model
	case event.TurnStarted:
		t.sessionID = d.SessionID
		t.runID, t.lastRun, t.turnStart, t.turnFirst = d.RunID, d.RunID, ev.At, len(t.blocks)
		t.userCalls = t.userCalls[:0]
		if t.dropPending(d.InputMessageID) {
			t.fromQueue[d.InputMessageID] = true
		}
	case event.MessageCompleted:
		t.message(d)
	case event.MessageDelta:
		t.delta(d)
	case event.SteeringQueued:
		t.lastRun = d.RunID
		t.pending = append(t.pending, Pending{MessageID: d.MessageID, Text: d.Content, RunID: d.RunID})
		t.byMsg[d.MessageID] = t.add(&userBlock{text: d.Content, steering: true, state: stateQueued})
	case event.SteeringApplied:
		for _, id := range d.MessageIDs {
			t.dropPending(id)
			t.setSteering(id, stateApplied)
		}
	case event.InputQueued:
		t.lastRun = d.RunID
		t.pending = append(t.pending, Pending{MessageID: d.MessageID, Text: d.Content, Next: true, RunID: d.RunID})
	case event.InputWithdrawn:
		t.dropPending(d.MessageID)
		t.setSteering(d.MessageID, stateWithdrawn)
	case event.ContextAccounted:
		if d.SummaryRequest {
			// The summary request's own size, not what the model sees
			// next: the occupancy shown waits for context.compacted.
			t.compacting = t.add(&compactBlock{before: d.OccupancyTokens})
			t.summaryReq[d.RequestID] = t.compacting
			break
		}
		t.occupancy, t.window = d.OccupancyTokens, d.WindowTokens
	case event.ContextCompacted:
		t.compacted(d)
		t.occupancy = d.AfterTokens
	case event.SettingsChanged:
		// From the next request on: the header names the model asked.
		if d.Model != "" {
			t.model = d.Model
		}
		if d.WindowTokens > 0 {
			t.window = d.WindowTokens
		}
	case event.ModelResponse:
		t.usage = t.usage.Add(d.Usage)
	case event.ToolCall:
		t.toolCall(ev, d)
	case event.PolicyDecision:
		if i, ok := t.byCall[d.CallID]; ok && d.Effect == event.EffectDeny {
			c := t.blocks[i].b.(*toolCard)
			c.policy, c.denied = "denied by policy", true
			if d.Reason != "" {
				c.policy += ": " + d.Reason
			}
			t.touch(i)
		}
	case event.PermissionRequested:
		t.byPerm[d.PermissionID] = d.CallID
		t.awaiting[d.PermissionID] = true
		if i, ok := t.byCall[d.CallID]; ok {
			t.blocks[i].b.(*toolCard).status = statusAwaiting
			t.touch(i)
		}
	case event.PermissionResolved:
		delete(t.awaiting, d.PermissionID)
		if i, ok := t.byCall[d.CallID]; ok {
			c := t.blocks[i].b.(*toolCard)
			c.status = statusRunning
			c.policy = permissionText(d)
			c.denied = d.Decision != event.DecisionAllow
			c.start = ev.At // it runs from the answer: the wait is not its time
			t.touch(i)
		}
	case event.ToolResult:
		t.toolResult(d)
	case event.ToolOutput:
		if i, ok := t.byCall[d.CallID]; ok {
			c := t.blocks[i].b.(*toolCard)
			c.addOutput(d.Stream == event.StreamStderr, d.Text)
			c.streamedCut = c.streamedCut || d.Truncated
			t.touch(i)
		}
	case event.BudgetWarning:
		t.add(&notice{level: NoteWarn, text: budgetText(d)})
	case event.ModelRetry:
		text := "retrying the model request (attempt " + itoa(d.Attempt) + ", after " + itoa(d.DelayMs) + " ms)"
		if d.Message != "" {
			text = d.Message + "; " + text
		}
		t.add(&notice{level: NoteWarn, code: d.Code, text: text})
	case event.WorkspaceLifecycle:
		if d.Phase != event.PhaseDisposed {
			t.workspace = Workspace{Backend: d.Backend, ImageID: d.ImageID}
			if text := mountsText(d.Mounts); text != "" && text != t.mounts {
				t.mounts = text
				t.add(&notice{level: NoteInfo, text: text})
			}
		}
	case event.SessionForked:
		t.sessionID = d.SessionID
		at := " at its last finished turn"
		if d.FromTurnID == "" {
			at = " from its start (no turn of it had finished)"
		}
		t.add(&notice{level: NoteInfo, text: "forked from " + d.FromSessionID + at + abandoned(d.AbandonedTurnID)})
	case event.SessionRewound:
		text := "rewound to the end of turn " + itoa(d.ToTurn)
		if d.Undo {
			text = "undid the last rewind: back at the end of turn " + itoa(d.ToTurn)
		}
		switch {
		case d.FromTurn == d.ToTurn+1:
			text += "; turn " + itoa(d.FromTurn) + " above is rewound (kept here, out of the model's view)"
		case d.FromTurn > d.ToTurn:
			text += "; turns " + itoa(d.ToTurn+1) + "–" + itoa(d.FromTurn) + " above are rewound (kept here, out of the model's view)"
		}
		t.add(&notice{level: NoteInfo, text: text + "; the workspace holds that turn's files"})
	case event.PatchApplied:
		added, deleted := 0, 0
		for _, f := range d.Files {
			added, deleted = added+f.Added, deleted+f.Deleted
		}
		verb := "applied the workspace patch to "
		if d.Reverse {
			verb = "reverted the workspace patch in "
		}
		t.add(&notice{level: NoteInfo, text: verb + d.Root + ": " + itoa(len(d.Files)) + " file(s), +" + itoa(added) + " −" + itoa(deleted)})
	case event.JobExited:
		// A job ends whenever it does, between turns too: said where it
		// happened, as harness exec prints it; the cards that showed it
		// running now say it ended.
		how := event.JobEndWords(d.Reason)
		if d.ExitCode != nil {
			how += ", exit code " + itoa(*d.ExitCode)
		}
		for i := range t.blocks {
			if c, ok := t.blocks[i].b.(*toolCard); ok {
				if r, ok := c.exec(); ok && r.JobID == d.JobID && r.State == "running" && c.jobEnd == "" {
					c.jobEnd = how
					t.touch(i)
				}
			}
		}
		t.add(&notice{level: NoteInfo, text: "⟳ " + d.JobID + " ended (" + how + "): " + argv.Line(d.Argv)})
	case event.TurnCompleted:
		t.turnCompleted(ev, d)
	default:
		t.version-- // nothing the screen shows changed
	}
}

func abandoned(turn string) string {
	if turn == "" {
		return ""
	}
	return " (the interrupted turn " + turn + " was not continued)"
}

func (t *Transcript) add(b block) int {
	e := &entry{b: b}
	if n := len(t.blocks); n > 0 {
		e.gap = gapBetween(t.blocks[n-1].b.kind(), b.kind())
	}
	t.blocks = append(t.blocks, e)
	t.version++
	return len(t.blocks) - 1
}

// touch marks block i changed, so its cached lines are stale.
func (t *Transcript) touch(i int) {
	t.blocks[i].ver++
	t.version++
}

func (t *Transcript) dropPending(id string) bool {
	for i, p := range t.pending {
		if p.MessageID == id {
			t.pending = append(t.pending[:i:i], t.pending[i+1:]...)
			return true
		}
	}
	return false
}

func (t *Transcript) setSteering(id string, st userState) {
	if i, ok := t.byMsg[id]; ok {
		if u, ok := t.blocks[i].b.(*userBlock); ok {
			u.state = st
			t.touch(i)
		}
	}
}

func (t *Transcript) message(d event.MessageCompleted) {
	switch d.Role {
	case model.RoleUser:
		if strings.HasPrefix(d.Content, event.AttachmentsMarker+"\n") {
			t.attachments()
			return
		}
		t.add(&userBlock{text: d.Content, fromQueue: t.fromQueue[d.MessageID]})
	case model.RoleAssistant:
		if i, ok := t.byMsg[d.MessageID]; ok {
			a := t.blocks[i].b.(*assistantBlock)
			a.text.Reset()
			a.text.WriteString(d.Content)
			a.streaming = false
			a.reasoning = strings.TrimSpace(d.Reasoning)
			t.touch(i)
			return
		}
		if strings.TrimSpace(d.Content) != "" || strings.TrimSpace(d.Reasoning) != "" {
			t.byMsg[d.MessageID] = t.add(&assistantBlock{text: builder(d.Content), reasoning: strings.TrimSpace(d.Reasoning)})
		}
	}
}

func builder(s string) *strings.Builder {
	var b strings.Builder
	b.WriteString(s)
	return &b
}

func (t *Transcript) delta(d event.MessageDelta) {
	if i, ok := t.summaryReq[d.RequestID]; ok {
		c := t.blocks[i].b.(*compactBlock)
		c.summary += d.Delta
		t.touch(i)
		return
	}
	i, ok := t.byMsg[d.MessageID]
	if !ok {
		i = t.add(&assistantBlock{text: &strings.Builder{}, streaming: true})
		t.byMsg[d.MessageID] = i
	}
	a := t.blocks[i].b.(*assistantBlock)
	if d.Sequence < a.next {
		return // a redelivered delta
	}
	a.next = d.Sequence + 1
	a.text.WriteString(d.Delta)
	t.touch(i)
}

func (t *Transcript) compacted(d event.ContextCompacted) {
	i := t.compacting
	if i < 0 {
		i = t.add(&compactBlock{})
	}
	t.compacting = -1
	c := t.blocks[i].b.(*compactBlock)
	c.done = true
	c.summary = d.Summary
	c.beforeMsgs, c.afterMsgs = d.BeforeMessages, d.AfterMessages
	c.before, c.after = d.BeforeTokens, d.AfterTokens
	t.touch(i)
}

// attachments adds the block of the message the runtime composed from
// the user's own calls (the files of @path mentions, a !command's output),
// from those calls' events, never from the message's text: a file may
// hold anything, "<file path=" included.
func (t *Transcript) attachments() {
	a := &attachBlock{}
	for _, c := range t.userCalls {
		if c.user == event.UserShell {
			continue // its card is the one block a !command shows
		}
		a.calls = append(a.calls, c)
	}
	t.userCalls = t.userCalls[:0]
	if len(a.calls) > 0 {
		t.add(a)
	}
}

func (t *Transcript) toolCall(ev event.Event, d event.ToolCall) {
	c := &toolCard{callID: d.CallID, tool: d.Tool, input: d.Input, start: ev.At, status: statusRunning}
	c.subject = subject.Of(d.Tool, d.Input)
	c.user = event.UserCallKind(d)
	if c.user != "" {
		t.userCalls = append(t.userCalls, c)
	}
	if d.Tool == "fs.write" {
		var in struct {
			Path     string `json:"path"`
			Contents string `json:"contents"`
		}
		if json.Unmarshal(d.Input, &in) == nil && in.Path != "" {
			prior, seen := t.files[in.Path]
			c.write = &writeInfo{path: in.Path, contents: in.Contents, prior: prior, seen: seen, listed: t.listed[in.Path]}
		}
	}
	t.byCall[d.CallID] = t.add(c)
}

// PreviewWrite shows on a running fs.write's card the change its approval
// question shows (the workspace file's own diff), until the result brings
// the recorded one. It changes nothing once the call has finished.
func (t *Transcript) PreviewWrite(callID, patch string) {
	i, ok := t.byCall[callID]
	if !ok || patch == "" {
		return
	}
	c := t.blocks[i].b.(*toolCard)
	if c.write == nil || !c.pending() {
		return
	}
	c.write.setExact(patch)
	t.touch(i)
}

// keepBytes bounds what the fold keeps of the reads' outputs, and apart
// of the file contents it learned (for the diff of a later write that
// comes without the tool's record): a session of a thousand 20 KB reads
// would otherwise keep 40 MB. Past it, the oldest reads keep only their
// head (toolCard.release), the oldest contents are forgotten.
const keepBytes = 4 << 20

// keep holds what the fold keeps within keepBytes.
func (t *Transcript) keep() {
	for t.bigBytes > keepBytes && len(t.bigCards) > 0 {
		c := t.bigCards[0]
		t.bigCards[0] = nil
		t.bigCards = t.bigCards[1:]
		size := len(c.output)
		c.release()
		t.bigBytes -= size
		if i, ok := t.byCall[c.callID]; ok {
			t.touch(i)
		}
	}
	for t.fileBytes > keepBytes && len(t.fileOrder) > 0 {
		p := t.fileOrder[0]
		t.fileOrder = t.fileOrder[1:]
		t.fileBytes -= len(t.files[p])
		delete(t.files, p)
	}
}

// learnFile records path's contents as the session last saw them.
func (t *Transcript) learnFile(path, contents string) {
	if old, ok := t.files[path]; ok {
		t.fileBytes -= len(old)
		for i, p := range t.fileOrder {
			if p == path {
				t.fileOrder = append(t.fileOrder[:i:i], t.fileOrder[i+1:]...)
				break
			}
		}
	}
	t.files[path] = contents
	t.fileOrder = append(t.fileOrder, path)
	t.fileBytes += len(contents)
}

func (t *Transcript) toolResult(d event.ToolResult) {
	i, ok := t.byCall[d.CallID]
	if !ok {
		return
	}
	c := t.blocks[i].b.(*toolCard)
	c.durationMs = d.DurationMs
	c.output = d.Output
	switch {
	case d.OK:
		c.status = statusDone
		c.settle()
		if c.tool == "fs.read" && len(c.output) > releaseOver {
			t.bigCards = append(t.bigCards, c)
			t.bigBytes += len(c.output)
		}
		if c.write != nil {
			c.write.record(d.Patch, d.Lines)
		}
		t.learn(c, d.Output)
	case d.Error != nil && d.Error.Code == "TOOL_CANCELED":
		c.status = statusCanceled
		c.errMsg = d.Error.Message
	default:
		c.status = statusFailed
		if d.Error != nil {
			c.errCode, c.errMsg = d.Error.Code, d.Error.Message
		}
		if c.denied && (c.errCode == "TOOL_PERMISSION_DENIED" || c.errCode == "TOOL_POLICY_DENIED") {
			c.errMsg = "" // the card's denial line says it, reason included
		}
	}
	t.touch(i)
	t.keep()
}

// learn records file contents a successful call revealed, so a later
// fs.write of the same path shows a real diff.
func (t *Transcript) learn(c *toolCard, out json.RawMessage) {
	switch c.tool {
	case "fs.read":
		var o struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		}
		if json.Unmarshal(out, &o) == nil && o.Path != "" {
			t.learnFile(o.Path, o.Content)
		}
	case "fs.write":
		if c.write != nil {
			t.learnFile(c.write.path, c.write.contents)
			t.written[strings.TrimPrefix(c.write.path, "./")] = true
		}
	case "fs.list":
		var o struct {
			Path    string   `json:"path"`
			Entries []string `json:"entries"`
		}
		if json.Unmarshal(out, &o) == nil {
			for _, e := range o.Entries {
				if o.Path != "" && o.Path != "." {
					e = strings.TrimSuffix(o.Path, "/") + "/" + e
				}
				t.listed[e] = true
				t.listed[strings.TrimPrefix(e, "./")] = true
			}
		}
	}
}

func (t *Transcript) turnCompleted(ev event.Event, d event.TurnCompleted) {
	t.completed[d.RunID] = true
	t.lastTurn = d.Status
	dur := time.Duration(0)
	if t.runID == d.RunID && !t.turnStart.IsZero() {
		dur = ev.At.Sub(t.turnStart)
	}
	if t.runID == d.RunID {
		t.runID = ""
	}
	clear(t.awaiting)
	// Whatever was still streaming stopped here.
	t.compacting = -1
	for i := min(t.turnFirst, len(t.blocks)); i < len(t.blocks); i++ {
		switch b := t.blocks[i].b.(type) {
		case *assistantBlock:
			if b.streaming {
				b.streaming, b.interrupted = false, d.Status != event.StatusCompleted
				t.touch(i)
			}
		case *toolCard:
			if b.status == statusRunning || b.status == statusAwaiting {
				b.status = statusCanceled
				t.touch(i)
			}
		case *compactBlock:
			if !b.done {
				b.done, b.failed = true, true
				t.touch(i)
			}
		}
	}
	note := d.Note
	if d.Status != event.StatusCompleted && note != "" && t.saidByACard(note) {
		// The tool call that failed the turn says it just above, whole.
		note = "(the " + d.ErrorCode + " above)"
	}
	t.add(&turnEnd{status: d.Status, code: d.ErrorCode, note: note, truncated: d.Truncated, requests: d.ModelRequests, tools: d.ToolCalls, tokens: d.Usage.TotalTokens, dur: dur})
}

// saidByACard reports whether a failed tool card of the turn ending now
// shows msg as its error.
func (t *Transcript) saidByACard(msg string) bool {
	for i := min(t.turnFirst, len(t.blocks)); i < len(t.blocks); i++ {
		if c, ok := t.blocks[i].b.(*toolCard); ok && c.status == statusFailed && c.errMsg == msg {
			return true
		}
	}
	return false
}

func permissionText(d event.PermissionResolved) string {
	switch {
	case d.Decision == event.DecisionAllow && d.Scope == event.ScopeRun:
		return "approved for this turn"
	case d.Decision == event.DecisionAllow && d.Scope == event.ScopeSession:
		return "approved for this session"
	case d.Decision == event.DecisionAllow:
		return "approved"
	case strings.HasPrefix(d.Note, "denied"):
		return d.Note // "denied in the TUI: …"
	case d.Note != "":
		return "denied: " + d.Note
	default:
		return "denied"
	}
}

func budgetText(d event.BudgetWarning) string {
	what := map[string]string{event.MetricSteps: "steps", event.MetricTokens: "tokens", event.MetricToolCalls: "tool calls"}[d.Metric]
	if what == "" {
		what = d.Metric
	}
	return "budget: " + itoa(d.Pct) + "% of the " + what + " used (" + itoa(d.Used) + " of " + itoa(d.Limit) + ")"
}

// Resolved reports whether permissionID was answered (or its turn ended).
func (t *Transcript) Resolved(permissionID string) bool {
	_, asked := t.byPerm[permissionID]
	return asked && !t.awaiting[permissionID]
}

// Live reports whether a block shows the clock or the spinner.
func (t *Transcript) Live() bool {
	for i := len(t.blocks) - 1; i >= 0 && i >= t.turnFirst; i-- {
		if t.blocks[i].b.live() {
			return true
		}
	}
	return false
}

// Written lists the paths the session's fs.write calls wrote, sorted.
func (t *Transcript) Written() []string {
	var out []string
	for p := range t.written {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Invalidate drops every cached rendering (the theme changed).
func (t *Transcript) Invalidate() {
	for i := range t.blocks {
		t.blocks[i].ver++
	}
	t.version++
}

// mountsText says what of the host the sandbox sees besides the copy of
// the project (its toolchains and caches), "" for nothing.
func mountsText(ms []event.Mount) string {
	var ro, rw []string
	for _, m := range ms {
		if m.ReadOnly {
			ro = append(ro, m.What)
		} else {
			rw = append(rw, m.What)
		}
	}
	var parts []string
	if len(ro) > 0 {
		parts = append(parts, strings.Join(ro, ", ")+" (read-only)")
	}
	if len(rw) > 0 {
		parts = append(parts, strings.Join(rw, ", ")+" (writable)")
	}
	if len(parts) == 0 {
		return ""
	}
	return "the sandbox sees, besides its copy of the project: " + strings.Join(parts, "; ")
}
