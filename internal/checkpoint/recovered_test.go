package checkpoint_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// failedDiffLog is a recorded one-turn log whose terminal checkpoint says
// the end-of-turn diff failed, and the turn's ID.
func failedDiffLog(t *testing.T) ([]checkpoint.Record, string) {
	t.Helper()
	log, err := readLog(t, filepath.Join("testdata", "logs", "good-one-turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Type != string(event.TypeRuntimeCheckpoint) {
			continue
		}
		ev, err := event.Decode(log[i].Body)
		if err != nil {
			t.Fatal(err)
		}
		d := ev.Data.(event.RuntimeCheckpoint)
		cp, err := checkpoint.Parse(d.Payload)
		if err != nil {
			t.Fatal(err)
		}
		cp.Workspace = &checkpoint.Workspace{Backend: "docker", Snapshot: "sha256:ab", DiffError: string(errcode.WorkspaceLimit),
			DiffMessage: "the workspace's files are kept in Docker container harness-kept-0123456789ab"}
		if d.Payload, err = checkpoint.Marshal(cp); err != nil {
			t.Fatal(err)
		}
		ev.Data = d
		if log[i].Body, err = event.Encode(ev); err != nil {
			t.Fatal(err)
		}
		return log, cp.Identity.TurnID
	}
	t.Fatal("no checkpoint in the log")
	return nil, ""
}

// withEvent is log with one more event.
func withEvent(t *testing.T, log []checkpoint.Record, d event.Data) []checkpoint.Record {
	t.Helper()
	b, err := event.Encode(event.Event{Type: d.EventType(), ID: event.NewID("evt"), At: time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC), Actor: event.ActorUser, Data: d})
	if err != nil {
		t.Fatal(err)
	}
	out := append([]checkpoint.Record(nil), log...)
	return append(out, checkpoint.Record{Seq: int64(len(log)), Type: string(d.EventType()), Body: b})
}

// A workspace.recovered event after a turn whose diff failed stands for
// that turn's patch, in restore and in the scan a fork and `harness diff`
// read: the recovered patch, or none when the work was discarded. One about
// another turn changes nothing.
func TestRecoveredPatchFolds(t *testing.T) {
	log, turn := failedDiffLog(t)
	patchOf := func(log []checkpoint.Record) (string, error) {
		t.Helper()
		rp, err := checkpoint.RestoreLog(log)
		if err != nil {
			t.Fatalf("restore: %v", err)
		}
		var s checkpoint.Scan
		for _, r := range log {
			if err := s.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		s.Done()
		restored, rerr := rp.Checkpoint.Workspace.PatchOrError()
		scanned, serr := s.Finished.Workspace.PatchOrError()
		if restored != scanned || errcode.Of(rerr) != errcode.Of(serr) {
			t.Fatalf("restore says %q, %v; the scan %q, %v", restored, rerr, scanned, serr)
		}
		return restored, rerr
	}
	if _, err := patchOf(log); errcode.Of(err) != errcode.WorkspaceLimit {
		t.Fatalf("the failed diff reads as %v", err)
	}
	other := withEvent(t, log, event.WorkspaceRecovered{SessionID: "sess-one", TurnID: "turn-other", Container: "harness-kept-x", Patch: "p\n"})
	if _, err := patchOf(other); errcode.Of(err) != errcode.WorkspaceLimit {
		t.Fatalf("a recovery of another turn changed the patch: %v", err)
	}
	const patch = "diff --git a/keep.txt b/keep.txt\nnew file mode 100644\n--- /dev/null\n+++ b/keep.txt\n@@ -0,0 +1 @@\n+keep me\n"
	recovered := withEvent(t, log, event.WorkspaceRecovered{SessionID: "sess-one", TurnID: turn, Container: "harness-kept-0123456789ab", Patch: patch})
	if got, err := patchOf(recovered); err != nil || got != patch {
		t.Fatalf("recovered: %q, %v", got, err)
	}
	discarded := withEvent(t, log, event.WorkspaceRecovered{SessionID: "sess-one", TurnID: turn, Container: "harness-kept-0123456789ab", Discarded: true})
	if got, err := patchOf(discarded); err != nil || got != "" {
		t.Fatalf("discarded: %q, %v", got, err)
	}
}
