package dockerws

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

// Reasons a path is left out of the copy, as reported in Info().Skipped.
const (
	skipSymlink  = "symlink"
	skipSpecial  = "special"    // FIFO, socket, device
	skipBinary   = "binary"     // contains a NUL byte
	skipNonUTF8  = "non-utf8"   // not valid UTF-8 text
	skipExcluded = "excluded"   // matched Options.Exclude
	skipLimit    = "limit"      // larger than Options.MaxFileBytes
	skipName     = "name"       // a name no tool could send back (control character, backslash)
	skipIgnored  = "gitignored" // ignored by the project's git (.gitignore, info/exclude)
	skipHardLink = "hardlink"   // has other hard links, possibly outside the project
	// skipUnreadable: in a live tree, a file the sandbox user may not read.
	skipUnreadable = "unreadable"
)

// gitCheckIgnore reports which of paths (relative to root) the project's git
// would ignore; nothing when root is not in a git work tree or git is absent.
func gitCheckIgnore(ctx context.Context, root string, secretEnv, paths []string) map[string]bool {
	if len(paths) == 0 {
		return nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	cmd := exec.CommandContext(ctx, "git", "-C", root, "check-ignore", "-z", "--stdin", "--no-index")
	cmd.Env = workspace.HostEnv(secretEnv, "GIT_OPTIONAL_LOCKS=0")
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	out, _ := cmd.Output() // exit 1: none ignored; 128: not a work tree
	set := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			set[p] = true
		}
	}
	return set
}

// entry is one regular file of a tree.
type entry struct {
	data []byte
	mode fs.FileMode // 0o644, or 0o755 when the owner may execute it
	skip string      // in a live tree: why the content cannot be in a patch
}

// snapshot is the project tree as copied in.
type snapshot struct {
	files   map[string]*entry
	dirs    []string // every directory, parents first, empty ones included
	skipped []workspace.Skipped
	// hardLinks are the files skipped for their other hard links: reading
	// one in the workspace is WORKSPACE_SCOPE, as in the local workspace.
	hardLinks map[string]bool
	digest    string
	bytes     int64
}

// item is one entry of the copy as the scan meets it: a directory, or a
// text file (e set) with its modification time.
type item struct {
	path  string
	e     *entry
	mtime time.Time
}

// scan reads the text tree under opts.Root through an os.Root, so nothing
// outside the root is opened. It fails on credential-like paths (naming
// them) and on the file-count and total-byte limits.
func scan(ctx context.Context, opts Options, excl workspace.Excludes) (*snapshot, error) {
	return scanTree(ctx, opts, excl, nil)
}

