package dockerws

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// How Diff stays fast on a large tree without copying it out each time.
//
// The host keeps the tree as of the last look (path → content and mode) and
// a mark: the change time (ctime) of a file created, just before that look,
// in the container. Inside the container, one exec creates a new mark,
// lists every file with its ctime and size, and tars the files whose ctime
// is not older than the previous mark. Every change to a file (write,
// truncate, chmod, rename, link) sets its ctime to the current time, and an
// unprivileged process cannot set it back, so a file whose ctime is older
// than the previous mark is unchanged since that look and its content is
// already on the host. Ties count as changed. A file the host cannot
// account for (it vanished between the listing and the tar, or more
// changed than one argv can name) is fetched again, one by one or as a
// whole tree. The one assumption is a clock that does not go backwards.

// tree is the live tree as of the last refresh.
type tree struct {
	mark  string            // ctime of the mark taken before the last listing
	files map[string]*entry // every regular file listed then
}

// Bounds of one refresh.
const (
	// maxTarArgs is the most changed files the listing exec tars by name;
	// beyond it the whole tree is copied out in a second exec.
	maxTarArgs = 1000
	// maxSingleFetch is the most files fetched one by one (archive API);
	// beyond it the whole tree is copied out instead.
	maxSingleFetch = 16
)

// diffScript: $1 workspace, $2 previous mark, $3 largest file to tar, $4
// most files to tar, $5 most bytes to tar. The mark is created before the
// listing starts, on the home volume (the workspace's file system, and not
// the small /tmp a process may have filled), and listed first, in the same
// stat call as the tree. Output: the new mark, the number of listing lines,
// the number of changed files and their total size, one per line; the
// listing ("ctime size ./path" per file); then, unless no file changed or
// more than $4 files or $5 bytes did, a tar of the changed files. The
// sizes come from the listing, so nothing over the byte cap is ever copied
// out. Seven processes in all: the cost of the exec dominates.
const diffScript = `cd "$1" || exit 97
t=` + HomeDir + `/.harness-diff.$$
mkdir "$t" || exit 96
trap 'rm -rf "$t"' EXIT
: > "$t/mark" || exit 96
{
	find "$t/mark" . -name .git -prune -o -type f -exec stat -c '%z %s %n' {} + 2>"$t/err"
	sed -n -e "s/^find: '\(.*\)': Permission denied$/U \1/p" -e "s/^find: \([^'].*\): Permission denied$/U \1/p" "$t/err"
} |
awk -v p="$2" -v m="$3" -v most="$4" -v budget="$5" -v out="$t/changed" '
NR == 1 { mark = substr($0, 1, 35); next }
/^U \.\// { lines[++n] = $0; next }
{
	lines[++n] = $0
	if (substr($0, 1, 35) >= p) {
		r = substr($0, 37)
		if (r + 0 <= m + 0) { ch[++c] = substr(r, index(r, " ") + 1); b += r + 0 }
	}
}
END {
	printf "%s\n%d\n%d\n%.0f\n", mark, n, c, b
	for (i = 1; i <= n; i++) print lines[i]
	printf "" > out
	if (c <= most + 0 && b <= budget + 0) for (i = 1; i <= c; i++) print ch[i] > out
}' || exit 96
set --
while IFS= read -r f; do set -- "$@" "$f"; done < "$t/changed"
if [ "$#" -gt 0 ]; then
	tar -c -f - "$@" 2>/dev/null
fi
exit 0`

// treeScript tars the whole workspace to stdout.
const treeScript = `cd "$1" || exit 97
tar -c -f - . 2>/dev/null
exit 0`

// listRE matches one listing line: ctime, size, path.
var listRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} \+0000) (\d+) \./(.*)$`)
})

// unreadableRE matches a listing line naming a directory the sandbox
// user may not read: the files under it are left out, not deleted.
var unreadableRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^U \./(.*)$`) })

// listed is one file of a listing.
type listed struct {
	path  string
	ctime string
	size  int64
}

// listing is the parsed output of diffScript.
type listing struct {
	mark    string
	files   []listed
	changed int   // files changed since the previous mark, up to the file limit
	bytes   int64 // their total size
	// unreadable are the directories the sandbox user may not read.
	unreadable []string
}

// tarred reports whether a tar of the changed files follows the listing:
// the script sends one only for a few files that fit in budget bytes.
func (l *listing) tarred(budget int64) bool {
	return l.changed > 0 && l.changed <= maxTarArgs && l.bytes <= budget
}

