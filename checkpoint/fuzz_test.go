package checkpoint_test

import (
	"bytes"
	"testing"

	"github.com/harness-dev/harness/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
)

func formatCode(t *testing.T, err error) {
	t.Helper()
	if c := errcode.Of(err); c != errcode.RuntimeCheckpointInvalid && c != errcode.RuntimeCheckpointVersion {
		t.Fatalf("code %s (%v)", c, err)
	}
}

// seeds are the recorded payloads of a two-turn session, in log order.
func seeds(f *testing.F) [][]byte {
	log, err := readLog(f, "testdata/logs/good-two-turns.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, r := range log {
		if r.Type == "runtime.checkpoint" {
			out = append(out, payloadOf(f, r.Body))
		}
	}
	return out
}

// FuzzFold: folding any two payloads either fails with a format code or
// yields a whole checkpoint that encodes canonically and parses back to
// the same bytes.
func FuzzFold(f *testing.F) {
	ps := seeds(f)
	for i := 1; i < len(ps); i++ {
		f.Add(ps[i-1], ps[i])
	}
	f.Add(ps[0], ps[0])
	f.Add([]byte(`{"version":1}`), ps[1])
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var c checkpoint.Chain
		if _, err := c.Next(a); err != nil {
			formatCode(t, err)
			return
		}
		cp, err := c.Next(b)
		if err != nil {
			formatCode(t, err)
			return
		}
		if cp.History.Base != 0 {
			t.Fatalf("folded checkpoint has base %d", cp.History.Base)
		}
		whole, err := model.MarshalCanonical(cp)
		if err != nil {
			t.Fatal(err)
		}
		again, err := checkpoint.Parse(whole)
		if err != nil {
			t.Fatalf("folded checkpoint does not parse: %v", err)
		}
		if b2, _ := model.MarshalCanonical(again); !bytes.Equal(b2, whole) {
			t.Fatal("folded checkpoint changes when parsed again")
		}
	})
}

// FuzzLoad: any store row either fails with a format code or loads to a
// whole checkpoint that, written to a new row, loads back the same.
func FuzzLoad(f *testing.F) {
	for _, p := range seeds(f) {
		f.Add(p)
	}
	var (
		row    checkpoint.Row
		stored []byte
		c      checkpoint.Chain
	)
	for _, p := range seeds(f) {
		cp, err := c.Next(p)
		if err != nil {
			f.Fatal(err)
		}
		keep, tail, next, err := row.Save(cp)
		if err != nil {
			f.Fatal(err)
		}
		stored, row = append(stored[:keep:keep], tail...), next
		f.Add(bytes.Clone(stored))
	}
	f.Add([]byte("{}\n{}"))
	f.Add([]byte("\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cp, _, err := checkpoint.Load(b)
		if err != nil {
			formatCode(t, err)
			return
		}
		_, tail, _, err := checkpoint.Row{}.Save(cp)
		if err != nil {
			t.Fatalf("a loaded checkpoint does not save: %v", err)
		}
		again, _, err := checkpoint.Load(tail)
		if err != nil {
			t.Fatalf("a saved row does not load: %v", err)
		}
		x, _ := model.MarshalCanonical(cp)
		y, _ := model.MarshalCanonical(again)
		if !bytes.Equal(x, y) {
			t.Fatalf("row round trip changed the checkpoint:\n%s\n%s", x, y)
		}
	})
}
