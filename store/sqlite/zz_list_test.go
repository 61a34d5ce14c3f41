package sqlite

import (
	"os"
	"testing"

	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

func BenchmarkZZFirst50(b *testing.B) {
	p := "/tmp/list10k/large.db"
	if _, err := os.Stat(p); err != nil {
		_ = os.MkdirAll("/tmp/list10k", 0o755)
		s := mustOpen(b, p, Options{})
		storetest.FillSessions(b, s, 10_000)
		s.Close()
		s2 := mustOpen(b, "/tmp/list10k/small.db", Options{})
		storetest.FillSessions(b, s2, 10)
		s2.Close()
	}
	large := mustOpen(b, p, Options{})
	small := mustOpen(b, "/tmp/list10k/small.db", Options{})
	for _, c := range []struct {
		name string
		r    store.Reader
	}{{"large", large}, {"small", small}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.r.ListSessions(b.Context(), store.ListCursor{}, 50); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
