package dockerws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// ExitTimedOut is the exit code reported for a process killed on timeout.
const ExitTimedOut = 124

// Exit codes of the wrapper around a process, before it execs the argv.
const (
	exitNoCwd    = 97 // the working directory does not exist
	exitCwdScope = 99 // the working directory resolves outside WorkDir
	exitNoPids   = 98 // no PID is left for the command (the pids limit)
)

// execWrapper runs argv without a shell interpreting it: sh only changes to
// the working directory (refusing one that resolves outside the workspace),
// writes its PID to stderr so the host can kill the process group on
// timeout, and runs argv, passed as "$@", in a subshell that execs it. A
// process started by docker exec is a session and group leader, so that PID
// is the group ID of everything the process starts unless a child calls
// setsid itself.
//
// When argv ends, the wrapper kills every other process of the sandbox
// user (sweepLoop), setsid and nohup children included, and exits with
// argv's status; if it cannot, it kills itself, so the host sweeps. The
// container's own processes run as root and are out of reach.
//
// Before it forks, it checks that the pids limit leaves a PID for argv
// (pidsLeft) and exits 98 if not: a shell whose fork fails exits too, but
// as if the command had failed. Docker may start an exec in a container
// that has no PID left (the pids limit refuses forks, not joins), so the
// wrapper can run when its command cannot.
//
// Around argv it reads how many forks the pids limit has refused so far
// (the "max" count of the cgroup's pids.events: readPidsRefused, builtins
// only) and, when the count grew, ends stderr with pidsTrailer, which the
// host takes off and turns into the result's note.
const execWrapper = `J=$HARNESS_JOBS
unset HARNESS_JOBS
cd -P "$1" 2>/dev/null || exit 97
case "$PWD/" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
shift
` + pidsLeft + `
` + readPidsRefused + `
r0=$r
echo "$$ $r0" >&2
(exec "$@")
rc=$?
` + sweepLoop + ` || kill -9 $$
` + readPidsRefused + `
[ "$r" = "$r0" ] || printf '` + pidsTrailerFmt + `' >&2
exit $rc`

// pidsLeft exits 98 when the container's processes, the wrapper included,
// use every PID of its limit (cgroup v1 or v2; nothing is checked where
// the files are missing or there is no limit); no new process.
const pidsLeft = pidsDir + `
m=
c=
{ read -r m < $d/pids.max; read -r c < $d/pids.current; } 2>/dev/null
case $m in ''|max) ;; *) [ "${c:-0}" -lt "$m" ] || exit 98 ;; esac`

// pidsDir sets d to the directory of the container's pids controller:
// its own hierarchy under cgroup v1, the unified one under v2.
const pidsDir = `d=/sys/fs/cgroup/pids
[ -d $d ] || d=/sys/fs/cgroup`

// readPidsRefused sets r to the count of forks the container's pids limit
// refused (cgroup v1 or v2), "" where the file is missing; no new process.
const readPidsRefused = pidsDir + `
r=
{ while read -r k v; do [ "$k" = max ] && r=$v; done; } 2>/dev/null < $d/pids.events`

// pidsTrailer ends the wrapper's stderr when forks were refused during the
// command (printf's format for it in pidsTrailerFmt). It starts with a
// byte commands do not write (RS): the host holds back, until the next
// bytes or the end, whatever could be the trailer's start, and a trailer
// starting with a newline held back every stderr line's last newline, so
// that a card showed "warning" and the next stdout line as one line.
const (
	pidsTrailer    = "\x1e@@harness: pids limit reached@@\n"
	pidsTrailerFmt = `\036@@harness: pids limit reached@@\n`
)

