package main

import (
	"bufio"
	"github.com/harness-dev/harness/internal/testenv"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkExecFirstRequest measures `harness exec` from process start to
// its first model request on the wire (the model.request event line), with
// a scripted model and the read-only local workspace. Target: under 50 ms.
// It also reports the peak resident memory of a whole short turn (target:
// under 40 MiB).
func BenchmarkExecFirstRequest(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchFirstRequest(b, "--workspace", "local") })
	b.Run("docker", func(b *testing.B) {
		if err := exec.Command("docker", "image", "inspect", "harness-busybox").Run(); err != nil {
			testenv.Unavailable(b, testenv.RequireDocker, "docker", "no daemon or no harness-busybox image (scripts/docker.sh, scripts/images.sh)")
		}
		benchFirstRequest(b, "--image", "harness-busybox")
	})
}

func benchFirstRequest(b *testing.B, wsArgs ...string) {
	u := &userEnv{home: b.TempDir(), project: b.TempDir()}
	u.db = u.home + "/h.db"
	script := u.home + "/s.json"
	if err := os.WriteFile(script, []byte(`[{"content":"hello","deltas":["hel","lo"]}]`), 0o644); err != nil {
		b.Fatal(err)
	}
	var firsts []time.Duration
	var peakKiB int64
	for b.Loop() {
		args := append([]string{"exec", "--json"}, wsArgs...)
		cmd := exec.Command(harnessBin, append(args, "--fake-model", script, "--db", u.db, "hi")...)
		cmd.Dir = u.project
		cmd.Env = u.environ()
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		seen := false
		for sc.Scan() {
			if !seen && strings.Contains(sc.Text(), `"type":"model.request"`) {
				firsts = append(firsts, time.Since(t0))
				seen = true
			}
		}
		if err := cmd.Wait(); err != nil || !seen {
			b.Fatalf("exec: %v (model.request seen: %v)", err, seen)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peakKiB = max(peakKiB, ru.Maxrss)
		}
	}
	slices.Sort(firsts)
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "ms-to-first-request")
	b.ReportMetric(float64(peakKiB)/1024, "peak-MiB")
}
