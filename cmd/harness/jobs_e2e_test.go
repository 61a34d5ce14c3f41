package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/event"
)

// containersOf lists the containers (running or not) of session id. The
// tests run with --no-spare: a claimed warm spare carries no session
// label.
func containersOf(t *testing.T, id string) []string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+dockerws.LabelSession+"="+id).CombinedOutput()
	if err != nil {
		t.Fatalf("docker ps: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// wantNoContainers waits (30 s at most) until the containers of session
// id are removed (harness leaves the removal to the daemon as it exits)
// and fails if any remains.
func wantNoContainers(t *testing.T, id string) {
	t.Helper()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for _, c := range containersOf(t, id) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		res := cli.ContainerWait(ctx, c, client.ContainerWaitOptions{Condition: container.WaitConditionRemoved})
		select {
		case <-res.Result:
		case <-res.Error: // gone already, or the 30 s passed: the list says
		}
		cancel()
	}
	if left := containersOf(t, id); len(left) > 0 {
		t.Fatalf("containers left after the session: %v", left)
	}
}

// fetchScript fetches the page of the server on 127.0.0.1:8000 inside the
// sandbox, waiting (within 20 s) for it to listen.
const fetchScript = `import time, urllib.request
for _ in range(400):
    try:
        print(urllib.request.urlopen("http://127.0.0.1:8000/", timeout=5).read().decode())
        break
    except OSError:
        time.sleep(0.05)
else:
    raise SystemExit("the server never answered")
`

// TestBackgroundServerEndToEnd: the model starts python3 -m http.server in
// the background, a later command fetches its page over the container's
// loopback, the model reads the job's log (the request is in it), lists
// the jobs, stops the server and checks with ps that nothing of it is
// left. The log holds job.started (inside the starting call) and
// job.exited (stopped, 143: SIGTERM); harness exec says when the job
// started and ended; no container remains after the session.
func TestBackgroundServerEndToEnd(t *testing.T) {
	needSandbox(t)
	u := newUser(t)
	u.write("index.html", "<p>hello from the job</p>\n")
	calls := []map[string]any{
		{"id": "start", "name": "process.exec", "arguments": map[string]any{
			"argv": []string{"python3", "-m", "http.server", "8000", "--bind", "127.0.0.1"}, "background": true}},
		{"id": "fetch", "name": "process.exec", "arguments": map[string]any{"argv": []string{"python3", "-c", fetchScript}}},
		{"id": "log", "name": "process.exec", "arguments": map[string]any{"action": "output", "job": "job-1"}},
		{"id": "list", "name": "process.exec", "arguments": map[string]any{"action": "list"}},
		{"id": "stop", "name": "process.exec", "arguments": map[string]any{"action": "stop", "job": "job-1"}},
		{"id": "ps", "name": "process.exec", "arguments": map[string]any{"argv": []string{"ps", "-eo", "user,args"}}},
	}
	var steps []any
	for _, c := range calls {
		steps = append(steps, map[string]any{"toolCalls": []any{c}})
	}
	steps = append(steps, map[string]any{"content": "served the page and stopped the server"})
	script, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	r := u.run("", "exec", "--no-spare", "--image", "harness-sandbox", "--fake-model", u.script(string(script)), "serve the page")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	id := sessionFrom(t, r.stderr)
	r.events = decodeLines(t, u.run("", "events", id).stdout)
	res := resultsByModelCall(r.events)
	for _, c := range calls {
		if d := res[c["id"].(string)]; !d.OK {
			t.Fatalf("%s failed: %+v", c["id"], d.Error)
		}
	}
	var start struct {
		JobID string `json:"jobId"`
		State string `json:"state"`
		Note  string `json:"note"`
	}
	if err := json.Unmarshal(res["start"].Output, &start); err != nil || start.JobID != "job-1" || start.State != "running" || !strings.Contains(start.Note, `"action":"stop"`) {
		t.Fatalf("start = %s (%v)", res["start"].Output, err)
	}
	if !strings.Contains(string(res["fetch"].Output), "hello from the job") {
		t.Fatalf("fetch = %s", res["fetch"].Output)
	}
	var log struct {
		Output string `json:"output"`
		Next   int64  `json:"next"`
	}
	if err := json.Unmarshal(res["log"].Output, &log); err != nil || !strings.Contains(log.Output, `"GET / HTTP/1.1" 200`) || log.Next != int64(len(log.Output)) {
		t.Fatalf("log = %s (%v)", res["log"].Output, err)
	}
	if !strings.Contains(string(res["list"].Output), `"jobId":"job-1"`) || !strings.Contains(string(res["list"].Output), `"state":"running"`) {
		t.Fatalf("list = %s", res["list"].Output)
	}
	var stop struct {
		State    string `json:"state"`
		Reason   string `json:"reason"`
		ExitCode *int   `json:"exitCode"`
	}
	if err := json.Unmarshal(res["stop"].Output, &stop); err != nil || stop.State != "exited" || stop.Reason != "stopped" || stop.ExitCode == nil || *stop.ExitCode != 143 {
		t.Fatalf("stop = %s (%v)", res["stop"].Output, err)
	}
	if ps := string(res["ps"].Output); strings.Contains(ps, "http.server") || !strings.Contains(ps, "ps -eo user,args") {
		t.Fatalf("ps after the stop = %s", ps)
	}

	// On the record: the start inside its call, the end with its status.
	var startCall string
	for _, d := range eventsOf[event.ToolCall](r.events) {
		if d.ModelCallID == "start" {
			startCall = d.CallID
		}
	}
	order := []string{}
	for _, e := range r.events {
		switch d := e.Data.(type) {
		case event.ToolCall:
			if d.CallID == startCall {
				order = append(order, "call")
			}
		case event.ToolResult:
			if d.CallID == startCall {
				order = append(order, "result")
			}
		case event.JobStarted:
			order = append(order, "started")
			if d.CallID != startCall || d.TurnID == "" || d.JobID != "job-1" || d.Argv[2] != "http.server" {
				t.Errorf("job.started = %+v", d)
			}
		case event.JobExited:
			order = append(order, "exited")
			if d.JobID != "job-1" || d.Reason != event.JobReasonStopped || d.ExitCode == nil || *d.ExitCode != 143 || !strings.Contains(d.Tail, "GET / HTTP/1.1") {
				t.Errorf("job.exited = %+v", d)
			}
		}
	}
	if strings.Join(order, " ") != "call started result exited" {
		t.Errorf("order = %v", order)
	}
	if !strings.Contains(r.stderr, "job job-1 started in the background: python3 -m http.server 8000") ||
		!strings.Contains(r.stderr, "job job-1 ended (stopped, exit code 143)") {
		t.Errorf("stderr does not say when the job started and ended:\n%s", r.stderr)
	}
	wantNoContainers(t, id)
}

// sessionFrom is the session ID harness exec names on stderr.
func sessionFrom(t *testing.T, stderr string) string {
	t.Helper()
	_, rest, ok := strings.Cut(stderr, "harness resume ")
	id, _, _ := strings.Cut(rest, ")")
	if !ok || !strings.HasPrefix(id, "sess-") {
		t.Fatalf("no session named on stderr:\n%s", stderr)
	}
	return id
}

// TestJobStillRunningEndsWithTheSession: a job the model leaves running
// ends when harness exec ends, recorded as closed (SIGKILL: 137), and no
// container remains.
func TestJobStillRunningEndsWithTheSession(t *testing.T) {
	needSandbox(t)
	u := newUser(t)
	script := `[{"toolCalls":[{"id":"start","name":"process.exec","arguments":{"argv":["sleep","600"],"background":true}}]},
		{"content":"left it running"}]`
	r := u.run("", "exec", "--json", "--no-spare", "--image", "harness-sandbox", "--fake-model", u.script(script), "start a sleeper")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	if started := eventsOf[event.JobStarted](r.events); len(started) != 1 || started[0].JobID != "job-1" {
		t.Fatalf("--json printed job.started %+v", started)
	}
	ev := u.run("", "events", id)
	exited := eventsOf[event.JobExited](decodeLines(t, ev.stdout))
	if len(exited) != 1 || exited[0].Reason != event.JobReasonClosed || exited[0].ExitCode == nil || *exited[0].ExitCode != 137 {
		t.Fatalf("job.exited = %+v\n%s", exited, ev.stderr)
	}
	wantNoContainers(t, id)
	// The job's end, recorded after the turn's terminal checkpoint, does
	// not make the turn look interrupted: the session resumes. Its next
	// job is job-2, and a fork's after that job-3: a job ID names one job
	// across the session's history.
	again := `[{"toolCalls":[{"id":"again","name":"process.exec","arguments":{"argv":["sleep","600"],"background":true}}]},
		{"content":"resumed"}]`
	for _, tc := range []struct {
		how  []string
		want string
	}{
		{[]string{"--resume", id}, "job-2"},
		{[]string{"--resume", id, "--fork"}, "job-3"}, // the fork goes on from job-1 and job-2
	} {
		args := append(append([]string{"exec", "--json"}, tc.how...), "--no-spare", "--image", "harness-sandbox", "--fake-model", u.script(again), "go on")
		next := u.run("", args...)
		if next.code != 0 {
			t.Fatalf("%v after the job ended: exit %d\n%s", tc.how, next.code, next.stderr)
		}
		if started := eventsOf[event.JobStarted](next.events); len(started) != 1 || started[0].JobID != tc.want {
			t.Fatalf("%v: job.started %+v, want %s", tc.how, started, tc.want)
		}
	}
}

// TestKilledHarnessLeavesNoJob: harness killed with SIGKILL while a job
// runs leaves its container (nothing could remove it), the job inside;
// the next run's reaper removes it, and the job with it; resumed (forked:
// the turn was cut short), the session records that the job ended with the
// old process (reason ended).
func TestKilledHarnessLeavesNoJob(t *testing.T) {
	needSandbox(t)
	u := newUser(t)
	script := `[{"toolCalls":[{"id":"start","name":"process.exec","arguments":{"argv":["sleep","600"],"background":true}}]},
		{"toolCalls":[{"id":"hold","name":"process.exec","arguments":{"argv":["sleep","601"]}}]},
		{"content":"never reached"}]`
	l := u.start("exec", "--json", "--no-spare", "--image", "harness-sandbox", "--fake-model", u.script(script), "start and hold")
	l.waitFor(`"type":"job.started"`)
	l.waitFor(`"argv":["sleep","601"]`) // the next call runs: the job's start is over
	l.kill9()
	r := l.wait()
	id := sessionOf(t, r.events)
	// The container stays, the job in it, until a reaper runs: this
	// machine's other harness processes reap too, so it may be gone
	// already.
	left := containersOf(t, id)
	// Resumed (a fork: the turn was cut short), the log says the job ended
	// with the old process; a reaper removes its container.
	done := u.script(`[{"content":"resumed"}]`)
	again := u.run("", "exec", "--json", "--no-spare", "--image", "harness-sandbox", "--fake-model", done, "--resume", id, "--fork", "go on")
	if again.code != 0 {
		t.Fatalf("resume: exit %d\n%s", again.code, again.stderr)
	}
	// The resumed open reaps in the background and need not finish before
	// the run does; harness doctor reaps and waits.
	u.run("", "doctor")
	for _, c := range left {
		if out, err := exec.Command("docker", "inspect", "-f", "{{.State.Status}}", c).CombinedOutput(); err == nil {
			t.Fatalf("container %s still exists after the reaper ran: %s", c, out)
		}
	}
	exited := eventsOf[event.JobExited](again.events)
	if len(exited) != 1 || exited[0].JobID != "job-1" || exited[0].Reason != event.JobReasonEnded || exited[0].ExitCode != nil {
		t.Fatalf("job.exited on resume = %+v", exited)
	}
	wantNoContainers(t, id)
}

// Under --approve ask a background start is asked about like any command,
// and the question says that it stays running; so is its stop.
func TestJobStartAsks(t *testing.T) {
	needSandbox(t)
	u := newUser(t)
	u.write("README.md", "# ask\n")
	s := u.script(`[{"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["sleep","600"],"background":true}}]},
	  {"toolCalls":[{"id":"c2","name":"process.exec","arguments":{"action":"stop","job":"job-1"}}]},
	  {"content":"Started and stopped."}]`)
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "exec", "--no-spare", "--image", "harness-sandbox", "--approve", "ask", "--fake-model", s, "go"))
	tm.waitFor("? process.exec wants to run sleep 600 (in the background: it stays running until stopped)", "y allow once")
	tm.line("y")
	tm.waitFor("job job-1 started in the background: sleep 600", "? process.exec wants to run job job-1: stop")
	tm.line("y")
	tm.waitFor("job job-1 ended (stopped, exit code 143)", "Started and stopped.", "completed", prompt)
}