// sweepLoop kills every process of the sandbox user but the shell running
// it, until /proc lists none (kill -1 reports success as long as any
// other process exists, root's included, so it cannot tell). A process
// being killed cannot fork, so the loop ends even against a fork bomb; it
// gives up (false) after 10,000 rounds. Builtins only: it needs no new
// process, so it works when the command took every PID.
//
// When J lists session IDs (the running background jobs, jobs.go), the
// processes of those sessions are spared: the others are killed one by
// one, as their session is read from /proc, rather than with kill -1.
const sweepLoop = `{ n=0
while [ $n -lt 10000 ]; do
	[ -n "$J" ] || kill -9 -1 2>/dev/null
	f=0
	for p in /proc/[0-9]*; do
		[ "$p" != /proc/$$ ] && [ -O "$p" ] || continue
		if [ -n "$J" ]; then
			l=
			read -r l 2>/dev/null < $p/stat
			set -- ${l##*") "}
			case " $J " in *" $4 "*) continue ;; esac
			kill -9 ${p#/proc/} 2>/dev/null
		fi
		f=1
	done
	[ $f = 1 ] || break
	n=$((n+1))
done
[ $n -lt 10000 ]; }`

// sweepScript is the clean-up after a command whose wrapper could not do
// it (timed out, canceled, or killed itself). It prints the count of
// refused forks (readPidsRefused) and succeeds when no process is left.
const sweepScript = `J=$1
` + sweepLoop + `
ok=$?
` + readPidsRefused + `
echo "$r"
exit $ok`

// scriptEnv is added to the environment of Harness's own helper scripts so
// their output does not depend on the image's locale or time zone.
var scriptEnv = []string{"TZ=UTC0", "LC_ALL=C"}

// commandDir checks a command's argv and cwd (relative to the
// workspace) and returns the directory it runs in. Codes: TOOL_BAD_INPUT
// (empty argv, NUL in an argument), WORKSPACE_PATH.
func commandDir(argv []string, cwd string) (string, error) {
	if len(argv) == 0 {
		return "", errcode.New(errcode.ToolBadInput, "argv is empty")
	}
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return "", errcode.New(errcode.ToolBadInput, "an argument contains a NUL byte")
		}
	}
	if cwd == "" || cwd == "." {
		return WorkDir, nil
	}
	if err := workspace.CheckPath(cwd); err != nil {
		return "", err
	}
	return WorkDir + "/" + cwd, nil
}

