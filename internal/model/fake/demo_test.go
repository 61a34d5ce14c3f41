package fake

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/harness-dev/harness/internal/model"
)

// tourResults answers the demo's tool calls the way a runtime would put
// results into tool messages.
type tourResults map[string]string

const isolationFailure = `{"error":{"code":"WORKSPACE_ISOLATION_REQUIRED","message":"write needs an attested Docker workspace"}}`

// runTour plays the runtime: it streams requests to m, appends the
// assistant message and the tool results, and stops at the first answer
// without tool calls. It returns the tools called in order and the
// conversation, the final answer last.
func runTour(t *testing.T, m model.Model, msgs []model.Message, results tourResults) ([]string, []model.Message) {
	t.Helper()
	var called []string
	for round := range 10 {
		req := model.Request{RequestID: fmt.Sprintf("req-%d-%d", len(msgs), round), Model: "demo", Messages: msgs}
		chunks, err := drain(t, mustStream(t, m, t.Context(), req))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		comp, deltas, calls := checkDemoStream(t, chunks)
		if comp.Content == "" || deltas < 2 {
			t.Errorf("round %d: %d deltas for %q; want the text streamed in pieces", round, deltas, comp.Content)
		}
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: comp.Content, ToolCalls: comp.ToolCalls})
		if len(calls) == 0 {
			if comp.FinishReason != model.FinishStop {
				t.Errorf("final finish reason = %q", comp.FinishReason)
			}
			return called, msgs
		}
		if len(calls) != 1 || comp.FinishReason != model.FinishToolCalls {
			t.Fatalf("round %d: %d calls, finish %q; want one call per round", round, len(calls), comp.FinishReason)
		}
		c := calls[0]
		called = append(called, c.Name)
		out, ok := results[c.Name]
		if !ok {
			t.Fatalf("round %d: unexpected tool %s", round, c.Name)
		}
		msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: out})
	}
	t.Fatal("the demo never answered without tool calls")
	return nil, nil
}

// checkDemoStream checks the port's rules on one demo stream: deltas, then
// tool calls, then one completion whose content and calls match them.
func checkDemoStream(t *testing.T, chunks []model.Chunk) (model.Completion, int, []model.ToolCall) {
	t.Helper()
	var text strings.Builder
	var calls []model.ToolCall
	deltas := 0
	for i, c := range chunks {
		last := i == len(chunks)-1
		switch c.Kind {
		case model.ChunkDelta:
			if len(calls) > 0 || last {
				t.Fatalf("delta at %d out of order", i)
			}
			text.WriteString(c.Delta)
			deltas++
		case model.ChunkToolCall:
			calls = append(calls, *c.ToolCall)
		case model.ChunkCompletion:
			if !last {
				t.Fatalf("completion at %d is not last", i)
			}
			if c.Completion.Content != text.String() {
				t.Errorf("completion content differs from the deltas")
			}
			if diff := cmp.Diff(calls, c.Completion.ToolCalls); diff != "" {
				t.Errorf("completion tool calls differ from the streamed ones:\n%s", diff)
			}
			if !c.Completion.Usage.Estimated || c.Completion.Usage.TotalTokens != c.Completion.Usage.PromptTokens+c.Completion.Usage.CompletionTokens {
				t.Errorf("usage = %+v, want a consistent estimate", c.Completion.Usage)
			}
			return *c.Completion, deltas, calls
		default:
			t.Fatalf("unexpected chunk kind %d", c.Kind)
		}
	}
	t.Fatal("no completion")
	return model.Completion{}, 0, nil
}

