package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

// A store file with corrupt pages is refused by exec as it is by events,
// with SESS_INVALID_RECORD naming the file, even when the damaged page
// holds only an older session that exec never reads: a new session written
// into a damaged file could be lost with it. Listing still works.
func TestExecRefusesCorruptStore(t *testing.T) {
	u := newUser(t)
	script := u.script(`[{"content":"ok"}]`)
	var ids []string
	for i := range 6 {
		r := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", script, "go")
		if r.code != 0 {
			t.Fatalf("exec %d: exit %d; stderr:\n%s", i, r.code, r.stderr)
		}
		ids = append(ids, sessionOf(t, r.events))
	}
	good, err := os.ReadFile(u.db)
	if err != nil {
		t.Fatal(err)
	}
	// Damage one page at a time until one session's events no longer read
	// while the session list still does. The damage covers the page's own
	// header: SQLite keeps no checksum of a row's bytes, so garbage in
	// the middle of a page that holds only a row's payload reads back as
	// that row (which page that is moves with the size of what a session
	// stores).
	const pageSize = 4096
	damaged := filepath.Join(u.home, "damaged.db")
	found := false
	for pg := 2; pg < len(good)/pageSize && !found; pg++ {
		b := bytes.Clone(good)
		copy(b[pg*pageSize:], bytes.Repeat([]byte{0xff}, 200))
		if err := os.WriteFile(damaged, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if r := u.run("", "sessions", "--db", damaged); r.code != 0 {
			continue
		}
		for _, id := range ids {
			r := u.run("", "events", id, "--db", damaged)
			if r.code != 0 && strings.Contains(r.stderr, string(errcode.SessInvalidRecord)) {
				found = true
				break
			}
		}
	}
	if !found {
		t.Fatal("no single damaged page made a session's events unreadable")
	}
	r := u.run("", "exec", "--workspace", "local", "--fake-model", script, "--db", damaged, "go")
	if r.code == 0 || !strings.Contains(r.stderr, string(errcode.SessInvalidRecord)) || !strings.Contains(r.stderr, damaged) {
		t.Fatalf("exec on a damaged store: exit %d, want %s naming %s; stderr:\n%s", r.code, errcode.SessInvalidRecord, damaged, r.stderr)
	}
	if r := u.run("", "sessions", "--db", damaged); r.code != 0 {
		t.Fatalf("sessions on a damaged store: exit %d; stderr:\n%s", r.code, r.stderr)
	}
}
