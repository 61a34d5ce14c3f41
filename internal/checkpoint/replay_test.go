package checkpoint_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/logs")

// readLog reads a recorded log: one canonical event per line, seq by line.
// A line that does not decode fails with its EVENT_* code.
func readLog(t testing.TB, path string) ([]checkpoint.Record, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []checkpoint.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 32<<20)
	for sc.Scan() {
		line := bytes.Clone(sc.Bytes())
		e, err := event.Decode(line)
		if err != nil {
			return nil, err
		}
		out = append(out, checkpoint.Record{Seq: int64(len(out)), Type: string(e.Type), Body: line})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

// describe is what a golden file holds: the code of a log that fails, or
// what a good one restores to.
func describe(rp checkpoint.Restored, err error) string {
	if err != nil {
		return string(errcode.Of(err)) + "\n"
	}
	cp := rp.Checkpoint
	if cp == nil {
		return fmt.Sprintf("ok: no finished turn (last seq %d)\n", rp.LastSeq)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ok: session %s, turn %s %s\n", cp.Identity.SessionID, cp.Identity.TurnID, cp.TerminalStatus.Status)
	fmt.Fprintf(&b, "checkpoint at seq %d, last seq %d\n", rp.AfterSeq, rp.LastSeq)
	fmt.Fprintf(&b, "turns %v\n", cp.Identity.SessionTurns)
	fmt.Fprintf(&b, "history: %d messages, revision %d\n", cp.History.Len(), cp.History.Revision)
	for _, m := range cp.History.Messages {
		fmt.Fprintf(&b, "  %s %s %q\n", m.ID, m.Role, m.Content)
	}
	u := cp.Accounting.Usage
	fmt.Fprintf(&b, "usage %d+%d=%d, %d requests, %d tool calls\n", u.PromptTokens, u.CompletionTokens, u.TotalTokens, cp.Accounting.ModelRequests, cp.Accounting.ToolCalls)
	return b.String()
}

// Every recorded log of testdata/logs is replayed through restore: a good
// one restores to the state its golden file describes; a bad one (named
// bad-*) fails with the code its golden file names.
func TestReplayLogs(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "logs", "*.jsonl"))
	if err != nil || len(paths) < 10 {
		t.Fatalf("want the recorded logs of testdata/logs, found %d (%v)", len(paths), err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			var rp checkpoint.Restored
			log, err := readLog(t, path)
			if err == nil {
				rp, err = checkpoint.RestoreLog(log)
			}
			got := describe(rp, err)
			if bad := strings.HasPrefix(name, "bad-"); bad != (err != nil) {
				t.Fatalf("%s restored to %q", name, got)
			}
			golden := strings.TrimSuffix(path, ".jsonl") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("restore of %s:\n got %s\nwant %s", name, got, want)
			}
		})
	}
}
