package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/harness-dev/harness/event"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/model"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// exportHeader is the first line of `harness sessions export`: the session's
// identity and metadata; every later line is one stored event envelope.
type exportHeader struct {
	HarnessExport int               `json:"harnessExport"`
	ID            string            `json:"id"`
	Title         string            `json:"title"`
	Metadata      map[string]string `json:"metadata"`
}

// exportSession writes a session as JSON lines: a header, then its events.
func (a *app) exportSession(ctx context.Context, id string) int {
	s, err := a.store.Session(ctx, id)
	if err != nil {
		return a.fail(err)
	}
	h, _ := model.MarshalCanonical(exportHeader{HarnessExport: 1, ID: s.ID, Title: s.Title, Metadata: s.Metadata})
	fmt.Fprintln(a.stdout, string(h))
	return a.printStoredEvents(ctx, id)
}

// importSession reads an export and stores it as the same session in this
// store: the same events, byte for byte, and a checkpoint rebuilt from the
// last runtime.checkpoint event, so the session resumes here with the same
// next request.
func (a *app) importSession(ctx context.Context, path string, stdin io.Reader) int {
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return a.fail(errcode.Wrap(errcode.SessNotFound, "open the export", err))
		}
		defer f.Close()
		in = f
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), store.MaxBodyBytes+1024)
	if !sc.Scan() {
		return a.fail(errcode.New(errcode.SessInvalidRecord, "the export is empty"))
	}
	var h exportHeader
	dec := json.NewDecoder(strings.NewReader(sc.Text()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || h.HarnessExport != 1 || h.ID == "" {
		return a.fail(errcode.New(errcode.SessInvalidRecord, "the first line is not a harness export header"))
	}
	if _, err := a.store.CreateSession(ctx, store.SessionInit{ID: h.ID, Title: h.Title, Metadata: h.Metadata}); err != nil {
		return a.fail(err)
	}
	owner, err := a.store.Acquire(ctx, h.ID, a.owner, store.AcquireOptions{TakeOver: a.opts.TakeOver})
	if err != nil {
		return a.fail(err)
	}
	defer a.store.Release(context.WithoutCancel(ctx), h.ID, owner)
	var (
		batch     []store.EventIn
		chain     runtime.Chain
		lastCP    []byte
		lastCPSeq int64 = -1
		seq       int64 = -1
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := a.store.AppendBatch(ctx, h.ID, owner, batch)
		batch = batch[:0]
		return err
	}
	for sc.Scan() {
		line := []byte(sc.Text())
		ev, err := event.Decode(line)
		if err != nil {
			return a.fail(err)
		}
		seq++
		if d, ok := ev.Data.(event.RuntimeCheckpoint); ok {
			cp, err := chain.Next(d.Payload)
			if err != nil {
				return a.fail(err)
			}
			if lastCP, err = model.MarshalCanonical(cp); err != nil {
				return a.fail(err)
			}
			lastCPSeq = seq
		}
		batch = append(batch, store.EventIn{ID: ev.ID, Type: string(ev.Type), Body: line})
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return a.fail(err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return a.fail(errcode.Wrap(errcode.SessInvalidRecord, "read the export", err))
	}
	if err := flush(); err != nil {
		return a.fail(err)
	}
	if lastCP != nil {
		rev := int64(0)
		if cur, err := a.store.LoadCheckpoint(ctx, h.ID); err == nil {
			rev = cur.Revision
		}
		if _, err := a.store.SaveCheckpoint(ctx, h.ID, owner, rev, lastCPSeq, lastCP); err != nil {
			return a.fail(err)
		}
	}
	fmt.Fprintf(a.stderr, "harness: imported session %s (%d events)\n", h.ID, seq+1)
	return 0
}
