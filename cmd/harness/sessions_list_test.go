package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/sqlite"
	"github.com/harness-dev/harness/store/storetest"
)

// `harness sessions` lists the app.SessionsShown most recently updated
// sessions and says on stderr that --all lists every one; --all lists
// them all and says nothing.
func TestSessionsListsTheNewestUnlessAll(t *testing.T) {
	u := newUser(t)
	st, err := sqlite.Open(u.db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := app.SessionsShown + 1
	for i := range n {
		id := fmt.Sprintf("sess-list-%03d", i)
		who, _, err := st.StartSession(t.Context(), store.SessionInit{ID: id}, storetest.Me("fill"),
			[]store.EventIn{storetest.Event(fmt.Sprintf("evt-list-%03d", i), "note", `{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Release(t.Context(), id, who); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	rows := func(out string) []string {
		var ids []string
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "sess-list-") {
				ids = append(ids, f[0])
			}
		}
		return ids
	}
	r := u.run("", "sessions")
	got := rows(r.stdout)
	if r.code != 0 || len(got) != app.SessionsShown || got[0] != fmt.Sprintf("sess-list-%03d", n-1) || strings.Contains(r.stdout, "sess-list-000") {
		t.Fatalf("sessions: exit %d, %d rows (first %v)\n%s", r.code, len(got), got[:min(1, len(got))], r.stderr)
	}
	if r.stderr == "" {
		t.Fatalf("sessions left some out without saying so: %q", r.stderr)
	}
	r = u.run("", "sessions", "--all")
	if got := rows(r.stdout); r.code != 0 || len(got) != n || r.stderr != "" {
		t.Fatalf("sessions --all: exit %d, %d rows, stderr %q", r.code, len(got), r.stderr)
	}
}