// scanTree is scan passing each directory and text file to emit (when not
// nil) as it is read, parents before their children. A credential-like
// path is never read and never emitted, wherever it lies; a failure found
// after some items were emitted (a credential-like path further on, a
// limit) still fails the scan, and what was emitted must be discarded.
func scanTree(ctx context.Context, opts Options, excl workspace.Excludes, emit func(item)) (*snapshot, error) {
	const op = "copy project"
	if emit == nil {
		emit = func(item) {}
	}
	root, err := os.OpenRoot(opts.Root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no directory at " + opts.Root, Err: err}
		}
		return nil, &errcode.Error{Code: errcode.ToolExecutionFailed, Op: op, Message: "open directory " + opts.Root, Err: err}
	}
	defer root.Close()
	s := &snapshot{files: map[string]*entry{}, hardLinks: map[string]bool{}}
	ignored := workspace.GitIgnored(ctx, opts.Root, opts.SecretEnv)
	var creds []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		isDir := d.IsDir()
		if strings.EqualFold(d.Name(), ".git") {
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		if excl.Match(p, isDir) {
			s.skip(p, skipExcluded)
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		if (isDir && ignored[p+"/"]) || (!isDir && ignored[p]) {
			s.skip(p, skipIgnored)
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		if workspace.IsCredentialAt(p) {
			creds = append(creds, p)
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		if !utf8.ValidString(p) {
			s.skip(strings.ToValidUTF8(p, "\uFFFD"), skipNonUTF8)
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		if workspace.CheckPath(p) != nil {
			s.skip(p, skipName)
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case isDir:
			s.dirs = append(s.dirs, p)
			emit(item{path: p})
			return nil
		case t&fs.ModeSymlink != 0:
			s.skip(p, skipSymlink)
			return nil
		case !t.IsRegular():
			s.skip(p, skipSpecial)
			return nil
		}
		return s.add(root, p, opts, emit)
	})
	if err != nil {
		if errcode.Of(err) != errcode.Internal {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, canceled(ctx, op)
		}
		return nil, &errcode.Error{Code: errcode.ToolExecutionFailed, Op: op, Message: "read the project tree", Err: err}
	}
	if len(creds) > 0 {
		shown := creds
		if len(shown) > 10 {
			shown = shown[:10]
		}
		return nil, &errcode.Error{Code: errcode.WorkspaceCredentialInput, Op: op,
			Message: fmt.Sprintf("credential-like paths are never copied into the workspace: %s; exclude them (--exclude) to go on",
				strings.Join(shown, ", "))}
	}
	s.digest = s.computeDigest()
	return s, nil
}

func (s *snapshot) skip(p, reason string) {
	s.skipped = append(s.skipped, workspace.Skipped{Path: p, Reason: reason})
}

// add reads one regular file, enforcing the limits, and emits it.
func (s *snapshot) add(root *os.Root, p string, opts Options, emit func(item)) error {
	const op = "copy project"
	f, err := root.Open(p)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // only read: a failed close loses nothing
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		s.skip(p, skipSpecial)
		return nil
	}
	if workspace.HasOtherLinks(fi) {
		s.skip(p, skipHardLink)
		s.hardLinks[p] = true
		return nil
	}
	if fi.Size() > opts.MaxFileBytes {
		s.skip(p, skipLimit)
		return nil
	}
	// One allocation of the size the file has (a file that grows meanwhile
	// still reads whole, up to the limit).
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, opts.MaxFileBytes+1)); err != nil {
		return err
	}
	data := buf.Bytes()
	switch {
	case int64(len(data)) > opts.MaxFileBytes:
		s.skip(p, skipLimit)
		return nil
	case bytes.IndexByte(data, 0) >= 0:
		s.skip(p, skipBinary)
		return nil
	case !utf8.Valid(data):
		s.skip(p, skipNonUTF8)
		return nil
	}
	if len(s.files) >= opts.MaxFiles {
		return &errcode.Error{Code: errcode.WorkspaceLimit, Op: op,
			Message: fmt.Sprintf("the project has more than %d text files; raise the file limit or exclude directories", opts.MaxFiles)}
	}
	s.bytes += int64(len(data))
	if s.bytes > opts.MaxTotalBytes {
		return &errcode.Error{Code: errcode.WorkspaceLimit, Op: op,
			Message: fmt.Sprintf("the project's text files pass %d bytes; raise the byte limit or exclude directories", opts.MaxTotalBytes)}
	}
	mode := fs.FileMode(0o644)
	if fi.Mode().Perm()&0o100 != 0 {
		mode = 0o755
	}
	e := &entry{data: data, mode: mode}
	s.files[p] = e
	emit(item{path: p, e: e, mtime: fi.ModTime()})
	return nil
}

