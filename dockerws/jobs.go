package dockerws

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// Background jobs (workspace.Jobs).
//
// A job is a docker exec of jobWrapper as the sandbox user, like a
// command's, that the call does not wait for. The wrapper is the leader of
// a session of its own (docker exec makes every exec one), and that
// session is the job: every process the job starts stays in it unless it
// calls setsid itself. Commands end by killing every process of the
// sandbox user (sweepLoop) but those of the sessions of running jobs,
// whose IDs they are given in HARNESS_JOBS when they start (jobs start
// under the workspace lock, which commands hold, so the list a command
// gets stays true while it runs); a process that leaves its job's session
// is swept like any other. The job's output (stdout and stderr as one
// log) is copied into a ring in this process that keeps its last
// workspace.JobLogBytes: memory stays flat whatever the job prints.
//
// A job ends when its program exits (the wrapper then kills what is left
// of its session), when StopJob kills its session (SIGTERM, then SIGKILL),
// when the reaper kills everything (the pids limit), when the workspace
// closes (the container is removed) or when the container goes away. It
// is never restarted; the watcher says how it ended, with its exit code
// and the end of its log.

// jobWrapper starts a job: as execWrapper it enters the working directory
// (refusing one outside the workspace) and checks that a PID is left,
// then writes its PID (its session's ID) to stderr, sends its own stderr
// to stdout (the job's log is one stream), runs argv and, once argv
// exits, kills what is left of its session (jobKillScript's loop) and
// exits with argv's status.
const jobWrapper = `cd -P "$1" 2>/dev/null || exit 97
case "$PWD/" in ` + WorkDir + `/*) ;; *) exit 99 ;; esac
shift
` + pidsLeft + `
echo "$$" >&2
exec 2>&1 </dev/null
(exec "$@")
rc=$?
S=$$ G=KILL A=0
` + sessionKill + `
exit $rc`

// sessionKill sends signal G to every process of session S (but S itself
// unless A is 1), zombies left out; with G=KILL it goes round until a
// round finds none (a hundred rounds at most). Builtins only.
const sessionKill = `i=0
while [ $i -lt 100 ]; do
	f=0
	for p in /proc/[0-9]*; do
		n=${p#/proc/}
		[ "$n" = "$S" ] && [ "$A" != 1 ] && continue
		l=
		read -r l 2>/dev/null < $p/stat
		[ -n "$l" ] || continue
		set -- ${l##*") "}
		[ "$4" = "$S" ] && [ "$1" != Z ] || continue
		kill -$G $n 2>/dev/null && f=1
	done
	[ "$G" = KILL ] && [ $f = 1 ] || break
	i=$((i+1))
done`

// jobKillScript is sessionKill as a script: session, signal, and 1 to
// include the session's leader.
const jobKillScript = `S=$1 G=$2 A=$3
` + sessionKill

// jobGrace is how long StopJob waits after SIGTERM before SIGKILL.
const jobGrace = 3 * time.Second

// jobTable is a workspace's jobs.
type jobTable struct {
	mu   sync.Mutex
	list []*job // guarded by mu, oldest first
	// started (guarded by mu) counts the jobs started, from
	// Options.JobsBefore: job N is "job-N", unique in the session.
	started int
	watch   func(workspace.JobEvent) // set once by WatchJobs
	wg      sync.WaitGroup           // the watchers
}

// job is one background job.
type job struct {
	info   workspace.Job // guarded by the table's mu
	sid    int           // its session's ID in the container
	reason string        // guarded by the table's mu: why it is being ended, "" if it is not
	origin [2]string     // the turn and call that started it
	log    *jobRing
	e      *execution
	done   chan struct{} // closed once info says it ended
}

// WatchJobs sets the function told of jobs starting and ending.
func (w *Workspace) WatchJobs(f func(workspace.JobEvent)) {
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	w.jobs.watch = f
}

func (w *Workspace) notifyJob(ev workspace.JobEvent) {
	w.jobs.mu.Lock()
	f := w.jobs.watch
	w.jobs.mu.Unlock()
	if f != nil {
		f(ev)
	}
}

// ListJobs returns the workspace's jobs, oldest first.
func (w *Workspace) ListJobs() []workspace.Job {
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	out := make([]workspace.Job, len(w.jobs.list))
	for i, j := range w.jobs.list {
		out[i] = j.infoLocked()
	}
	return out
}

func (j *job) infoLocked() workspace.Job {
	in := j.info
	in.Argv = slices.Clone(in.Argv)
	in.Bytes = j.log.total()
	return in
}

