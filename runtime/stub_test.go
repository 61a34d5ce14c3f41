package runtime_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
)

// recording answers every request "done" and keeps each request's
// canonical bytes.
type recording struct {
	mu   sync.Mutex
	reqs [][]byte
}

func (m *recording) Name() string { return "recording" }

func (m *recording) Stream(_ context.Context, req model.Request) (model.Stream, error) {
	// The IDs of this request and of its new message are drawn anew.
	req.RequestID = ""
	req.Messages = slices.Clone(req.Messages)
	req.Messages[len(req.Messages)-1].ID = ""
	b, err := model.MarshalCanonical(req)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, b)
	m.mu.Unlock()
	comp := model.Completion{Content: "done", FinishReason: model.FinishStop, Usage: model.Usage{PromptTokens: len(b) / 4, CompletionTokens: 1, TotalTokens: len(b)/4 + 1}}
	return &oneChunk{c: model.Chunk{Kind: model.ChunkCompletion, Completion: &comp}}, nil
}

// A long turn's checkpoint holds the compacted view's messages, not every
// tool result of the session: the messages a compaction left behind are
// emptied in the store's row (their originals stay in the log). Before,
// the row carried all of them, and a turn reading 16 MiB of files failed
// RUNTIME_CHECKPOINT_INVALID, then every later turn of the session did.
// A session restored from a checkpoint that still holds its prefix whole
// (as one stored before) sends the very same next request, and its next
// row is small too.
func TestCompactedPrefixLeavesTheCheckpoint(t *testing.T) {
	const files, size = 60, 24_000
	m := &readingModel{}
	f := newFixture(t, m, nil, func(_ *runtime.SessionConfig, s *checkpoint.Settings) {
		s.Model = "reader"
		s.Context = compaction.DefaultPolicy(64000)
	})
	for i := range files {
		name := fmt.Sprintf("f%02d.txt", i)
		writeFile(t, f.root, name, strings.Repeat(fmt.Sprintf("line %d of %s\n", i, name), size/18))
		m.files = append(m.files, name)
	}
	if out := f.wait(f.start("read every file")); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	if m.summaries < 3 {
		t.Fatalf("%d compactions, want several", m.summaries)
	}
	ctx := t.Context()
	id := f.sess.ID()
	row, err := f.st.LoadCheckpoint(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(row.Payload); n > files*size/4 {
		t.Errorf("the checkpoint row is %d bytes after reading %d bytes of files; want under a quarter of that", n, files*size)
	}
	stored, err := runtime.LatestTerminal(ctx, f.st, id)
	if err != nil {
		t.Fatal(err)
	}
	var whole *checkpoint.Checkpoint // the chain of the log's events: every message whole
	var chain checkpoint.Chain
	for _, d := range ofType[event.RuntimeCheckpoint](f.events()) {
		if whole, err = chain.Next(d.Payload); err != nil {
			t.Fatal(err)
		}
	}
	stubs := 0
	for i, m := range stored.Checkpoint.History.Messages {
		if w := whole.History.Messages[i]; m.ID != w.ID || m.Role != w.Role || m.ToolCallID != w.ToolCallID {
			t.Fatalf("message %d is %s %s in the row, %s %s in the log", i, m.Role, m.ID, w.Role, w.ID)
		}
		if m.Content != whole.History.Messages[i].Content {
			stubs++
		}
	}
	if stubs == 0 {
		t.Error("the row holds every message whole")
	}
	next := func(cp *checkpoint.Checkpoint) ([]byte, int) {
		t.Helper()
		st, log := memLog(t, id, "again")
		rec := &recording{}
		rt := runtime.New(runtime.Config{})
		s, err := rt.RestoreSession(ctx, log, runtime.SessionConfig{Model: rec, Workspace: mustLocal(t, f.root)}, cp, checkpoint.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		runID, err := s.Start(ctx, runtime.StartRequest{Input: "and now?"})
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := rt.Wait(ctx, runID); out.Status != runtime.StatusCompleted {
			t.Fatalf("turn after restore = %+v", out)
		}
		row, err := st.LoadCheckpoint(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := checkpoint.Load(row.Payload); err != nil {
			t.Fatalf("the row after restore does not load: %v", err)
		}
		return rec.reqs[0], len(row.Payload)
	}
	fromRow, rowSize := next(stored.Checkpoint)
	fromWhole, wholeSize := next(whole)
	if !bytes.Equal(fromRow, fromWhole) {
		t.Errorf("the next request differs between a restore from the row and from the whole history:\n%.300s\n%.300s", fromRow, fromWhole)
	}
	if wholeSize > files*size/4 || rowSize > files*size/4 {
		t.Errorf("rows after restore: %d bytes (from the row), %d (from the whole history)", rowSize, wholeSize)
	}
}