// Diff returns a git-style unified patch from the tree as copied in to the
// tree now, changes made by processes included: `git apply` accepts it on a
// checkout of the original tree. Files are compared by content and by the
// owner's execute bit ("old mode"/"new mode"); added and deleted files carry
// "new file mode"/"deleted file mode". Left out: .git, excluded paths,
// symlinks and special files, names no tool could send back, and files that
// are not UTF-8 text or are larger than MaxFileBytes (a patch could not
// carry them). Files are in path order; an unchanged tree gives "".
// A workspace nothing was ever written, run or patched in answers at once,
// without waiting for its container or its scan: "" or, for one opened with
// Options.Patch, that patch. A turn that never used the workspace does not
// wait for it to finish opening. So does one whose open failed: no call
// could change its tree.
//
// Codes: WORKSPACE_LIMIT (the tree's text would pass twice MaxTotalBytes:
// checked on the files' sizes before their contents are copied out),
// WORKSPACE_CONTAINER_FAILED, WORKSPACE_DISPOSED, TOOL_CANCELED.
func (w *Workspace) Diff(ctx context.Context) (string, error) {
	if w.isClosed() {
		return "", disposed("diff")
	}
	if w.untouched() || w.OpenError() != nil {
		// Nothing changed the tree as opened (no call could, on a
		// workspace that never opened): the recorded patch, unless the
		// tree already held it (PatchInTree).
		if len(w.opts.HostChanges) > 0 {
			// The host moved since the patch was made: what it lacks
			// of the workspace is known once the tree is scanned.
			if err := w.waitScanned(ctx, "diff"); err != nil {
				return "", err
			}
			if w.origin != "" {
				return w.pending, nil
			}
		}
		if w.PatchInTree() {
			return "", nil
		}
		return w.opts.Patch, nil
	}
	if err := w.acquire(ctx, "diff"); err != nil {
		return "", err
	}
	defer w.release()
	if err := w.refresh(ctx); err != nil {
		return "", err
	}
	patch := formatPatch(w.baseFiles, w.withoutIgnored(ctx, w.cur.files), w.opts.MaxFileBytes)
	if n := int64(len(patch)); w.opts.MaxPatchBytes > 0 && n > w.opts.MaxPatchBytes {
		return "", overPatch(n, w.opts.MaxPatchBytes)
	}
	return patch, nil
}

// addedText is the size of the new files a patch would carry whole: those
// the project's git does not ignore (asked only when MaxPatchBytes could
// be passed).
func (w *Workspace) addedText(ctx context.Context, added map[string]int64) int64 {
	var n int64
	for _, size := range added {
		n += size
	}
	if w.opts.MaxPatchBytes <= 0 || n <= w.opts.MaxPatchBytes {
		return n
	}
	for p := range gitCheckIgnore(ctx, w.opts.Root, w.opts.SecretEnv, slices.Collect(maps.Keys(added))) {
		n -= added[p]
	}
	return n
}

// overPatch is the WORKSPACE_LIMIT error of a patch over MaxPatchBytes;
// "at least" when n counts only the new files.
func overPatch(n, max int64) error {
	return &errcode.Error{Code: errcode.WorkspaceLimit, Op: "diff",
		Message: fmt.Sprintf("the patch comes to %d bytes or more, over the %d bytes a session records; leave generated files out (a lower file-size limit, or an exclude pattern)", n, max)}
}

// withoutIgnored drops the files a process added that the project's git
// ignores (build outputs, caches), so the patch carries what a commit would.
func (w *Workspace) withoutIgnored(ctx context.Context, cur map[string]*entry) map[string]*entry {
	var added []string
	for p := range cur {
		if _, ok := w.baseFiles[p]; !ok {
			added = append(added, p)
		}
	}
	ignored := gitCheckIgnore(ctx, w.opts.Root, w.opts.SecretEnv, added)
	if len(ignored) == 0 {
		return cur
	}
	out := make(map[string]*entry, len(cur))
	for p, e := range cur {
		if !ignored[p] {
			out[p] = e
		}
	}
	return out
}

