package main

import (
	"context"
	"os"

	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/postgres"
)

// openPostgres opens the Postgres store for a postgres:// URL.
func openPostgres(ctx context.Context, dsn string) (store.Store, error) {
	host, _ := os.Hostname()
	st, err := postgres.Open(ctx, dsn, postgres.Options{LocalHost: host})
	if err != nil {
		return nil, err
	}
	return st, nil
}
