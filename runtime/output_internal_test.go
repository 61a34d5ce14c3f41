package runtime

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/memstore"
	"github.com/harness-dev/harness/tools"
)

// outputTurn is a running turn over an in-memory store, as callTool has it
// when a command runs; outputs returns the tool.output events recorded.
func outputTurn(t *testing.T) (*turn, func() []event.ToolOutput) {
	t.Helper()
	ctx := t.Context()
	st := memstore.New(memstore.Options{})
	id := event.NewID("sess")
	if _, err := st.CreateSession(ctx, store.SessionInit{ID: id}); err != nil {
		t.Fatal(err)
	}
	who, err := st.Acquire(ctx, id, store.Owner{ID: "test"}, store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	log, err := store.NewSessionLog(ctx, st, id, who)
	if err != nil {
		t.Fatal(err)
	}
	set := checkpoint.Settings{Model: "m", Tools: tools.ModelSpecs()}
	s := &Session{rt: &Runtime{cfg: Config{Now: time.Now, NewID: event.NewID}}, log: log, id: id, settings: set}
	s.state = newState(set)
	runCtx, cancel := context.WithCancelCause(ctx)
	tr := &turn{s: s, r: &run{sess: s, id: "run-1", turnID: "turn-1", cancel: cancel, grants: map[string]bool{}}, ctx: runCtx}
	outputs := func() []event.ToolOutput {
		t.Helper()
		recs, err := st.ReadEvents(ctx, id, -1, store.MaxPage)
		if err != nil {
			t.Fatal(err)
		}
		var out []event.ToolOutput
		for _, r := range recs {
			ev, err := event.Decode(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			if d, ok := ev.Data.(event.ToolOutput); ok {
				out = append(out, d)
			}
		}
		return out
	}
	return tr, outputs
}

// joined is the text recorded for one stream, checking that its offsets
// follow each other.
func joined(t *testing.T, evs []event.ToolOutput, stream string) string {
	t.Helper()
	var b strings.Builder
	off := 0
	for _, e := range evs {
		if e.Stream != stream || e.Text == "" {
			continue
		}
		if e.Offset != off {
			t.Errorf("%s output at offset %d, want %d", stream, e.Offset, off)
		}
		b.WriteString(e.Text)
		off += len(e.Text)
	}
	return b.String()
}

// Output is coalesced: what arrives within outputFlush is recorded at the
// next flush as one event per run of one stream; outputChunk bytes waiting
// are recorded at once. (Time here is synctest's fake clock: a Sleep moves
// it without waiting.)
func TestOutputCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, outputs := outputTurn(t)
		o := newOutputRecorder(tr, "call-1")
		for range 10 {
			o.write(event.StreamStdout, []byte("line of output\n"))
		}
		for range 10 {
			o.write(event.StreamStderr, []byte("warn\n"))
		}
		synctest.Wait()
		if evs := outputs(); len(evs) != 0 {
			t.Fatalf("%d events before the first flush", len(evs))
		}
		time.Sleep(outputFlush - time.Millisecond)
		synctest.Wait()
		if evs := outputs(); len(evs) != 0 {
			t.Fatalf("%d events before %v passed", len(evs), outputFlush)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		evs := outputs()
		if len(evs) != 2 || joined(t, evs, event.StreamStdout) != strings.Repeat("line of output\n", 10) ||
			joined(t, evs, event.StreamStderr) != strings.Repeat("warn\n", 10) {
			t.Fatalf("after one flush: %+v", evs)
		}
		// A full chunk does not wait for the clock.
		o.write(event.StreamStdout, []byte(strings.Repeat("x", outputChunk)))
		synctest.Wait()
		if evs := outputs(); len(evs) != 3 || len(evs[2].Text) != outputChunk || evs[2].Offset != 150 {
			t.Fatalf("a full chunk: %d events, last %+v", len(evs), evs[len(evs)-1])
		}
		o.stop()
		if evs := outputs(); len(evs) != 3 {
			t.Errorf("stop with nothing left recorded %d more", len(evs)-3)
		}
	})
}

