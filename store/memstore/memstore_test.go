package memstore_test

import (
	"testing"
	"time"

	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/memstore"
	"github.com/harness-dev/harness/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		s := memstore.New(memstore.Options{Now: now})
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
