package checkpoint_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
)

// recorded returns the whole checkpoints of a recorded log, in order.
func recorded(t testing.TB, name string) []*checkpoint.Checkpoint {
	t.Helper()
	log, err := readLog(t, filepath.Join("testdata", "logs", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		chain checkpoint.Chain
		out   []*checkpoint.Checkpoint
	)
	for _, r := range log {
		if r.Type != "runtime.checkpoint" {
			continue
		}
		cp, err := chain.Next(payloadOf(t, r.Body))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cp)
	}
	return out
}

func payloadOf(t testing.TB, body []byte) []byte {
	t.Helper()
	e, err := event.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	return e.Data.(event.RuntimeCheckpoint).Payload
}

// The store's row, kept by appends save after save, loads back to exactly
// each whole checkpoint; an unknown row (the zero Row) is written whole.
func TestRowSaveLoad(t *testing.T) {
	var (
		row    checkpoint.Row
		stored []byte
	)
	cps := recorded(t, "good-two-turns")
	for i, cp := range cps {
		keep, tail, next, err := row.Save(cp)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && keep == 0 {
			t.Fatalf("save %d rewrote the row", i)
		}
		stored = append(stored[:keep:keep], tail...)
		row = next
		got, loaded, err := checkpoint.Load(stored)
		if err != nil {
			t.Fatalf("load %d: %v\n%s", i, err, stored)
		}
		if loaded != row {
			t.Fatalf("load %d describes the row as %+v, want %+v", i, loaded, row)
		}
		want, _ := model.MarshalCanonical(cp)
		if b, _ := model.MarshalCanonical(got); !bytes.Equal(b, want) {
			t.Fatalf("load %d:\n got %s\nwant %s", i, b, want)
		}
		if int64(len(tail)) >= int64(len(want)) && i > 0 {
			t.Fatalf("save %d appended %d bytes for a %d byte checkpoint", i, len(tail), len(want))
		}
		// A whole checkpoint written as before this layout still loads.
		if legacy, _, err := checkpoint.Load(want); err != nil || legacy.Identity.TurnID != cp.Identity.TurnID {
			t.Fatalf("legacy row %d: %v", i, err)
		}
	}
}

func TestLoadRejects(t *testing.T) {
	cps := recorded(t, "good-two-turns")
	_, good, _, err := checkpoint.Row{}.Save(cps[len(cps)-1])
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := checkpoint.Load(good); err != nil {
		t.Fatal(err)
	}
	nl := bytes.LastIndexByte(good, '\n')
	first := bytes.IndexByte(good, '\n')
	for _, c := range []struct {
		name string
		row  []byte
		want errcode.Code
	}{
		{"a message line lost", good[first+1:], errcode.RuntimeCheckpointInvalid},
		{"a message line twice", append(append([]byte{}, good[:first+1]...), good...), errcode.RuntimeCheckpointInvalid},
		{"head cut", good[:nl+10], errcode.RuntimeCheckpointInvalid},
		{"no head", good[:nl+1], errcode.RuntimeCheckpointInvalid},
		{"message not canonical", bytes.Replace(good, []byte(`{"id":`), []byte(`{ "id":`), 1), errcode.RuntimeCheckpointInvalid},
		{"future version", bytes.Replace(good, []byte("\n{\"version\":1,"), []byte("\n{\"version\":2,"), 1), errcode.RuntimeCheckpointVersion},
		{"a delta as the row", deltaOf(t), errcode.RuntimeCheckpointInvalid},
		{"usage total below prompt + completion", bytes.Replace(good, []byte(`"totalTokens":57`), []byte(`"totalTokens":56`), 1), errcode.RuntimeCheckpointInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			if bytes.Equal(c.row, good) {
				t.Fatal("the case changed nothing")
			}
			_, _, err := checkpoint.Load(c.row)
			if got := errcode.Of(err); got != c.want {
				t.Fatalf("code %s, want %s (%v)", got, c.want, err)
			}
		})
	}
}

// deltaOf returns a recorded delta payload (history.base > 0).
func deltaOf(t *testing.T) []byte {
	log, err := readLog(t, filepath.Join("testdata", "logs", "good-two-turns.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range log {
		if r.Type != "runtime.checkpoint" {
			continue
		}
		if p := payloadOf(t, r.Body); bytes.Contains(p, []byte(`"base":`)) {
			return p
		}
	}
	t.Fatal("no delta in the log")
	return nil
}
