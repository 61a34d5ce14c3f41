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
