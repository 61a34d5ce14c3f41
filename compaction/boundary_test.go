package compaction_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

func TestBoundary(t *testing.T) {
	tests := []struct {
		name string
		msgs []model.Message
		tail int
		want int
		code errcode.Code
	}{
		{name: "empty history", msgs: nil, tail: 1, code: errcode.RuntimeContextOverflow},
		{name: "all system", msgs: []model.Message{sys("a"), sys("b"), sys("c")}, tail: 1,
			code: errcode.RuntimeContextOverflow},
		{name: "tail of zero", msgs: []model.Message{user("u1", "x"), say("a1", "y")}, tail: 0,
			code: errcode.RuntimeInvalidInput},
		{name: "negative tail", msgs: []model.Message{user("u1", "x"), say("a1", "y")}, tail: -3,
			code: errcode.RuntimeInvalidInput},
		{name: "single user message", msgs: []model.Message{user("u1", "x")}, tail: 1,
			code: errcode.RuntimeContextOverflow},
		{name: "system then one user message", msgs: []model.Message{sys("s"), user("u1", "x")}, tail: 1,
			code: errcode.RuntimeContextOverflow},
		{name: "tail longer than the history", msgs: []model.Message{user("u1", "x"), say("a1", "y")}, tail: 12,
			code: errcode.RuntimeContextOverflow},
		{name: "tail equal to the history", msgs: []model.Message{sys("s"), user("u1", "x"), say("a1", "y")}, tail: 2,
			code: errcode.RuntimeContextOverflow},
		{name: "smallest prefix", msgs: []model.Message{sys("s"), user("u1", "x"), say("a1", "y")}, tail: 1, want: 2},
		{name: "plain chat", msgs: []model.Message{
			sys("s"), user("u1", "x"), say("a1", "y"), user("u2", "x"), say("a2", "y"),
		}, tail: 2, want: 3},
		{name: "tail starts after a whole group", msgs: []model.Message{
			user("u1", "x"), call("a1", "c1"), result("t1", "c1"), say("a2", "done"),
		}, tail: 1, want: 3},
		{name: "tail would start with a result", msgs: []model.Message{
			user("u1", "x"), call("a1", "c1"), result("t1", "c1"), say("a2", "done"),
		}, tail: 2, want: 1},
		{name: "tail starts at the call", msgs: []model.Message{
			user("u1", "x"), call("a1", "c1"), result("t1", "c1"), say("a2", "done"),
		}, tail: 3, want: 1},
		{name: "parallel calls, tail inside the results", msgs: []model.Message{
			user("u1", "x"), say("a0", "look"), call("a1", "c1", "c2", "c3"),
			result("t1", "c1"), result("t2", "c2"), result("t3", "c3"), say("a2", "done"),
		}, tail: 2, want: 2},
		{name: "parallel calls, tail is the last result", msgs: []model.Message{
			user("u1", "x"), say("a0", "look"), call("a1", "c1", "c2", "c3"),
			result("t1", "c1"), result("t2", "c2"), result("t3", "c3"),
		}, tail: 1, want: 2},
		{name: "tail entirely tool results", msgs: []model.Message{
			user("u1", "x"), say("a0", "y"), user("u2", "z"), call("a1", "c1", "c2"), result("t1", "c1"), result("t2", "c2"),
		}, tail: 2, want: 3},
		{name: "group right after the first user message", msgs: []model.Message{
			sys("s"), user("u1", "x"), call("a1", "c1"), result("t1", "c1"),
		}, tail: 1, want: 2},
		{name: "group is the first non-system message", msgs: []model.Message{
			sys("s"), call("a1", "c1"), result("t1", "c1"),
		}, tail: 1, code: errcode.RuntimeContextOverflow},
		{name: "consecutive groups, tail in the second", msgs: []model.Message{
			user("u1", "x"), call("a1", "c1"), result("t1", "c1"), call("a2", "c2"), result("t2", "c2"), say("a3", "done"),
		}, tail: 2, want: 3},
		{name: "a result later than other messages still pulls its call", msgs: []model.Message{
			user("u1", "x"), call("a1", "c1", "c2"), result("t1", "c1"), user("u2", "steer"), result("t2", "c2"),
		}, tail: 2, want: 1},
		// The call at index 0 pulls the boundary to 0 like any other:
		// nothing is left to summarize.
		{name: "a result in the tail answering the very first message's call", msgs: []model.Message{
			call("a0", "c1", "c2"), result("t1", "c1"), say("a2", "y"), result("t3", "c2"), user("u4", "z"),
		}, tail: 3, code: errcode.RuntimeContextOverflow},
		{name: "a reused call ID belongs to its latest call", msgs: []model.Message{
			user("u1", "x"), call("a1", "c1"), result("t1", "c1"), say("a2", "y"), call("a3", "c1"), result("t3", "c1"),
		}, tail: 2, want: 4},
		{name: "a reused call ID in the tail does not pull back to its first use", msgs: []model.Message{
			user("u1", "x"), call("a1", "c1"), result("t1", "c1"), user("u2", "y"), call("a3", "c1"), result("t3", "c1"), say("a4", "z"),
		}, tail: 4, want: 3},
		{name: "a result whose call is unknown never opens the tail", msgs: []model.Message{
			user("u1", "x"), say("a1", "y"), result("t1", "lost"), say("a2", "z"),
		}, tail: 2, want: 1},
		{name: "system message in the tail", msgs: []model.Message{
			sys("s"), user("u1", "x"), say("a1", "y"), sys("late"), user("u2", "z"),
		}, tail: 2, want: 3},
		{name: "summary and pin of an earlier compaction", msgs: []model.Message{
			sys("s"), sys(compaction.SummaryPrefix + "old"), user("u1", "x"), say("a1", "y"), user("u2", "z"),
		}, tail: 1, want: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := compaction.Boundary(tt.msgs, tt.tail)
			mustCode(t, err, tt.code)
			if err == nil && got != tt.want {
				t.Errorf("Boundary = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestBoundaryEveryPosition places tool-call groups (one call, three
// parallel calls) at every position among other messages, tries every tail
// size, and compares Boundary with a brute-force search for the largest
// index that splits no group.
func TestBoundaryEveryPosition(t *testing.T) {
	blocks := []string{"s", "u", "a", "g1", "g3", "r1"}
	var shapes [][]string
	var grow func(shape []string)
	grow = func(shape []string) {
		if len(shape) > 0 {
			shapes = append(shapes, append([]string(nil), shape...))
		}
		if len(shape) == 4 {
			return
		}
		for _, b := range blocks {
			grow(append(shape, b))
		}
	}
	grow(nil)

	for _, shape := range shapes {
		msgs := build(shape)
		for tail := 1; tail <= len(msgs)+1; tail++ {
			t.Run(fmt.Sprintf("%s/tail-%d", strings.Join(shape, "-"), tail), func(t *testing.T) {
				want, ok := bruteBoundary(msgs, tail)
				got, err := compaction.Boundary(msgs, tail)
				if !ok {
					mustCode(t, err, errcode.RuntimeContextOverflow)
					return
				}
				mustCode(t, err, "")
				if got != want {
					t.Errorf("Boundary = %d, want %d", got, want)
				}
			})
		}
	}
}

// build turns block names into messages: s system, u user, a assistant
// text, gN an assistant with N tool calls followed by their results, r1 a
// group of one call whose ID every r1 block reuses.
func build(shape []string) []model.Message {
	var msgs []model.Message
	for i, b := range shape {
		switch b {
		case "s":
			msgs = append(msgs, sys(fmt.Sprintf("s%d", i)))
		case "u":
			msgs = append(msgs, user(fmt.Sprintf("u%d", i), "x"))
		case "a":
			msgs = append(msgs, say(fmt.Sprintf("a%d", i), "y"))
		case "g1", "g3", "r1":
			n := int(b[1] - '0')
			var ids []string
			for j := range n {
				ids = append(ids, fmt.Sprintf("c%d-%d", i, j))
			}
			if b[0] == 'r' {
				ids = []string{"reused"}
			}
			msgs = append(msgs, call(fmt.Sprintf("a%d", i), ids...))
			for j, id := range ids {
				msgs = append(msgs, result(fmt.Sprintf("t%d-%d", i, j), id))
			}
		}
	}
	return msgs
}

// bruteBoundary returns the largest c ≤ len-tail after the first
// non-system message where msgs[c] is not a tool message and no tool
// message at or after c answers a call made before c.
func bruteBoundary(msgs []model.Message, tail int) (int, bool) {
	first := -1
	for i, m := range msgs {
		if m.Role != model.RoleSystem {
			first = i
			break
		}
	}
	if first < 0 {
		return 0, false
	}
	for c := len(msgs) - tail; c > first; c-- {
		if valid(msgs, c) {
			return c, true
		}
	}
	return 0, false
}

func valid(msgs []model.Message, c int) bool {
	if msgs[c].Role == model.RoleTool {
		return false
	}
	for j := c; j < len(msgs); j++ {
		if msgs[j].Role != model.RoleTool {
			continue
		}
		// The call this result answers: the nearest earlier one with its ID.
		for i := j - 1; i >= 0; i-- {
			if slices.ContainsFunc(msgs[i].ToolCalls, func(tc model.ToolCall) bool { return tc.ID == msgs[j].ToolCallID }) {
				if i < c {
					return false
				}
				break
			}
		}
	}
	return true
}
