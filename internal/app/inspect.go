package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/store"
)

// WriteEvents writes a session's stored envelopes to w, one per line,
// byte for byte as stored. Each is decoded first: a row whose bytes no
// longer decode to the event it is stored as (a damaged page reads back
// as garbage: SQLite keeps no checksum of a row) is never printed; the
// events before it are, and the error (SESS_INVALID_RECORD) names its
// sequence number and why.
func WriteEvents(ctx context.Context, r store.Reader, id string, w io.Writer) error {
	if _, err := r.Session(ctx, id); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	err := store.Each(ctx, r, id, -1, func(rec store.Record) error {
		ev, err := event.Decode(rec.Body)
		if err == nil && (ev.ID != rec.ID || string(ev.Type) != rec.Type) {
			err = fmt.Errorf("its body is event %s of type %s, stored as %s of type %s", ev.ID, ev.Type, rec.ID, rec.Type)
		}
		if err != nil {
			_ = bw.Flush()
			return &errcode.Error{Code: errcode.SessInvalidRecord, Op: "events",
				Message: fmt.Sprintf("event %d of session %s is damaged and was not printed (%s)", rec.Seq, id, errcode.Message(err)), Err: err}
		}
		if _, err := bw.Write(rec.Body); err != nil {
			return err
		}
		return bw.WriteByte('\n')
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// lastRequestCheckpoint finds the newest checkpoint that carries a next
// request of the state the session is at: the latest one when the session
// was interrupted mid-request, else the last model round's before the
// terminal checkpoint it is at. A rewind (and its undo) appends a copy of
// an earlier turn's terminal checkpoint: the request is then the one that
// was the newest when that turn ended, not one of the turns the rewind
// took out of the model's view.
func lastRequestCheckpoint(ctx context.Context, r store.Reader, id string) (*checkpoint.Checkpoint, error) {
	var cur *checkpoint.Checkpoint
	atEnd := map[string]*checkpoint.Checkpoint{} // turn ID → the request in force at its terminal checkpoint
	rewound := false                             // the previous event was session.rewound
	_, err := runtime.ScanLog(ctx, r, id, func(rec store.Record, scan *checkpoint.Scan) error {
		after := rewound
		rewound = event.Type(rec.Type) == event.TypeSessionRewound
		if event.Type(rec.Type) != event.TypeRuntimeCheckpoint {
			return nil
		}
		cp := scan.Latest
		switch {
		case cp.NextRequest != nil:
			cur = cp
		case cp.Identity.Phase != checkpoint.PhaseTerminal:
		case after:
			cur = atEnd[cp.Identity.TurnID]
		default:
			atEnd[cp.Identity.TurnID] = cur
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, errcode.Errorf(errcode.SessNotFound, "session %s has no model request yet", id)
	}
	return cur, nil
}

// Request rebuilds the session's latest model request from its stored
// checkpoints: exactly the request the model received.
func Request(ctx context.Context, r store.Reader, id string) (model.Request, error) {
	cp, err := lastRequestCheckpoint(ctx, r, id)
	if err != nil {
		return model.Request{}, err
	}
	return runtime.ReconstructModelRequest(cp)
}

// lastPatch is the patch a session's changes are applied from (less what
// the host received since: pendingPatch, host.go), decided here once for
// harness diff, harness apply and the TUI's /apply: the one recorded at
// the end of its last finished turn, last (nil: none), with that turn's
// ID; a failed diff is refused with its code, never shown as no change. Not a fresh diff of the workspace: patch.applied names
// that turn, rewind and `apply --reverse` read it back, so what is applied
// is what is recorded, and a turn running meanwhile adds nothing
// half-done; and a diff that failed or ran out of time does not run again
// (its coded error; RecoverPatch recovers the work first).
func lastPatch(last *checkpoint.Checkpoint) (patch, turn string, err error) {
	if last == nil {
		return "", "", nil
	}
	if last.Workspace == nil {
		return "", last.Identity.TurnID, nil
	}
	patch, err = last.Workspace.PatchOrError()
	return patch, last.Identity.TurnID, err
}

// listPage is how many sessions Sessions reads at a time.
const listPage = 500

// Sessions lists the stored sessions, most recently updated first; with
// root set, only those of that project (SessionProject). Sessions without a single event
// (one being created by a process of an older Harness, or left by one
// killed meanwhile) are left out; the listing pages through the whole
// store, so that rows left out never push a session off the list.
func Sessions(ctx context.Context, r store.Reader, root string) ([]store.Session, error) {
	out, _, err := RecentSessions(ctx, r, root, 0)
	return out, err
}

// RecentSessions is Sessions bounded to the n most recently updated
// (n 0: all of them), reporting whether more were left out. The stores
// list from an index, so it reads about n rows whatever the store holds.
func RecentSessions(ctx context.Context, r store.Reader, root string, n int) ([]store.Session, bool, error) {
	var out []store.Session
	seen := map[string]bool{}
	cur := store.ListCursor{}
	size := listPage
	if n > 0 {
		size = min(n+1, listPage)
	}
	for {
		page, err := r.ListSessions(ctx, cur, size)
		if err != nil {
			return nil, false, err
		}
		for _, s := range page {
			// A session updated while the list is read may come twice.
			if seen[s.ID] || s.LastSeq < 0 || root != "" && SessionProject(s.Metadata) != root {
				continue
			}
			if n > 0 && len(out) == n {
				return out, true, nil
			}
			seen[s.ID] = true
			out = append(out, s)
		}
		if len(page) < size {
			return out, false, nil
		}
		cur = store.PageAfter(page[len(page)-1])
	}
}

// SessionProject is the project a session belongs to: the project root
// (ProjectRoot: the nearest directory holding .git) of the directory it
// was started in, recorded at its start (metadata "project"), else found
// from that directory now.
func SessionProject(md map[string]string) string {
	if p := md[metaProject]; p != "" {
		return p
	}
	if r := md[metaRoot]; r != "" {
		return ProjectRoot(r)
	}
	return ""
}

// maxForkDepth bounds how many forks back Inherited follows.
const maxForkDepth = 32

// Inherited returns, for a fork, the log it continues: the forked
// session's events up to the end of the turn the fork starts from (and,
// when that session is itself a fork, what it inherited), oldest first.
// A session that is no fork inherits nothing.
func Inherited(ctx context.Context, r store.Reader, id string) ([]store.Record, error) {
	var chain [][]store.Record
	for range maxForkDepth {
		s, err := r.Session(ctx, id)
		if err != nil {
			return nil, err
		}
		from := s.Metadata[metaForkedFrom]
		if from == "" {
			break
		}
		turn := ""
		err = store.Each(ctx, r, id, -1, func(rec store.Record) error {
			if rec.Type == string(event.TypeSessionForked) && turn == "" {
				ev, err := event.Decode(rec.Body)
				if err != nil {
					return err
				}
				turn = ev.Data.(event.SessionForked).FromTurnID
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			return nil, err
		}
		if turn == "" {
			break // the fork started before any finished turn
		}
		var part []store.Record
		cut := 0
		err = store.Each(ctx, r, from, -1, func(rec store.Record) error {
			part = append(part, rec)
			if (rec.Type == string(event.TypeTurnCompleted) || rec.Type == string(event.TypeAgentStopped)) && event.TurnOf(rec.Body) == turn {
				cut = len(part)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		chain = append(chain, part[:cut])
		id = from
	}
	var out []store.Record
	for i := len(chain) - 1; i >= 0; i-- {
		out = append(out, chain[i]...)
	}
	return out, nil
}

// errStop ends a store.Each early.
var errStop = errors.New("stop")
