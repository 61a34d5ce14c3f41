package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/testenv"
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

// fillDisk writes into dir until its file system has no byte left.
func fillDisk(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{64 << 10, 4 << 10, 1} {
		buf := make([]byte, size)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
}

// A full disk under an existing store file, as SQLite meets it growing the
// WAL index (SQLITE_IOERR_SHMSIZE) or writing the WAL, is SESS_DISK_FULL
// naming the file, not a generic disk I/O error; OpenFull still lists and
// reads the store, and refuses every write with that error.
func TestDiskFullUnderAnExistingStore(t *testing.T) {
	dir := testenv.Tmpfs(t, 1<<20)
	path := filepath.Join(dir, "harness.db")
	ctx := t.Context()
	s := mustOpen(t, path, Options{})
	owner, _, err := s.StartSession(ctx, store.SessionInit{ID: "sess-a"}, storetest.Me("o"), []store.EventIn{storetest.Note("evt-0", 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "sess-a", owner); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fillDisk(t, dir)

	_, err = Open(path, Options{})
	if errcode.Of(err) != errcode.SessDiskFull || !strings.Contains(err.Error(), path) {
		t.Fatalf("open on a full disk: %v, want %s naming %s", err, errcode.SessDiskFull, path)
	}
	full, err := OpenFull(path, Options{}, err)
	if err != nil {
		t.Fatalf("open for reading on a full disk: %v", err)
	}
	defer full.Close()
	if list, err := full.ListSessions(ctx, store.ListCursor{}, 10); err != nil || len(list) != 1 {
		t.Fatalf("list on a full disk: %d sessions, %v", len(list), err)
	}
	if recs, err := full.ReadEvents(ctx, "sess-a", -1, 10); err != nil || len(recs) != 1 {
		t.Fatalf("read on a full disk: %d events, %v", len(recs), err)
	}
	_, _, err = full.StartSession(ctx, store.SessionInit{}, storetest.Me("o"), []store.EventIn{storetest.Note("evt-1", 1)})
	if errcode.Of(err) != errcode.SessDiskFull || !strings.Contains(err.Error(), path) {
		t.Fatalf("write on a full disk: %v, want %s naming %s", err, errcode.SessDiskFull, path)
	}
}

// The disk filling while the store is open: the WAL cannot grow.
func TestDiskFillingUnderAnOpenStore(t *testing.T) {
	dir := testenv.Tmpfs(t, 1<<20)
	path := filepath.Join(dir, "harness.db")
	ctx := t.Context()
	s := mustOpen(t, path, Options{})
	owner, _, err := s.StartSession(ctx, store.SessionInit{ID: "sess-a"}, storetest.Me("o"), []store.EventIn{storetest.Note("evt-0", 0)})
	if err != nil {
		t.Fatal(err)
	}
	fillDisk(t, dir)
	var werr error
	for i := 1; i < 100 && werr == nil; i++ {
		_, werr = s.Append(ctx, "sess-a", owner, storetest.Event(fmt.Sprintf("evt-%d", i), "test.note", fmt.Sprintf(`{"pad":%q}`, strings.Repeat("p", 3000))))
	}
	if errcode.Of(werr) != errcode.SessDiskFull || !strings.Contains(werr.Error(), path) {
		t.Fatalf("append on a full disk: %v, want %s naming %s", werr, errcode.SessDiskFull, path)
	}
}
