package sqlite

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// A file too large to check before a command starts is checked while it
// writes: once the check finds corrupt pages, every write refuses with
// SESS_INVALID_RECORD (a session already writing stops at its next
// append), and wait reports it for the command's exit.
func TestCheckWhileWritingStopsWrites(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	s := mustOpen(t, good, Options{})
	for i := range 40 {
		id := fmt.Sprintf("sess-%02d", i)
		who, _, err := s.StartSession(ctx, store.SessionInit{ID: id}, storetest.Me("w"),
			[]store.EventIn{storetest.Event("evt-"+id, "turn.started", `{"pad":"`+string(bytes.Repeat([]byte("x"), 3000))+`"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, id, who); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	saved := checkFirstMaxBytes
	checkFirstMaxBytes = 0 // every file is "large": checked in the background
	t.Cleanup(func() { checkFirstMaxBytes = saved })

	// Damage one page at a time until the check finds it.
	const pageSize = 4096
	for pg := 2; pg < len(body)/pageSize; pg++ {
		b := bytes.Clone(body)
		copy(b[pg*pageSize:], bytes.Repeat([]byte{0xff}, 16)) // the page header
		path := filepath.Join(dir, fmt.Sprintf("damaged-%d.db", pg))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		d := mustOpen(t, path, Options{})
		wait, err := d.CheckWhileWriting(ctx)
		if err != nil {
			t.Fatalf("a large file's check held up the start: %v", err)
		}
		if err := wait(); err == nil {
			continue
		} else if errcode.Of(err) != errcode.SessInvalidRecord {
			t.Fatalf("wait = %v, want %s", err, errcode.SessInvalidRecord)
		}
		_, _, err = d.StartSession(ctx, store.SessionInit{ID: "sess-new"}, storetest.Me("w2"),
			[]store.EventIn{storetest.Event("evt-new", "turn.started", `{}`)})
		if errcode.Of(err) != errcode.SessInvalidRecord {
			t.Fatalf("a write after the check found corruption: %v, want %s", err, errcode.SessInvalidRecord)
		}
		return
	}
	t.Fatal("no single damaged page was found by the check")
}

// A file within checkFirstMaxBytes is checked before CheckWhileWriting
// returns: its corruption is the returned error.
func TestCheckWhileWritingSmallFileFirst(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "h.db"), Options{})
	wait, err := s.CheckWhileWriting(t.Context())
	if err != nil || wait() != nil {
		t.Fatalf("a sound small file: %v, %v", err, wait())
	}
}

// A store file closed by a process that knew it sound is not read whole
// again while it stays as that process left it (the mark); a write
// without a close (a crash), another program's write, or a damaged page
// make the next command check it.
func TestCheckedMark(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "h.db")
	opened := func(wantChecks int64) *Store {
		t.Helper()
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
		if n := s.quickChecks.Load(); n != wantChecks {
			b, _ := os.ReadFile(path + ".checked")
			t.Fatalf("%d quick_check runs, want %d\nmark %s\nnow  %s", n, wantChecks, b, checkedMark(path))
		}
		return s
	}
	start := func(s *Store, id string) {
		t.Helper()
		if _, _, err := s.StartSession(ctx, store.SessionInit{ID: id}, storetest.Me("w-"+id),
			[]store.EventIn{storetest.Event("evt-"+id, "turn.started", `{"pad":"`+string(bytes.Repeat([]byte("x"), 3000))+`"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	s := opened(1) // no mark yet
	start(s, "sess-1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".checked"); err != nil {
		t.Fatalf("no mark after a clean close: %v", err)
	}
	s = opened(0) // as the last process left it
	start(s, "sess-2")
	// Another process starts while this one has written and not closed
	// (or was killed): the file is not as marked.
	opened(1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opened(0)
	// A store closed without a check, or after one was skipped for its
	// size, leaves the mark as it was: stale once it wrote.
	u, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	start(u, "sess-3")
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	opened(1)
	// Damage written by another program after a clean close.
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	found := false
	for pg := 2; pg < len(body)/pageSize && !found; pg++ {
		// A clean close first, so that the mark holds the file as it is
		// (checked: the last round wrote the file back).
		c := opened(1)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		b := bytes.Clone(body)
		copy(b[pg*pageSize:], bytes.Repeat([]byte{0xff}, 16))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := Open(path, Options{})
		if err != nil {
			continue // damage the open itself refuses
		}
		err = d.Check(ctx)
		if d.quickChecks.Load() != 1 {
			t.Fatalf("page %d damaged after a clean close: the check was skipped", pg)
		}
		_ = d.Close()
		if errcode.Of(err) == errcode.SessInvalidRecord {
			found = true
		}
		if err := os.WriteFile(path, body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if !found {
		t.Fatal("no single damaged page was found by the check")
	}
}
