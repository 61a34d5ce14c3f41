package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/store/memstore"
)

// sessions import trusts nothing the export says about this machine: a
// project root that is not an absolute, clean path and a recorded patch
// naming a path outside the workspace ("../x", "/etc/x") are refused with
// SESS_INVALID_RECORD, and nothing is stored; a sound export imports.
func TestImportRefusesForeignRootsAndPatchPaths(t *testing.T) {
	const id = "sess-01a23895-8b9e-716a-916f-050812a54e6b"
	recovered := func(patch string) string {
		b, err := event.Encode(event.Event{ID: "evt-1", Type: event.TypeWorkspaceRecovered, At: time.Unix(1, 0), Actor: event.ActorKernel,
			Data: event.WorkspaceRecovered{SessionID: id, TurnID: "turn-1", Container: "c1", Patch: patch}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	patchOf := func(p string) string {
		return "diff --git a/" + p + " b/" + p + "\n--- a/" + p + "\n+++ b/" + p + "\n@@ -1 +1 @@\n-a\n+b\n"
	}
	export := func(root string, lines ...string) string {
		return `{"harnessExport":1,"id":"` + id + `","title":"t","metadata":{"root":` + quoteJSON(root) + `}}` + "\n" + strings.Join(lines, "\n") + "\n"
	}
	for name, c := range map[string]struct {
		in   string
		want errcode.Code
	}{
		"sound":               {export("/home/u/project", recovered(patchOf("src/a.txt"))), ""},
		"relative root":       {export("project", recovered(patchOf("a.txt"))), errcode.SessInvalidRecord},
		"root with dot-dot":   {export("/home/u/../../etc", recovered(patchOf("a.txt"))), errcode.SessInvalidRecord},
		"root with a newline": {export("/home/u/p\nx", recovered(patchOf("a.txt"))), errcode.SessInvalidRecord},
		"patch with dot-dot":  {export("/home/u/project", recovered(patchOf("../outside.txt"))), errcode.SessInvalidRecord},
		"patch absolute":      {export("/home/u/project", recovered("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n")), errcode.SessInvalidRecord},
		"patch into .git":     {export("/home/u/project", recovered(patchOf(".git/hooks/pre-commit"))), errcode.SessInvalidRecord},
	} {
		t.Run(name, func(t *testing.T) {
			st := memstore.New(memstore.Options{})
			_, _, err := Import(t.Context(), st, NewOwner("host-a"), false, strings.NewReader(c.in))
			if errcode.Of(err) != c.want {
				t.Fatalf("import: %v, want %q", err, c.want)
			}
			if _, serr := st.Session(t.Context(), id); (serr == nil) != (c.want == "") {
				t.Errorf("session stored = %v after an import that returned %v", serr == nil, err)
			}
		})
	}
}
func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
