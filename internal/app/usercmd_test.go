package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/apptest"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// A !command runs under bash where the image has it (`!time go vet` failed
// under sh: time is a bash keyword), else under sh; and under --approve
// ask it is not asked about: the user typed it. It is still recorded, and
// its policy decision says why no question followed.
func TestUserCommandRunsUnderBashWithoutAsking(t *testing.T) {
	apptest.NeedDocker(t)
	for _, c := range []struct{ image, shell, cmd, out string }{
		{"harness-sandbox", "bash", "!time echo shell=$0", "shell=bash"},
		{apptest.DockerImage, "sh", "!echo shell=$0", "shell=sh"},
	} {
		t.Run(c.image, func(t *testing.T) {
			env := apptest.NewEnv(t)
			a := env.App(t, `[{"content":"unused"}]`, app.Options{Workspace: "docker", Image: c.image, Approve: "ask"})
			s, err := a.Open(t.Context(), app.OpenRequest{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.WithoutCancel(t.Context()))
			if _, err := s.Send(t.Context(), c.cmd); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), apptest.Bound)
			defer cancel()
			out, err := s.Wait(ctx)
			if err != nil || out.Status != runtime.StatusCompleted {
				t.Fatalf("turn of %q: %+v, %v (asked, and nobody answered?)", c.cmd, out, err)
			}
			recs, err := a.Store.ReadEvents(t.Context(), s.ID(), -1, store.MaxPage)
			if err != nil {
				t.Fatal(err)
			}
			var argv0, output string
			for _, r := range recs {
				ev, err := event.Decode(r.Body)
				if err != nil {
					t.Fatal(err)
				}
				switch d := ev.Data.(type) {
				case event.PermissionRequested:
					t.Errorf("the user's own command was asked about: %+v", d)
				case event.ToolCall:
					var in struct{ Argv []string }
					if json.Unmarshal(d.Input, &in) == nil && len(in.Argv) > 0 {
						argv0 = in.Argv[0]
					}
				case event.PolicyDecision:
					if d.Effect == "ask" && !strings.Contains(d.Reason, "not asked") {
						t.Errorf("policy decision %+v does not say why nobody was asked", d)
					}
				case event.ToolResult:
					output = string(d.Output)
				}
			}
			if argv0 != c.shell || !strings.Contains(output, c.out) {
				t.Errorf("ran under %q with output %s; want %s and %q", argv0, output, c.shell, c.out)
			}
		})
	}
}
