package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/checkpoint"
	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
	"github.com/harness-dev/harness/store"
)

// exportHeader is the first line of an export: the session's identity and
// metadata; every later line is one stored event envelope.
type exportHeader struct {
	HarnessExport int               `json:"harnessExport"`
	ID            string            `json:"id"`
	Title         string            `json:"title"`
	Metadata      map[string]string `json:"metadata"`
}

// Export writes a session as JSON lines: a header, then its events.
func Export(ctx context.Context, r store.Reader, id string, w io.Writer) error {
	s, err := r.Session(ctx, id)
	if err != nil {
		return err
	}
	h, _ := model.MarshalCanonical(exportHeader{HarnessExport: 1, ID: s.ID, Title: s.Title, Metadata: s.Metadata})
	if _, err := fmt.Fprintln(w, string(h)); err != nil {
		return err
	}
	return WriteEvents(ctx, r, id, w)
}

// Import reads an export and stores it as the same session in st: the same
// events, byte for byte, and a checkpoint rebuilt from the last
// runtime.checkpoint event, so the session resumes here with the same next
// request. It returns the session's ID and how many events it stored.
func Import(ctx context.Context, st store.Store, who store.Owner, takeOver bool, in io.Reader) (string, int64, error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), store.MaxBodyBytes+1024)
	if !sc.Scan() {
		return "", 0, errcode.New(errcode.SessInvalidRecord, "the export is empty")
	}
	var h exportHeader
	dec := json.NewDecoder(strings.NewReader(sc.Text()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || h.HarnessExport != 1 || h.ID == "" {
		return "", 0, errcode.New(errcode.SessInvalidRecord, "the first line is not a harness export header")
	}
	if _, err := st.CreateSession(ctx, store.SessionInit{ID: h.ID, Title: h.Title, Metadata: h.Metadata}); err != nil {
		return "", 0, err
	}
	owner, err := st.Acquire(ctx, h.ID, who, store.AcquireOptions{TakeOver: takeOver})
	if err != nil {
		return "", 0, err
	}
	// A release that fails leaves a lease that expires on its own.
	defer func() { _ = st.Release(context.WithoutCancel(ctx), h.ID, owner) }()
	var (
		batch []store.EventIn
		scan  checkpoint.Scan
		seq   int64 = -1
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := st.AppendBatch(ctx, h.ID, owner, batch)
		batch = batch[:0]
		return err
	}
	for sc.Scan() {
		line := []byte(sc.Text())
		ev, err := event.Decode(line)
		if err != nil {
			return "", 0, err
		}
		seq++
		if err := scan.Add(checkpoint.Record{Seq: seq, Type: string(ev.Type), Body: line}); err != nil {
			return "", 0, err
		}
		batch = append(batch, store.EventIn{ID: ev.ID, Type: string(ev.Type), Body: line})
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return "", 0, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", 0, errcode.Wrap(errcode.SessInvalidRecord, "read the export", err)
	}
	if err := flush(); err != nil {
		return "", 0, err
	}
	if scan.Latest != nil {
		// The store's row holds the newest checkpoint, whole, in the
		// layout the runtime keeps it in (checkpoint.Row).
		_, row, _, err := checkpoint.Row{}.Save(scan.Latest)
		if err != nil {
			return "", 0, err
		}
		rev := int64(0)
		if cur, err := st.LoadCheckpoint(ctx, h.ID); err == nil {
			rev = cur.Revision
		}
		if _, err := st.SaveCheckpoint(ctx, h.ID, owner, rev, scan.LatestSeq, row); err != nil {
			return "", 0, err
		}
	}
	return h.ID, seq + 1, nil
}
