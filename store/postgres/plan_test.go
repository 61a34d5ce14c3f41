package postgres

import (
	"testing"

	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// The append's statements are planned once per connection: after the
// server's five custom plans, each of them runs on its generic plan. The
// event insert it replaced was planned anew at every append (its generic
// plan looked dearer than a custom one), which cost the server more time
// than the insert itself.
func TestAppendIsPlannedOnce(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, freshSchema(t), Options{MaxConns: 1}) // one connection: its prepared statements are the ones read below
	ctx := t.Context()
	who := storetest.Held(t, s, "sess-plan", "plan")
	for i := range 12 {
		evs := []store.EventIn{storetest.BenchEvent(2 * i)}
		if i%3 == 0 {
			evs = append(evs, storetest.BenchEvent(2*i+1))
		}
		if _, err := s.AppendBatch(ctx, "sess-plan", who, evs); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement IN ($1, $2, $3, $4, $5)`, qLockAppend, qLockAppendRow, qStoredEvents, qInsertEvents, qUpdateAfterAppend)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var stmt string
		var generic, custom int64
		if err := rows.Scan(&stmt, &generic, &custom); err != nil {
			t.Fatal(err)
		}
		seen++
		if custom > 5 || generic < 7 {
			t.Errorf("%d custom plans and %d generic ones after 12 appends, want at most 5 and the rest generic: %.80s", custom, generic, stmt)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != 5 {
		t.Errorf("%d of the append's 5 statements are prepared on the store's connection", seen)
	}
}