// computeDigest hashes every path, mode and content in path order.
func (s *snapshot) computeDigest() string {
	h := sha256.New()
	for _, p := range slices.Sorted(maps.Keys(s.files)) {
		e := s.files[p]
		sum := sha256.Sum256(e.data)
		fmt.Fprintf(h, "%s\x00%o\x00%x\n", p, e.mode, sum)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// copyInScript extracts the tar on stdin into the workspace as the sandbox
// user and prints the mark: the change time of a file created after the
// extraction, from which on Diff looks for changes. Exit 98: the sandbox
// user cannot write the workspace or home (the image made them for
// another user, or, in disk storage, they are not made yet); the owners'
// uids are printed, 0 for a directory that is missing. The workspace and
// home directories are then made world-writable and sticky, as the tmpfs
// volumes are, when the sandbox user owns them (disk storage, in an image
// that made them for it): root writes the kept mark there. Exit 93: the image already has files in the workspace directory.
const copyInScript = `w=$1 h=$2 c=$3 cmax=$4 k=$5
shift 5
if [ ! -w "$w" ] || [ ! -w "$h" ] || { [ -n "$c" ] && [ ! -w "$c" ]; }; then for d in "$w" "$h" ${c:+"$c"}; do stat -c %u "$d" 2>/dev/null || echo 0; done; exit 98; fi
[ -z "$(ls -A "$w")" ] || exit 93
for d in "$w" "$h"; do [ -k "$d" ] || chmod 1777 "$d" 2>/dev/null; done
mkdir -p "$h/tmp" || exit 96
tar -x -f - -C "$w" || exit 95
while [ "$k" -gt 0 ]; do { mkdir -p "${1%/*}" && ln -s "$2" "$1"; } || exit 94; shift 2; k=$((k-1)); done
if [ -n "$c" ] && [ "$(du -sk "$c" 2>/dev/null | cut -f1)" -gt "$cmax" ]; then find "$c" -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null; fi
m=$h/.harness-mark.$$
: > "$m" && stat -c %z "$m" && rm -f "$m"`

// fixOwnershipScript runs as the owner of the workspace and home volumes
// when the sandbox user cannot write them (root, for an image without those
// directories, or the user the image made them for). An owner may change
// the mode of its own files without any capability; the container has
// none. A directory still missing (disk storage, when the copy came before
// the reaper made it) is made by root, as the reaper makes it.
const fixOwnershipScript = `for d; do if [ -e "$d" ]; then chmod 0777 "$d"; else mkdir -p "$d" && chmod 1777 "$d"; fi || exit 1; done`

// copyIn streams the scanned tree (items) into the container and returns
// the mark once it is extracted. With a rider (r, not nil), its command
// runs in the copy-in's process once the tree is in (rider.go), check
// passed; r is answered on every path.
func (w *Workspace) copyIn(ctx context.Context, items []item, r *rider, check func() error) (string, error) {
	const op = "copy project into the container"
	for attempt := 0; ; attempt++ {
		pr := pipeTar(func(tw io.Writer) error { return writeItems(tw, items) })
		var (
			out    string
			code   int
			stderr string
			err    error
		)
		if r != nil {
			var mark string
			mark, code, out, stderr, err = w.copyInRiding(ctx, op, pr, r, check)
			r = nil
			if mark != "" {
				pr.CloseWithError(io.ErrClosedPipe)
				return mark, nil
			}
		} else {
			var b bytes.Buffer
			code, stderr, err = w.script(ctx, op, copyInScript, w.copyInArgs(), pr, &b)
			out = b.String()
		}
		pr.CloseWithError(io.ErrClosedPipe)
		if err != nil {
			return "", err
		}
		switch {
		case code == 98 && attempt == 0:
			if err := w.openVolumes(ctx, op, strings.Fields(out)); err != nil {
				return "", err
			}
			continue
		case code == 98:
			return "", failed(op, "the sandbox user "+w.user+" cannot write "+WorkDir, nil)
		case code == 94:
			return "", failed(op, "linking the project's dependency folders failed: "+stderr, nil)
		case code == 93:
			return "", failed(op, "image "+w.opts.Image+" already has files in "+WorkDir+"; use an image where it is empty or absent", nil)
		case code != 0:
			return "", failed(op, fmt.Sprintf("extracting the project failed (exit %d): %s; the image needs sh, tar and stat (busybox or coreutils)", code, stderr), nil)
		}
		mark := strings.TrimSpace(out)
		if !markRE().MatchString(mark) {
			return "", failed(op, "the image's stat does not print change times with nanoseconds (busybox or coreutils needed)", nil)
		}
		return mark, nil
	}
}

// openVolumes makes the workspace and home volumes (and the build cache)
// writable for the sandbox user, running chmod as their owners (uids, in
// the order of copyInArgs).
func (w *Workspace) openVolumes(ctx context.Context, op string, owners []string) error {
	dirs := []string{WorkDir, HomeDir}
	if a := w.copyInArgs(); a[2] != "" {
		dirs = append(dirs, a[2])
	}
	if len(owners) != len(dirs) {
		return failed(op, "the sandbox user "+w.user+" cannot write "+WorkDir, nil)
	}
	byOwner := map[string][]string{}
	for i, dir := range dirs {
		byOwner[owners[i]] = append(byOwner[owners[i]], dir)
	}
	for _, uid := range slices.Sorted(maps.Keys(byOwner)) {
		code, stderr, err := w.scriptAs(ctx, uid, op, fixOwnershipScript, byOwner[uid], nil, io.Discard)
		if err != nil {
			return err
		}
		if code != 0 {
			return failed(op, "cannot open "+strings.Join(byOwner[uid], " and ")+" to the sandbox user "+w.user+": "+stderr, nil)
		}
	}
	return nil
}

// pipeTar runs write in a goroutine and returns the read end of its
// output; writes are buffered so the stream moves in large chunks.
func pipeTar(write func(io.Writer) error) *io.PipeReader {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 256<<10)
		err := write(bw)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// writeItems writes a scanned tree as a tar stream: directories and files
// in the order the scan met them (parents first), files with the host's
// modification times (so make sees sensible times). Ownership is left to
// the extracting user.
func writeItems(w io.Writer, items []item) error {
	tw := tar.NewWriter(w)
	now := time.Now().Truncate(time.Second)
	for _, it := range items {
		hdr := &tar.Header{Typeflag: tar.TypeDir, Name: it.path + "/", Mode: 0o755, ModTime: now}
		if it.e != nil {
			hdr = &tar.Header{Typeflag: tar.TypeReg, Name: it.path, Mode: int64(it.e.mode), Size: int64(len(it.e.data)),
				ModTime: it.mtime.Truncate(time.Second)}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if it.e != nil {
			if _, err := tw.Write(it.e.data); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

// markRE is the shape of `stat -c %z` under TZ=UTC0 in busybox and coreutils.
var markRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} \+0000$`) })
