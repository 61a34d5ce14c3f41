package tuiengine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/tui"
)

func needDocker(t *testing.T) {
	t.Helper()
	if err := dockerws.Ping(t.Context(), ""); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "no daemon answers: "+errcode.Message(err))
	}
	if out, err := exec.Command("docker", "image", "inspect", "harness-busybox").CombinedOutput(); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "image harness-busybox is missing (scripts/images.sh builds it): "+strings.TrimSpace(string(out)))
	}
}

// execStep is a scripted model step that runs one shell command.
func execStep(id, script string) string {
	b, _ := json.Marshal(map[string]any{"toolCalls": []any{map[string]any{"id": id, "name": "process.exec", "arguments": map[string]any{"argv": []string{"sh", "-c", script}}}}})
	return string(b)
}

// A container killed during a turn (as a Docker daemon restart or `docker
// kill` does) does not strand the TUI's session: the turn it was lost in
// ends, and the next prompt rebuilds the workspace from what the turn
// before recorded, giving up the lost turn's unrecorded changes
// explicitly (workspace.recovered, discarded) and saying so; the error
// the lost container gave names the session, never a literal "ID".
func TestEngineRebuildsAWorkspaceLostDuringATurn(t *testing.T) {
	needDocker(t)
	home, parent := t.TempDir(), t.TempDir()
	project := mustProject(t, parent, "p", map[string]string{"README.md": "# lost\n"})
	// Every open of the session reads the script from its start: the
	// rebuilt session's turn answers with the first step again, which
	// shows what the workspace holds.
	script := writeScript(t, "["+strings.Join([]string{
		execStep("c1", `echo "a=$(cat a.txt 2>/dev/null || echo none) b=$(cat b.txt 2>/dev/null || echo none)"; echo one > a.txt`),
		`{"content":"first done"}`,
		execStep("c2", `echo two > b.txt; echo started; exec sleep 600`),
		`{"content":"second done"}`,
		`{"content":"spare"}`,
	}, ",")+"]")
	eng, s := firstTurnIn(t, home, project, app.Options{FakeModel: script, Workspace: "docker", Image: "harness-busybox", NoSpare: true})
	ctx := t.Context()

	if _, err := eng.Send(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var evs []event.Event
	for started := false; !started; {
		u, err := eng.Next(wctx)
		if err != nil {
			t.Fatalf("waiting for the second turn's command: %v", err)
		}
		for _, r := range u.Events {
			evs = append(evs, r.Event)
			if o, ok := r.Event.Data.(event.ToolOutput); ok && strings.Contains(o.Text, "started") {
				started = true
			}
		}
	}
	if out, err := exec.Command("docker", "kill", "--signal", "KILL", mustContainer(t, s.ID)).CombinedOutput(); err != nil {
		t.Fatalf("docker kill: %v\n%s", err, out)
	}
	rest, _ := collect(t, eng, nil)
	evs = append(evs, rest...)
	var lostMsg string
	for _, ev := range evs {
		if r, ok := ev.Data.(event.ToolResult); ok && r.Error != nil && r.Error.Code == string(errcode.WorkspaceContainerFailed) {
			lostMsg = r.Error.Message
		}
	}
	if lostMsg == "" || !strings.Contains(lostMsg, "harness resume "+s.ID) || strings.Contains(lostMsg, "resume ID") {
		t.Errorf("the lost container's error does not name the session %s: %q", s.ID, lostMsg)
	}

	sent, err := eng.Send(ctx, "third")
	if err != nil {
		t.Fatalf("the prompt after the loss: %v", err)
	}
	if !strings.Contains(sent.Note, "discarded") || !strings.Contains(sent.Note, "rebuilt") {
		t.Errorf("the note does not say the lost turn's changes are discarded and the workspace rebuilt: %q", sent.Note)
	}
	evs, _ = collect(t, eng, nil)
	var out string
	var recovered *event.WorkspaceRecovered
	for _, ev := range evs {
		if r, ok := ev.Data.(event.ToolResult); ok && r.OK {
			var o struct{ Stdout string }
			_ = json.Unmarshal(r.Output, &o)
			out += o.Stdout
		}
	}
	hist, err := readHistory(ctx, eng.a.Store, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range hist {
		if d, ok := r.Event.Data.(event.WorkspaceRecovered); ok {
			recovered = &d
		}
	}
	if out != "a=one b=none\n" {
		t.Errorf("the rebuilt workspace holds %q, want the first turn's a.txt and not the lost turn's b.txt", out)
	}
	if recovered == nil || !recovered.Discarded {
		t.Errorf("the lost turn's changes were not discarded explicitly: %+v", recovered)
	}
	if last := evs[len(evs)-1].Data.(event.TurnCompleted); last.Status != event.StatusCompleted {
		t.Errorf("the turn after the rebuild ended %+v", last)
	}
}

// mustContainer is the ID of session id's running container.
func mustContainer(t *testing.T, id string) string {
	t.Helper()
	out, err := exec.Command("docker", "ps", "-q", "--filter", "label="+dockerws.LabelSession+"="+id).Output()
	ids := strings.Fields(string(out))
	if err != nil || len(ids) != 1 {
		t.Fatalf("the session's running containers: %q, %v", ids, err)
	}
	return ids[0]
}

// A rebuild that cannot open the session again (here: the image was
// removed meanwhile) does not leave the screen without a session: each
// prompt tries again, saying so, and once the image is back the prompt
// rebuilds the workspace and runs.
func TestEngineRetriesAFailedRebuild(t *testing.T) {
	needDocker(t)
	home, parent := t.TempDir(), t.TempDir()
	project := mustProject(t, parent, "p", map[string]string{"README.md": "# retry\n"})
	image := "harness-retry-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + fmt.Sprint(os.Getpid())
	tag := func() {
		if out, err := exec.Command("docker", "tag", "harness-busybox", image).CombinedOutput(); err != nil {
			t.Fatalf("docker tag: %v\n%s", err, out)
		}
	}
	tag()
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", image).Run() })
	script := writeScript(t, "["+strings.Join([]string{
		execStep("c1", `echo "a=$(cat a.txt 2>/dev/null || echo none)"; echo one > a.txt`),
		`{"content":"done"}`,
	}, ",")+"]")
	eng, s := firstTurnIn(t, home, project, app.Options{FakeModel: script, Workspace: "docker", Image: image, NoSpare: true})
	ctx := t.Context()
	cid := mustContainer(t, s.ID)
	if out, err := exec.Command("docker", "kill", "--signal", "KILL", cid).CombinedOutput(); err != nil {
		t.Fatalf("docker kill: %v\n%s", err, out)
	}
	if out, err := exec.Command("docker", "wait", cid).CombinedOutput(); err != nil {
		t.Fatalf("docker wait: %v\n%s", err, out)
	}
	if out, err := exec.Command("docker", "rmi", image).CombinedOutput(); err != nil {
		t.Fatalf("docker rmi: %v\n%s", err, out)
	}
	if sent, err := eng.Send(ctx, "second"); err == nil {
		t.Fatalf("the rebuild opened a session without its image: %+v", sent)
	}
	_, err := eng.Send(ctx, "second")
	if err == nil || !strings.Contains(errcode.Message(err), "enter tries again") || !strings.Contains(errcode.Message(err), s.ID) {
		t.Fatalf("the prompt after the failed rebuild: %v; want the session opened again, or why not", err)
	}
	tag()
	if _, err := eng.Send(ctx, "second"); err != nil {
		t.Fatalf("the prompt once the image is back: %v", err)
	}
	evs, _ := collect(t, eng, nil)
	out := stdoutOf(evs)
	if out != "a=one\n" {
		t.Errorf("the rebuilt workspace's command printed %q, want the first turn's a.txt", out)
	}
	if id := eng.SessionID(); id != s.ID {
		t.Errorf("the open session is %q, want %s", id, s.ID)
	}
}

// firstTurnIn opens an engine in project with o, a new session, and runs
// its first turn ("first") to its end.
func firstTurnIn(t *testing.T, home, project string, o app.Options) (*Engine, tui.Session) {
	t.Helper()
	t.Chdir(project)
	eng, _ := newEngineAt(t, home, o)
	s, err := eng.Open(t.Context(), tui.OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Send(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	collect(t, eng, nil)
	waitIdle(t, eng)
	return eng, s
}

// waitIdle waits until the open session's owner has released its turn
// (turn.completed comes just before).
func waitIdle(t *testing.T, eng *Engine) {
	t.Helper()
	cur, err := eng.current()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-cur.sess.Idle():
	case <-t.Context().Done():
		t.Fatal("the session never went idle")
	}
}

// dockerProxy is a unix socket that passes every connection on to the
// Docker daemon, and can be taken away and put back: what a stopped and
// started daemon looks like to a client.
type dockerProxy struct {
	t                *testing.T
	path             string
	network, address string // the daemon's (DOCKER_HOST, or the default socket)
	mu               sync.Mutex
	ln               net.Listener
	open             []net.Conn
}

func newDockerProxy(t *testing.T) *dockerProxy {
	p := &dockerProxy{t: t, path: filepath.Join(t.TempDir(), "docker.sock"), network: "unix", address: "/var/run/docker.sock"}
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		network, address, ok := strings.Cut(h, "://")
		if !ok || (network != "unix" && network != "tcp") {
			t.Fatalf("the proxy cannot reach DOCKER_HOST=%s", h)
		}
		p.network, p.address = network, address
	}
	p.up()
	t.Cleanup(p.down)
	return p
}

// host is the DOCKER_HOST that reaches the daemon through p.
func (p *dockerProxy) host() string { return "unix://" + p.path }

func (p *dockerProxy) up() {
	ln, err := net.Listen("unix", p.path)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial(p.network, p.address)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.open = append(p.open, c, d)
			p.mu.Unlock()
			// Each direction ends on its own (an exec's stdin ends before
			// its output does): half-close, as the daemon's socket does.
			go func() { _, _ = io.Copy(d, c); _ = d.(interface{ CloseWrite() error }).CloseWrite() }()
			go func() { _, _ = io.Copy(c, d); _ = c.(interface{ CloseWrite() error }).CloseWrite() }()
		}
	}()
}