// Exec runs req.Argv in the workspace as the sandbox user, with the
// container's scrubbed environment (the image's variables plus HOME,
// TMPDIR and TERM; nothing from the host), in req.Cwd. Stdout and stderr
// are captured separately, each capped at req.MaxOutput bytes: its start and
// end, with a line between saying how much was left out (the rest is read
// and dropped, and the Truncated flag set). A process still running at
// req.Timeout is killed with its whole process group: TimedOut is true and
// ExitCode 124. A non-zero exit is a result, not an error; an argv[0] that
// does not exist exits 127 like in a shell.
//
// Exec waits for a WriteFile, Diff or other Exec in progress (operations on
// one workspace are serialized). Asked for while the open has not started
// copying the tree in, the command runs in the copy-in's own process once
// the tree is in (rider.go): one process start instead of two. A canceled ctx kills the process group too
// and returns TOOL_CANCELED.
//
// Codes: TOOL_BAD_INPUT (empty argv, NUL in an argument), WORKSPACE_PATH,
// WORKSPACE_NOT_FOUND (missing cwd), WORKSPACE_SCOPE (cwd through a symlink
// leaving the workspace), WORKSPACE_LIMIT (no PID left to start the
// command; every process of the workspace is killed),
// WORKSPACE_CONTAINER_FAILED, WORKSPACE_DISPOSED, TOOL_CANCELED.
func (w *Workspace) Exec(ctx context.Context, req workspace.ExecRequest) (workspace.ExecResult, error) {
	const op = "exec"
	dir, err := commandDir(req.Argv, req.Cwd)
	if err != nil {
		return workspace.ExecResult{}, err
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	limit := req.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	w.touch()
	// The output's writers: the result's, the stream's, and the wrapper's
	// header and trailer taken off stderr.
	var (
		stdout, stderr *headTail
		out            io.Writer
		cut            *trailerCut
		hdr            *pidHeader
	)
	outputs := func() {
		stdout, stderr = newHeadTail(limit), newHeadTail(limit)
		var errw io.Writer = stderr
		out = stdout
		if req.OnOutput != nil {
			out = &teed{next: stdout, stream: "stdout", f: req.OnOutput}
			errw = &teed{next: stderr, stream: "stderr", f: req.OnOutput}
		}
		cut = &trailerCut{next: errw, trailer: pidsTrailer}
		hdr = &pidHeader{next: cut, pid: make(chan int, 1)}
	}
	outputs()
	args := append([]string{dir}, req.Argv...)
	// Before the tree is copied in, the command rides the copy-in's exec.
	e, rode := w.offerRide(ctx, &rider{args: args, stdout: out, stderr: hdr})
	if e == nil {
		if rode {
			outputs() // fresh ones: nothing of a declined ride is the result
		}
		if err := w.acquire(ctx, op); err != nil {
			return workspace.ExecResult{}, err
		}
		e, err = w.start(ctx, proc{argv: append([]string{"sh", "-c", execWrapper, "sh"}, args...), env: w.jobEnv(), stdout: out, stderr: hdr})
		if err != nil {
			w.release()
			return workspace.ExecResult{}, w.opError(ctx, op, err)
		}
	}
	defer w.release()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	code, state, err := w.await(ctx, e, timer.C)
	if w.isClosed() {
		// Close removed the container under the process; whatever the
		// daemon reports about it is not a result.
		if state == awaitTimedOut || state == awaitCanceled {
			e.close()
		}
		return workspace.ExecResult{}, disposed(op)
	}
	refused := "" // the refused-forks count after the command, when the host swept
	switch state {
	case awaitTimedOut, awaitCanceled:
		refused = w.sweep(ctx, e, false)
		if state == awaitCanceled {
			return workspace.ExecResult{}, canceled(ctx, op)
		}
		code = ExitTimedOut
	case awaitFailed:
		err = w.opError(ctx, op, err)
		w.sweep(ctx, nil, false)
		return workspace.ExecResult{}, err
	default:
		if !hdr.seen() && code != exitNoCwd && code != exitCwdScope {
			// The wrapper never ran: its clean-up did not happen. When
			// the PIDs ran out, who holds them is unknown (a sweep kills
			// only the sandbox user's processes): the reaper kills all.
			startErr := w.startFailed(ctx, op, code)
			w.sweep(ctx, nil, errcode.Of(startErr) == errcode.WorkspaceLimit)
			return workspace.ExecResult{}, startErr
		}
		if code >= 128 {
			// The wrapper was killed (by the command itself, or by the
			// kernel, or with its whole container: a daemon restart, a
			// `docker kill`) before its clean-up. A container that is
			// gone is no result of the command's: it ends the turn, with
			// what the session does about it.
			// (Asked after the sweep, which fails at once on a stopped
			// container: by then the daemon knows it stopped.)
			refused = w.sweep(ctx, nil, false)
			if lost := w.Lost(ctx); lost != nil {
				return workspace.ExecResult{}, lost
			}
		}
	}
	// The stream has ended: what the wrapper held back is settled.
	limited := cut.finish() || (refused != "" && hdr.refused != "" && refused != hdr.refused)
	if !hdr.seen() {
		// The wrapper stopped before starting the program.
		switch code {
		case exitNoCwd:
			return workspace.ExecResult{}, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op,
				Message: "no directory " + req.Cwd + " in the workspace"}
		case exitCwdScope:
			return workspace.ExecResult{}, &errcode.Error{Code: errcode.WorkspaceScope, Op: op,
				Message: "directory " + req.Cwd + " resolves outside the workspace"}
		}
	}
	res := workspace.ExecResult{
		ExitCode:        code,
		Stdout:          stdout.String(),
		Stderr:          stderr.String(),
		TimedOut:        state == awaitTimedOut,
		StdoutTruncated: stdout.truncated(),
		StderrTruncated: stderr.truncated(),
	}
	if limited {
		res.Note = fmt.Sprintf("the command reached the workspace's limit of %d processes (pids limit): forks failed while it ran, "+
			"which is what its errors (\"can't fork\", \"Resource temporarily unavailable\") mean; its processes were killed", w.opts.PidsLimit)
	}
	return res, nil
}

