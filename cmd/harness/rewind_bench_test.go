package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// BenchmarkRewind measures `harness rewind ID N` (and its --undo) in a
// session of 50 turns and about 2 MB of history on the Docker workspace
// (every turn answers 40 KB; every tenth also writes a file there), from
// process start to exit (target: under 1 s); the baseline, in
// the same run, is `harness diff ID`, which reads the same log and
// checkpoint.
func BenchmarkRewind(b *testing.B) {
	needImage(b, "harness-busybox")
	u := benchUser(b, func(b *testing.B, dir string) {
		if err := os.WriteFile(dir+"/a.txt", []byte("a\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	})
	long := strings.Repeat("history ", 5<<10) // 40 KB an answer
	harness := func(args ...string) (time.Duration, string) {
		cmd := exec.Command(harnessBin, append(args, "--db", u.db)...)
		cmd.Dir, cmd.Env = u.project, u.environ()
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(t0)
		if err != nil {
			b.Fatalf("harness %v: %v\n%s", args, err, out)
		}
		return d, string(out)
	}
	script := func(i int) string {
		p := fmt.Sprintf("%s/s%d.json", u.home, i)
		body := fmt.Sprintf(`[{"content":%q}]`, long)
		if i%10 == 0 {
			body = fmt.Sprintf(`[{"toolCalls":[{"id":"w%d","name":"fs.write","arguments":{"path":"f%d.txt","contents":"turn %d\n"}}]},{"content":%q}]`, i, i, i, long)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	_, out := harness("exec", "--context-window", "8000000", "--image", "harness-busybox", "--fake-model", script(0), "turn 0")
	id := sessionIn(b, out)
	for i := 1; i < 50; i++ {
		harness("exec", "--context-window", "8000000", "--image", "harness-busybox", "--resume", id, "--fake-model", script(i), fmt.Sprintf("turn %d", i))
	}
	// The list counts what each turn changed: the five that wrote a file.
	if _, out := harness("rewind", id); strings.Count(out, "1 file(s) +1 −0") != 5 {
		b.Fatalf("the turn list does not show the five turns that wrote a file:\n%s", out)
	}
	var rewind, diff []time.Duration
	for b.Loop() {
		d, _ := harness("rewind", id, "25")
		rewind = append(rewind, d)
		d, _ = harness("rewind", id, "--undo")
		rewind = append(rewind, d)
		d, _ = harness("diff", id)
		diff = append(diff, d)
	}
	r, d := median(rewind), median(diff)
	b.ReportMetric(float64(r.Microseconds())/1000, "rewind-ms")
	b.ReportMetric(float64(d.Microseconds())/1000, "diff-ms")
	b.ReportMetric(float64(r)/float64(d), "ratio")
}