// refresh brings w.cur up to date with the container. Call it holding
// lock. When only WriteFile changed the tree since the last refresh, only
// the files it wrote are read again (refreshWritten); otherwise the whole
// tree is listed (refreshAll).
//
// Host memory stays bounded by the cap (twice MaxTotalBytes of text): the
// listing gives every file's size before any content is copied out, so a
// tree whose kept files would pass the cap fails at once, and the contents
// that are copied out are counted as they arrive (a file may grow after the
// listing), so no more than one file is ever held beyond the cap.
func (w *Workspace) refresh(ctx context.Context) error {
	wide, written := w.takeChanges()
	var err error
	if !wide && len(written) <= maxSingleFetch && w.cur.mark != firstMark {
		err = w.refreshWritten(ctx, written)
	} else {
		err = w.refreshAll(ctx)
	}
	if err != nil {
		w.restoreChanges()
	}
	return err
}

// refreshWritten brings w.cur up to date when only WriteFile changed the
// tree since the last refresh: it reads the files written again, one by
// one, and nothing else. The mark stays: the next full listing still sees
// every change since the last one. Call it holding lock.
func (w *Workspace) refreshWritten(ctx context.Context, written map[string]bool) error {
	const op = "diff"
	if len(written) == 0 {
		return nil
	}
	capBytes := 2 * w.opts.MaxTotalBytes
	next := maps.Clone(w.cur.files)
	for p := range written {
		if w.excl.Excluded(p) {
			continue
		}
		e, err := w.fetch(ctx, op, p, capBytes)
		if err != nil {
			return err
		}
		if e == nil {
			delete(next, p)
		} else {
			next[p] = e
		}
	}
	var held int64
	for _, e := range next {
		held += int64(len(e.data))
	}
	if held > capBytes {
		return overCap(op, capBytes, held)
	}
	w.cur = &tree{mark: w.cur.mark, files: next}
	return nil
}

// refreshAll lists the whole tree (see refresh).
func (w *Workspace) refreshAll(ctx context.Context) error {
	const op = "diff"
	prev := w.cur
	limit := w.opts.MaxFileBytes
	capBytes := 2 * w.opts.MaxTotalBytes
	var (
		l       *listing
		next    map[string]*entry
		missing []string
		held    int64 // bytes of text in next, or at most held once read
	)
	plan := func(r *bufio.Reader) error {
		var err error
		if l, err = parseListing(r); err != nil {
			return err
		}
		next = make(map[string]*entry, len(l.files))
		want := map[string]bool{}
		var need int64              // sizes of the changed files still to read
		added := map[string]int64{} // sizes of the files the tree did not have: a patch carries them whole
		var big []listed            // changed files over the file-size limit: carried when there is room
		for _, f := range l.files {
			if w.excl.Excluded(f.path) {
				continue
			}
			if workspace.CheckPath(f.path) != nil {
				next[f.path] = &entry{skip: skipName}
				continue
			}
			if e, ok := prev.files[f.path]; ok && f.ctime < prev.mark {
				next[f.path] = e
				held += int64(len(e.data))
				continue
			}
			if f.size > limit {
				big = append(big, f)
				continue
			}
			want[f.path] = true
			need += f.size
			if _, ok := w.baseFiles[f.path]; !ok {
				added[f.path] = f.size
			}
		}
		// The files under a directory the sandbox user may not read were
		// not listed: left out, never taken for deletions.
		for _, d := range l.unreadable {
			for _, files := range []map[string]*entry{prev.files, w.baseFiles} {
				for p := range files {
					if _, ok := next[p]; !ok && strings.HasPrefix(p, d+"/") {
						next[p] = &entry{skip: skipUnreadable}
					}
				}
			}
		}
		if held+need > capBytes {
			return overCap(op, capBytes, held+need)
		}
		// What the project's git ignores is never carried: not read either.
		var bigAdded []string
		for _, f := range big {
			if _, ok := w.baseFiles[f.path]; !ok {
				bigAdded = append(bigAdded, f.path)
			}
		}
		n := w.addedText(ctx, added)
		if w.opts.MaxPatchBytes > 0 && n > w.opts.MaxPatchBytes {
			return overPatch(n, w.opts.MaxPatchBytes)
		}
		// Carried while they fit, in path order, within the cap and (by
		// their size, an upper bound of what they add) the patch bound;
		// the rest are named as left out.
		ignored := gitCheckIgnore(ctx, w.opts.Root, w.opts.SecretEnv, bigAdded)
		slices.SortFunc(big, func(a, b listed) int { return strings.Compare(a.path, b.path) })
		for _, f := range big {
			switch {
			case ignored[f.path]:
			case held+need+f.size > capBytes, w.opts.MaxPatchBytes > 0 && n+f.size > w.opts.MaxPatchBytes:
				next[f.path] = &entry{skip: skipLimit}
			default:
				want[f.path] = true
				need += f.size
				n += f.size
			}
		}
		if !l.tarred(capBytes) {
			missing = slices.Sorted(maps.Keys(want))
			return nil
		}
		fetched, n, err := readTar(r, capBytes, capBytes-held, func(p string) bool { return want[p] })
		if err != nil {
			return err
		}
		held += n
		for p := range want {
			if e, ok := fetched[p]; ok {
				next[p] = e
			} else {
				missing = append(missing, p)
			}
		}
		slices.Sort(missing)
		return nil
	}
	err := w.stream(ctx, op, diffScript,
		[]string{WorkDir, prev.mark, strconv.FormatInt(capBytes, 10), strconv.Itoa(maxTarArgs), strconv.FormatInt(capBytes, 10)},
		plan)
	if err != nil {
		return err
	}
	if len(missing) > maxSingleFetch {
		want := make(map[string]bool, len(missing))
		for _, p := range missing {
			want[p] = true
		}
		var all map[string]*entry
		err := w.stream(ctx, op, treeScript, []string{WorkDir}, func(r *bufio.Reader) (err error) {
			var n int64
			all, n, err = readTar(r, capBytes, capBytes-held, func(p string) bool { return want[p] })
			held += n
			return err
		})
		if err != nil {
			return err
		}
		for _, p := range missing {
			if e, ok := all[p]; ok {
				next[p] = e
			} else {
				// Listed but not in the tar: the sandbox user cannot read
				// it (or it vanished since). Never taken for a deletion.
				next[p] = &entry{skip: skipUnreadable}
			}
		}
	} else {
		for _, p := range missing {
			e, err := w.fetch(ctx, op, p, capBytes)
			if err != nil {
				return err
			}
			if e != nil {
				next[p] = e
				if held += int64(len(e.data)); held > capBytes {
					return overCap(op, capBytes, held)
				}
			}
		}
	}
	w.cur = &tree{mark: l.mark, files: next}
	return nil
}