// sweep kills every process of the sandbox user, after a command whose
// wrapper did not clean up, and closes the command's stream (e, if not nil)
// so copying its output returns even when a process that left the group
// still holds the pipes. It returns the count of forks the pids limit has
// refused ("" when unknown). The exec API cannot kill; a second exec does.
// When no exec can start (the command took every PID), or when everyone
// is set (PIDs ran out and who holds them is unknown: the sweep reaches
// only the sandbox user's processes), the container's reaper kills all
// (killAll), which needs no new process, and the sweep runs after it to
// read the count.
func (w *Workspace) sweep(ctx context.Context, e *execution, everyone bool) (refused string) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	try := func() bool {
		var out bytes.Buffer
		code, _, err := w.script(kctx, "kill leftover processes", sweepScript, []string{w.jobSessions()}, nil, &out)
		refused = strings.TrimSpace(out.String())
		return err == nil && code == 0
	}
	if (everyone || !try()) && !w.isClosed() {
		if w.killAll(kctx) {
			try()
		} else {
			// The daemon cannot list the container's processes: signal,
			// and retry until a sweep runs (the reaper may still be
			// killing when it does).
			wait := 10 * time.Millisecond
			for range 8 {
				if _, err := w.cli.ContainerKill(kctx, w.cid, client.ContainerKillOptions{Signal: "USR1"}); err != nil || try() || w.isClosed() {
					break
				}
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-kctx.Done():
				}
				wait = min(2*wait, time.Second)
			}
		}
	}
	// No restart as a last resort: the workspace lives in memory volumes,
	// which a stopped container loses. A later command that cannot start
	// says the PIDs ran out (startFailed).
	if e != nil {
		e.close()
	}
	return refused
}

// killAll has the container's reaper kill every process but its own, the
// sandbox user's and root's alike, and waits until the reaper is done:
// until the daemon's list of the container's processes (docker top, which
// needs no process in the container) holds only Docker's init, the reaper,
// and a sleep the reaper started after the signal (reaperScript). The
// reaper is signaled again when it started its sleep with processes left,
// and after 5 s without progress (it gives up after a hundred
// rounds that still found processes). It reports false when the daemon
// cannot list the processes or the reaper did not finish within 15 s.
func (w *Workspace) killAll(ctx context.Context) bool {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if w.initPID == "" {
		info, err := w.cli.ContainerInspect(kctx, w.cid, client.ContainerInspectOptions{})
		if err != nil || info.Container.State == nil || info.Container.State.Pid == 0 {
			return false
		}
		w.initPID = strconv.Itoa(info.Container.State.Pid)
	}
	before, err := w.top(kctx)
	if err != nil {
		return false
	}
	signal := func() bool {
		_, err := w.cli.ContainerKill(kctx, w.cid, client.ContainerKillOptions{Signal: "USR1"})
		return err == nil
	}
	if !signal() {
		return false
	}
	signaled := time.Now()
	wait := 2 * time.Millisecond
	for {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-kctx.Done():
			t.Stop()
			return false
		}
		wait = min(2*wait, 100*time.Millisecond)
		now, err := w.top(kctx)
		if err != nil {
			return false
		}
		sleep := now.reaperSleep(w.initPID)
		switch {
		case sleep != "" && !before.has(sleep) && len(now) == 3:
			return true
		case sleep != "" && !before.has(sleep):
			before = now // a new sleep, but processes are left
		case time.Since(signaled) < 5*time.Second:
			continue // the reaper is still killing
		}
		if !signal() {
			return false
		}
		signaled = time.Now()
	}
}