// In the TUI (tmux), the status line counts the running job; /jobs lists
// it and /jobs stop stops it: the count goes, the view says how it ended,
// and the log records it.
func TestTUIJobsCountAndStop(t *testing.T) {
	needSandbox(t)
	u := newUser(t)
	u.write("README.md", "# jobs\n")
	s := u.script(`[{"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["sh","-c","echo watching; exec sleep 600"],"background":true}}]},
	  {"content":"Started the watcher."}]`)
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--no-spare", "--image", "harness-sandbox", "--fake-model", s))
	tm.waitFor("Ready.")
	tm.line("start a watcher")
	tm.waitFor("Started the watcher.", "1 job running")
	tm.line("/jobs")
	tm.waitFor("Background jobs", "job-1  sh -c 'echo watching; exec sleep 600'  running", "/jobs stop job-1")
	tm.keys("Escape")
	tm.waitGone("Background jobs")
	tm.line("/jobs stop job-1")
	tm.waitGone("1 job running")
	tm.line("/jobs")
	tm.waitFor("ended (stopped, exit 143)", "│ watching")
	tm.keys("Escape")
	id := tm.quit(1)
	var ended []event.JobExited
	for _, e := range u.storedEvents(id) {
		if d, ok := e.Data.(event.JobExited); ok {
			ended = append(ended, d)
		}
	}
	if len(ended) != 1 || ended[0].Reason != event.JobReasonStopped {
		t.Fatalf("job.exited = %+v", ended)
	}
}