// overCap is the WORKSPACE_LIMIT error of a tree whose text passes the cap.
func overCap(op string, capBytes, n int64) error {
	return &errcode.Error{Code: errcode.WorkspaceLimit, Op: op,
		Message: fmt.Sprintf("the workspace's files to diff come to %d bytes, over the limit of %d bytes of text; delete generated files or exclude them", n, capBytes)}
}

// stream runs a helper script whose stdout parse reads as it arrives. The
// parser must not return before its input ends; stream drains what it
// leaves.
func (w *Workspace) stream(ctx context.Context, op, body string, args []string, parse func(*bufio.Reader) error) error {
	pr, pw := io.Pipe()
	perr := make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(pr, 64<<10)
		err := parse(r)
		_, _ = io.Copy(io.Discard, r)
		perr <- err
	}()
	code, stderr, err := w.script(ctx, op, body, args, nil, pw)
	pw.Close()
	parseErr := <-perr
	switch {
	case err != nil:
		return err
	case code != 0:
		return failed(op, fmt.Sprintf("the listing script failed (exit %d): %s", code, stderr), nil)
	case errcode.Of(parseErr) == errcode.WorkspaceLimit:
		return parseErr
	case parseErr != nil:
		return failed(op, "unreadable listing from the container", parseErr)
	}
	return nil
}

// parseListing reads diffScript's output up to the tar, if any.
func parseListing(r *bufio.Reader) (*listing, error) {
	var head [4]string
	for i := range head {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("read header: %w", err)
		}
		head[i] = strings.TrimSpace(line)
	}
	l := &listing{mark: head[0]}
	if !markRE().MatchString(l.mark) {
		return nil, fmt.Errorf("bad mark %q", l.mark)
	}
	lines, err := strconv.Atoi(head[1])
	if err != nil {
		return nil, fmt.Errorf("bad line count %q", head[1])
	}
	if l.changed, err = strconv.Atoi(head[2]); err != nil {
		return nil, fmt.Errorf("bad count %q", head[2])
	}
	if l.bytes, err = strconv.ParseInt(head[3], 10, 64); err != nil {
		return nil, fmt.Errorf("bad byte count %q", head[3])
	}
	for range lines {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("read listing: %w", err)
		}
		line = strings.TrimSuffix(line, "\n")
		if u := unreadableRE().FindStringSubmatch(line); u != nil {
			l.unreadable = append(l.unreadable, u[1])
			continue
		}
		m := listRE().FindStringSubmatch(line)
		if m == nil {
			// A name with a newline runs over several lines: the first
			// part was listed under a name no tool can use (it is
			// skipped), the rest is noise.
			if n := len(l.files); n > 0 {
				l.files[n-1].path += "\n" + line
			}
			continue
		}
		n, _ := strconv.ParseInt(m[2], 10, 64)
		l.files = append(l.files, listed{path: m[3], ctime: m[1], size: n})
	}
	return l, nil
}

