package main

import (
	"context"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
)

// openPostgres opens the Postgres store for a postgres:// URL.
func openPostgres(ctx context.Context, dsn string) (store.Store, error) {
	return nil, errcode.New(errcode.SessInvalidRecord, "the Postgres store is not part of this build yet; use a SQLite path for --db")
}
