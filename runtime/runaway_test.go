package runtime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
)

// listSteps is a script of n rounds, each calling fs.list on path (one
// argument per round when vary), then a final answer.
func listSteps(n int, vary bool) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		path := "."
		if vary {
			path = fmt.Sprintf("dir%d", i)
		}
		fmt.Fprintf(&b, `{"toolCalls":[{"id":"c%d","name":"fs.list","arguments":{"path":%q}}]},`, i, path)
	}
	b.WriteString(`{"content":"done"}]`)
	return b.String()
}

// A turn whose model keeps calling tools ends at the round limit with
// RUNTIME_ROUND_LIMIT, after every call it asked for has its result; a
// follow-up goes on from there.
func TestRoundLimitEndsTheTurn(t *testing.T) {
	fm := script(t, listSteps(4, true))
	f := newFixture(t, fm, fm, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { c.MaxRounds = 3 })
	out := f.wait(f.start("list forever"))
	if out.Status != runtime.StatusFailed || out.ErrorCode != errcode.RuntimeRoundLimit {
		t.Fatalf("outcome = %+v, want failed with RUNTIME_ROUND_LIMIT", out)
	}
	if out.ModelRequests != 3 || out.ToolCalls != 3 {
		t.Errorf("requests %d, tool calls %d; want 3 and 3", out.ModelRequests, out.ToolCalls)
	}
	evs := f.events()
	if n := count(evs, event.TypeToolResult); n != 3 {
		t.Errorf("%d tool results, want 3", n)
	}
	tc := ofType[event.TurnCompleted](evs)
	if len(tc) != 1 || tc[0].ErrorCode != string(errcode.RuntimeRoundLimit) {
		t.Fatalf("turn.completed = %+v", tc)
	}
	// A follow-up goes on: the fourth listing, then the answer.
	if out := f.wait(f.start("continue")); out.Status != runtime.StatusCompleted {
		t.Fatalf("follow-up = %+v", out)
	}
}

// The default limit is in the hundreds: a turn of 30 rounds is no runaway.
func TestRoundLimitDefault(t *testing.T) {
	if runtime.DefaultMaxRounds < 100 {
		t.Fatalf("DefaultMaxRounds = %d", runtime.DefaultMaxRounds)
	}
	fm := script(t, listSteps(30, true))
	f := newFixture(t, fm, fm, nil)
	if out := f.wait(f.start("list")); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
}

// The same call with the same arguments and the same result five times in
// a row ends the turn with RUNTIME_LOOP_DETECTED; the same call with a
// different result, or different arguments, does not count.
func TestLoopGuard(t *testing.T) {
	t.Run("same call same result", func(t *testing.T) {
		fm := script(t, listSteps(10, false))
		f := newFixture(t, fm, fm, nil)
		out := f.wait(f.start("list"))
		if out.ErrorCode != errcode.RuntimeLoopDetected || out.Status != runtime.StatusFailed {
			t.Fatalf("outcome = %+v, want RUNTIME_LOOP_DETECTED", out)
		}
		if out.ToolCalls != runtime.DefaultLoopRepeats || out.ModelRequests != runtime.DefaultLoopRepeats {
			t.Errorf("requests %d, tool calls %d; want %d", out.ModelRequests, out.ToolCalls, runtime.DefaultLoopRepeats)
		}
	})
	t.Run("other calls between", func(t *testing.T) {
		// list . four times, read README once, list . four times: never
		// five in a row.
		var b strings.Builder
		b.WriteString("[")
		for i := range 9 {
			call := `"name":"fs.list","arguments":{"path":"."}`
			if i == 4 {
				call = `"name":"fs.read","arguments":{"path":"README.md"}`
			}
			fmt.Fprintf(&b, `{"toolCalls":[{"id":"c%d",%s}]},`, i, call)
		}
		b.WriteString(`{"content":"done"}]`)
		fm := script(t, b.String())
		f := newFixture(t, fm, fm, nil)
		if out := f.wait(f.start("list")); out.Status != runtime.StatusCompleted {
			t.Fatalf("outcome = %+v", out)
		}
	})
	t.Run("several calls in one answer", func(t *testing.T) {
		// Five identical calls in one answer: the fifth ends the turn, and
		// a sixth after it is recorded as not run.
		var calls []string
		for i := range 6 {
			calls = append(calls, fmt.Sprintf(`{"id":"c%d","name":"fs.list","arguments":{"path":"."}}`, i))
		}
		fm := script(t, `[{"toolCalls":[`+strings.Join(calls, ",")+`]},{"content":"unused"}]`)
		f := newFixture(t, fm, fm, nil)
		out := f.wait(f.start("list"))
		if out.ErrorCode != errcode.RuntimeLoopDetected {
			t.Fatalf("outcome = %+v", out)
		}
		res := ofType[event.ToolResult](f.events())
		if len(res) != 6 || res[5].Error == nil || res[5].Error.Code != string(errcode.ToolCanceled) {
			t.Fatalf("tool results = %+v", res)
		}
	})
}

// Calls that go round in a cycle end the turn with RUNTIME_LOOP_DETECTED:
// an fs.list over eight paths, again and again, ran 200 rounds (4.3M
// tokens) because no call was the same as the one before it. A turn that
// lists many different paths, or the same eight twice, goes on.
func TestLoopGuardCycle(t *testing.T) {
	cycle := func(paths, rounds int) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range paths * rounds {
			fmt.Fprintf(&b, `{"toolCalls":[{"id":"c%d","name":"fs.list","arguments":{"path":"dir%d"}}]},`, i, i%paths)
		}
		b.WriteString(`{"content":"done"}]`)
		return b.String()
	}
	t.Run("eight paths over and over", func(t *testing.T) {
		fm := script(t, cycle(8, 25))
		f := newFixture(t, fm, fm, nil)
		out := f.wait(f.start("list"))
		if out.Status != runtime.StatusFailed || out.ErrorCode != errcode.RuntimeLoopDetected {
			t.Fatalf("outcome = %+v, want failed with RUNTIME_LOOP_DETECTED", out)
		}
		if out.ToolCalls != 24 {
			t.Errorf("%d tool calls, want 24: three rounds of the eight", out.ToolCalls)
		}
	})
	t.Run("two paths in turn", func(t *testing.T) {
		fm := script(t, cycle(2, 10))
		f := newFixture(t, fm, fm, nil)
		if out := f.wait(f.start("list")); out.ErrorCode != errcode.RuntimeLoopDetected || out.ToolCalls != 6 {
			t.Fatalf("outcome = %+v, want RUNTIME_LOOP_DETECTED after 6 calls", out)
		}
	})
	for name, script_ := range map[string]string{
		"many different paths": listSteps(60, true),
		"the same eight twice": cycle(8, 2),
	} {
		t.Run(name, func(t *testing.T) {
			fm := script(t, script_)
			f := newFixture(t, fm, fm, nil)
			if out := f.wait(f.start("list")); out.Status != runtime.StatusCompleted {
				t.Fatalf("outcome = %+v", out)
			}
		})
	}
}
