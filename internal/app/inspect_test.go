package app

import (
	"fmt"
	"slices"
	"testing"
	"time"

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
