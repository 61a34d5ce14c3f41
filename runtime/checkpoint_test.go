package runtime_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
)

// checkpoints returns the payloads of every runtime.checkpoint, in order.
func (f *fixture) checkpoints() []*checkpoint.Checkpoint {
	f.t.Helper()
	var out []*checkpoint.Checkpoint
	var chain checkpoint.Chain
	for _, d := range ofType[event.RuntimeCheckpoint](f.events()) {
		cp, err := chain.Next(d.Payload)
		if err != nil {
			f.t.Fatalf("stored checkpoint does not parse: %v", err)
		}
		out = append(out, cp)
	}
	return out
}

// Every reconstructed request equals, byte for byte as JSON, what the
// scripted model received.
func TestReconstructModelRequest(t *testing.T) {
	m := script(t, `[
	 {"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}}],"usage":{"promptTokens":5,"completionTokens":1}},
	 {"content":"done <&> ünïcode","usage":{"promptTokens":5,"completionTokens":1}},
	 {"content":"again","usage":{"promptTokens":5,"completionTokens":1}}]`)
	f := newFixture(t, m, m, func(_ *runtime.SessionConfig, s *checkpoint.Settings) {
		s.ProviderOptions = json.RawMessage(`{"temperature":0.2}`)
		s.MaxTokens = 900
	})
	f.wait(f.start("first"))
	f.wait(f.start("second"))
	wantRebuilt(t, f.checkpoints(), m.RequestsJSON())
}

// wantRebuilt checks that every checkpoint of cps that holds a model
// request rebuilds it, in order, byte for byte as canonical JSON, into
// what the model received.
func wantRebuilt(t *testing.T, cps []*checkpoint.Checkpoint, received [][]byte) {
	t.Helper()
	var rebuilt [][]byte
	for _, cp := range cps {
		if cp.NextRequest == nil {
			continue
		}
		req, err := runtime.ReconstructModelRequest(cp)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := model.MarshalCanonical(req)
		rebuilt = append(rebuilt, b)
	}
	if len(rebuilt) != len(received) {
		t.Fatalf("%d reconstructed, %d received", len(rebuilt), len(received))
	}
	for i := range received {
		if !bytes.Equal(rebuilt[i], received[i]) {
			t.Errorf("request %d differs:\nrebuilt  %s\nreceived %s", i, rebuilt[i], received[i])
		}
	}
}

func TestParseCheckpointRejects(t *testing.T) {
	m := script(t, `[{"content":"ok","usage":{"promptTokens":1,"completionTokens":1}}]`)
	f := newFixture(t, m, m, nil)
	f.wait(f.start("go"))
	cps := ofType[event.RuntimeCheckpoint](f.events())
	good := cps[len(cps)-1].Payload
	if _, err := checkpoint.Parse(good); err != nil {
		t.Fatalf("good checkpoint: %v", err)
	}
	// Reasoning tokens counted apart make the total larger: kept.
	if _, err := checkpoint.Parse(bytes.Replace(good, []byte(`"totalTokens":2`), []byte(`"totalTokens":3`), 1)); err != nil {
		t.Fatalf("checkpoint with total above prompt + completion: %v", err)
	}
	edit := func(fn func(map[string]any)) []byte {
		var v map[string]any
		json.Unmarshal(good, &v)
		fn(v)
		b, _ := model.MarshalCanonical(v)
		// Re-encode through the struct order: keys of a map sort, so
		// rebuild canonical order by parsing into the struct when possible.
		return b
	}
	cases := []struct {
		name    string
		payload []byte
		want    errcode.Code
	}{
		{"future version", bytes.Replace(good, []byte(`{"version":1,`), []byte(`{"version":2,`), 1), errcode.RuntimeCheckpointVersion},
		{"unknown key", bytes.Replace(good, []byte(`{"version":1,`), []byte(`{"version":1,"extra":true,`), 1), errcode.RuntimeCheckpointInvalid},
		{"key case", bytes.Replace(good, []byte(`"identity"`), []byte(`"IDENTITY"`), 1), errcode.RuntimeCheckpointInvalid},
		{"usage total below prompt + completion", bytes.Replace(good, []byte(`"totalTokens":2`), []byte(`"totalTokens":1`), 1), errcode.RuntimeCheckpointInvalid},
		{"turn missing", replaceTurns(good), errcode.RuntimeCheckpointInvalid},
		{"not canonical", edit(func(map[string]any) {}), errcode.RuntimeCheckpointInvalid},
		{"not json", []byte("{"), errcode.RuntimeCheckpointInvalid},
		{"too large", append(bytes.Repeat([]byte(" "), checkpoint.MaxBytes), good...), errcode.RuntimeCheckpointInvalid},
		{"terminal with next request", bytes.Replace(good, []byte(`"terminalStatus"`), []byte(`"nextRequest":{"requestId":"req-1","maxTokens":1,"step":1},"terminalStatus"`), 1), errcode.RuntimeCheckpointInvalid},
		{"cursor past history", bytes.Replace(good, []byte(`"tailStart":0`), []byte(`"tailStart":99`), 1), errcode.RuntimeCheckpointInvalid},
		{"elision past history", bytes.Replace(good, []byte(`"compactions":0`), []byte(`"compactions":0,"elideBefore":99`), 1), errcode.RuntimeCheckpointInvalid},
		{"duplicate turn", bytes.Replace(good, []byte(`"sessionTurns":["`), []byte(`"sessionTurns":["x","x","`), 1), errcode.RuntimeCheckpointInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if bytes.Equal(c.payload, good) {
				t.Fatal("the case did not change the payload")
			}
			_, err := checkpoint.Parse(c.payload)
			mustCode(t, err, c.want)
		})
	}
}