// readTar reads a tar stream of workspace files and keeps those keep
// accepts, classified; entries over limit are marked, not kept. It returns
// the bytes of text kept and fails with WORKSPACE_LIMIT as soon as they
// pass room, so at most one file more than room is ever held.
func readTar(r io.Reader, limit, room int64, keep func(string) bool) (map[string]*entry, int64, error) {
	out := map[string]*entry{}
	var held int64
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, held, nil
		}
		if err != nil {
			return out, held, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		p := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if !keep(p) {
			continue
		}
		e := classify(tr, hdr.Size, fs.FileMode(hdr.Mode), limit)
		if held += int64(len(e.data)); held > room {
			return nil, held, &errcode.Error{Code: errcode.WorkspaceLimit, Op: "diff",
				Message: fmt.Sprintf("the workspace's files grew past the limit of text while being copied out (at %s); delete generated files or exclude them", p)}
		}
		out[p] = e
	}
}

// classify reads one file's content, size bytes as its tar header says,
// into an entry; one over limit is left out.
func classify(r io.Reader, size int64, mode fs.FileMode, limit int64) *entry {
	m := fs.FileMode(0o644)
	if mode&0o100 != 0 {
		m = 0o755
	}
	if size > limit {
		return &entry{mode: m, skip: skipLimit}
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return &entry{mode: m, skip: skipSpecial}
	}
	return &entry{data: data, mode: m}
}

// fetch reads one file as the sandbox user (readAs: never through a path
// that leaves the workspace); nil when it is gone or no longer a regular
// file.
func (w *Workspace) fetch(ctx context.Context, op, p string, limit int64) (*entry, error) {
	f, err := w.readAs(ctx, op, p, limit)
	switch errcode.Of(err) {
	case "":
	case errcode.WorkspaceNotFound, errcode.WorkspaceScope:
		return nil, nil
	case errcode.WorkspacePermission:
		return &entry{skip: skipUnreadable}, nil
	default:
		return nil, err
	}
	return classify(bytes.NewReader(f.data), f.size, f.mode, limit), nil
}

