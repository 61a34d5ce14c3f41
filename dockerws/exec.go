package dockerws

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/workspace"
)

// ExitTimedOut is the exit code reported for a process killed on timeout.
const ExitTimedOut = 124

// Exit codes of the wrapper around a process, before it execs the argv.
const (
	exitNoCwd    = 97 // the working directory does not exist
	exitCwdScope = 99 // the working directory resolves outside WorkDir
)

// execWrapper runs argv without a shell interpreting it: sh only changes to
// the working directory (refusing one that resolves outside the workspace),
// writes its PID to stderr so the host can kill the process group on
// timeout, and replaces itself with argv, passed as "$@". A process started
// by docker exec is a session and group leader, so that PID is the group ID
// of everything the process starts unless a child calls setsid itself.
const execWrapper = `cd -P "$1" 2>/dev/null || exit 97
case "$PWD/" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
shift
echo "$$" >&2
exec "$@"`

// scriptEnv is added to the environment of Harness's own helper scripts so
// their output does not depend on the image's locale or time zone.
var scriptEnv = []string{"TZ=UTC0", "LC_ALL=C"}

// Exec runs req.Argv in the workspace as the sandbox user, with the
// container's scrubbed environment (the image's variables plus HOME,
// TMPDIR and TERM; nothing from the host), in req.Cwd. Stdout and stderr
// are captured separately, each capped at req.MaxOutput bytes (the rest is
// read and dropped, and the Truncated flag set). A process still running at
// req.Timeout is killed with its whole process group: TimedOut is true and
// ExitCode 124. A non-zero exit is a result, not an error; an argv[0] that
// does not exist exits 127 like in a shell.
//
// Exec waits for a WriteFile, Diff or other Exec in progress (operations on
// one workspace are serialized). A canceled ctx kills the process group too
// and returns TOOL_CANCELED.
//
// Codes: TOOL_BAD_INPUT (empty argv, NUL in an argument), WORKSPACE_PATH,
// WORKSPACE_NOT_FOUND (missing cwd), WORKSPACE_SCOPE (cwd through a symlink
// leaving the workspace), WORKSPACE_CONTAINER_FAILED, WORKSPACE_DISPOSED,
// TOOL_CANCELED.
func (w *Workspace) Exec(ctx context.Context, req workspace.ExecRequest) (workspace.ExecResult, error) {
	const op = "exec"
	if len(req.Argv) == 0 {
		return workspace.ExecResult{}, errcode.New(errcode.ToolBadInput, "argv is empty")
	}
	for _, a := range req.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return workspace.ExecResult{}, errcode.New(errcode.ToolBadInput, "an argument contains a NUL byte")
		}
	}
	dir := WorkDir
	if req.Cwd != "" && req.Cwd != "." {
		if err := workspace.CheckPath(req.Cwd); err != nil {
			return workspace.ExecResult{}, err
		}
		dir = WorkDir + "/" + req.Cwd
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	limit := req.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	if err := w.acquire(ctx, op); err != nil {
		return workspace.ExecResult{}, err
	}
	defer w.release()

	stdout := &capped{max: limit}
	stderr := &capped{max: limit}
	hdr := &pidHeader{next: stderr, pid: make(chan int, 1)}
	argv := append([]string{"sh", "-c", execWrapper, "sh", dir}, req.Argv...)
	timer := time.NewTimer(timeout)
	defer timer.Stop()

	e, err := w.start(ctx, proc{argv: argv, stdout: stdout, stderr: hdr})
	if err != nil {
		return workspace.ExecResult{}, w.opError(ctx, op, err)
	}
	code, state, err := w.await(ctx, e, timer.C)
	if w.isClosed() {
		// Close removed the container under the process; whatever the
		// daemon reports about it is not a result.
		if state == awaitTimedOut || state == awaitCanceled {
			e.close()
		}
		return workspace.ExecResult{}, disposed(op)
	}
	switch state {
	case awaitTimedOut, awaitCanceled:
		w.killGroup(ctx, hdr, e)
		if state == awaitCanceled {
			return workspace.ExecResult{}, canceled(ctx, op)
		}
		code = ExitTimedOut
	case awaitFailed:
		return workspace.ExecResult{}, w.opError(ctx, op, err)
	}
	if !hdr.seen() {
		// The wrapper stopped before starting the program.
		switch code {
		case exitNoCwd:
			return workspace.ExecResult{}, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op,
				Message: "no directory " + req.Cwd + " in the workspace"}
		case exitCwdScope:
			return workspace.ExecResult{}, &errcode.Error{Code: errcode.WorkspaceScope, Op: op,
				Message: "directory " + req.Cwd + " resolves outside the workspace"}
		case ExitTimedOut:
		default:
			return workspace.ExecResult{}, failed(op, "the process wrapper failed (exit "+strconv.Itoa(code)+"); the image needs a POSIX sh", nil)
		}
	}
	return workspace.ExecResult{
		ExitCode:        code,
		Stdout:          stdout.String(),
		Stderr:          stderr.String(),
		TimedOut:        state == awaitTimedOut,
		StdoutTruncated: stdout.truncated(),
		StderrTruncated: stderr.truncated(),
	}, nil
}

