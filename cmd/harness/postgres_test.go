package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// pgSchema returns a DSN on a fresh schema of the test database, dropped
// when the test ends, or marks the test unavailable.
func pgSchema(t *testing.T) string {
	t.Helper()
	base := os.Getenv("HARNESS_TEST_POSTGRES")
	if base == "" {
		base = "postgres://harness:harness@127.0.0.1:5432/harness_test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		testenv.Unavailable(t, testenv.RequirePostgres, "postgres", "no server answers (run scripts/postgres.sh): "+err.Error())
	}
	var b [6]byte
	rand.Read(b[:])
	name := "harness_cli_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			c.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
			c.Close(context.Background())
		}
	})
	conn.Close(ctx)
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// A session written through SQLite is copied to Postgres and resumed there
// with the same reconstructed next request.
func TestCopySessionSQLiteToPostgres(t *testing.T) {
	dsn := pgSchema(t)
	u := newUser(t)
	u.write("a.txt", "alpha\n")
	s := u.script(`[{"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"a.txt"}}]},{"content":"read it"}]`)
	r := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", s, "read a.txt")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	exp := u.run("", "sessions", "export", id)
	if exp.code != 0 {
		t.Fatalf("export: %s", exp.stderr)
	}
	imp := u.run(exp.stdout, "sessions", "import", "-", "--db", dsn)
	if imp.code != 0 {
		t.Fatalf("import: exit %d: %s", imp.code, imp.stderr)
	}
	if a, b := u.run("", "events", id).stdout, u.run("", "events", id, "--db", dsn).stdout; a != b {
		t.Fatal("the events differ after the copy")
	}
	if a, b := u.run("", "request", id).stdout, u.run("", "request", id, "--db", dsn).stdout; a != b || a == "" {
		t.Fatalf("the reconstructed request differs:\n%s\n%s", a, b)
	}
	// The session goes on on Postgres.
	s2 := u.script(`[{"content":"continued on postgres"}]`)
	f := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", s2, "--resume", id, "--db", dsn, "and then?")
	if f.code != 0 {
		t.Fatalf("resume on postgres: exit %d: %s", f.code, f.stderr)
	}
	ls := u.run("", "sessions", "--db", dsn)
	if !strings.Contains(ls.stdout, id) {
		t.Errorf("sessions on postgres = %s", ls.stdout)
	}
}

// A store password never reaches the output.
func TestDoctorRedactsStorePassword(t *testing.T) {
	u := newUser(t)
	r := u.run("", "doctor", "--workspace", "local", "--db", "postgres://u:supersecretpw@127.0.0.1:1/x?sslmode=disable")
	if strings.Contains(r.stdout+r.stderr, "supersecretpw") || !strings.Contains(r.stdout, "SESS_CLOSED") {
		t.Errorf("doctor output:\n%s%s", r.stdout, r.stderr)
	}
}
