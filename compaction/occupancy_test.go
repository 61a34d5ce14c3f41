package compaction_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/model"
)

// pieces mixes ASCII, multi-byte UTF-8, characters an HTML-escaping encoder
// would rewrite, characters JSON must escape, and invalid UTF-8.
var pieces = []string{
	"a", "fix the bug", " ", "\n", "\t", `"`, `\`, "/", "<", ">", "&", "<script>&amp;</script>",
	"é", "日本語", "🙂", "\u2028", "\u2029", "\x00", "\x1f", "\x7f", "\xff", "\xe6\x97", "{}", "null",
}

func randText(r *rand.Rand, maxPieces int) string {
	var b strings.Builder
	for range r.IntN(maxPieces + 1) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// rawArgs are valid JSON documents as a model might produce them, spacing
// included: the encoder compacts them.
var rawArgs = []string{
	`{}`, `{"path":"a.go"}`, `{ "path" : "dir/<x>&y.go", "n": 12 }`, `{"cmd":["go","test","./..."],"timeout":1.5e3}`,
	"{\n  \"text\": \"日本\\u00e9\\n\"\n}", `[1, 2, 3]`, `"just a string"`, `null`, `true`,
	"{\"raw\":\"\xff \u2028 <&>\"}",
}

func randMessage(r *rand.Rand, i int) model.Message {
	m := model.Message{Content: randText(r, 8)}
	if r.IntN(2) == 0 {
		m.ID = fmt.Sprintf("msg-%d", i)
	}
	switch r.IntN(4) {
	case 0:
		m.Role = model.RoleSystem
	case 1:
		m.Role = model.RoleUser
	case 2:
		m.Role = model.RoleAssistant
		for j := range r.IntN(3) {
			c := model.ToolCall{ID: fmt.Sprintf("call-%d-%d", i, j), Name: "fs.read"}
			if k := r.IntN(len(rawArgs) + 1); k < len(rawArgs) {
				c.Arguments = json.RawMessage(rawArgs[k])
			} // else nil: encoded as null
			m.ToolCalls = append(m.ToolCalls, c)
		}
	case 3:
		m.Role = model.RoleTool
		m.ToolCallID = fmt.Sprintf("call-%d", i)
		m.Name = "proc.run"
	}
	return m
}

func randTools(r *rand.Rand) []model.ToolSpec {
	var tools []model.ToolSpec
	for i := range r.IntN(4) {
		tools = append(tools, model.ToolSpec{
			Name:        fmt.Sprintf("tool.%d", i),
			Description: randText(r, 6),
			Parameters:  json.RawMessage(rawArgs[r.IntN(len(rawArgs))]),
		})
	}
	return tools
}

// canonicalLen is the definition: the length of model.MarshalCanonical of
// Occupied with nil slices as empty ones.
func canonicalLen(t *testing.T, system string, tools []model.ToolSpec, msgs []model.Message) int {
	t.Helper()
	if tools == nil {
		tools = []model.ToolSpec{}
	}
	if msgs == nil {
		msgs = []model.Message{}
	}
	b, err := model.MarshalCanonical(compaction.Occupied{Messages: msgs, Tools: tools, System: system})
	if err != nil {
		t.Fatalf("marshal canonical: %v", err)
	}
	return len(b)
}

func TestMeterMatchesCanonicalEncoding(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x5eed))
			system, tools := randText(r, 5), randTools(r)
			m := compaction.NewMeter(system, tools)
			if got, want := m.Tokens(), canonicalLen(t, system, tools, nil); got != want {
				t.Fatalf("empty meter: Tokens = %d, canonical length = %d", got, want)
			}
			var msgs []model.Message
			for i := range r.IntN(40) {
				msg := randMessage(r, i)
				msgs = append(msgs, msg)
				want := canonicalLen(t, system, tools, msgs)
				if got := m.Add(msg); got != want {
					t.Fatalf("after message %d: Add = %d, canonical length = %d (message %q)", i, got, want, msg.Content)
				}
				if got := m.Tokens(); got != want {
					t.Fatalf("after message %d: Tokens = %d, canonical length = %d", i, got, want)
				}
			}
			if got, want := compaction.Occupancy(system, tools, msgs), canonicalLen(t, system, tools, msgs); got != want {
				t.Errorf("Occupancy = %d, canonical length = %d", got, want)
			}
		})
	}
}

func TestOccupancyNilIsEmpty(t *testing.T) {
	tests := []struct {
		name  string
		tools []model.ToolSpec
		msgs  []model.Message
		want  string
	}{
		{"nil", nil, nil, `{"messages":[],"tools":[],"system":"s"}`},
		{"empty", []model.ToolSpec{}, []model.Message{}, `{"messages":[],"tools":[],"system":"s"}`},
		{"html not escaped", nil, []model.Message{{Role: model.RoleUser, Content: "<&>"}},
			`{"messages":[{"role":"user","content":"<&>"}],"tools":[],"system":"s"}`},
		{"empty content kept", nil, []model.Message{{Role: model.RoleAssistant}, {Role: model.RoleUser}},
			`{"messages":[{"role":"assistant","content":""},{"role":"user","content":""}],"tools":[],"system":"s"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compaction.Occupancy("s", tt.tools, tt.msgs); got != len(tt.want) {
				t.Errorf("Occupancy = %d, want %d (%s)", got, len(tt.want), tt.want)
			}
			m := compaction.NewMeter("s", tt.tools)
			m.Reset(tt.msgs)
			if got := m.Tokens(); got != len(tt.want) {
				t.Errorf("Meter.Tokens = %d, want %d", got, len(tt.want))
			}
		})
	}
}