// A call's output is recorded up to event.MaxToolOutputBytes; the event
// that reaches the bound says truncated, once, and nothing after it is
// recorded.
func TestOutputBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, outputs := outputTurn(t)
		o := newOutputRecorder(tr, "call-1")
		line := []byte(strings.Repeat("0123456789abcdef", 63) + "0123456789abcde\n") // 1 KiB
		for range 100 {
			o.write(event.StreamStdout, line)
		}
		synctest.Wait()
		o.write(event.StreamStderr, []byte("after the bound\n"))
		o.stop()
		evs := outputs()
		text := joined(t, evs, event.StreamStdout)
		if len(text) != event.MaxToolOutputBytes || text != strings.Repeat(string(line), 64) {
			t.Errorf("recorded %d bytes, want the first %d", len(text), event.MaxToolOutputBytes)
		}
		marked := 0
		for i, e := range evs {
			if e.Truncated {
				marked++
				if i != len(evs)-1 {
					t.Errorf("truncated at event %d of %d", i+1, len(evs))
				}
			}
			if e.Stream == event.StreamStderr {
				t.Errorf("output past the bound recorded: %+v", e)
			}
		}
		if marked != 1 {
			t.Errorf("%d events say truncated, want 1", marked)
		}
	})
}

// A rune split across writes — and across a flush — is recorded whole, in
// the flush after its last byte; so is one the bound cuts into: the bound
// falls before it.
func TestOutputSplitRune(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, outputs := outputTurn(t)
		o := newOutputRecorder(tr, "call-1")
		text := "héllo, wörld 🙂 done\n"
		b := []byte(text)
		cut1 := strings.Index(text, "é") + 1 // inside é
		cut2 := strings.Index(text, "🙂") + 2 // inside the emoji
		o.write(event.StreamStdout, b[:cut1])
		time.Sleep(outputFlush)
		synctest.Wait()
		o.write(event.StreamStdout, b[cut1:cut2])
		time.Sleep(outputFlush)
		synctest.Wait()
		o.write(event.StreamStdout, b[cut2:])
		o.stop()
		evs := outputs()
		if got := joined(t, evs, event.StreamStdout); got != text {
			t.Errorf("recorded %q, want %q", got, text)
		}
		for _, e := range evs {
			if !utf8.ValidString(e.Text) || strings.ContainsRune(e.Text, utf8.RuneError) {
				t.Errorf("event with a broken rune: %q", e.Text)
			}
		}
		if len(evs) != 3 {
			t.Errorf("%d events, want one per flush", len(evs))
		}

		// The bound inside a rune: the rune is not recorded in part.
		tr2, outputs2 := outputTurn(t)
		o2 := newOutputRecorder(tr2, "call-2")
		o2.write(event.StreamStdout, []byte(strings.Repeat("a", event.MaxToolOutputBytes-1)+"é and more"))
		o2.write(event.StreamStdout, []byte("b")) // room for one byte is left, but the bound was reached
		o2.stop()
		evs2 := outputs2()
		got := joined(t, evs2, event.StreamStdout)
		if got != strings.Repeat("a", event.MaxToolOutputBytes-1) || !evs2[len(evs2)-1].Truncated {
			t.Errorf("at the bound: %d bytes ending %q, last %+v", len(got), got[max(len(got)-4, 0):], evs2[len(evs2)-1])
		}
	})
}

// Output already written when the turn is canceled is kept: stop, which
// callTool runs before recording the call's result, records what waits
// although the turn's context is done.
func TestOutputKeptOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, outputs := outputTurn(t)
		o := newOutputRecorder(tr, "call-1")
		o.write(event.StreamStdout, []byte("step 1 done\n"))
		time.Sleep(outputFlush)
		synctest.Wait()
		o.write(event.StreamStdout, []byte("step 2 half"))
		o.write(event.StreamStderr, []byte("killed\n"))
		tr.r.canceled.Store(true)
		tr.r.cancel(errCanceled)
		o.stop()
		evs := outputs()
		if got := joined(t, evs, event.StreamStdout); got != "step 1 done\nstep 2 half" {
			t.Errorf("stdout kept %q", got)
		}
		if got := joined(t, evs, event.StreamStderr); got != "killed\n" {
			t.Errorf("stderr kept %q", got)
		}
	})
}

// Within one flush, stdout and stderr are recorded in the order they came
// (a run of one stream per event), each stream's offsets following on.
func TestOutputInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, outputs := outputTurn(t)
		o := newOutputRecorder(tr, "call-1")
		o.write(event.StreamStdout, []byte("first\n"))
		o.write(event.StreamStdout, []byte("second\n"))
		o.write(event.StreamStderr, []byte("warning: third\n"))
		o.write(event.StreamStdout, []byte("fourth\n"))
		o.write(event.StreamStderr, []byte("error: fifth\n"))
		o.stop()
		evs := outputs()
		var got []string
		for _, e := range evs {
			got = append(got, e.Stream+":"+e.Text)
		}
		want := []string{"stdout:first\nsecond\n", "stderr:warning: third\n", "stdout:fourth\n", "stderr:error: fifth\n"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("recorded %q, want %q", got, want)
		}
		joined(t, evs, event.StreamStdout) // checks the offsets
		joined(t, evs, event.StreamStderr)
	})
}
