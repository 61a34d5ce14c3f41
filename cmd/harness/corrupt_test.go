package main

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	_ "modernc.org/sqlite"
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

// A row whose bytes were damaged in place (SQLite keeps no checksum of a
// row, so a damaged page can read back as a garbled row) is not printed
// by events: the events before it are, and the error says which one is
// damaged, with SESS_INVALID_RECORD.
func TestEventsRefusesADamagedRow(t *testing.T) {
	u := newUser(t)
	r := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", u.script(`[{"content":"ok"}]`), "go")
	if r.code != 0 {
		t.Fatalf("exec: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	db, err := sql.Open("sqlite", u.db)
	if err != nil {
		t.Fatal(err)
	}
	var body string
	if err := db.QueryRow(`SELECT body FROM events WHERE session_id = ? AND seq = 2`, id).Scan(&body); err != nil {
		t.Fatal(err)
	}
	garbled := strings.Replace(body, `"eventId":"`, `"eventId":"\u0000`, 1)
	if garbled == body {
		t.Fatalf("event 2 has no eventId: %s", body)
	}
	if _, err := db.Exec(`UPDATE events SET body = ? WHERE session_id = ? AND seq = 2`, garbled, id); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ev := u.run("", "events", id)
	if ev.code == 0 || !strings.Contains(ev.stderr, string(errcode.SessInvalidRecord)) || !strings.Contains(ev.stderr, "event 2 ") {
		t.Fatalf("events of a damaged row: exit %d, want %s naming event 2; stderr:\n%s", ev.code, errcode.SessInvalidRecord, ev.stderr)
	}
	if lines := strings.Split(strings.TrimSuffix(ev.stdout, "\n"), "\n"); len(lines) != 2 || strings.Contains(ev.stdout, "\\u0000") {
		t.Fatalf("events printed %d lines, want the 2 before the damaged one:\n%s", len(lines), ev.stdout)
	}
}