func TestDemoTour(t *testing.T) {
	withoutDocker := tourResults{
		"fs.list":      `{"paths":["README.md","cmd/main.go","docs/README.md","go.mod"]}`,
		"fs.read":      `{"path":"README.md","content":"# Project\nMentions WORKSPACE_ISOLATION_REQUIRED in prose.\n","size":52}`,
		"fs.write":     isolationFailure,
		"process.exec": strings.ReplaceAll(isolationFailure, "write", "process"),
		"git.diff":     `{"patch":""}`,
	}
	withDocker := tourResults{
		"fs.list":      `["go.mod","main.go"]`,
		"fs.write":     `{"path":"HARNESS_DEMO.md"}`,
		"process.exec": `{"exitCode":0,"stdout":"total 8\n","stderr":""}`,
		"git.diff":     `{"patch":"diff --git a/HARNESS_DEMO.md b/HARNESS_DEMO.md\nnew file mode 100644\n"}`,
	}
	tests := []struct {
		name      string
		results   tourResults
		wantCalls []string
		wantText  []string
		notText   []string
	}{
		{
			name:      "readme and no docker",
			results:   withoutDocker,
			wantCalls: []string{"fs.list", "fs.read", "fs.write", "process.exec", "git.diff"},
			wantText: []string{"demo model", "`README.md`", "`fs.write`", "WORKSPACE_ISOLATION_REQUIRED",
				"--workspace docker", "OPENAI_API_KEY", "--base-url", "--model", "read-only", "“add a flag”"},
			notText: []string{"/apply"}, // read-only: there is never a patch to apply
		},
		{
			name:      "no readme and docker",
			results:   withDocker,
			wantCalls: []string{"fs.list", "fs.write", "process.exec", "git.diff"},
			wantText:  []string{"demo model", "entries: 2", "exit 0", "files changed: 1", "OPENAI_API_KEY", "--base-url", "--model", "/apply"},
			notText:   []string{"failed", "fs.read"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				msgs := []model.Message{{Role: model.RoleUser, Content: "add a flag"}}
				called, msgs := runTour(t, NewDemo(), msgs, tt.results)
				if diff := cmp.Diff(tt.wantCalls, called); diff != "" {
					t.Errorf("tools called (-want +got):\n%s", diff)
				}
				final := msgs[len(msgs)-1].Content
				for _, s := range tt.wantText {
					if !strings.Contains(final, s) {
						t.Errorf("final answer lacks %q:\n%s", s, final)
					}
				}
				for _, s := range tt.notText {
					if strings.Contains(final, s) {
						t.Errorf("final answer has %q:\n%s", s, final)
					}
				}
				if time.Since(start) == 0 {
					t.Error("the demo streamed without pauses between deltas")
				}

				// A follow-up turn starts the tour again.
				msgs = append(msgs, model.Message{Role: model.RoleUser, Content: "again"})
				again, _ := runTour(t, NewDemo(), msgs, tt.results)
				if diff := cmp.Diff(tt.wantCalls, again); diff != "" {
					t.Errorf("follow-up tools called (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestDemoSteeringContinuesTheTour(t *testing.T) {
	m := &demo{} // no delay
	msgs := []model.Message{
		{Role: model.RoleUser, Content: "look around"},
		{Role: model.RoleAssistant, Content: "First.", ToolCalls: []model.ToolCall{call("c1", "fs.list", `{"path":"."}`)}},
		{Role: model.RoleTool, ToolCallID: "c1", Name: "fs.list", Content: `["README"]`},
		{Role: model.RoleUser, Content: "also check the tests"},
	}
	results := tourResults{
		"fs.read":      `{"path":"README","content":"hi","size":2}`,
		"fs.write":     `{"path":"HARNESS_DEMO.md"}`,
		"process.exec": `{"exitCode":0,"stdout":"","stderr":""}`,
		"git.diff":     `{"patch":""}`,
	}
	called, out := runTour(t, m, msgs, results)
	if diff := cmp.Diff([]string{"fs.read", "fs.write", "process.exec", "git.diff"}, called); diff != "" {
		t.Errorf("tools called after steering (-want +got):\n%s", diff)
	}
	if final := out[len(out)-1].Content; !strings.Contains(final, "“also check the tests”") {
		t.Errorf("final answer does not acknowledge the steering:\n%s", final)
	}
}

func TestDemoIsDeterministic(t *testing.T) {
	m := &demo{}
	req := model.Request{RequestID: "req-7", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
	a, err := drain(t, mustStream(t, m, t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	b, err := drain(t, mustStream(t, m, t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two streams of one request differ:\n%s", diff)
	}
	if a[len(a)-2].ToolCall == nil || a[len(a)-2].ToolCall.ID != "call_demo_7" {
		t.Errorf("tool call id not derived from the request id: %+v", a[len(a)-2])
	}
}

func TestDemoWithoutUserMessage(t *testing.T) {
	chunks, err := drain(t, mustStream(t, &demo{}, t.Context(), model.Request{}))
	if err != nil {
		t.Fatal(err)
	}
	comp, _, calls := checkDemoStream(t, chunks)
	if len(calls) != 0 || !strings.Contains(comp.Content, "demo model") {
		t.Errorf("got %d calls and %q; want a greeting", len(calls), comp.Content)
	}
}

func TestDemoName(t *testing.T) {
	if got := NewDemo().Name(); got != "demo" {
		t.Errorf("Name = %q", got)
	}
}
