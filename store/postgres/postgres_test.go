package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// The tests run against a real server: HARNESS_TEST_POSTGRES names the
// database (scripts/postgres.sh provisions the default one). Each test gets
// a fresh schema of that database, dropped when it ends, so tests run in
// parallel and again.
const (
	dsnEnv     = "HARNESS_TEST_POSTGRES"
	defaultDSN = "postgres://harness:harness@127.0.0.1:5432/harness_test?sslmode=disable"
)

func baseDSN() string {
	if dsn := os.Getenv(dsnEnv); dsn != "" {
		return dsn
	}
	return defaultDSN
}

var (
	adminOnce sync.Once
	admin     *pgxpool.Pool // shared by the package's tests; closed by TestMain
	adminErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if admin != nil {
		admin.Close()
	}
	os.Exit(code)
}

// server returns a pool on the test database, or marks t unavailable
// (a skip, or a failure under HARNESS_REQUIRE_POSTGRES=1).
func server(t testing.TB) *pgxpool.Pool {
	t.Helper()
	adminOnce.Do(func() {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		cfg, err := pgxpool.ParseConfig(baseDSN())
		if err != nil {
			adminErr = err
			return
		}
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
		cfg.MaxConns = 4
		p, err := pgxpool.NewWithConfig(context.WithoutCancel(ctx), cfg)
		if err == nil {
			err = p.Ping(ctx)
		}
		if err != nil {
			if p != nil {
				p.Close()
			}
			adminErr = err
			return
		}
		admin = p
	})
	if adminErr != nil {
		testenv.Unavailable(t, testenv.RequirePostgres, "postgres",
			fmt.Sprintf("no server answers at %s (%v); run scripts/postgres.sh or set %s", redact(baseDSN()), adminErr, dsnEnv))
	}
	return admin
}

// redact hides a DSN's password.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return "the configured DSN"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxx")
	}
	return u.String()
}

// withParam returns dsn with a run-time parameter set (URL or key=value form).
func withParam(dsn, key, value string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set(key, value)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " " + key + "=" + value
}

// freshSchema creates a schema with a random name, dropped when t ends,
// and returns a DSN whose search_path is it.
func freshSchema(t testing.TB) string {
	t.Helper()
	p := server(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "harness_test_" + hex.EncodeToString(b[:])
	if _, err := p.Exec(t.Context(), `CREATE SCHEMA `+name); err != nil {
		t.Fatalf("create schema %s: %v", name, err)
	}
	t.Cleanup(func() {
		if _, err := p.Exec(context.WithoutCancel(t.Context()), `DROP SCHEMA `+name+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return withParam(baseDSN(), "search_path", name)
}

func mustOpen(t testing.TB, dsn string, opts Options) *Store {
	t.Helper()
	s, err := Open(t.Context(), dsn, opts)
	if err != nil {
		t.Fatalf("open %s: %v", redact(dsn), err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// mustExec runs a statement on the store's own pool (its schema).
func mustExec(t testing.TB, s *Store, query string, args ...any) {
	t.Helper()
	if _, err := s.pool.Exec(t.Context(), query, args...); err != nil {
		t.Fatalf("exec %q: %v", strings.SplitN(query, "\n", 2)[0], err)
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		return mustOpen(t, freshSchema(t), Options{Now: now})
	})
}
