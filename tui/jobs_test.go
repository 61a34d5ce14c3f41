package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/event"
)

// The status line counts the running background jobs (folded from
// job.started and job.exited); /jobs lists them with command, age and
// state, and the last lines of one that ended; /jobs stop ID asks the
// engine to stop a running one, and an unknown or ended one is refused on
// the screen with no call.
func TestJobsCountAndView(t *testing.T) {
	eng := idleEngine()
	now := base.Add(90 * time.Second)
	s := newScreen(t, eng, Options{Now: func() time.Time { return now }}, 120, 30)
	s.resetCalls()
	s.typeText("/jobs")
	s.key("enter")
	s.wantText("No background jobs")
	s.key("esc")

	code := 143
	s.events(
		ev(1, event.JobStarted{SessionID: sessID, TurnID: "turn-1", CallID: "call-1", JobID: "job-1", Argv: []string{"python3", "-m", "http.server", "8000"}}),
		ev(2, event.JobStarted{SessionID: sessID, TurnID: "turn-1", CallID: "call-2", JobID: "job-2", Argv: []string{"npm", "run", "watch"}}),
	)
	s.wantText("2 jobs running")
	s.events(ev(3, event.JobExited{SessionID: sessID, TurnID: "turn-1", JobID: "job-1", Argv: []string{"python3", "-m", "http.server", "8000"},
		Reason: event.JobReasonStopped, ExitCode: &code, Bytes: 40, Tail: "Serving HTTP on 127.0.0.1 port 8000\n\"GET / HTTP/1.1\" 200 -\n"}))
	s.wantText("1 job running")
	s.typeText("/jobs")
	s.key("enter")
	s.wantText("job-2  npm run watch  running 1m", "/jobs stop job-2",
		"job-1  python3 -m http.server 8000  ended (stopped, exit 143)", `│ "GET / HTTP/1.1" 200 -`)
	if strings.Contains(s.text(), "/jobs stop job-1") {
		t.Errorf("an ended job offers a stop:\n%s", s.text())
	}
	s.key("esc")

	s.typeText("/jobs stop job-1")
	s.key("enter")
	s.wantText("No running job job-1.")
	s.wantCalls()
	s.typeText("/jobs stop job-2")
	s.key("enter")
	s.wantCalls("stop job job-2")
	s.events(ev(4, event.JobExited{SessionID: sessID, TurnID: "turn-1", JobID: "job-2", Argv: []string{"npm", "run", "watch"}, Reason: event.JobReasonStopped}))
	if strings.Contains(s.text(), "job running") || strings.Contains(s.text(), "jobs running") {
		t.Errorf("the count stays after every job ended:\n%s", s.text())
	}
}

// The approval of a background start says it stays running; a job's
// action, which has no argv, shows its subject.
func TestExecLineOfJobs(t *testing.T) {
	for in, want := range map[string]string{
		`{"argv":["python3","-m","http.server"],"background":true}`: "python3 -m http.server (in the background: it stays running until stopped)",
		`{"argv":["ls"],"background":false}`:                        "ls",
		`{"action":"stop","job":"job-1"}`:                           "job job-1: stop",
	} {
		if got := execLine([]byte(in), "job job-1: stop"); got != want {
			t.Errorf("execLine(%s) = %q, want %q", in, got, want)
		}
	}
}

// In the /jobs view a digit stops the running job it numbers; the view
// says which key does what, and an ended job has no number.
func TestJobsViewStopsWithAKey(t *testing.T) {
	eng := idleEngine()
	s := newScreen(t, eng, Options{}, 120, 30)
	code := 0
	s.events(
		ev(1, event.JobStarted{SessionID: sessID, TurnID: "turn-1", CallID: "call-1", JobID: "job-1", Argv: []string{"python3", "-m", "http.server"}}),
		ev(2, event.JobStarted{SessionID: sessID, TurnID: "turn-1", CallID: "call-2", JobID: "job-2", Argv: []string{"sleep", "100"}}),
		ev(3, event.JobStarted{SessionID: sessID, TurnID: "turn-1", CallID: "call-3", JobID: "job-3", Argv: []string{"true"}}),
		ev(4, event.JobExited{SessionID: sessID, TurnID: "turn-1", JobID: "job-3", Argv: []string{"true"}, Reason: event.JobReasonExited, ExitCode: &code}),
	)
	s.resetCalls()
	s.typeText("/jobs")
	s.key("enter")
	s.wantText("1–9 stop that running job", "1  job-2  sleep 100", "2  job-1  python3 -m http.server")
	s.key("3") // numbers no running job
	s.wantCalls()
	s.key("2")
	s.wantCalls("stop job job-1")
	s.wantText("Stopping job-1")
}

// The open /jobs view follows the log: a job that ends while it is open
// shows how it ended and is no longer offered to stop (its digit does
// nothing); the "Stopping…" flash goes once the job has ended.
func TestJobsViewFollowsTheLog(t *testing.T) {
	eng := idleEngine()
	s := newScreen(t, eng, Options{}, 120, 30)
	s.events(ev(1, event.JobStarted{SessionID: sessID, TurnID: "turn-1", CallID: "call-1", JobID: "job-1", Argv: []string{"sleep", "600"}}))
	s.typeText("/jobs stop job-1")
	s.key("enter")
	s.wantText("Stopping job-1…")
	s.typeText("/jobs")
	s.key("enter")
	s.wantText("job-1  sleep 600  running", "/jobs stop job-1")
	code := 143
	s.events(ev(2, event.JobExited{SessionID: sessID, TurnID: "turn-1", JobID: "job-1", Argv: []string{"sleep", "600"},
		Reason: event.JobReasonStopped, ExitCode: &code}))
	s.wantText("job-1  sleep 600  ended (stopped, exit 143)")
	if txt := s.text(); strings.Contains(txt, "/jobs stop job-1") || strings.Contains(txt, "Stopping job-1…") {
		t.Errorf("the view or the flash did not follow the job's end:\n%s", txt)
	}
}
