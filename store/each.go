package store

import "context"

// EventReader reads a session's events a page at a time; every Reader
// satisfies it.
type EventReader interface {
	ReadEvents(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]Record, error)
}

// Each calls fn for every event of the session with seq > afterSeq, in seq
// order, reading MaxPage events at a time, and stops at fn's first error,
// which it returns. Codes: those of ReadEvents.
func Each(ctx context.Context, r EventReader, sessionID string, afterSeq int64, fn func(Record) error) error {
	for {
		page, err := r.ReadEvents(ctx, sessionID, afterSeq, MaxPage)
		if err != nil {
			return err
		}
		for _, rec := range page {
			if err := fn(rec); err != nil {
				return err
			}
		}
		if len(page) < MaxPage {
			return nil
		}
		afterSeq = page[len(page)-1].Seq
	}
}
