package postgres

import (
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store/storetest"
)

// An append on a connection whose prepared statements the server dropped
// (DISCARD ALL, DEALLOCATE ALL) prepares them again and succeeds: the
// append fails on its lost statements, rolls back and is tried once more.
func TestAppendAfterStatementsLost(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, freshSchema(t), Options{MaxConns: 1}) // one connection: the one the statements are dropped on
	ctx := t.Context()
	who := storetest.Held(t, s, "sess-lost", "lost")
	for i, drop := range []string{"", "DISCARD ALL", "DEALLOCATE ALL", ""} {
		if drop != "" {
			mustExec(t, s, drop)
		}
		rec, err := s.Append(ctx, "sess-lost", who, storetest.BenchEvent(i))
		if err != nil {
			t.Fatalf("append after %q: %v", drop, err)
		}
		if rec.Seq != int64(i) {
			t.Fatalf("append after %q: seq %d, want %d", drop, rec.Seq, i)
		}
	}
	got, err := s.ReadEvents(ctx, "sess-lost", -1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d events stored, want 4", len(got))
	}
}

// A sessions table whose columns are not of the types the append encodes
// and decodes is refused with SESS_SCHEMA_VERSION, and nothing is stored.
func TestAppendRefusesOtherColumnTypes(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, freshSchema(t), Options{MaxConns: 1})
	ctx := t.Context()
	who := storetest.Held(t, s, "sess-types", "types")
	mustExec(t, s, `ALTER TABLE sessions ALTER COLUMN turns TYPE bigint`)
	_, err := s.Append(ctx, "sess-types", who, storetest.BenchEvent(0))
	if code := errcode.Of(err); code != errcode.SessSchemaVersion {
		t.Fatalf("append to a table of other types: %v (%s), want %s", err, code, errcode.SessSchemaVersion)
	}
	sess, err := s.Session(ctx, "sess-types")
	if err != nil {
		t.Fatal(err)
	}
	if sess.LastSeq != -1 {
		t.Fatalf("last seq %d after the refused append, want -1", sess.LastSeq)
	}
}
