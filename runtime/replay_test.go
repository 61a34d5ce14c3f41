package runtime_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/sqlite"
)

// The recorded logs of internal/checkpoint/testdata/logs, replayed through a real
// SQLite store and the runtime's restore: a good log resumes (LatestTerminal
// and RestoreSession) at the turn its golden file names; a bad one fails
// with the code its golden file names, through LastFinished (the whole-log
// scan a fork does) or LatestTerminal (the stored checkpoint and the events
// after it).
func TestReplayRecordedLogs(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "internal", "checkpoint", "testdata", "logs", "*.jsonl"))
	if len(paths) < 10 {
		t.Fatalf("found %d recorded logs", len(paths))
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			golden, err := os.ReadFile(strings.TrimSuffix(path, ".jsonl") + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			want, _, _ := strings.Cut(string(golden), "\n")
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			got, turn := replayStored(t, st, path)
			if strings.HasPrefix(want, "ok") {
				if got != "ok" || !strings.Contains(want, turn) {
					t.Fatalf("got %s (turn %q), want %s", got, turn, want)
				}
				return
			}
			if got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
}

// replayStored appends the log's events to a new session of st, saves the
// checkpoint the runtime would have saved with its newest runtime.checkpoint
// event, and restores the session. It returns "ok" or the code, and the
// restored turn.
func replayStored(t *testing.T, st *sqlite.Store, path string) (string, string) {
	ctx := t.Context()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 32<<20)
	var evs []store.EventIn
	id := "sess-empty"
	for sc.Scan() {
		line := bytes.Clone(sc.Bytes())
		e, err := event.Decode(line)
		if err != nil {
			return string(errcode.Of(err)), ""
		}
		if len(evs) == 0 {
			var env struct {
				Data struct {
					SessionID string `json:"sessionId"`
				} `json:"data"`
			}
			json.Unmarshal(line, &env)
			id = env.Data.SessionID
		}
		evs = append(evs, store.EventIn{ID: e.ID, Type: string(e.Type), Body: line})
	}
	if _, err := st.CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
		t.Fatal(err)
	}
	who, err := st.Acquire(ctx, id, store.Owner{ID: "replay"}, store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) > 0 {
		if _, err := st.AppendBatch(ctx, id, who, evs); err != nil {
			t.Fatal(err)
		}
	}
	last, _, err := runtime.LastFinished(ctx, st, id)
	if err != nil {
		return string(errcode.Of(err)), ""
	}
	scan, err := runtime.ScanLog(ctx, st, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if scan.Latest != nil {
		_, row, _, err := checkpoint.Row{}.Save(scan.Latest)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.AppendCheckpoint(ctx, id, who, 0, scan.LatestSeq, 0, row); err != nil {
			t.Fatal(err)
		}
	}
	rp, err := runtime.LatestTerminal(ctx, st, id)
	if err != nil {
		return string(errcode.Of(err)), ""
	}
	if (rp.Checkpoint == nil) != (last == nil) || (last != nil && last.Identity.TurnID != rp.Checkpoint.Identity.TurnID) {
		t.Fatalf("LastFinished and LatestTerminal disagree")
	}
	log, err := store.NewSessionLog(ctx, st, id, who)
	if err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(runtime.Config{})
	cp := rp.Checkpoint
	if _, err := rt.RestoreSession(ctx, log, runtime.SessionConfig{Model: script(t, `[]`), Workspace: mustLocal(t, t.TempDir())}, cp, checkpoint.Settings{Model: "fake", Tools: []model.ToolSpec{}}); err != nil {
		return string(errcode.Of(err)), ""
	}
	if cp == nil {
		return "ok", "no finished turn"
	}
	return "ok", cp.Identity.TurnID
}
