package dockerws

import (
	"context"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// jobEvents collects what WatchJobs reports.
type jobEvents struct {
	mu   sync.Mutex
	list []workspace.JobEvent
	kick chan struct{}
}

func watchJobs(w *Workspace) *jobEvents {
	j := &jobEvents{kick: make(chan struct{}, 1)}
	w.WatchJobs(func(ev workspace.JobEvent) {
		j.mu.Lock()
		j.list = append(j.list, ev)
		j.mu.Unlock()
		select {
		case j.kick <- struct{}{}:
		default:
		}
	})
	return j
}

// exited waits for the job.exited report of id.
func (j *jobEvents) exited(t *testing.T, id string) workspace.JobEvent {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		j.mu.Lock()
		for _, ev := range j.list {
			if ev.Kind == workspace.JobExited && ev.Job.ID == id {
				j.mu.Unlock()
				return ev
			}
		}
		j.mu.Unlock()
		select {
		case <-j.kick:
		case <-deadline.C:
			t.Fatalf("no exit reported for %s", id)
		}
	}
}

func mustStartJob(t *testing.T, w *Workspace, argv ...string) workspace.Job {
	t.Helper()
	j, err := w.StartJob(t.Context(), workspace.JobRequest{Argv: argv})
	if err != nil {
		t.Fatalf("StartJob(%q): %v", argv, err)
	}
	return j
}

