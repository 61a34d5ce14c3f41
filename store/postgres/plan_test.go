package postgres

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

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
		WHERE statement IN ($1, $2, $3, $4, $5, $6)`, qLockAppend, qLockAppendRow, qStoredEvent, qStoredEvents, qInsertEvents, qUpdateAfterAppend)
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
		switch {
		case stmt == qStoredEvent:
			// The 8 appends of one event.
			if custom > 5 || custom+generic != 8 {
				t.Errorf("%d custom plans and %d generic ones after 8 one-event appends, want at most 5 and the rest generic: %.80s", custom, generic, stmt)
			}
		case stmt == qStoredEvents:
			// The 4 of two: planned for each call (see qStoredEvents).
			if custom+generic != 4 {
				t.Errorf("%d custom plans and %d generic ones after 4 two-event appends: %.80s", custom, generic, stmt)
			}
		case custom > 5 || generic < 7:
			t.Errorf("%d custom plans and %d generic ones after 12 appends, want at most 5 and the rest generic: %.80s", custom, generic, stmt)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != 6 {
		t.Errorf("%d of the append's 6 statements are prepared on the store's connection", seen)
	}
}

// The append's lookup of the call's events is an index probe per ID in
// the plan the server keeps for the connection, also when that plan is
// made on a new, small table: a plan kept from then on must not read the
// table whole (the earlier form's did, for every later append).
func TestStoredEventsPlanIsAnIndexProbe(t *testing.T) {
	dsn := freshSchema(t)
	_ = mustOpen(t, dsn, Options{MaxConns: 1}) // creates the schema
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct{ name, sql, args string }{
		{"one (text)", qStoredEvent, "('evt-1')"},
		{"several (text[])", qStoredEvents, "('{evt-1,evt-2}')"},
	} {
		if _, err := conn.Exec(ctx, `PREPARE `+q.name+` AS `+q.sql); err != nil {
			t.Fatal(err)
		}
		name, _, _ := strings.Cut(q.name, " ")
		rows, err := conn.Query(ctx, `EXPLAIN EXECUTE `+name+q.args)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		if !strings.Contains(plan, "Index Scan using events_event_id_key on events") || strings.Contains(plan, "Seq Scan on events") {
			t.Errorf("kept plan of the lookup of %s on a new table:\n%s", name, plan)
		}
	}
}
