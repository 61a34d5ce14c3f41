package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/internal/workspace"
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
	if err := checkRoot(h.Metadata[metaRoot]); err != nil {
		return "", 0, err
	}
	// Everything is read and checked before anything is stored: a refused
	// export leaves no half-imported session behind.
	var (
		events []store.EventIn
		scan   checkpoint.Scan
		seq    int64 = -1
	)
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
		if d, ok := ev.Data.(event.WorkspaceRecovered); ok {
			if err := checkPatchPaths(d.Patch); err != nil {
				return "", 0, err
			}
		}
		events = append(events, store.EventIn{ID: ev.ID, Type: string(ev.Type), Body: line})
	}
	if err := sc.Err(); err != nil {
		return "", 0, errcode.Wrap(errcode.SessInvalidRecord, "read the export", err)
	}
	if scan.Latest != nil && scan.Latest.Workspace != nil {
		if err := checkPatchPaths(scan.Latest.Workspace.Patch); err != nil {
			return "", 0, err
		}
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
	for len(events) > 0 {
		n := min(len(events), 500)
		if _, err := st.AppendBatch(ctx, h.ID, owner, events[:n]); err != nil {
			return "", 0, err
		}
		events = events[n:]
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

// checkRoot refuses an export whose project root is not an absolute,
// clean path of printable characters: resume, diff and apply work on that
// directory of this machine.
func checkRoot(root string) error {
	if root == "" {
		return nil // a session recorded without one: resume asks for none
	}
	if !filepath.IsAbs(root) || filepath.Clean(root) != root || !utf8.ValidString(root) || strings.ContainsFunc(root, unicode.IsControl) {
		return errcode.New(errcode.SessInvalidRecord, fmt.Sprintf("the export's project root %q is not an absolute, clean path", excerptOf(root, 200)))
	}
	return nil
}

// checkPatchPaths refuses a recorded patch that names a path outside the
// workspace ("../x", "/etc/x") or one no workspace could hold.
func checkPatchPaths(patch string) error {
	if patch == "" {
		return nil
	}
	files, _, err := gitdiff.Parse(strings.NewReader(patch))
	if err != nil {
		return errcode.Wrap(errcode.SessInvalidRecord, "the export holds a recorded patch that does not parse", err)
	}
	for _, f := range files {
		for _, name := range []string{f.OldName, f.NewName} {
			if name == "" {
				continue
			}
			if err := workspace.CheckPath(name); err != nil || name == "." {
				return errcode.New(errcode.SessInvalidRecord, fmt.Sprintf("the export holds a recorded patch that names %q, a path outside the workspace", excerptOf(name, 200)))
			}
		}
	}
	return nil
}

func excerptOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