func replaceTurns(good []byte) []byte {
	i := bytes.Index(good, []byte(`"sessionTurns":[`))
	j := bytes.IndexByte(good[i:], ']')
	return append(append(append([]byte{}, good[:i]...), `"sessionTurns":["turn-other"`...), good[i+j:]...)
}

// FuzzParseCheckpoint: the fuzzer's inputs are small edits of real
// payloads of every phase (which payload, where, how many bytes to cut,
// what to put there), or a small payload alone (an index past them):
// whole payloads of kilobytes as inputs made every new input a
// minute-long minimization, and the target ran 3 inputs in 30 s.
func FuzzParseCheckpoint(f *testing.F) {
	m := script(f, `[{"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}}],"usage":{"promptTokens":2,"completionTokens":1}},{"content":"done"}]`)
	fx := newFixture(f, m, m, nil)
	fx.wait(fx.start("seed"))
	var real [][]byte
	for i, d := range ofType[event.RuntimeCheckpoint](fx.events()) {
		real = append(real, []byte(d.Payload))
		f.Add(uint8(i), uint16(0), uint8(0), []byte{})
		f.Add(uint8(i), uint16(len(d.Payload)/2), uint8(255), []byte{}) // partial
	}
	for _, p := range []string{`{"version":1}`, `{"version":2}`, `[]`, strings.Repeat(`{"version":1,"identity":`, 3)} {
		f.Add(uint8(255), uint16(0), uint8(0), []byte(p))
	}
	f.Fuzz(func(t *testing.T, i uint8, off uint16, cut uint8, ins []byte) {
		b := ins
		if int(i) < len(real) {
			p := real[i]
			o := min(int(off), len(p))
			e := min(o+int(cut), len(p))
			b = append(append(append(make([]byte, 0, len(p)+len(ins)), p[:o]...), ins...), p[e:]...)
		}
		cp, err := checkpoint.Parse(b)
		if err != nil {
			c := errcode.Of(err)
			if c != errcode.RuntimeCheckpointInvalid && c != errcode.RuntimeCheckpointVersion {
				t.Fatalf("code %s", c)
			}
			return
		}
		again, err := model.MarshalCanonical(cp)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("accepted a payload that does not re-encode identically")
		}
		if cp.NextRequest != nil {
			if _, err := runtime.ReconstructModelRequest(cp); err != nil && errcode.Of(err) == errcode.Internal {
				t.Fatal(err)
			}
		}
	})
}

// The spliced checkpoint encoding is byte-identical to the reflective one.
func TestCheckpointMarshalSplice(t *testing.T) {
	m := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}}]},{"content":"<b>\"history\":{\"version\":1}</b>"}]`)
	f := newFixture(t, m, m, nil)
	f.wait(f.start(`say "history":{"version":1,"revision":0,"messages":null}`))
	for _, d := range ofType[event.RuntimeCheckpoint](f.events()) {
		cp, err := checkpoint.Parse(d.Payload)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := model.MarshalCanonical(cp)
		if !bytes.Equal(want, d.Payload) {
			t.Fatalf("spliced payload differs:\n%s\n%s", d.Payload, want)
		}
	}
}
