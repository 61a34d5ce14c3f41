package compaction_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/model"
)

func TestElide(t *testing.T) {
	big := strings.Repeat("x", compaction.ElideBound+1)
	small := strings.Repeat("y", compaction.ElideBound)
	msgs := []model.Message{
		{ID: "u1", Role: model.RoleUser, Content: big},
		{ID: "a1", Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "fs.read", Arguments: json.RawMessage(`{"path":"src/main.go"}`)},
			{ID: "c2", Name: "fs.read", Arguments: json.RawMessage(`{"path":"small.go"}`)},
			{ID: "c3", Name: "shell.run", Arguments: json.RawMessage(`{"command":"ls"}`)},
		}},
		{ID: "t1", Role: model.RoleTool, ToolCallID: "c1", Content: big},
		{ID: "t2", Role: model.RoleTool, ToolCallID: "c2", Content: small},
		{ID: "t3", Role: model.RoleTool, ToolCallID: "c3", Content: big},
		{ID: "t4", Role: model.RoleTool, ToolCallID: "c1", Content: big},
	}
	orig := append([]model.Message(nil), msgs...)
	got := compaction.Elide(msgs, 0, 5)
	if !reflect.DeepEqual(msgs, orig) {
		t.Fatal("Elide changed its input")
	}
	if !reflect.DeepEqual(compaction.Elide(msgs, 0, 5), got) {
		t.Fatal("Elide is not deterministic")
	}
	if len(got) != len(msgs) {
		t.Fatalf("%d messages, want %d", len(got), len(msgs))
	}
	// The user message, the small result and the result at or after
	// before stay whole.
	for _, i := range []int{0, 1, 3, 5} {
		if !reflect.DeepEqual(got[i], msgs[i]) {
			t.Errorf("message %d changed: %+v", i, got[i])
		}
	}
	for _, i := range []int{2, 4} {
		m := got[i]
		if !compaction.IsElided(m) || m.ID != msgs[i].ID || m.ToolCallID != msgs[i].ToolCallID || m.Role != model.RoleTool {
			t.Errorf("message %d not elided as a tool result: %+v", i, m)
		}
		if len(m.Content) >= compaction.ElideBound {
			t.Errorf("note %d is %d bytes", i, len(m.Content))
		}
	}
	if !strings.Contains(got[2].Content, "src/main.go") || !strings.Contains(got[2].Content, "fs.read") {
		t.Errorf("note for fs.read = %q", got[2].Content)
	}
	if !strings.Contains(got[4].Content, "shell.run") {
		t.Errorf("note for shell.run = %q", got[4].Content)
	}
	// A range that elides nothing returns the input itself; bounds clamp.
	if e := compaction.Elide(msgs, 3, 4); &e[0] != &msgs[0] {
		t.Error("nothing elided, but a copy was made")
	}
	if e := compaction.Elide(msgs, -3, 99); !compaction.IsElided(e[5]) {
		t.Errorf("clamped range left the last result whole")
	}
	// The elided view still keeps tool calls with their results.
	if _, err := compaction.View(got, 1, "s", nil); err != nil {
		t.Errorf("view of the elided history: %v", err)
	}
}

// An Elision started anywhere shows each message as Elide does, in rounds
// of one call and of many (looked up by map), and names each result's own
// call: its tool and path.
func TestElisionWalk(t *testing.T) {
	big := strings.Repeat("z", compaction.ElideBound+1)
	var msgs []model.Message
	msgs = append(msgs, model.Message{ID: "u", Role: model.RoleUser, Content: "go"})
	paths := map[string]string{}
	for r, n := range []int{1, 12, 3, 1} {
		a := model.Message{ID: fmt.Sprintf("a%d", r), Role: model.RoleAssistant}
		var results []model.Message
		for k := range n {
			id, path := fmt.Sprintf("c%d-%d", r, k), fmt.Sprintf("dir%d/f%d.go", r, k)
			args, _ := json.Marshal(map[string]string{"path": path})
			a.ToolCalls = append(a.ToolCalls, model.ToolCall{ID: id, Name: "fs.read", Arguments: args})
			paths[id] = path
			results = append(results, model.Message{ID: "t" + id, Role: model.RoleTool, ToolCallID: id, Name: "fs.read", Content: big})
		}
		// Results come in another order than the calls.
		slices.Reverse(results)
		msgs = append(append(msgs, a), results...)
	}
	all := compaction.Elide(msgs, 0, len(msgs))
	for i, m := range all {
		if m.Role != model.RoleTool {
			continue
		}
		if want := "Read " + paths[m.ToolCallID] + " again"; !compaction.IsElided(m) || !strings.Contains(m.Content, want) {
			t.Errorf("message %d: %q, want a note with %q", i, m.Content, want)
		}
	}
	for from := range msgs {
		el := compaction.NewElision(msgs, from)
		for i := from; i < len(msgs); i += 1 + i%2 { // skipping ahead is allowed
			got, elided := el.At(i)
			if !reflect.DeepEqual(got, all[i]) || elided != compaction.IsElided(all[i]) {
				t.Fatalf("walk from %d, message %d: %+v, want %+v", from, i, got, all[i])
			}
		}
	}
}

// An elision walk that starts inside a round finds the round's call in
// the message before it, the history's first message included; a result
// with nothing but results before it has no known call, and a later
// assistant message's call with the same ID is never taken for its own.
func TestElisionStartsInsideARound(t *testing.T) {
	big := strings.Repeat("z", compaction.ElideBound+1)
	args, _ := json.Marshal(map[string]string{"path": "p.go"})
	opener := model.Message{ID: "a0", Role: model.RoleAssistant,
		ToolCalls: []model.ToolCall{{ID: "c1", Name: "fs.read", Arguments: args}}}
	res := model.Message{ID: "t1", Role: model.RoleTool, ToolCallID: "c1", Name: "fs.read", Content: big}
	after := model.Message{ID: "u2", Role: model.RoleUser, Content: "next"}

	got := compaction.Elide([]model.Message{opener, res, after}, 1, 2)
	if !compaction.IsElided(got[1]) || !strings.Contains(got[1].Content, "Read p.go again") {
		t.Errorf("from inside the first round: %q, want a note naming p.go", got[1].Content)
	}
	got = compaction.Elide([]model.Message{res, opener, after}, 0, 1)
	if !compaction.IsElided(got[0]) || strings.Contains(got[0].Content, "p.go") {
		t.Errorf("a result before any call: %q, want a note naming no call", got[0].Content)
	}
}