// TestJobOutlivesCommandsUntilStopped: a background job (a loop with a
// child of its own) survives the commands that run after it, which still
// leave no process of their own; stopped, nothing of it remains, and its
// exit is reported with its code and last lines.
func TestJobOutlivesCommandsUntilStopped(t *testing.T) {
	w := open(t, t.TempDir(), sandboxImage)
	evs := watchJobs(w)
	j := mustStartJob(t, w, "sh", "-c", `sleep 600 & i=0; while :; do echo tick $i; i=$((i+1)); sleep 0.05; done`)
	if j.State != workspace.JobRunning || j.ID != "job-1" {
		t.Fatalf("started: %+v", j)
	}
	// A command that leaves a process behind: swept, the job is not.
	mustExec(t, w, "sh", "-c", "setsid sleep 601 & echo ok")
	procs := strings.Join(sandboxProcs(t, w), "\n")
	if strings.Contains(procs, "sleep 601") || !strings.Contains(procs, "sleep 600") {
		t.Fatalf("after a command, the processes are:\n%s", procs)
	}
	out, err := w.JobOutput(j.ID, 0, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Output, "tick 0\n") || out.Offset != 0 || out.Next != int64(len(out.Output)) {
		t.Fatalf("output = %+v", out)
	}
	stopped, err := w.StopJob(t.Context(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.State != workspace.JobExited || stopped.Reason != workspace.JobReasonStopped || stopped.ExitCode == nil || *stopped.ExitCode != 128+15 {
		t.Fatalf("stopped: %+v", stopped)
	}
	ev := evs.exited(t, j.ID)
	if !strings.Contains(ev.Tail, "tick") || ev.Job.Reason != workspace.JobReasonStopped {
		t.Fatalf("exit event: %+v", ev)
	}
	wantNoProcs(t, w)
	if got := w.ListJobs(); len(got) != 1 || got[0].State != workspace.JobExited {
		t.Fatalf("ListJobs = %+v", got)
	}
}

// TestJobLogKeepsItsTail: a job printing 100 MB keeps only the last
// JobLogBytes, and this process's live heap does not grow with what the
// job printed; reading from offset 0 starts at the oldest byte kept.
func TestJobLogKeepsItsTail(t *testing.T) {
	w := open(t, t.TempDir(), sandboxImage)
	evs := watchJobs(w)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	j := mustStartJob(t, w, "sh", "-c", `head -c 100000000 /dev/zero | tr '\0' x; echo; echo last line`)
	ev := evs.exited(t, j.ID)
	if ev.Job.ExitCode == nil || *ev.Job.ExitCode != 0 || ev.Job.Reason != workspace.JobReasonExited {
		t.Fatalf("exit: %+v", ev.Job)
	}
	if grew := int64(heap()) - int64(before); grew > 8<<20 {
		t.Errorf("the live heap grew by %d bytes with a job that printed 100 MB", grew)
	} else {
		t.Logf("the live heap grew by %d bytes with a job that printed 100 MB", grew)
	}
	const total = int64(100000000 + len("\nlast line\n"))
	if ev.Job.Bytes != total || !strings.HasSuffix(ev.Tail, "last line\n") {
		t.Fatalf("bytes %d, tail %q", ev.Job.Bytes, ev.Tail[max(len(ev.Tail)-40, 0):])
	}
	out, err := w.JobOutput(j.ID, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Output) != workspace.JobLogBytes || out.Offset != total-workspace.JobLogBytes || out.Skipped != out.Offset || out.Next != total {
		t.Fatalf("output: %d bytes from %d, skipped %d, next %d", len(out.Output), out.Offset, out.Skipped, out.Next)
	}
	if strings.Trim(out.Output[:100], "x") != "" || !strings.HasSuffix(out.Output, "\nlast line\n") {
		t.Fatalf("output's ends: %q … %q", out.Output[:20], out.Output[len(out.Output)-20:])
	}
}

// TestJobsEndWithTheWorkspace: Close ends every running job, reported as
// closed; the job limit holds; an unknown job is WORKSPACE_NOT_FOUND.
func TestJobsEndWithTheWorkspace(t *testing.T) {
	w := open(t, t.TempDir(), sandboxImage, func(o *Options) { o.MaxJobs = 2 })
	evs := watchJobs(w)
	a := mustStartJob(t, w, "sleep", "700")
	b := mustStartJob(t, w, "sleep", "701")
	_, err := w.StartJob(t.Context(), workspace.JobRequest{Argv: []string{"sleep", "702"}})
	wantCode(t, err, errcode.WorkspaceLimit)
	_, err = w.JobOutput("job-3", 0, 10)
	wantCode(t, err, errcode.WorkspaceNotFound)
	_, err = w.StartJob(t.Context(), workspace.JobRequest{Argv: []string{"true"}, Cwd: "missing"})
	wantCode(t, err, errcode.WorkspaceLimit) // the limit is checked first
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a.ID, b.ID} {
		if ev := evs.exited(t, id); ev.Job.Reason != workspace.JobReasonClosed {
			t.Fatalf("%s: %+v", id, ev.Job)
		}
	}
}

// TestJobEndsAreReported: a job that exits by itself says so with its
// code and last lines; when the container goes away under a job, it is
// reported lost, and it is not restarted.
func TestJobEndsAreReported(t *testing.T) {
	w := open(t, t.TempDir(), sandboxImage)
	evs := watchJobs(w)
	j := mustStartJob(t, w, "sh", "-c", "echo first; echo bye >&2; exit 3")
	ev := evs.exited(t, j.ID)
	if ev.Job.Reason != workspace.JobReasonExited || ev.Job.ExitCode == nil || *ev.Job.ExitCode != 3 || ev.Tail != "first\nbye\n" {
		t.Fatalf("exit: %+v, tail %q", ev.Job, ev.Tail)
	}
	k := mustStartJob(t, w, "sleep", "800")
	if out, err := exec.Command("docker", "kill", w.ContainerID()).CombinedOutput(); err != nil {
		t.Fatalf("docker kill: %v\n%s", err, out)
	}
	ev = evs.exited(t, k.ID)
	if ev.Job.Reason != workspace.JobReasonLost || ev.Job.ExitCode != nil {
		t.Fatalf("after the container's loss: %+v", ev.Job)
	}
	if got := w.ListJobs(); len(got) != 2 || got[1].State != workspace.JobExited {
		t.Fatalf("ListJobs = %+v", got)
	}
}
