package runtime_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/model/fake"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/sqlite"
	"github.com/harness-dev/harness/tools"
)

// sqliteSession opens (or reopens) a session on a real SQLite file.
func sqliteSession(t *testing.T, path, id string, who store.Owner, takeOver bool) (*sqlite.Store, *store.SessionLog) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Session(ctx, id); errcode.Of(err) == errcode.SessNotFound {
		if _, err := st.CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	owner, err := st.Acquire(ctx, id, who, store.AcquireOptions{TakeOver: takeOver})
	if err != nil {
		t.Fatal(err)
	}
	log, err := store.NewSessionLog(ctx, st, id, owner)
	if err != nil {
		t.Fatal(err)
	}
	return st, log
}

// Durable replay over real SQLite files: close, reopen, rebuild every
// request byte for byte, redeliveries, conflicts, a restored follow-up that
// keeps its saved settings, a stale owner, a future checkpoint version.
func TestDurableReplaySQLite(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "h.db")
	id := event.NewID("sess")
	root := t.TempDir()
	writeFile(t, root, "README.md", "# durable\n")
	saved := checkpoint.Settings{Model: "fake", System: "saved system text", Tools: tools.ModelSpecs(),
		ProviderOptions: json.RawMessage(`{"temperature":0.1}`), MaxTokens: 500}

	m1, _ := fake.Parse([]byte(`[{"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}}]},{"content":"read"}]`))
	st, log := sqliteSession(t, path, id, store.Owner{ID: "first"}, false)
	rt := runtime.New(runtime.Config{})
	sess, err := rt.OpenSession(ctx, log, runtime.SessionConfig{Model: m1, Workspace: mustLocal(t, root)}, saved)
	if err != nil {
		t.Fatal(err)
	}
	runID, _ := sess.Start(ctx, runtime.StartRequest{Input: "read the readme"})
	if out, _ := rt.Wait(ctx, runID); out.Status != runtime.StatusCompleted {
		t.Fatalf("first turn = %+v", out)
	}
	if err := log.Release(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// Reopen: every reconstructed request equals what the model received.
	st2, log2 := sqliteSession(t, path, id, store.Owner{ID: "second"}, false)
	recs, err := st2.ReadEvents(ctx, id, -1, store.MaxPage)
	if err != nil {
		t.Fatal(err)
	}
	var rebuilt [][]byte
	var chain checkpoint.Chain
	for _, r := range recs {
		if r.Type != string(event.TypeRuntimeCheckpoint) {
			continue
		}
		ev, _ := event.Decode(r.Body)
		cp, err := chain.Next(ev.Data.(event.RuntimeCheckpoint).Payload)
		if err != nil {
			t.Fatal(err)
		}
		if cp.NextRequest != nil {
			req, _ := runtime.ReconstructModelRequest(cp)
			b, _ := model.MarshalCanonical(req)
			rebuilt = append(rebuilt, b)
		}
	}
	got := m1.RequestsJSON()
	if len(rebuilt) != len(got) {
		t.Fatalf("%d rebuilt, %d received", len(rebuilt), len(got))
	}
	for i := range got {
		if !bytes.Equal(rebuilt[i], got[i]) {
			t.Fatalf("request %d differs after reopen", i)
		}
	}

	// An old identical event delivered again changes nothing; the same ID
	// with other bytes is a conflict.
	before, _ := st2.Session(ctx, id)
	old := recs[3]
	again, err := log2.AppendRaw(ctx, store.EventIn{ID: old.ID, Type: old.Type, Body: old.Body})
	if err != nil || again.Seq != old.Seq {
		t.Fatalf("redelivery = %+v, %v", again, err)
	}
	ev, _ := event.Decode(old.Body)
	ev.Actor = "user"
	_, err = log2.Append(ctx, ev)
	mustCode(t, err, errcode.SessEventConflict)
	// An old identical checkpoint delivered again does not rewind.
	cpNow, _ := log2.LoadCheckpoint(ctx)
	if _, err := log2.SaveCheckpoint(ctx, cpNow.AfterSeq, cpNow.Payload); err != nil {
		t.Fatalf("identical checkpoint again: %v", err)
	}
	cpAfter, _ := log2.LoadCheckpoint(ctx)
	if cpAfter.Revision != cpNow.Revision || cpAfter.AfterSeq != cpNow.AfterSeq {
		t.Errorf("checkpoint moved: %+v → %+v", cpNow, cpAfter)
	}
	after, _ := st2.Session(ctx, id)
	if after.LastSeq != before.LastSeq {
		t.Errorf("redelivery appended: %d → %d", before.LastSeq, after.LastSeq)
	}

	// Restore and follow up: the saved system text and provider options
	// win over new defaults, and the earlier tool call is in the request.
	rp, err := runtime.LatestTerminal(ctx, st2, id)
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := fake.Parse([]byte(`[{"content":"follow-up"}]`))
	rt2 := runtime.New(runtime.Config{})
	sess2, err := rt2.RestoreSession(ctx, log2, runtime.SessionConfig{Model: m2, Workspace: mustLocal(t, root)}, rp.Checkpoint, checkpoint.Settings{Model: "other", System: "new defaults", Tools: tools.ModelSpecs()})
	if err != nil {
		t.Fatal(err)
	}
	run2, _ := sess2.Start(ctx, runtime.StartRequest{Input: "and now?"})
	if out, _ := rt2.Wait(ctx, run2); out.Status != runtime.StatusCompleted {
		t.Fatalf("follow-up = %+v", out)
	}
	req := m2.Requests()[0]
	if req.System != "saved system text" || string(req.ProviderOptions) != `{"temperature":0.1}` || req.Messages[1].ToolCalls[0].ID != "c1" {
		t.Errorf("restored follow-up request = %+v", req)
	}

	// A stale owner cannot write after a take-over.
	_, log3 := sqliteSession(t, path, id, store.Owner{ID: "third"}, true)
	_, err = log2.Append(ctx, event.Event{Type: event.TypeInputWithdrawn, ID: event.NewID("evt"), At: ev.At, Actor: "kernel",
		Data: event.InputWithdrawn{RunID: "run-x", SessionID: id, TurnID: "turn-x", MessageID: "msg-x"}})
	mustCode(t, err, errcode.SessOwnershipLost)

	// A checkpoint of a future version is refused on restore.
	cp3, _ := log3.LoadCheckpoint(ctx)
	future := bytes.Replace(cp3.Payload, []byte(`{"version":1,`), []byte(`{"version":2,`), 1)
	if _, err := log3.SaveCheckpoint(ctx, cp3.AfterSeq, future); err != nil {
		t.Fatal(err)
	}
	_, err = runtime.LatestTerminal(ctx, st2, id)
	mustCode(t, err, errcode.RuntimeCheckpointVersion)
}