func TestOccupancyInvalidRawJSON(t *testing.T) {
	tests := []struct {
		name string
		raw  string
	}{
		{"truncated object", `{"path":"a.go"`},
		{"empty", ``},
		{"prose", `please read a.go <now> & then`},
		{"invalid utf-8", "{\"a\":\"\xff\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "call-1", Name: "fs.read", Arguments: json.RawMessage(tt.raw)},
			}}
			// Counted as the same call with its arguments as a JSON string.
			asString, err := model.MarshalCanonical(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			good := bad
			good.ToolCalls = []model.ToolCall{{ID: "call-1", Name: "fs.read", Arguments: asString}}
			want := canonicalLen(t, "", nil, []model.Message{good})

			m := compaction.NewMeter("", nil)
			if got := m.Add(bad); got != want {
				t.Errorf("Meter.Add = %d, want %d", got, want)
			}
			if got := compaction.Occupancy("", nil, []model.Message{bad}); got != want {
				t.Errorf("Occupancy = %d, want %d", got, want)
			}
			if string(bad.ToolCalls[0].Arguments) != tt.raw {
				t.Errorf("the message's arguments changed to %q", bad.ToolCalls[0].Arguments)
			}

			tools := []model.ToolSpec{{Name: "t", Parameters: json.RawMessage(tt.raw)}}
			goodTools := []model.ToolSpec{{Name: "t", Parameters: asString}}
			if got, want := compaction.NewMeter("", tools).Tokens(), canonicalLen(t, "", goodTools, nil); got != want {
				t.Errorf("NewMeter with invalid parameters: Tokens = %d, want %d", got, want)
			}
		})
	}
}

func TestMeterReset(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	tools := randTools(r)
	var history, view []model.Message
	for i := range 60 {
		history = append(history, randMessage(r, i))
	}
	for i := range 5 {
		view = append(view, randMessage(r, 100+i))
	}
	tests := []struct {
		name string
		msgs []model.Message
	}{
		{"to a shorter view", view},
		{"to nothing", nil},
		{"to the same history", history},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := compaction.NewMeter("system <&>", tools)
			m.Reset(history)
			m.Reset(tt.msgs)
			if got, want := m.Tokens(), canonicalLen(t, "system <&>", tools, tt.msgs); got != want {
				t.Errorf("Tokens after Reset = %d, want %d", got, want)
			}
			// Adding after a reset continues from the view.
			extra := model.Message{Role: model.RoleUser, Content: "next"}
			want := canonicalLen(t, "system <&>", tools, append(append([]model.Message(nil), tt.msgs...), extra))
			if got := m.Add(extra); got != want {
				t.Errorf("Add after Reset = %d, want %d", got, want)
			}
		})
	}
}