func (w *Workspace) findJob(op, id string) (*job, error) {
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	for _, j := range w.jobs.list {
		if j.info.ID == id {
			return j, nil
		}
	}
	return nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: fmt.Sprintf("no job %q in this workspace (process.exec with action list lists them)", id)}
}

// jobSessions is the HARNESS_JOBS value for a command: the session IDs of
// the running jobs, space-separated ("" for none).
func (w *Workspace) jobSessions() string {
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	var ids []string
	for _, j := range w.jobs.list {
		if j.info.State == workspace.JobRunning {
			ids = append(ids, strconv.Itoa(j.sid))
		}
	}
	return strings.Join(ids, " ")
}

// jobEnv is the environment a command gets to spare the running jobs.
func (w *Workspace) jobEnv() []string {
	if s := w.jobSessions(); s != "" {
		return []string{"HARNESS_JOBS=" + s}
	}
	return nil
}

func (w *Workspace) runningJobs() int {
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	n := 0
	for _, j := range w.jobs.list {
		if j.info.State == workspace.JobRunning {
			n++
		}
	}
	return n
}

// StartJob starts req.Argv as a background job and returns it once it has
// run for req.Wait or ended before.
//
// Codes: TOOL_BAD_INPUT, WORKSPACE_PATH, WORKSPACE_NOT_FOUND (missing
// cwd), WORKSPACE_SCOPE, WORKSPACE_LIMIT (Options.MaxJobs jobs run, or no
// PID left), WORKSPACE_CONTAINER_FAILED, WORKSPACE_DISPOSED, TOOL_CANCELED.
func (w *Workspace) StartJob(ctx context.Context, req workspace.JobRequest) (workspace.Job, error) {
	const op = "start job"
	dir, err := commandDir(req.Argv, req.Cwd)
	if err != nil {
		return workspace.Job{}, err
	}
	if err := w.acquire(ctx, op); err != nil {
		return workspace.Job{}, err
	}
	locked := true
	defer func() {
		if locked {
			w.release()
		}
	}()
	if n := w.runningJobs(); n >= w.opts.MaxJobs {
		return workspace.Job{}, &errcode.Error{Code: errcode.WorkspaceLimit, Op: op, Message: fmt.Sprintf(
			"%d jobs are running, as many as this session allows (--max-jobs); stop one first (process.exec with action stop)", n)}
	}
	w.touch()
	turnID, callID := workspace.JobOriginOf(ctx)
	j := &job{log: newJobRing(workspace.JobLogBytes), done: make(chan struct{}), origin: [2]string{turnID, callID}}
	hdr := &pidHeader{next: j.log, pid: make(chan int, 1)}
	args := append([]string{"sh", "-c", jobWrapper, "sh", dir}, req.Argv...)
	// The job's stream lives as long as the job, not as long as ctx.
	e, err := w.start(context.WithoutCancel(ctx), proc{argv: args, stdout: j.log, stderr: hdr})
	if err != nil {
		return workspace.Job{}, w.opError(ctx, op, err)
	}
	select {
	case pid := <-hdr.pid:
		j.sid = pid
	case <-e.done:
	case <-ctx.Done():
	}
	if j.sid == 0 {
		// The wrapper stopped before the program, or the caller gave up:
		// it is no job.
		code, state, aerr := w.await(ctx, e, nil)
		if state == awaitCanceled || ctx.Err() != nil {
			e.close()
			w.sweep(ctx, nil, false)
			return workspace.Job{}, canceled(ctx, op)
		}
		switch {
		case w.isClosed():
			return workspace.Job{}, disposed(op)
		case aerr != nil:
			return workspace.Job{}, w.opError(ctx, op, aerr)
		case code == exitNoCwd:
			return workspace.Job{}, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no directory " + req.Cwd + " in the workspace"}
		case code == exitCwdScope:
			return workspace.Job{}, &errcode.Error{Code: errcode.WorkspaceScope, Op: op, Message: "directory " + req.Cwd + " resolves outside the workspace"}
		}
		return workspace.Job{}, w.startFailed(ctx, op, code)
	}
	j.e = e
	w.jobs.mu.Lock()
	w.jobs.started++
	id := "job-" + strconv.Itoa(w.jobs.started)
	w.jobs.mu.Unlock()
	j.info = workspace.Job{ID: id, Argv: slices.Clone(req.Argv), Cwd: req.Cwd, State: workspace.JobRunning, Started: time.Now()}
	w.jobs.mu.Lock()
	w.jobs.list = append(w.jobs.list, j)
	started := j.infoLocked()
	w.jobs.mu.Unlock()
	// The job is listed: a command started from now on spares it.
	w.release()
	locked = false
	w.jobs.wg.Add(1)
	go w.watchJob(ctx, j)
	w.notifyJob(workspace.JobEvent{Kind: workspace.JobRunning, Job: started, TurnID: turnID, CallID: callID})
	if req.Wait > 0 {
		t := time.NewTimer(req.Wait)
		select {
		case <-t.C:
		case <-j.done:
		case <-ctx.Done():
		}
		t.Stop()
	}
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	return j.infoLocked(), nil
}

