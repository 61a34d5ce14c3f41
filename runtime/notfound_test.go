package runtime_test

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/tools"
)

// A call to a tool that does not exist gets TOOL_NOT_FOUND listing the
// tools by the names the request advertised (Config.WireName), each
// alias with its canonical name, so that the model can call one again.
func TestToolNotFoundNamesAdvertisedTools(t *testing.T) {
	wire := func(c string) string { return "wire_" + strings.ReplaceAll(c, ".", "_") }
	fm := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.glob","arguments":{"pattern":"*"}}]},{"content":"ok"}]`)
	f := newFixture(t, fm, fm, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { c.WireName = wire })
	if out := f.wait(f.start("glob")); out.Status != runtime.StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	res := ofType[event.ToolResult](f.events())
	if len(res) != 1 || res[0].Error == nil || res[0].Error.Code != string(errcode.ToolNotFound) {
		t.Fatalf("tool results = %+v", res)
	}
	for _, spec := range tools.ModelSpecs() {
		if !strings.Contains(res[0].Error.Message, wire(spec.Name)+" ("+spec.Name+")") {
			t.Errorf("TOOL_NOT_FOUND does not advertise %s as %s", spec.Name, wire(spec.Name))
		}
	}
}