// killGroup kills the process group of a timed-out or canceled process and
// closes its stream, so copying its output returns even when a process that
// left the group still holds the pipes. The exec API cannot kill; a second
// exec does.
func (w *Workspace) killGroup(ctx context.Context, hdr *pidHeader, e *execution) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// The wrapper announces the PID before anything else, unless it failed.
	pid := 0
	select {
	case pid = <-hdr.pid:
	case <-e.done:
		select {
		case pid = <-hdr.pid:
		default:
		}
	case <-kctx.Done():
	}
	if pid > 0 {
		// The wrapper exec'd the program as the group leader; its PID is
		// the group ID.
		code, _, err := w.script(kctx, "kill", `kill -9 "-$1" 2>/dev/null; kill -9 "$1" 2>/dev/null; exit 0`,
			[]string{strconv.Itoa(pid)}, nil, io.Discard)
		if (err != nil || code != 0) && !w.isClosed() {
			// No process could start (the group may have taken every
			// PID): restart the container, which kills everything in it
			// and keeps the volumes, so the workspace goes on.
			zero := 0
			_, _ = w.cli.ContainerRestart(kctx, w.cid, client.ContainerRestartOptions{Timeout: &zero})
		}
	}
	e.close()
}

// proc is one process to start with docker exec.
type proc struct {
	argv   []string
	user   string   // "" runs as the sandbox user
	env    []string // added to the container's environment
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// execution is a started exec whose output is being copied.
type execution struct {
	w         *Workspace
	id        string
	hr        client.HijackedResponse
	done      chan struct{} // closed when the output stream ends
	stdinDone chan struct{} // closed when the stdin copy returns
	copyErr   error         // set before done is closed
}

// start creates and attaches an exec; the output is copied in the
// background until the stream ends.
func (w *Workspace) start(ctx context.Context, p proc) (*execution, error) {
	user := p.user
	if user == "" {
		user = w.user
	}
	ex, err := w.cli.ExecCreate(ctx, w.cid, client.ExecCreateOptions{
		User:         user,
		AttachStdin:  p.stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
		Env:          p.env,
		WorkingDir:   WorkDir,
		Cmd:          p.argv,
	})
	if err != nil {
		return nil, err
	}
	hr, err := w.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return nil, err
	}
	e := &execution{w: w, id: ex.ID, hr: hr.HijackedResponse, done: make(chan struct{}), stdinDone: make(chan struct{})}
	if p.stdin != nil {
		go func() {
			defer close(e.stdinDone)
			_, _ = io.Copy(e.hr.Conn, p.stdin)
			_ = e.hr.CloseWrite()
		}()
	} else {
		close(e.stdinDone)
	}
	go func() {
		defer close(e.done)
		_, e.copyErr = stdcopy.StdCopy(p.stdout, p.stderr, e.hr.Reader)
	}()
	return e, nil
}

// close ends the stream and waits for both copies to return.
func (e *execution) close() {
	e.hr.Close()
	<-e.done
	<-e.stdinDone
}

type awaitState int

const (
	awaitExited awaitState = iota
	awaitTimedOut
	awaitCanceled
	awaitFailed
)

