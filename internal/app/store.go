package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/postgres"
	"github.com/harness-dev/harness/store/sqlite"
)

// OpenStore opens the SQLite file dsn or, for a postgres:// URL, Postgres;
// host names this machine in leases (Resolved.HostID).
func OpenStore(ctx context.Context, dsn, host string) (store.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		st, err := postgres.Open(ctx, dsn, postgres.Options{LocalHost: host})
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	_, statErr := os.Stat(dsn)
	exists := statErr == nil
	if exists && !sqlite.Writable(dsn) {
		// A store on a read-only file system (or a read-only file or
		// directory) can still be listed and read; writes say why not.
		return sqlite.OpenReadOnly(dsn, sqlite.Options{LocalHost: host})
	}
	if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
		return nil, errcode.Wrap(errcode.SessInvalidRecord, "create the store directory", err)
	}
	st, err := sqlite.Open(dsn, sqlite.Options{LocalHost: host})
	if errcode.Of(err) == errcode.SessDiskFull && exists {
		// So can a store on a full disk; every write says the disk is full.
		if ro, rerr := sqlite.OpenFull(dsn, sqlite.Options{LocalHost: host}, err); rerr == nil {
			return ro, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// CheckStore refuses a store with corrupt pages before a session writes
// to it (SQLite only: Postgres checks its own pages). A large file is
// checked while the command runs (sqlite.CheckWhileWriting): checked,
// given how to report an error and the command's exit code, reports what
// that check found before the command exits.
func (a *App) CheckStore(ctx context.Context) (checked func(fail func(error) int, code int) int, err error) {
	c, ok := a.Store.(interface {
		CheckWhileWriting(context.Context) (func() error, error)
	})
	if !ok {
		return func(_ func(error) int, code int) int { return code }, nil
	}
	wait, err := c.CheckWhileWriting(ctx)
	return func(fail func(error) int, code int) int {
		if err := wait(); err != nil {
			return fail(err)
		}
		return code
	}, err
}
