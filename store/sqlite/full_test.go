package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// A write that finds no room is SESS_DISK_FULL naming the file, not a
// generic SESS_CLOSED: SQLite hits the database's page limit
// (max_page_count, the same SQLITE_FULL a full disk gives), and the write
// is not stored.
func TestDiskFullNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "harness.db")
	s := mustOpen(t, path, Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, store.SessionInit{ID: "sess-a"}); err != nil {
		t.Fatal(err)
	}
	owner, err := s.Acquire(ctx, "sess-a", storetest.Me("o"), store.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var pages int64
	if err := s.wdb.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s.wdb, fmt.Sprintf("PRAGMA max_page_count = %d", pages+2))
	var full error
	var stored int64
	for i := range 100 {
		ev := storetest.Event(fmt.Sprintf("evt-%d", i), "test.note", fmt.Sprintf(`{"pad":%q}`, strings.Repeat("p", 3000)))
		if _, err := s.Append(ctx, "sess-a", owner, ev); err != nil {
			full = err
			break
		}
		stored++
	}
	if !errors.Is(full, errcode.New(errcode.SessDiskFull, "")) {
		t.Fatalf("append past the size limit: %v, want %s", full, errcode.SessDiskFull)
	}
	if !strings.Contains(full.Error(), path) {
		t.Errorf("error does not name the file %s: %v", path, full)
	}
	recs, err := s.ReadEvents(ctx, "sess-a", -1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(recs)) != stored {
		t.Errorf("%d events stored, want %d (the failed write must store nothing)", len(recs), stored)
	}
}