// procList is the daemon's list of a container's processes (host PIDs).
type procList []procRow

type procRow struct {
	uid, pid, ppid, cmd string
}

// top lists the container's processes with the daemon's default ps
// columns.
func (w *Workspace) top(ctx context.Context) (procList, error) {
	res, err := w.cli.ContainerTop(ctx, w.cid, client.ContainerTopOptions{})
	if err != nil {
		return nil, err
	}
	return parseTop(res.Titles, res.Processes)
}

// parseTop reads docker top's answer.
func parseTop(titles []string, procs [][]string) (procList, error) {
	col := func(names ...string) int {
		for _, n := range names {
			if i := slices.Index(titles, n); i >= 0 {
				return i
			}
		}
		return -1
	}
	// ps -ef's titles; some daemons answer with ps aux's.
	iu, ip, ipp, ic := col("UID", "USER"), col("PID"), col("PPID"), col("CMD", "COMMAND")
	if ip < 0 || ipp < 0 {
		return nil, errors.New("docker top lists no PID and PPID")
	}
	var l procList
	for _, p := range procs {
		at := func(i int) string {
			if i < 0 || i >= len(p) {
				return ""
			}
			return p[i]
		}
		l = append(l, procRow{uid: at(iu), pid: at(ip), ppid: at(ipp), cmd: at(ic)})
	}
	return l, nil
}

func (l procList) has(pid string) bool {
	return slices.ContainsFunc(l, func(r procRow) bool { return r.pid == pid })
}

// reaperSleep returns the PID of the reaper's sleep, "" when there is
// none. The reaper is init's child with init's user running reaperScript:
// a sandbox process can take its command line but not its user.
func (l procList) reaperSleep(initPID string) string {
	var init procRow
	for _, r := range l {
		if r.pid == initPID {
			init = r
		}
	}
	if init.pid == "" {
		return ""
	}
	for _, r := range l {
		if r.ppid != initPID || r.uid != init.uid || !strings.HasPrefix(r.cmd, "sh -c trap ") {
			continue
		}
		for _, c := range l {
			if c.ppid == r.pid {
				return c.pid
			}
		}
	}
	return ""
}

// startFailed explains a wrapper that stopped before starting the program:
// when every PID of the container is taken (the pids limit), the wrapper
// (exit 98) or the container's statistics tell; a wrapper killed before it
// began was killed from outside; otherwise the image lacks a POSIX sh.
func (w *Workspace) startFailed(ctx context.Context, op string, code int) error {
	if code == exitNoPids || w.pidsExhausted(ctx) {
		return &errcode.Error{Code: errcode.WorkspaceLimit, Op: op, Message: fmt.Sprintf(
			"the command could not start: the workspace ran out of processes (pids limit %d); its processes were killed, try again", w.opts.PidsLimit)}
	}
	if code == 128+9 {
		return failed(op, "the process wrapper was killed before it started the command (exit 137); try again", nil)
	}
	return failed(op, "the process wrapper failed (exit "+strconv.Itoa(code)+"); the image needs a POSIX sh", nil)
}

// pidsExhausted reports whether the container's processes use (nearly)
// all of its pids limit, from one statistics sample.
func (w *Workspace) pidsExhausted(ctx context.Context) bool {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	res, err := w.cli.ContainerStats(sctx, w.cid, client.ContainerStatsOptions{})
	if err != nil {
		return false
	}
	defer res.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&st); err != nil {
		return false
	}
	return st.PidsStats.Limit > 0 && st.PidsStats.Current+2 >= st.PidsStats.Limit
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
	w.execs.Add(1)
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

