package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

func mustOpen(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		return mustOpen(t, filepath.Join(t.TempDir(), "harness.db"), Options{Now: now})
	})
}