// down closes the socket and every connection through it.
func (p *dockerProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.open {
		c.Close()
	}
	p.open = nil
}

// A prompt typed while the Docker daemon does not answer is not sent, and
// a /rewind is not made (the session would reopen read-only):
// nothing reaches the model (each request would cost tokens for a turn
// that can run nothing), the error says to start the daemon, and once it
// answers again the same prompt runs.
func TestEngineHoldsThePromptWhileDockerIsDown(t *testing.T) {
	needDocker(t)
	proxy := newDockerProxy(t)
	t.Setenv("DOCKER_HOST", proxy.host())
	home, parent := t.TempDir(), t.TempDir()
	project := mustProject(t, parent, "p", map[string]string{"README.md": "# down\n"})
	script := writeScript(t, "["+strings.Join([]string{
		execStep("c1", `echo "a=$(cat a.txt 2>/dev/null || echo none)"; echo one > a.txt`),
		`{"content":"done"}`,
		execStep("c2", `echo "again a=$(cat a.txt)"`),
		`{"content":"done again"}`,
	}, ",")+"]")
	eng, s := firstTurnIn(t, home, project, app.Options{FakeModel: script, Workspace: "docker", Image: "harness-busybox", NoSpare: true})
	ctx := t.Context()
	before, err := readHistory(ctx, eng.a.Store, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	proxy.down()
	_, err = eng.Send(ctx, "second")
	if errcode.Of(err) != errcode.WorkspaceContainerFailed || !strings.Contains(errcode.Message(err), "nothing was sent to the model") {
		t.Fatalf("a prompt while Docker is down: %v", err)
	}
	// Nor is a rewind made: reopened without its daemon, the session
	// would come back read-only.
	turns, _, err := eng.Turns(ctx)
	if err != nil || len(turns) != 1 {
		t.Fatalf("turns %+v, %v", turns, err)
	}
	_, _, err = eng.Rewind(ctx, turns[0].ID, false)
	if errcode.Of(err) != errcode.WorkspaceContainerFailed || !strings.Contains(errcode.Message(err), "nothing was rewound") {
		t.Fatalf("a rewind while Docker is down: %v", err)
	}
	if id := eng.SessionID(); id != s.ID {
		t.Fatalf("the refused rewind left session %q open, want %s", id, s.ID)
	}
	if after, err := readHistory(ctx, eng.a.Store, s.ID); err != nil || len(after) != len(before) {
		t.Fatalf("the refused prompt and rewind recorded %d events (%v)", len(after)-len(before), err)
	}
	proxy.up()
	if _, err := eng.Send(ctx, "second"); err != nil {
		t.Fatalf("the prompt once Docker answers: %v", err)
	}
	evs, _ := collect(t, eng, nil)
	out := stdoutOf(evs)
	if out != "again a=one\n" {
		t.Errorf("the turn after Docker came back printed %q", out)
	}
}

// stdoutOf is what the commands among evs printed on stdout, in order.
func stdoutOf(evs []event.Event) string {
	var out string
	for _, ev := range evs {
		if r, ok := ev.Data.(event.ToolResult); ok && r.OK {
			var o struct{ Stdout string }
			_ = json.Unmarshal(r.Output, &o)
			out += o.Stdout
		}
	}
	return out
}