func TestMeterCloneIsIndependent(t *testing.T) {
	a := model.Message{Role: model.RoleUser, Content: "first"}
	b := model.Message{Role: model.RoleAssistant, Content: "second 日本"}
	c := model.Message{Role: model.RoleUser, Content: "third"}

	orig := compaction.NewMeter("sys", nil)
	orig.Add(a)
	clone := orig.Clone()
	clone.Add(b)
	if got, want := orig.Tokens(), canonicalLen(t, "sys", nil, []model.Message{a}); got != want {
		t.Errorf("original after adding to the clone: Tokens = %d, want %d", got, want)
	}
	if got, want := clone.Tokens(), canonicalLen(t, "sys", nil, []model.Message{a, b}); got != want {
		t.Errorf("clone: Tokens = %d, want %d", got, want)
	}
	orig.Add(c)
	if got, want := clone.Tokens(), canonicalLen(t, "sys", nil, []model.Message{a, b}); got != want {
		t.Errorf("clone after adding to the original: Tokens = %d, want %d", got, want)
	}
	clone.Reset(nil)
	if got, want := orig.Tokens(), canonicalLen(t, "sys", nil, []model.Message{a, c}); got != want {
		t.Errorf("original after resetting the clone: Tokens = %d, want %d", got, want)
	}
}

// AddEncoded with the length of MarshalCanonical counts as Add does.
func TestMeterAddEncoded(t *testing.T) {
	msgs := []model.Message{
		{ID: "m1", Role: model.RoleUser, Content: "héllo \"quoted\" <tag> \u2028"},
		{ID: "m2", Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "fs.read", Arguments: []byte(`{"path": "a.go"}`)}}},
		{ID: "m3", Role: model.RoleTool, ToolCallID: "c1", Name: "fs.read", Content: strings.Repeat("x\n", 100)},
	}
	a, b := compaction.NewMeter("sys", nil), compaction.NewMeter("sys", nil)
	for _, m := range msgs {
		raw, err := model.MarshalCanonical(m)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := a.AddEncoded(len(raw)), b.Add(m); got != want {
			t.Fatalf("AddEncoded = %d, Add = %d", got, want)
		}
	}
	if a.Tokens() != compaction.Occupancy("sys", nil, msgs) {
		t.Fatalf("meter %d, full encode %d", a.Tokens(), compaction.Occupancy("sys", nil, msgs))
	}
}

// The meter's estimate (char-mix/v1) equals MixTokens of the whole
// encoding, whether the messages are added by value or by their raw
// encoding; AddEncoded, which sees no bytes, counts more; Scale of the
// meter's own bytes is Estimate, and of half of them about half.
func TestMeterEstimate(t *testing.T) {
	tools := []model.ToolSpec{{Name: "fs.read", Description: "read a file", Parameters: []byte(`{"type":"object"}`)}}
	msgs := []model.Message{
		{ID: "m1", Role: model.RoleUser, Content: "héllo \"quoted\" <tag> \u2028 and some more English words"},
		{ID: "m2", Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "fs.read", Arguments: []byte(`{"path": "a.go"}`)}}},
		{ID: "m3", Role: model.RoleTool, ToolCallID: "c1", Name: "fs.read", Content: strings.Repeat("func x() {\n\treturn 42\n}\n", 50)},
	}
	whole, err := model.MarshalCanonical(compaction.Occupied{Messages: msgs, Tools: tools, System: "sys"})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := compaction.NewMeter("sys", tools), compaction.NewMeter("sys", tools), compaction.NewMeter("sys", tools)
	for _, m := range msgs {
		raw, err := model.MarshalCanonical(m)
		if err != nil {
			t.Fatal(err)
		}
		a.Add(m)
		b.AddRaw(raw)
		c.AddEncoded(len(raw))
	}
	want := compaction.MixTokens(whole)
	if a.Estimate() != want || b.Estimate() != want {
		t.Fatalf("Add: %d, AddRaw: %d, MixTokens of the whole request: %d", a.Estimate(), b.Estimate(), want)
	}
	if a.Tokens() != len(whole) || b.Tokens() != len(whole) || c.Tokens() != len(whole) {
		t.Fatalf("bytes %d %d %d, want %d", a.Tokens(), b.Tokens(), c.Tokens(), len(whole))
	}
	if c.Estimate() <= want {
		t.Errorf("AddEncoded estimates %d, not above %d", c.Estimate(), want)
	}
	if got := a.Scale(a.Tokens()); got != want {
		t.Errorf("Scale of its own bytes = %d, want %d", got, want)
	}
	if got := a.Scale(a.Tokens() / 2); got < want/2-1 || got > want/2+1 {
		t.Errorf("Scale of half its bytes = %d, want about %d", got, want/2)
	}
	if want*2 > len(whole) {
		t.Errorf("estimate %d of %d bytes: not under half", want, len(whole))
	}
}