// headTail keeps the first and the last bytes written to it, and counts
// those left out between. String is at most max bytes: a quarter of them
// the head, the rest the tail, joined by workspace.JoinEnds.
type headTail struct {
	head    []byte // the first bytes, up to cap(head)
	tail    []byte // what came after the head, trimmed to its last tailMax bytes once over 2 × tailMax
	tailMax int
	max     int
	total   int64 // bytes written
}

func newHeadTail(max int) *headTail {
	room := max - min(workspace.EndsMarkRoom, max/4) // room for the line between the ends
	h := room / 4
	return &headTail{head: make([]byte, 0, h), tailMax: room - h, max: max}
}

func (c *headTail) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := cap(c.head) - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	// The tail is trimmed only once it holds over 2 × tailMax bytes, which
	// a total within max never reaches: below the cap nothing is lost.
	if len(p) > 2*c.tailMax {
		c.tail = append(c.tail[:0], p[len(p)-c.tailMax:]...)
		return n, nil
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*c.tailMax {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.tailMax:]...)
	}
	return n, nil
}

func (c *headTail) truncated() bool { return c.total > int64(c.max) }

func (c *headTail) String() string {
	if !c.truncated() {
		// All of it is here: the head, then what the tail kept, which
		// overlaps nothing (the tail gets only what the head had no room
		// for), unless more than tailMax: then some was trimmed, which a
		// total of at most max rules out.
		return string(c.head) + string(c.tail)
	}
	tail := c.tail[max(len(c.tail)-c.tailMax, 0):]
	return workspace.JoinEnds(string(c.head), string(tail), c.total-int64(len(c.head)+len(tail)))
}

// teed passes a command's output on and shows it to f as it comes.
type teed struct {
	next   io.Writer
	stream string
	f      func(stream string, p []byte)
}

func (t *teed) Write(p []byte) (int, error) {
	t.f(t.stream, p)
	return t.next.Write(p)
}

// pidHeader takes the wrapper's first stderr line ("PID REFUSED": its PID
// and the count of forks the pids limit had refused) off the stream and
// passes the rest on. Written by the copying goroutine only; pid is
// buffered so the PID is sent exactly once.
type pidHeader struct {
	next    io.Writer
	line    []byte
	state   int // 0 reading the header, 1 passing through
	pid     chan int
	got     bool   // a PID arrived; read only after the copy ended
	refused string // the count before the command; read only after the copy ended
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
		first, rest, _ := strings.Cut(string(h.line), " ")
		pid, err := strconv.Atoi(first)
		if err != nil || pid <= 0 {
			if _, err := h.next.Write(append(h.line, '\n')); err != nil {
				return n, err
			}
		} else {
			h.pid <- pid
			h.got, h.refused = true, rest
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

// trailerCut passes a stream on but holds back what could be the start of
// trailer, so that trailer, when it ends the stream, is taken off: finish,
// called once the stream ended, reports whether it did (and passes on
// what was held otherwise). At most len(trailer)-1 bytes are late. Written
// by the copying goroutine only.
type trailerCut struct {
	next    io.Writer
	trailer string
	held    []byte
	err     error // the first error of next
}

func (t *trailerCut) Write(p []byte) (int, error) {
	t.held = append(t.held, p...)
	k := min(len(t.held), len(t.trailer))
	for ; k > 0 && !bytes.HasSuffix(t.held, []byte(t.trailer[:k])); k-- {
	}
	if out := len(t.held) - k; out > 0 {
		if _, err := t.next.Write(t.held[:out]); err != nil && t.err == nil {
			t.err = err
		}
		t.held = append(t.held[:0], t.held[out:]...)
	}
	return len(p), t.err
}

func (t *trailerCut) finish() bool {
	if string(t.held) == t.trailer {
		t.held = nil
		return true
	}
	if len(t.held) > 0 {
		_, _ = t.next.Write(t.held)
		t.held = nil
	}
	return false
}
