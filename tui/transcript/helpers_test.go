package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/tui/theme"
)

// base is the normalized clock of the fixtures.
var base = time.Date(2026, 11, 29, 20, 41, 0, 0, time.UTC)

// mustLoadLog reads a recorded log (one envelope per line, as `harness
// events` and `harness exec --json` print it) and normalizes what differs
// between recordings: event times become base + 100 ms per event, tool
// durations 10 ms per call.
func mustLoadLog(t testing.TB, path string) []event.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []event.Event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	calls := 0
	for sc.Scan() {
		ev, err := event.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("decode line %d: %v", len(out)+1, err)
		}
		ev.At = base.Add(time.Duration(len(out)) * 100 * time.Millisecond)
		if r, ok := ev.Data.(event.ToolResult); ok {
			calls++
			r.DurationMs = 10 * calls
			ev.Data = r
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustReplay(t testing.TB, path string) *Transcript {
	t.Helper()
	tr := New()
	for _, ev := range mustLoadLog(t, path) {
		tr.Apply(ev)
	}
	return tr
}

// ev builds an event with a normalized time (i steps of 100 ms).
func ev(i int, d event.Data) event.Event {
	return event.Event{Type: d.EventType(), ID: "evt-" + itoa(i), At: base.Add(time.Duration(i) * 100 * time.Millisecond), Actor: "kernel", Data: d}
}

func ctxAt(width int) *Ctx {
	return &Ctx{Width: width, Now: base.Add(2500 * time.Millisecond), Spinner: "⠋", Theme: theme.New(true)}
}

// plain strips styling, for assertions on text.
func plain(lines []string) string { return ansi.Strip(strings.Join(lines, "\n")) }

func raw(s string) json.RawMessage { return json.RawMessage(s) }

var usage = model.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}
