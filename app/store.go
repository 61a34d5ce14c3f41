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

// OpenStore opens the SQLite file dsn or, for a postgres:// URL, Postgres.
func OpenStore(ctx context.Context, dsn string) (store.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		host, _ := os.Hostname()
		st, err := postgres.Open(ctx, dsn, postgres.Options{LocalHost: host})
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
		return nil, errcode.Wrap(errcode.SessInvalidRecord, "create the store directory", err)
	}
	st, err := sqlite.Open(dsn, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	return st, nil
}
