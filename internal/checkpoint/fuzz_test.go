package checkpoint_test

import (
	"bytes"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
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
//
// The fuzzer's inputs are small edits of the recorded payloads (which
// payload, where, how many bytes to cut, what to put there), not the
// payloads themselves: whole payloads of kilobytes as inputs made every
// new input a minute-long minimization, and the target ran 13 inputs in
// 30 s. An index past the recorded ones takes the edit as the payload.
func FuzzFold(f *testing.F) {
	ps := seeds(f)
	for i := 1; i < len(ps); i++ {
		f.Add(uint8(i-1), uint16(0), uint8(0), []byte{}, uint8(i), uint16(0), uint8(0), []byte{})
	}
	f.Add(uint8(0), uint16(0), uint8(0), []byte{}, uint8(0), uint16(0), uint8(0), []byte{})
	f.Add(uint8(255), uint16(0), uint8(0), []byte(`{"version":1}`), uint8(1), uint16(0), uint8(0), []byte{})
	f.Add(uint8(0), uint16(40), uint8(3), []byte(`"x"`), uint8(1), uint16(90), uint8(1), []byte(`9`))
	f.Fuzz(func(t *testing.T, ia uint8, offA uint16, cutA uint8, insA []byte, ib uint8, offB uint16, cutB uint8, insB []byte) {
		a, b := editSeed(ps, ia, offA, cutA, insA), editSeed(ps, ib, offB, cutB, insB)
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

// editSeed is seed i with cut bytes at off replaced by ins, or ins alone
// when i is past the seeds.
func editSeed(seeds [][]byte, i uint8, off uint16, cut uint8, ins []byte) []byte {
	if int(i) >= len(seeds) {
		return ins
	}
	p := seeds[i]
	o := min(int(off), len(p))
	e := min(o+int(cut), len(p))
	return append(append(append(make([]byte, 0, len(p)+len(ins)), p[:o]...), ins...), p[e:]...)
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