// watchJob waits for job j's stream to end, learns how it ended and says
// so (WatchJobs).
func (w *Workspace) watchJob(ctx context.Context, j *job) {
	defer w.jobs.wg.Done()
	<-j.e.done
	j.e.close()
	var code *int
	lost := false
	if !w.isClosed() {
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		c, state, err := w.await(ictx, j.e, nil)
		switch {
		case state == awaitExited && err == nil:
			code = &c
			lost = w.Lost(ictx) != nil || (c == 128+9 && w.stopping(ictx))
		case !w.isClosed():
			lost = true
		}
		cancel()
	}
	w.jobs.mu.Lock()
	reason := j.reason
	switch {
	case w.isClosed():
		reason, code = workspace.JobReasonClosed, nil
	case lost:
		reason, code = workspace.JobReasonLost, nil
	case reason == "":
		reason = workspace.JobReasonExited
	}
	j.info.State, j.info.Reason, j.info.ExitCode, j.info.Ended = workspace.JobExited, reason, code, time.Now()
	ended := j.infoLocked()
	w.jobs.mu.Unlock()
	close(j.done)
	w.notifyJob(workspace.JobEvent{Kind: workspace.JobExited, Job: ended, Tail: j.log.tail(workspace.JobTailBytes),
		TurnID: j.origin[0], CallID: j.origin[1]})
}

// stopping reports whether the container stops within 2 s: a job killed
// with SIGKILL by nobody of ours was killed with its container (docker
// kill, a daemon stopping), whose state may say so a moment later.
func (w *Workspace) stopping(ctx context.Context) bool {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	res := w.cli.ContainerWait(wctx, w.cid, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case <-res.Result:
		return true
	case err := <-res.Error:
		// No state within the 2 s, or the daemon refused the wait (err
		// says which): the container's own state decides.
		_ = err
		return w.Lost(ctx) != nil
	}
}

// JobOutput returns at most max bytes of job id's log from offset on.
//
// Code: WORKSPACE_NOT_FOUND (no such job).
func (w *Workspace) JobOutput(id string, offset int64, max int) (workspace.JobOutput, error) {
	j, err := w.findJob("read job output", id)
	if err != nil {
		return workspace.JobOutput{}, err
	}
	w.jobs.mu.Lock()
	info := j.infoLocked()
	w.jobs.mu.Unlock()
	out, start, total := j.log.read(offset, max)
	res := workspace.JobOutput{Job: info, Offset: start, Output: out, Next: start + int64(len(out))}
	res.Bytes = max64(res.Bytes, total)
	if start > offset {
		res.Skipped = start - offset
	}
	return res, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// StopJob ends job id: SIGTERM to its processes but its wrapper, then,
// after jobGrace, SIGKILL to all of its session; it returns once the job
// has ended. A job already ended is returned as it is.
//
// Codes: WORKSPACE_NOT_FOUND (no such job), WORKSPACE_CONTAINER_FAILED,
// WORKSPACE_DISPOSED, TOOL_CANCELED.
func (w *Workspace) StopJob(ctx context.Context, id string) (workspace.Job, error) {
	const op = "stop job"
	j, err := w.findJob(op, id)
	if err != nil {
		return workspace.Job{}, err
	}
	w.jobs.mu.Lock()
	if j.info.State == workspace.JobRunning && j.reason == "" {
		j.reason = workspace.JobReasonStopped
	}
	w.jobs.mu.Unlock()
	signal := func(sig, all string) error {
		code, msg, err := w.script(ctx, op, jobKillScript, []string{strconv.Itoa(j.sid), sig, all}, nil, nil)
		if err != nil {
			return err
		}
		if code != 0 {
			return failed(op, "the stop script failed: "+msg, nil)
		}
		return nil
	}
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-j.done:
			return true
		case <-t.C:
		case <-ctx.Done():
		}
		return false
	}
	select {
	case <-j.done:
	default:
		if err := signal("TERM", "0"); err != nil {
			return workspace.Job{}, err
		}
		if !wait(jobGrace) {
			if ctx.Err() != nil {
				return workspace.Job{}, canceled(ctx, op)
			}
			if err := signal("KILL", "1"); err != nil {
				return workspace.Job{}, err
			}
			if !wait(15 * time.Second) {
				if ctx.Err() != nil {
					return workspace.Job{}, canceled(ctx, op)
				}
				// A process that left the session holds the stream:
				// close it; the watcher then says how the job ended.
				j.e.hr.Close()
				<-j.done
			}
		}
	}
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	return j.infoLocked(), nil
}