// formatPatch writes the patch from base to cur. A file that is text
// (UTF-8 without NUL, no larger than textLimit) on both sides gets text
// hunks; any other is carried whole in git's binary patch format, which
// `git apply` and ApplyPatch write byte for byte. What cannot be carried
// (a name git or the tools cannot use, a file that could not be read) is
// named, with why, in a note before the first file (leftOutNote,
// workspace.LeftOut).
func formatPatch(base, cur map[string]*entry, textLimit int64) string {
	paths := slices.Sorted(maps.Keys(base))
	for p := range cur {
		if _, ok := base[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var b strings.Builder
	var left []leftOut
	for _, p := range paths {
		old, nw := base[p], cur[p]
		if nw != nil && nw.skip != "" {
			left = append(left, leftOut{p, nw.skip})
			continue
		}
		if old != nil && old.skip != "" {
			continue
		}
		if isText(old, textLimit) && isText(nw, textLimit) {
			writeFilePatch(&b, p, old, nw)
		} else {
			writeBinaryPatch(&b, p, old, nw)
		}
	}
	return leftOutNote(left) + b.String()
}

// isText reports whether e, when there is one, can be carried in text
// hunks.
func isText(e *entry, limit int64) bool {
	return e == nil || (int64(len(e.data)) <= limit && bytes.IndexByte(e.data, 0) < 0 && utf8.Valid(e.data))
}

// writeBinaryPatch writes one file's part of a patch as git's binary
// patch: the new content whole (zlib, base85), the old one as the reverse
// fragment, and the full index line git requires to apply it.
func writeBinaryPatch(b *strings.Builder, p string, old, nw *entry) {
	if old != nil && nw != nil && bytes.Equal(old.data, nw.data) && old.mode == nw.mode {
		return
	}
	f := &gitdiff.File{OldName: p, NewName: p, IsBinary: true, OldOIDPrefix: zeroOID, NewOIDPrefix: zeroOID}
	var oldData, newData []byte
	if old != nil {
		f.OldMode, f.OldOIDPrefix, oldData = 0o100000|old.mode, blobOID(old.data), old.data
	} else {
		f.IsNew, f.OldName = true, ""
	}
	if nw != nil {
		f.NewMode, f.NewOIDPrefix, newData = 0o100000|nw.mode, blobOID(nw.data), nw.data
	} else {
		f.IsDelete, f.NewName = true, ""
	}
	if old != nil && nw != nil && bytes.Equal(old.data, nw.data) {
		// Only the mode changed.
		f.IsBinary, f.OldOIDPrefix, f.NewOIDPrefix = false, "", ""
	} else {
		f.BinaryFragment, f.ReverseBinaryFragment = literal(newData), literal(oldData)
	}
	b.WriteString(f.String())
}

// zeroOID is the object ID git writes for a side a file is absent on.
const zeroOID = "0000000000000000000000000000000000000000"

// blobOID is data's git blob ID (SHA-1): a binary patch names both sides
// in full.
func blobOID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// literal is a binary patch fragment holding data whole.
func literal(data []byte) *gitdiff.BinaryFragment {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	_, _ = zw.Write(data) // to memory
	_ = zw.Close()
	return &gitdiff.BinaryFragment{Method: gitdiff.BinaryPatchLiteral, Size: int64(len(data)), RawData: z.Bytes()}
}

// leftOut is one file a patch could not carry.
type leftOut struct{ path, reason string }

// maxLeftOutLines bounds the note; a last line counts the rest.
const maxLeftOutLines = 50

// leftOutWhy says each reason of a live file left out of a patch.
var leftOutWhy = map[string]string{
	skipName:       "a name no tool or patch can carry (a control character or a backslash)",
	skipSpecial:    "it could not be read as a regular file",
	skipUnreadable: "permission denied: the sandbox user cannot read it or its directory",
	skipLimit:      "larger than --max-file-bytes, and the diff had no room left for it",
}

// leftOutNote is the note (workspace.LeftOutPrefix lines) a patch starts
// with when files were left out of it: one line per file, its path
// (quoted when it holds anything but printable characters) and why.
func leftOutNote(left []leftOut) string {
	var b strings.Builder
	for i, l := range left {
		if i == maxLeftOutLines {
			fmt.Fprintf(&b, "%sand %d more files\n", workspace.LeftOutPrefix, len(left)-i)
			break
		}
		name := l.path
		if strconv.Quote(name) != `"`+name+`"` {
			name = strconv.Quote(name)
		}
		fmt.Fprintf(&b, "%s%s (%s)\n", workspace.LeftOutPrefix, name, leftOutWhy[l.reason])
	}
	return b.String()
}

// writeFilePatch writes one file's part of a git-style patch.
func writeFilePatch(b *strings.Builder, p string, old, nw *entry) {
	a, bn := quoteName("a/"+p), quoteName("b/"+p)
	switch {
	case old == nil:
		fmt.Fprintf(b, "diff --git %s %s\nnew file mode 100%o\n", a, bn, nw.mode)
		writeHunks(b, "/dev/null", bn, "", string(nw.data))
	case nw == nil:
		fmt.Fprintf(b, "diff --git %s %s\ndeleted file mode 100%o\n", a, bn, old.mode)
		writeHunks(b, a, "/dev/null", string(old.data), "")
	default:
		same := bytes.Equal(old.data, nw.data)
		if same && old.mode == nw.mode {
			return
		}
		fmt.Fprintf(b, "diff --git %s %s\n", a, bn)
		if old.mode != nw.mode {
			fmt.Fprintf(b, "old mode 100%o\nnew mode 100%o\n", old.mode, nw.mode)
		}
		if !same {
			writeHunks(b, a, bn, string(old.data), string(nw.data))
		}
	}
}

func writeHunks(b *strings.Builder, from, to, old, nw string) {
	if old == nw {
		return
	}
	u, err := udiff.ToUnified(from, to, old, udiff.Lines(old, nw), udiff.DefaultContextLines)
	if err != nil {
		// Lines always returns edits consistent with old.
		panic("dockerws: inconsistent line edits: " + err.Error())
	}
	b.WriteString(u)
}

// quoteName quotes a patch path the way git does when it holds a double
// quote or a backslash (control characters never reach a patch).
func quoteName(name string) string {
	if !strings.ContainsAny(name, "\"\\") {
		return name
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(name) + `"`
}
