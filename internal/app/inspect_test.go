package app

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/memstore"
	"github.com/harness-dev/harness/store/storetest"
)

// RecentSessions lists the n most recently updated sessions with an event
// and says whether it left some out; n 0 lists them all. A session without
// an event or of another project does not count towards n.
func TestRecentSessions(t *testing.T) {
	clock := storetest.NewClock(storetest.Start)
	s := memstore.New(memstore.Options{Now: clock.Now})
	for i := range 6 {
		id := fmt.Sprintf("sess-%d", i)
		who := storetest.Held(t, s, id, "me")
		root := "/p"
		if i == 4 {
			root = "/other"
		}
		if err := s.SetMetadata(t.Context(), id, who, map[string]string{metaRoot: root}); err != nil {
			t.Fatal(err)
		}
		if i != 3 { // sess-3 holds no event
			if _, err := s.Append(t.Context(), id, who, storetest.Note(fmt.Sprintf("evt-%d", i), i)); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(time.Second)
	}
	ids := func(l []store.Session) []string {
		var out []string
		for _, s := range l {
			out = append(out, s.ID)
		}
		return out
	}
	for _, tc := range []struct {
		root string
		n    int
		want []string
		more bool
	}{
		{"/p", 2, []string{"sess-5", "sess-2"}, true},
		{"/p", 4, []string{"sess-5", "sess-2", "sess-1", "sess-0"}, false},
		{"/p", 0, []string{"sess-5", "sess-2", "sess-1", "sess-0"}, false},
		{"", 3, []string{"sess-5", "sess-4", "sess-2"}, true},
		{"", 5, []string{"sess-5", "sess-4", "sess-2", "sess-1", "sess-0"}, false},
	} {
		got, more, err := RecentSessions(t.Context(), s, tc.root, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), tc.want) || more != tc.more {
			t.Errorf("RecentSessions(%q, %d) = %v, more %v; want %v, more %v", tc.root, tc.n, ids(got), more, tc.want, tc.more)
		}
	}
}

// After a rewind, harness request rebuilds the request of the turn the
// session is back at, not the one of a turn the rewind took out of the
// model's view.
func TestRequestFollowsARewind(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "two.json")
	if err := os.WriteFile(script, []byte(`[{"content":"one"},{"content":"two"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := Env{"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	a, err := New(t.Context(), Options{DB: filepath.Join(dir, "h.db"), Workspace: "local", FakeModel: script}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	s, err := a.Open(t.Context(), OpenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"first question", "second question"} {
		if _, err := s.rt.Start(t.Context(), runtime.StartRequest{Input: in}); err != nil {
			t.Fatal(err)
		}
		if out, err := s.Wait(t.Context()); err != nil || out.Status != runtime.StatusCompleted {
			t.Fatalf("turn %q: %+v, %v", in, out, err)
		}
	}
	id := s.ID()
	s.Close(t.Context())
	users := func() []string {
		t.Helper()
		req, err := Request(t.Context(), a.Store, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range req.Messages {
			if m.Role == "user" {
				out = append(out, m.Content)
			}
		}
		return out
	}
	if got := users(); !slices.Equal(got, []string{"first question", "second question"}) {
		t.Fatalf("request before the rewind: user messages %q", got)
	}
	if _, err := a.Rewind(t.Context(), id, RewindRequest{Turn: "1"}); err != nil {
		t.Fatal(err)
	}
	if got := users(); !slices.Equal(got, []string{"first question"}) {
		t.Errorf("request after a rewind to turn 1: user messages %q, want turn 1's only", got)
	}
	if _, err := a.Rewind(t.Context(), id, RewindRequest{Undo: true}); err != nil {
		t.Fatal(err)
	}
	if got := users(); !slices.Equal(got, []string{"first question", "second question"}) {
		t.Errorf("request after undoing the rewind: user messages %q", got)
	}
}