// endJobs marks the running jobs as ended by the workspace's close (the
// container's removal kills them).
func (w *Workspace) endJobs() {
	w.jobs.mu.Lock()
	defer w.jobs.mu.Unlock()
	for _, j := range w.jobs.list {
		if j.info.State == workspace.JobRunning {
			j.reason = workspace.JobReasonClosed
		}
	}
}

// waitJobs waits, within ctx, for the watchers to have said how their jobs
// ended, closing the streams of those still open (a container whose
// removal failed).
func (w *Workspace) waitJobs(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		w.jobs.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	case <-ctx.Done():
	}
	w.jobs.mu.Lock()
	for _, j := range w.jobs.list {
		if j.e != nil {
			j.e.hr.Close()
		}
	}
	w.jobs.mu.Unlock()
	<-done
}

// jobRing keeps the last bytes written to it and counts them all.
type jobRing struct {
	mu  sync.Mutex
	buf []byte // guarded by mu: cap is the ring's size
	end int    // guarded by mu: where the next byte goes once buf is full
	n   int64  // guarded by mu: bytes written in all
}

func newJobRing(size int) *jobRing { return &jobRing{buf: make([]byte, 0, size)} }

func (r *jobRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	r.n += int64(n)
	size := cap(r.buf)
	if len(p) >= size {
		r.buf = append(r.buf[:0], p[len(p)-size:]...)
		r.end = 0
		return n, nil
	}
	if room := size - len(r.buf); room > 0 {
		k := min(room, len(p))
		r.buf = append(r.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(r.buf[r.end:], p)
		p = p[k:]
		r.end = (r.end + k) % size
	}
	return n, nil
}

func (r *jobRing) total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// read returns at most max bytes from offset (or from the oldest byte kept,
// when offset is older), the offset they start at, and the total written.
func (r *jobRing) read(offset int64, max int) (string, int64, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	oldest := r.n - int64(len(r.buf))
	start := min(max64(offset, oldest), r.n)
	// Whole UTF-8 sequences only: a continuation byte cannot start the
	// piece, nor a sequence cut by max end it.
	for start < r.n && !utf8.RuneStart(r.at(start-oldest)) && start-max64(offset, oldest) < utf8.UTFMax {
		start++
	}
	b := make([]byte, 0, min(int64(max), r.n-start))
	for i := start; i < r.n && len(b) < max; i++ {
		b = append(b, r.at(i-oldest))
	}
	if end := start + int64(len(b)); end < r.n {
		for k := len(b) - 1; k >= 0 && k >= len(b)-utf8.UTFMax; k-- {
			if utf8.RuneStart(b[k]) {
				if !utf8.FullRune(b[k:]) {
					b = b[:k]
				}
				break
			}
		}
	}
	return string(b), start, r.n
}

// at is the k-th oldest byte kept.
func (r *jobRing) at(k int64) byte {
	if len(r.buf) < cap(r.buf) {
		return r.buf[k]
	}
	return r.buf[(int64(r.end)+k)%int64(len(r.buf))]
}

// tail is the last n bytes, from a line start when one is near.
func (r *jobRing) tail(n int) string {
	r.mu.Lock()
	total := r.n
	r.mu.Unlock()
	s, _, _ := r.read(max64(total-int64(n), 0), n)
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 && total > int64(len(s)) {
		s = s[i+1:]
	}
	return s
}

var _ workspace.Jobs = (*Workspace)(nil)

// EndJobs ends every running job as its session closes (SIGKILL to each
// job's session; their ends are reported with reason closed) and waits,
// within ctx, until each has been reported. Close and Abandon end jobs
// too, by removing the container, but Abandon does not wait for the
// reports.
func (w *Workspace) EndJobs(ctx context.Context) {
	w.jobs.mu.Lock()
	var running []*job
	for _, j := range w.jobs.list {
		if j.info.State == workspace.JobRunning {
			if j.reason == "" {
				j.reason = workspace.JobReasonClosed
			}
			running = append(running, j)
		}
	}
	w.jobs.mu.Unlock()
	for _, j := range running {
		_, _, _ = w.script(ctx, "end job", jobKillScript, []string{strconv.Itoa(j.sid), "KILL", "1"}, nil, nil)
	}
	for _, j := range running {
		select {
		case <-j.done:
		case <-ctx.Done():
			return
		}
	}
}