// await waits for the output to end and then for the exit code, which exec
// inspect reports a moment after the stream closes. It stops early when
// expire fires (timed out) or ctx ends (canceled); the caller then kills.
// The stream is closed on every path but those two.
func (w *Workspace) await(ctx context.Context, e *execution, expire <-chan time.Time) (int, awaitState, error) {
	select {
	case <-e.done:
	case <-expire:
		return 0, awaitTimedOut, nil
	case <-ctx.Done():
		return 0, awaitCanceled, nil
	}
	e.close()
	if e.copyErr != nil && !errors.Is(e.copyErr, io.EOF) && !isClosedConn(e.copyErr) {
		if w.isClosed() {
			return 0, awaitFailed, e.copyErr
		}
		return 0, awaitFailed, failed("read process output", "the output stream broke", e.copyErr)
	}
	poll := time.Millisecond
	for {
		res, err := w.cli.ExecInspect(ctx, e.id, client.ExecInspectOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return 0, awaitCanceled, nil
			}
			return 0, awaitFailed, err
		}
		if !res.Running {
			return res.ExitCode, awaitExited, nil
		}
		// The output ended but the process has not been reaped yet, or it
		// closed its output and goes on: keep waiting, bounded by expire.
		t := time.NewTimer(poll)
		select {
		case <-t.C:
		case <-expire:
			t.Stop()
			return 0, awaitTimedOut, nil
		case <-ctx.Done():
			t.Stop()
			return 0, awaitCanceled, nil
		}
		poll = min(2*poll, 50*time.Millisecond)
	}
}

// isClosedConn reports the error of reading a connection closed on purpose.
func isClosedConn(err error) bool {
	return err != nil && strings.Contains(err.Error(), "use of closed network connection")
}

// script runs one of Harness's helper scripts with sh as the sandbox user
// and returns its exit code and (capped) stderr; stdout goes to out.
func (w *Workspace) script(ctx context.Context, op, body string, args []string, stdin io.Reader, out io.Writer) (int, string, error) {
	return w.scriptAs(ctx, "", op, body, args, stdin, out)
}

func (w *Workspace) scriptAs(ctx context.Context, user, op, body string, args []string, stdin io.Reader, out io.Writer) (int, string, error) {
	stderr := &capped{max: 16 << 10}
	argv := append([]string{"sh", "-c", body, "sh"}, args...)
	e, err := w.start(ctx, proc{argv: argv, user: user, env: scriptEnv, stdin: stdin, stdout: out, stderr: stderr})
	if err != nil {
		return 0, "", w.opError(ctx, op, err)
	}
	code, state, err := w.await(ctx, e, nil)
	if w.isClosed() {
		if state == awaitCanceled {
			e.close()
		}
		return 0, "", disposed(op)
	}
	switch state {
	case awaitCanceled:
		e.close()
		return 0, "", canceled(ctx, op)
	case awaitFailed:
		return 0, "", w.opError(ctx, op, err)
	}
	return code, strings.TrimSpace(stderr.String()), nil
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	max   int
	buf   bytes.Buffer
	extra int64
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
		c.extra += int64(len(p) - min(room, len(p)))
	} else {
		c.extra += int64(len(p))
	}
	return len(p), nil
}

func (c *capped) String() string  { return c.buf.String() }
func (c *capped) truncated() bool { return c.extra > 0 }

// pidHeader takes the wrapper's first stderr line (its PID) off the stream
// and passes the rest on. Written by the copying goroutine only; pid is
// buffered so the PID is sent exactly once.
type pidHeader struct {
	next  io.Writer
	line  []byte
	state int // 0 reading the header, 1 passing through
	pid   chan int
	got   bool // a PID arrived; read only after the copy ended
}

func (h *pidHeader) Write(p []byte) (int, error) {
	n := len(p)
	if h.state == 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			h.line = append(h.line, p...)
			if len(h.line) > 32 { // not a PID: pass it on untouched
				h.state = 1
				_, err := h.next.Write(h.line)
				return n, err
			}
			return n, nil
		}
		h.line = append(h.line, p[:i]...)
		p = p[i+1:]
		h.state = 1
		pid, err := strconv.Atoi(string(h.line))
		if err != nil || pid <= 0 {
			if _, err := h.next.Write(append(h.line, '\n')); err != nil {
				return n, err
			}
		} else {
			h.pid <- pid
			h.got = true
		}
	}
	if len(p) > 0 {
		if _, err := h.next.Write(p); err != nil {
			return n, err
		}
	}
	return n, nil
}

// seen reports whether the PID header arrived; called after the copy ended.
func (h *pidHeader) seen() bool { return h.got }
