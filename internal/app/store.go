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
// to it (SQLite only: Postgres checks its own pages).
func (a *App) CheckStore(ctx context.Context) error {
	if c, ok := a.Store.(interface{ Check(context.Context) error }); ok {
		return c.Check(ctx)
	}
	return nil
}
