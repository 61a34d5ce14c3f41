package dockerws

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http/httptrace"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	cerrdefs "github.com/containerd/errdefs"
	"github.com/google/uuid"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/attest"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/toolchain"
	"github.com/harness-dev/harness/internal/workspace"
)

// Paths inside the container.
const (
	// WorkDir holds the copy of the project; every workspace path is
	// relative to it.
	WorkDir = "/workspace"
	// HomeDir is $HOME of the sandbox user, on its own volume so caches
	// (Go build cache, pip) live on disk and stay out of the patch. $TMPDIR
	// is HomeDir/tmp for the same reason.
	HomeDir = "/home/harness"
)

// Defaults for the zero values of Options.
const (
	DefaultImage         = "harness-sandbox"
	DefaultMaxFiles      = 20_000
	DefaultMaxFileBytes  = 2 << 20   // larger files are skipped and reported
	DefaultMaxTotalBytes = 128 << 20 // a bigger tree fails with WORKSPACE_LIMIT
	DefaultMemoryBytes   = 2 << 30
	// DefaultMaxWorkspaceBytes is the quota of the workspace directory and,
	// separately, of $HOME.
	DefaultMaxWorkspaceBytes = 2 << 30
	DefaultPidsLimit         = 512
	// TmpBytes is the size of the tmpfs on /tmp.
	TmpBytes = 64 << 20
	// MaxReadBytes bounds what ReadFile loads, like the local workspace.
	MaxReadBytes = 16 << 20
	// DefaultExecTimeout and DefaultMaxOutput apply when an ExecRequest
	// leaves Timeout or MaxOutput zero.
	DefaultExecTimeout = 30 * time.Second
	DefaultMaxOutput   = 64 << 10
	// DefaultUser runs processes when the image names no non-root user.
	DefaultUser = "65534:65534"
)

// Labels put on every container and volume Harness creates.
const (
	LabelWorkspace = "dev.harness.workspace" // the workspace ID; marks Harness objects
	LabelSession   = "dev.harness.session"   // the session the workspace belongs to
	LabelOwner     = "dev.harness.owner"     // boot ID/pid/start time of the creating process
	LabelOwnerNS   = "dev.harness.owner.ns"  // the creating process's PID namespace (inode of /proc/self/ns/pid)
)

// Options configures Open. Zero values take the defaults above.
type Options struct {
	Root          string   // host project directory, copied in (never mounted)
	Image         string   // image name or ID; default harness-sandbox; never pulled
	SessionID     string   // recorded in the container's labels
	Exclude       []string // user exclusions, gitignore-like globs (see Exclude rules in doc.go)
	MaxFiles      int
	MaxFileBytes  int64
	MaxTotalBytes int64
	MemoryBytes   int64 // for processes; the container's limit adds the file systems in memory
	// MaxWorkspaceBytes caps what the workspace directory, and $HOME
	// apart, may hold: writes beyond it fail with ENOSPC in the container.
	MaxWorkspaceBytes int64
	NanoCPUs          int64 // default: DefaultNanoCPUs()
	PidsLimit         int64
	DockerHost        string // "" = DOCKER_HOST from the environment, else the default socket
	// SecretEnv names more variables that hold secrets (a configured key
	// variable), kept from host git with those workspace.HostEnv drops.
	SecretEnv []string
	// Patch, when set, is a patch such as Diff returns to replay on the
	// project tree: the workspace opens with it applied (a resumed
	// session's work) and, until something else changes the tree, Diff
	// answers it. A patch that no longer applies fails the open.
	Patch string
	// HostChanges are the patches the host tree received after Patch was
	// made (applied there, or taken back), oldest first (rebase.go): the
	// open takes them back from the scanned tree, replays Patch on the
	// tree that gives, and diffs against the tree as scanned. When they
	// no longer fit the tree (its files were edited since), Patch is
	// replayed on the tree as it is.
	HostChanges []HostChange
	// Defer holds the background open until Begin is called or a call
	// needs the workspace (harness exec begins it with its first model
	// request, so that the open never competes with what comes before).
	Defer bool
	// Toolchain is what of the host the container sees besides the copy
	// (toolchain.Detect): read-only mounts, links to them, variables,
	// masked credential-like paths. Only for a daemon on this machine.
	Toolchain toolchain.Plan
	// CacheVolume, when set, names the project's build cache volume
	// (CacheVolume()), made on first use with CacheProject in its label
	// and mounted writable at toolchain.Cache; when it holds more than
	// CacheBytes (default DefaultCacheBytes) at open, it is emptied.
	CacheVolume  string
	CacheProject string
	CacheBytes   int64
	// MaxPatchBytes, when positive, bounds Diff's patch: a bigger one fails
	// with WORKSPACE_LIMIT, before any content is copied out when the new
	// files alone pass it (a session records patches of a bounded size).
	MaxPatchBytes int64
	// Spare, when set, keeps a warm spare (spare.go): the open claims a
	// started, empty container of this user made with exactly the
	// configuration it would create, instead of creating one, and once the
	// workspace is first used a new spare is made in the background for
	// the next open. SpareIdle bounds a spare's idle life (default
	// DefaultSpareIdle).
	Spare     bool
	SpareIdle time.Duration
	// MaxJobs bounds the background jobs running at once (jobs.go);
	// default workspace.DefaultMaxJobs.
	MaxJobs int
	// JobsBefore is the number of background jobs the session started in
	// its earlier workspaces: this one's first job is job-(JobsBefore+1),
	// so that a job ID names one job across the session's history.
	JobsBefore int
}

// DefaultNanoCPUs is the container's CPU limit on a host with cpus cores:
// every core, so the project's build and tests run as fast in the sandbox
// as on the host (a second session's `go test` of go-cmp: 1.75× the host's
// time with one core of two, 1.02× with both). What keeps a busy workspace
// from taking the machine is its CPU weight (CPUShares): a quarter of a
// host process's, so whatever else runs on the host is served first.
func DefaultNanoCPUs(cpus int) int64 {
	return int64(max(cpus, 1)) * 1e9
}

// CPUShares is the container's CPU weight, against the 1024 of a host
// process: under contention the sandbox gets a fifth of a core's time
// against one busy host process, all of it when the host is idle.
const CPUShares = 256

func (o *Options) defaults() {
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if o.MemoryBytes <= 0 {
		o.MemoryBytes = DefaultMemoryBytes
	}
	if o.MaxWorkspaceBytes <= 0 {
		o.MaxWorkspaceBytes = DefaultMaxWorkspaceBytes
	}
	if o.NanoCPUs <= 0 {
		o.NanoCPUs = DefaultNanoCPUs(goruntime.NumCPU())
	}
	if o.PidsLimit <= 0 {
		o.PidsLimit = DefaultPidsLimit
	}
	if o.MaxJobs <= 0 {
		o.MaxJobs = workspace.DefaultMaxJobs
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.SpareIdle <= 0 {
		o.SpareIdle = DefaultSpareIdle
	}
}

// Workspace is a copy of a project inside one long-lived, locked-down
// container. It implements workspace.Workspace; only Open and Start make
// one, and only a value they made is attested.
type Workspace struct {
	cli     *client.Client
	id      string // workspace ID, also the LabelWorkspace value
	cid     string // container ID
	user    string // the user every process runs as
	opts    Options
	imageID string
	excl    workspace.Excludes

	// scanned is closed once the background scan has read the project
	// tree; then base is the host tree as copied in and initial the tree
	// the container gets (base with opts.Patch applied), with initialDirs
	// its directories — none of them ever changes — or scanErr says why
	// the tree was refused.
	scanned     chan struct{}
	scanErr     error
	patchInTree bool // the recorded patch was already in the tree (PatchInTree)
	// origin is the digest of the tree the recorded patch was replayed on:
	// the scanned tree with Options.HostChanges taken back ("" when none
	// were, or they no longer fitted the tree); pending is the patch from
	// the scanned tree to initial when HostChanges were taken back.
	origin, pending string
	base            *snapshot
	// baseFiles is what Diff compares with: base's files, moved along
	// with the host tree by Rebase (guarded by lock once scanned is
	// closed); baseDigest (guarded by mu) names it once moved.
	baseFiles   map[string]*entry
	baseDigest  string
	initial     map[string]*entry
	initialDirs map[string]bool

	// lock serializes the operations that change the tree or the diff
	// state (WriteFile, Exec, Diff, ApplyPatch): a one-slot semaphore, so a
	// waiter can give up when its ctx ends or the workspace closes.
	lock    chan struct{}
	cur     *tree  // guarded by lock: the tree as of the last refresh
	initPID string // guarded by lock: the host PID of the container's init, once killAll looked it up

	mu sync.Mutex
	// life (guarded by mu) is where the workspace stands (lifecycle.go);
	// lostErr (guarded by mu) is what Lost saw once it is lost.
	life    lifeState
	lostErr error
	// rider (guarded by mu) is the command waiting to ride the copy-in
	// (rider.go), until the open starts copying.
	rider *rider
	execs atomic.Int64 // execs started: a test's count
	kept  string       // guarded by mu: the container's name once Keep renamed it
	// makeMu is held by the open while it creates or claims a container,
	// and by an Abandon during the open to learn what it made: opening
	// and openingClaim (a claimed spare's claim name), guarded by makeMu,
	// while cid is read only once ready is closed. Abandon removes that
	// container even while the open is still under way.
	makeMu                sync.Mutex
	opening, openingClaim string
	done                  chan struct{} // closed by Close
	touched               bool          // guarded by mu: a write, exec or patch was asked for
	// wide (guarded by mu): since the last refresh, something other than
	// WriteFile may have changed the tree (a process, a patch), so the
	// next refresh lists it whole; otherwise only the files written
	// (guarded by mu: their real paths) are read again.
	wide    bool
	written map[string]bool

	// ready is closed once the container is up and the tree copied in,
	// in the background; openErr is then the open's failure, if any.
	// stopOpen cancels the background open; begun, closed once by Begin,
	// lets it start.
	ready   chan struct{}
	openErr error
	plan    toolchain.Plan // opts.Toolchain as checked by the background open (set before ready is closed)
	// storage is where /workspace and $HOME live (workspace.StorageDisk or
	// StorageTmpfs), chosen by the background open before it creates the
	// container (set before ready is closed); imageSize is the image's
	// size, which a btrfs quota counts (diskQuota).
	storage   string
	imageSize int64
	stopOpen  context.CancelFunc
	begun     chan struct{}
	begin     sync.Once

	spare spareState // Options.Spare: the claim and the replacement

	jobs jobTable // the background jobs (jobs.go)
}

var _ workspace.Workspace = (*Workspace)(nil)

// Open is Start and then Ready: it returns once the project's text tree
// is copied into a new container. On failure nothing stays open.
//
// Codes: those of Start and Ready.
func Open(ctx context.Context, opts Options) (*Workspace, error) {
	w, err := Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := w.Ready(ctx); err != nil {
		_ = w.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return w, nil
}

// Start returns the attested workspace of the project under opts.Root at
// once and opens it in the background, so that the caller can send its
// first model request meanwhile: it reads the tree (the scan: every file
// read, classified and hashed, git's ignored paths listed), then, for a
// tree it accepted, creates the container and copies the tree into it,
// opts.Patch applied. Containers and volumes left by crashed Harness
// processes are removed alongside.
//
// Before it returns, Start checks only what costs the same for any
// project: the exclude patterns, that the root is a directory, that
// opts.Patch parses, and the image, resolved to its immutable ID without
// pulling. What the tree itself holds — a credential-like path, a limit, an
// unreadable file, a patch that no longer applies — and what the container
// does is known later: Scanned and Opened tell when, OpenError and Ready
// what. From then on every operation fails with that error (the model's
// tools get its code).
//
// An operation waits only for what it needs: ReadFile and List of a
// workspace nothing was written, run or patched in yet answer from the
// scanned tree (the container's copy is that tree), Diff of one answers
// opts.Patch at once; WriteFile, Exec, ApplyPatch and Keep wait for the
// container. Close cancels the background open.
//
// Codes: WORKSPACE_NOT_FOUND (root or image missing), WORKSPACE_PATH (a bad
// exclude pattern or a path of opts.Patch no tool could name),
// TOOL_BAD_INPUT (opts.Patch does not parse),
// WORKSPACE_CONTAINER_FAILED, TOOL_CANCELED (ctx ended).
func Start(ctx context.Context, opts Options) (*Workspace, error) {
	w, imgEnv, pf, err := prepare(ctx, opts, true)
	if err != nil {
		return nil, err
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.stopOpen = cancel
	attest.Register(w)
	go func() {
		defer cancel()
		select {
		case <-w.begun:
		case <-bg.Done():
			// Closed before it began: nothing was made.
			w.scanErr = openFailed(canceled(bg, "open docker workspace"))
			close(w.scanned)
			w.openErr = w.scanErr
			_, _ = w.step(evOpenFailed, "")
			close(w.ready)
			return
		}
		w.openErr = openFailed(w.build(bg, imgEnv, pf))
		if w.openErr != nil {
			_, _ = w.step(evOpenFailed, "")
		} else {
			_, _ = w.step(evOpened, "")
		}
		close(w.ready)
	}()
	if !opts.Defer {
		w.Begin()
	}
	return w, nil
}

// Begin lets a workspace started with Options.Defer open; it does nothing
// once it did, or without Defer.
func (w *Workspace) Begin() {
	w.begin.Do(func() { close(w.begun) })
}

// openFailed marks the error of a background open (nil stays nil) so that
// every call failing with it says the workspace never opened
// (workspace.ErrOpenFailed), with the open's own code and message.
func openFailed(err error) error {
	if err == nil || errors.Is(err, workspace.ErrOpenFailed) {
		return err
	}
	return &errcode.Error{Code: errcode.Of(err), Message: errcode.Message(err), Err: errors.Join(workspace.ErrOpenFailed, err)}
}

// Ready waits for the background open and returns its error, if any.
// Codes: WORKSPACE_CREDENTIAL_INPUT, WORKSPACE_LIMIT, WORKSPACE_NOT_FOUND
// (the root vanished), TOOL_EXECUTION_FAILED (an unreadable file, or
// opts.Patch no longer applies), TOOL_BAD_INPUT, WORKSPACE_PATH,
// WORKSPACE_CONTAINER_FAILED, WORKSPACE_DISPOSED, TOOL_CANCELED.
func (w *Workspace) Ready(ctx context.Context) error {
	return w.waitReady(ctx, "open docker workspace")
}

// Scanned is closed once the project tree is read (or refused): from then
// on Snapshot and Info describe it, and OpenError tells a refusal.
func (w *Workspace) Scanned() <-chan struct{} { return w.scanned }

// Opened is closed once the background open is over, container and copy
// included, whether it succeeded or not (OpenError, Ready).
func (w *Workspace) Opened() <-chan struct{} { return w.ready }

// OpenError is the background open's failure as far as it is known now:
// the scan's as soon as the tree is refused, the open's once it is over;
// nil while none is known. It never waits.
func (w *Workspace) OpenError() error {
	select {
	case <-w.ready:
		return w.openErr
	default:
	}
	select {
	case <-w.scanned:
		return w.scanErr
	default:
		return nil
	}
}

// Lost reports, with the coded error the workspace's operations now get,
// that its container went away after the open made it: removed, or
// stopped (a Docker daemon restart stops every container, and the files
// of its in-memory tree go with it). Nil while the container runs, while
// the open is not over or failed, once the workspace is closed, and when
// the daemon cannot be asked (Check says so).
// A lost workspace stays lost (PhaseLost): every later operation that
// needs the container fails at once with the error Lost returned.
func (w *Workspace) Lost(ctx context.Context) error {
	lost, _ := w.Check(ctx)
	return lost
}

// Check asks the daemon about the workspace's container once: lost is
// Lost's answer; unreachable (WORKSPACE_CONTAINER_FAILED) says the daemon
// did not answer (stopped, its socket gone), so that a turn started now
// could run nothing. Both are nil while the open is not over or failed,
// and once the workspace is closed.
func (w *Workspace) Check(ctx context.Context) (lost, unreachable error) {
	const op = "check the workspace container"
	select {
	case <-w.ready:
	default:
		return nil, nil
	}
	switch d, err := w.step(evCheck, op); d.act {
	case actRefuse: // lost already: it stays so
		return err, nil
	case actNothing: // failed, or closed
		return nil, nil
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := w.cli.ContainerInspect(ictx, w.cid, client.ContainerInspectOptions{})
	switch {
	case cerrdefs.IsNotFound(err):
		lost = containerError(ctx, op, w.opts.SessionID, err)
	case err != nil:
		if ctx.Err() != nil {
			return nil, nil // the caller gave up: nothing is known
		}
		return nil, dockerError(ictx, op, err)
	case info.Container.State != nil && !info.Container.State.Running:
		lost = &errcode.Error{Code: errcode.WorkspaceContainerFailed, Op: op,
			Message: "the workspace container is not running (a Docker daemon restart stops it); " + lostContainer(w.opts.SessionID)}
	default:
		return nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch d, _ := w.stepLocked(evGone, op); {
	case d.act == actGo:
		w.lostErr = lost
	case w.life.phase != PhaseLost: // closed meanwhile
		return nil, nil
	}
	return w.lostErr, nil
}

func (w *Workspace) waitReady(ctx context.Context, op string) error {
	w.Begin()
	select {
	case <-w.ready:
		return w.openErr
	default:
	}
	select {
	case <-w.ready:
		return w.openErr
	case <-w.done:
		return disposed(op)
	case <-ctx.Done():
		return canceled(ctx, op)
	}
}

// waitScanned waits for the scan only and returns what is known to have
// failed by then (the scan's refusal, or an open already over in failure).
func (w *Workspace) waitScanned(ctx context.Context, op string) error {
	w.Begin()
	select {
	case <-w.scanned:
	default:
		select {
		case <-w.scanned:
		case <-w.done:
			return disposed(op)
		case <-ctx.Done():
			return canceled(ctx, op)
		}
	}
	if err := w.OpenError(); err != nil {
		return err
	}
	return nil
}

// prepare checks what an open can check at a cost independent of the
// project, connects and, when resolve is set, resolves the image.
func prepare(ctx context.Context, opts Options, resolve bool) (*Workspace, []string, []*gitdiff.File, error) {
	const op = "open docker workspace"
	opts.defaults()
	if opts.Root == "" {
		return nil, nil, nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no project directory given"}
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, nil, nil, &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "resolve " + opts.Root, Err: err}
	}
	opts.Root = root
	excl, err := workspace.CompileExcludes(opts.Exclude)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkRoot(op, root); err != nil {
		return nil, nil, nil, err
	}
	pf, err := parsePatch("replay the session's patch", opts.Patch)
	if err != nil {
		return nil, nil, nil, err
	}
	cli, err := newClient(opts.DockerHost)
	if err != nil {
		return nil, nil, nil, err
	}
	w := &Workspace{
		cli:     cli,
		id:      "ws-" + uuid.NewString(),
		opts:    opts,
		excl:    excl,
		lock:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		scanned: make(chan struct{}),
		ready:   make(chan struct{}),
		begun:   make(chan struct{}),
	}
	w.jobs.started = max(opts.JobsBefore, 0)
	if !resolve {
		return w, nil, pf, nil
	}
	img, err := cli.ImageInspect(ctx, opts.Image)
	if err != nil {
		cli.Close()
		return nil, nil, nil, imageError(ctx, op, opts.Image, err)
	}
	w.imageID, w.imageSize = img.ID, img.Size
	var imgUser string
	var imgEnv []string
	if img.Config != nil {
		imgUser, imgEnv = img.Config.User, img.Config.Env
	}
	w.user = sandboxUser(imgUser)
	return w, imgEnv, pf, nil
}

// checkRoot reports a project root that is not a directory.
func checkRoot(op, root string) error {
	fi, err := os.Stat(root)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return &errcode.Error{Code: errcode.WorkspaceNotFound, Op: op, Message: "no directory at " + root, Err: err}
	default:
		return &errcode.Error{Code: errcode.ToolExecutionFailed, Op: op, Message: "open directory " + root, Err: err}
	}
}

// build scans the tree and, once the scan accepts it, creates and starts
// the container and streams the tree in. No container is made for a tree
// that is refused, and none is being made while a turn that ends before
// the scan does runs. On failure the container is removed.
func (w *Workspace) build(ctx context.Context, imgEnv []string, pf []*gitdiff.File) error {
	// Crash leftovers are removed alongside, not before; failing to reap
	// them is not a reason to refuse a new workspace. The reaper never
	// touches this workspace's container: its owner is alive. The client
	// may be closed under it once the workspace is closed: its calls then
	// fail, which it ignores.
	go reapLeftovers(ctx, w.cli)
	// The toolchain's trees are checked for credential files while the
	// project's tree is scanned.
	checked := make(chan toolchain.Plan, 1)
	go func() { checked <- w.opts.Toolchain.Checked(ctx) }()
	// So is the daemon's storage driver asked, once per process and daemon.
	stored := make(chan Storage, 1)
	go func() { s, _ := choiceFor(w.opts.DockerHost).get(ctx, w.cli); stored <- s }()
	items := w.scanInto(ctx, pf)
	w.plan = <-checked
	w.storage = (<-stored).Kind
	if w.scanErr != nil {
		return w.scanErr
	}
	// A failed removal is left to the reaper (the container is labelled):
	// the error returned is the one that stopped the build.
	if err := createContainer(ctx, w, imgEnv); err != nil {
		_ = w.dispose(ctx)
		return err
	}
	// The claimed spare's owner record, made alongside the copy: a
	// command riding the copy-in starts only once it is made.
	recorded := func() error {
		rec := w.spare.recorded
		if rec == nil {
			return nil
		}
		w.spare.recorded = nil
		return <-rec
	}
	mark, err := w.copyIn(ctx, items, w.takeRider(), recorded)
	if rerr := recorded(); err == nil {
		err = rerr
	}
	if err != nil && w.spare.claimed != "" && ctx.Err() == nil {
		// The claimed spare failed under the copy (removed by a reaper
		// that does not know spares): a container of its own then.
		_ = w.dispose(ctx)
		w.cid, w.spare.claimed, w.spare.noClaim = "", "", true
		if err = createContainer(ctx, w, imgEnv); err == nil {
			mark, err = w.copyIn(ctx, items, nil, recorded)
		}
	}
	if err != nil {
		_ = w.dispose(ctx)
		return err
	}
	w.cur = &tree{mark: mark, files: w.initial}
	return nil
}

// scanInto reads the tree, applies the patch to replay and publishes the
// result (closing scanned). It returns what the container gets, in the
// order to extract it: the files the patch touches come last, patched.
func (w *Workspace) scanInto(ctx context.Context, pf []*gitdiff.File) []item {
	touched := map[string]bool{}
	for _, p := range pf {
		touched[p.OldName], touched[p.NewName] = true, true
	}
	changes, err := parseChanges("replay the session's patch", w.opts.HostChanges)
	if err != nil {
		w.scanErr = openFailed(err)
		close(w.scanned)
		return nil
	}
	touchedPaths(touched, changes...)
	var items []item
	snap, err := readTree(ctx, w.opts, w.excl, func(it item) {
		if it.e == nil || !touched[it.path] {
			items = append(items, it)
		}
	})
	initial := map[string]*entry(nil)
	if err == nil {
		initial = snap.files
		if len(pf) > 0 || len(changes) > 0 {
			initial, items, err = w.rebuild(snap, pf, changes, touched, items)
		}
	}
	if err == nil {
		w.base, w.baseFiles, w.initial, w.initialDirs = snap, snap.files, initial, dirsOf(snap.dirs, initial)
	}
	w.scanErr = openFailed(err)
	close(w.scanned)
	return items
}

// rebuild is the tree a resumed workspace starts from: the recorded patch
// pf replayed on the scanned tree, once the host changes made since it
// was (changes) are taken back from it. items, what the copy gets of the
// scan, gains the files the patches touch as they are to be written.
func (w *Workspace) rebuild(snap *snapshot, pf []*gitdiff.File, changes [][]*gitdiff.File, touched map[string]bool, items []item) (map[string]*entry, []item, error) {
	start := snap.files
	if len(changes) > 0 {
		if undone, err := undoChanges(snap.files, changes, true); err == nil {
			start = undone
			w.origin = (&snapshot{files: undone}).computeDigest()
		}
	}
	var (
		initial map[string]*entry
		err     error
	)
	initial, _, w.patchInTree, err = replay(w.opts.Root, start, pf)
	if err != nil {
		return nil, nil, err
	}
	if w.origin != "" {
		w.pending = formatPatch(snap.files, initial, w.opts.MaxFileBytes)
	}
	now := time.Now()
	for _, p := range slices.Sorted(maps.Keys(touched)) {
		if e := initial[p]; p != "" && e != nil {
			items = append(items, item{path: p, e: e, mtime: now})
		}
	}
	return initial, items, nil
}

// Origin is the identity (as Snapshot) of the tree the recorded patch was
// replayed on, once the tree is scanned: the scanned tree itself, or,
// when Options.HostChanges were taken back from it, the tree that gave.
func (w *Workspace) Origin() string {
	select {
	case <-w.scanned:
	default:
		return ""
	}
	if w.origin != "" {
		return w.origin
	}
	return w.Snapshot()
}

// ErrReplayConflict is in the error of an open whose Options.Patch no
// longer applies to the project tree (errors.Is): the session's recorded
// work does not fit the files as they are now.
var ErrReplayConflict = errors.New("the recorded patch no longer applies to the project tree")

// replay applies the parsed patch pf to the scanned tree base; it returns
// the tree the container gets and the files the patch touches, as they
// are to be written. A tree that already holds the patch (it was applied
// to the host: the patch applies in reverse) is taken as it is, with
// inTree set: the session's work is in the project now, and the
// workspace's diff starts from it. Code: that of applyFiles, with a
// message saying the patch no longer applies to the project tree at root.
func replay(root string, base map[string]*entry, pf []*gitdiff.File) (_ map[string]*entry, _ []item, inTree bool, _ error) {
	now := time.Now()
	writes, deletes, err := applyFiles(base, pf)
	if err != nil {
		if _, _, rerr := applyFiles(base, reversed(textFiles(pf))); rerr == nil {
			var items []item
			for _, f := range pf {
				for _, p := range []string{f.OldName, f.NewName} {
					if e := base[p]; p != "" && e != nil && !slices.ContainsFunc(items, func(it item) bool { return it.path == p }) {
						items = append(items, item{path: p, e: e, mtime: now})
					}
				}
			}
			return base, items, true, nil
		}
		return nil, nil, false, &errcode.Error{Code: errcode.Of(err), Op: "replay the session's patch", Err: errors.Join(ErrReplayConflict, err), Message: fmt.Sprintf(
			"the session's recorded patch no longer applies to the project tree at %s (did its files change?): %s", root, errcode.Message(err))}
	}
	out := maps.Clone(base)
	for _, p := range deletes {
		delete(out, p)
	}
	var items []item
	for _, p := range slices.Sorted(maps.Keys(writes)) {
		out[p] = writes[p]
		items = append(items, item{path: p, e: writes[p], mtime: now})
	}
	return out, items, false, nil
}

// textFiles is pf without its binary file patches: a binary file applied
// to the host is not in the scanned tree (the copy leaves binary and large
// files out), so only the text files can show that the patch is there.
func textFiles(pf []*gitdiff.File) []*gitdiff.File {
	var out []*gitdiff.File
	for _, f := range pf {
		if !f.IsBinary {
			out = append(out, f)
		}
	}
	return out
}

// reversed is the patch that undoes pf: applied to a tree that holds pf's
// result, it gives the tree pf was made on.
func reversed(pf []*gitdiff.File) []*gitdiff.File {
	out := make([]*gitdiff.File, 0, len(pf))
	for i := len(pf) - 1; i >= 0; i-- {
		f := *pf[i]
		f.OldName, f.NewName = f.NewName, f.OldName
		f.OldMode, f.NewMode = f.NewMode, f.OldMode
		f.OldOIDPrefix, f.NewOIDPrefix = f.NewOIDPrefix, f.OldOIDPrefix
		f.IsNew, f.IsDelete = f.IsDelete, f.IsNew
		f.BinaryFragment, f.ReverseBinaryFragment = f.ReverseBinaryFragment, f.BinaryFragment
		f.TextFragments = make([]*gitdiff.TextFragment, len(pf[i].TextFragments))
		for j, fr := range pf[i].TextFragments {
			g := *fr
			g.OldPosition, g.NewPosition = fr.NewPosition, fr.OldPosition
			g.OldLines, g.NewLines = fr.NewLines, fr.OldLines
			g.LinesAdded, g.LinesDeleted = fr.LinesDeleted, fr.LinesAdded
			g.Lines = make([]gitdiff.Line, len(fr.Lines))
			for k, l := range fr.Lines {
				switch l.Op {
				case gitdiff.OpAdd:
					l.Op = gitdiff.OpDelete
				case gitdiff.OpDelete:
					l.Op = gitdiff.OpAdd
				}
				g.Lines[k] = l
			}
			f.TextFragments[j] = &g
		}
		out = append(out, &f)
	}
	return out
}

// PatchInTree reports, once the tree is scanned (Scanned), whether the
// recorded patch (Options.Patch) was found already in the project tree
// rather than replayed: it was applied to the host.
func (w *Workspace) PatchInTree() bool {
	select {
	case <-w.scanned:
		return w.patchInTree
	default:
		return false
	}
}

// dirsOf is the set of directories of a tree: those listed (empty ones
// included) and every parent of its files.
func dirsOf(listed []string, files map[string]*entry) map[string]bool {
	dirs := make(map[string]bool, len(listed))
	for _, d := range listed {
		dirs[d] = true
	}
	for p := range files {
		for d := path.Dir(p); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	return dirs
}

// The steps of a background open, variables so that a test can hold one:
// reapLeftovers removes crash leftovers, readTree scans the project,
// createContainer creates and starts the container.
var (
	reapLeftovers   = func(ctx context.Context, cli *client.Client) { _, _ = reap(ctx, cli, false) }
	readTree        = scanTree
	createContainer = func(ctx context.Context, w *Workspace, imgEnv []string) error { return w.create(ctx, imgEnv) }
)

// sandboxUser keeps the image's user when it names a non-root one.
func sandboxUser(u string) string {
	name, _, _ := strings.Cut(u, ":")
	switch name {
	case "", "0", "root":
		return DefaultUser
	}
	return u
}

// reaperScript is the container's main process, under Docker's init. It
// first makes the workspace and home directories when the image has none
// (disk storage: they are directories of the container's own layer; Docker
// makes the working directory, root-owned, at create) and makes those root
// owns world-writable and sticky, as the tmpfs volumes are (root may make
// them in its own / and change their mode without any capability), then it
// runs as root with CAP_KILL as its only capability (the sandbox user has
// none and cannot signal it) and waits on one sleep of its own; on SIGUSR1
// it kills every other process in the container but that sleep (rounds
// over /proc until one finds nothing to kill, a hundred at most); when a
// round found nothing, it kills the sleep too and starts a new one: a new
// sleep is how the host sees that the clean-up has ended (killAll), so
// that no later command starts while the reaper still kills. That is the
// clean-up of last resort, when a command took every PID and no exec can
// start to kill it: a signal needs no new process, and the reaper forks
// only once nothing else is left (a shell whose fork fails exits, and with
// it the container and the files it holds in memory); after a hundred
// rounds that still found processes it keeps its sleep and waits for the
// next signal. Its own sleep is left alone inside the rounds: it stays a
// zombie, which kill still finds, until the reaper waits for it.
const reaperScript = `for d in ` + WorkDir + ` ` + HomeDir + `; do { [ -d $d ] || mkdir -p $d; } && [ ! -k $d ] && [ "$(stat -c %u $d)" = 0 ] && chmod 1777 $d; done 2>/dev/null
trap 'i=0; while [ $i -lt 100 ]; do k=0; for p in /proc/[0-9]*; do n=${p#/proc/}; case $n in 1|$$|$s) ;; *) kill -9 $n 2>/dev/null && k=1 ;; esac; done; [ $k = 0 ] && break; i=$((i+1)); done; [ $k = 0 ] && kill -9 $s' USR1
sleep infinity & s=$!
while :; do
	wait $s
	kill -0 $s 2>/dev/null || { sleep infinity & s=$!; }
done`

// create creates and starts the container, or claims a warm spare made
// with the same configuration (Options.Spare, spare.go).
func (w *Workspace) create(ctx context.Context, imgEnv []string) error {
	const op = "create container"
	if err := w.ensureCache(ctx); err != nil {
		return err
	}
	if w.opts.Spare && !w.spare.noClaim && w.useSpare(ctx, imgEnv) {
		return nil
	}
	labels := withOwner(map[string]string{
		LabelWorkspace: w.id,
		LabelSession:   w.opts.SessionID,
	})
	w.makeMu.Lock()
	if w.isClosed() {
		w.makeMu.Unlock()
		return disposed(op)
	}
	// The create runs to its answer even when ctx ends: a create canceled
	// in flight is still carried out by the daemon, and a container whose
	// ID never reached us could not be disposed of (a canceled Start, as
	// Abandon does, leaked one that way). Creating takes a fraction of a
	// second; the caller's cancellation is honored right after it.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	createAs := func() (client.ContainerCreateResult, error) {
		cfg, host := w.containerConfig(imgEnv, labels)
		return w.cli.ContainerCreate(cctx, client.ContainerCreateOptions{
			Config:     cfg,
			HostConfig: host,
			Name:       "harness-" + strings.TrimPrefix(w.id, "ws-")[:12],
		})
	}
	res, err := createAs()
	if err != nil && w.storage == workspace.StorageDisk && cctx.Err() == nil && !isNotFound(err) {
		// The daemon refused the size quota (overlay2 on an xfs without
		// pquota, say): tmpfs then, for this open and the process's next.
		choiceFor(w.opts.DockerHost).refuse()
		w.storage = workspace.StorageTmpfs
		res, err = createAs()
	}
	cancel()
	if err != nil {
		w.makeMu.Unlock()
		return dockerError(ctx, op, err)
	}
	w.cid = res.ID
	w.opening = res.ID
	w.makeMu.Unlock()
	if ctx.Err() != nil {
		return canceled(ctx, op)
	}
	if _, err := w.cli.ContainerStart(ctx, w.cid, client.ContainerStartOptions{}); err != nil {
		return dockerError(ctx, "start container", err)
	}
	return nil
}

// containerConfig is the configuration of a workspace's container, labels
// on it and on its volumes: a spare is made with exactly this one.
func (w *Workspace) containerConfig(imgEnv []string, labels map[string]string) (*container.Config, *container.HostConfig) {
	env := withPlanEnv(sandboxEnv(imgEnv), w.plan)
	yes := true
	pids := w.opts.PidsLimit
	cfg := &container.Config{
		Image:           w.imageID,
		User:            "0:0",
		Entrypoint:      []string{"sh", "-c", reaperScript},
		Env:             env,
		WorkingDir:      WorkDir,
		Labels:          labels,
		Hostname:        "harness",
		NetworkDisabled: true,
	}
	host := &container.HostConfig{
		NetworkMode:    "none",
		Init:           &yes,
		ReadonlyRootfs: w.storage != workspace.StorageDisk,
		CapDrop:        []string{"ALL"},
		CapAdd:         []string{"KILL"}, // for the reaper, a root process; the sandbox user gets none
		SecurityOpt:    []string{"no-new-privileges"},
		IpcMode:        "private",
		LogConfig:      container.LogConfig{Type: "none"},
		Tmpfs: map[string]string{
			"/tmp": "rw,exec,nosuid,nodev,mode=1777,size=" + strconv.Itoa(TmpBytes),
		},
		Resources: container.Resources{
			Memory:     memoryLimit(w.opts, w.storage),
			MemorySwap: memoryLimit(w.opts, w.storage), // no swap beyond the limit
			NanoCPUs:   w.opts.NanoCPUs,
			CPUShares:  CPUShares,
			PidsLimit:  &pids,
		},
	}
	if w.storage == workspace.StorageDisk {
		host.StorageOpt = map[string]string{"size": strconv.FormatInt(diskQuota(w.opts, w.imageSize, w.storageDriver()), 10)}
	} else {
		host.Mounts = []mount.Mount{
			quotaVolume(WorkDir, labels, w.opts.MaxWorkspaceBytes),
			quotaVolume(HomeDir, labels, w.opts.MaxWorkspaceBytes),
		}
	}
	w.hostConfigExtras(host)
	return cfg, host
}

// storageDriver is the storage driver of w's daemon as far as this process
// knows it.
func (w *Workspace) storageDriver() string {
	return choiceFor(w.opts.DockerHost).current().Driver
}

// diskQuota is the size quota of a disk-backed workspace's writable layer
// (--storage-opt size): what the two tmpfs volumes held, MaxWorkspaceBytes
// each for /workspace and $HOME, now one quota they share, so that either
// may take more when the other takes less, and neither more than both
// did together. A btrfs quota counts the image's own files too (its limit
// is on the referenced bytes of the container's subvolume, image
// included), so the image's size is added there; overlay2's xfs project
// quota and zfs's quota count only what the container writes.
func diskQuota(o Options, imageSize int64, driver string) int64 {
	q := 2 * o.MaxWorkspaceBytes
	if strings.HasPrefix(driver, "btrfs") {
		q += imageSize
	}
	return q
}

// quotaVolume, in tmpfs storage (a daemon that gives no size quota), is
// an anonymous volume of Docker's local driver backed by a tmpfs of size
// bytes: the quota is the file system's size, so a write
// beyond it fails with ENOSPC inside the container, and the host's disk is
// never written. It works on any daemon (no xfs project quota, which
// --storage-opt size needs on overlay2), and, being a volume mounted by the
// daemon, the archive API sees it. Its pages count in the container's
// memory limit (memoryLimit makes room for them) and it is emptied only
// when the container stops, which a workspace's container does not until
// Close.
func quotaVolume(target string, labels map[string]string, size int64) mount.Mount {
	return mount.Mount{Type: mount.TypeVolume, Target: target, VolumeOptions: &mount.VolumeOptions{
		Labels: labels,
		DriverConfig: &mount.Driver{Name: "local", Options: map[string]string{
			"type": "tmpfs", "device": "tmpfs", "o": "size=" + strconv.FormatInt(size, 10) + ",mode=1777",
		}},
	}}
}

// memoryLimit is the container's memory limit: MemoryBytes for processes
// plus the file systems that live in memory (/tmp, and workspace and $HOME
// in tmpfs storage), so that full file systems leave the processes their
// share.
func memoryLimit(o Options, storage string) int64 {
	if storage == workspace.StorageDisk {
		return o.MemoryBytes + TmpBytes
	}
	return o.MemoryBytes + 2*o.MaxWorkspaceBytes + TmpBytes
}

// sandboxEnv is the container's environment: the image's own variables
// (PATH, GOPATH…), never the host's, with HOME, TMPDIR and TERM set for a
// process without a terminal. Python writes no bytecode caches: they are
// keyed by whole-second modification times, so a same-size edit made in
// the second after a run would be ignored, and they would clutter the tree.
func sandboxEnv(imgEnv []string) []string {
	set := map[string]string{
		"HOME":                    HomeDir,
		"TMPDIR":                  HomeDir + "/tmp",
		"TERM":                    "dumb",
		"PYTHONDONTWRITEBYTECODE": "1",
	}
	env := make([]string, 0, len(imgEnv)+len(set))
	for _, kv := range imgEnv {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		env = append(env, k+"="+set[k])
	}
	if !hasKey(env, "PATH") {
		env = append(env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	}
	return env
}

func hasKey(env []string, key string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			return true
		}
	}
	return false
}

// Info describes the workspace; Files and Skipped once the tree is
// scanned (Scanned), zero before.
func (w *Workspace) Info() workspace.Info {
	info := workspace.Info{
		ID:      w.id,
		Backend: workspace.BackendDocker,
		Image:   w.opts.Image,
		ImageID: w.imageID,
		Root:    w.opts.Root,
	}
	if b := w.scannedBase(); b != nil {
		info.Files = len(b.files)
		info.Skipped = append([]workspace.Skipped(nil), b.skipped...)
	}
	info.Mounts = w.mountsInfo()
	select {
	case <-w.ready:
		if w.openErr == nil {
			info.Storage = w.storage
		}
	default:
	}
	return info
}

// Snapshot is the identity of the host tree as copied in: a SHA-256 over
// every path, mode and content, stable across runs for the same tree. A
// session records it so a resumed workspace can be checked against its
// origin. It is "" until the tree is scanned, and when it was refused.
func (w *Workspace) Snapshot() string {
	b := w.scannedBase()
	if b == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.baseDigest != "" {
		return w.baseDigest // moved with the host (Rebase)
	}
	return b.digest
}

// scannedBase is the scanned host tree, or nil while it is being read or
// when it was refused.
func (w *Workspace) scannedBase() *snapshot {
	select {
	case <-w.scanned:
		return w.base
	default:
		return nil
	}
}

// ContainerID is the ID of the workspace's container (once Ready).
func (w *Workspace) ContainerID() string { return w.cid }

// User is the user every process runs as ("65534:65534" unless the image
// names a non-root user).
func (w *Workspace) User() string { return w.user }

// KeptPrefix starts the name of a container that Keep set aside: Reap and
// Close leave it for the user to review and remove.
const KeptPrefix = "harness-kept-"

// Keep sets the workspace's container aside so that its files outlive the
// process: it is renamed KeptPrefix + a part of the workspace ID (the name
// returned), left running, and neither Close nor Reap removes it; the user
// does, with docker rm -f -v. The workspace stays usable until Close.
// Keeping twice returns the same name.
//
// A container that stopped or went away (Lost) while its tree was in
// memory (tmpfs storage) is not kept: its files are gone
// (WORKSPACE_NOT_FOUND).
//
// Codes: WORKSPACE_CONTAINER_FAILED, WORKSPACE_DISPOSED, TOOL_CANCELED,
// WORKSPACE_NOT_FOUND.
func (w *Workspace) Keep(ctx context.Context) (string, error) {
	const op = "keep container"
	if w.isClosed() {
		return "", disposed(op)
	}
	if err := w.waitReady(ctx, op); err != nil {
		return "", err
	}
	_ = w.Lost(ctx) // a container stopped or gone moves the workspace to lost
	if w.Phase() == PhaseReady {
		// The life the files belong to, for Adopt; a failure to mark it
		// still keeps the files (Adopt then refuses, and docker cp copies
		// them out).
		_ = w.markKept(ctx)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	d := decideLife(w.lifeLocked(), evKeep)
	switch d.act {
	case actRefuse:
		return "", w.refusedLocked(d, op)
	case actName:
		return w.kept, nil
	case actWait: // not reached: the open is over
		return "", disposed(op)
	}
	name := w.keptNameFor()
	if _, err := w.cli.ContainerRename(ctx, w.cid, client.ContainerRenameOptions{NewName: name}); err != nil {
		return "", dockerError(ctx, op, err)
	}
	w.life, w.kept = d.next, name
	return name, nil
}

// Close removes the container and its volumes (unless Keep set it aside)
// and revokes the attestation. Operations in flight end with WORKSPACE_DISPOSED; so does every later
// call, a second Close included.
//
// Codes: WORKSPACE_DISPOSED, WORKSPACE_CONTAINER_FAILED (removal failed; the
// container is labeled and the next Open or Reap removes it).
func (w *Workspace) Close(ctx context.Context) error {
	d, err := w.beginClose()
	if err != nil {
		return err
	}
	attest.Revoke(w)
	if w.stopOpen != nil {
		w.stopOpen()
		<-w.ready // the background open has finished or given up
	}
	w.endJobs()
	if d.act == actRemove {
		err = w.dispose(ctx)
	}
	w.waitJobs(ctx)
	w.cli.Close()
	w.waitSpare(ctx)
	return err
}

// beginClose moves the workspace to closed for Close or Abandon: d says
// whether its container is removed or left (Keep set it aside). Code:
// WORKSPACE_DISPOSED (already closed).
func (w *Workspace) beginClose() (lifeDecision, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, err := w.stepLocked(evClose, "close")
	if err == nil {
		close(w.done)
	}
	return d, err
}

// dispose removes the container with its anonymous volumes. It runs even
// when ctx is canceled, bounded by its own deadline, so a canceled open or
// close does not leak a container.
func (w *Workspace) dispose(ctx context.Context) error {
	if w.cid == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_, err := w.cli.ContainerRemove(ctx, w.cid, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !isNotFound(err) {
		return dockerError(ctx, "remove container", err)
	}
	w.disposeClaim(ctx, w.cli)
	return nil
}

// touch records that the tree may change: from now on Diff must look.
func (w *Workspace) touch() {
	w.mu.Lock()
	w.touched, w.wide = true, true
	w.mu.Unlock()
}

// touchWrite records that WriteFile wrote the file at the real path rel
// ("" when it is unknown, or when other names share its content: then
// the tree is listed whole).
func (w *Workspace) touchWrite(rel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.touched = true
	if rel == "" {
		w.wide = true
		return
	}
	if w.written == nil {
		w.written = map[string]bool{}
	}
	w.written[rel] = true
}

// takeChanges returns, and clears, what changed since the last refresh.
func (w *Workspace) takeChanges() (wide bool, written map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wide, written = w.wide, w.written
	w.wide, w.written = false, nil
	return wide, written
}

// restoreChanges puts back, widened, what a failed refresh took.
func (w *Workspace) restoreChanges() {
	w.mu.Lock()
	w.wide = true
	w.mu.Unlock()
}

// untouched reports whether nothing could have changed the tree since it
// was copied in: no write, exec or patch was ever asked for.
func (w *Workspace) untouched() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.touched
}

// Abandon is Close for a process about to exit: it ends the workspace as
// Close does (operations in flight and later calls fail with
// WORKSPACE_DISPOSED, the attestation is revoked, a container Keep set
// aside stays) but waits for neither
// the background open nor the removal. The removal request is sent, and
// Abandon returns once it is on the wire: the daemon removes the container
// and its volumes on its own, whether or not this process is still there
// to read the answer. A background open still in flight is canceled; the
// container it may still create, or one whose removal the daemon did not
// finish, carries this process as owner and is removed by the next Open
// or Reap (harness doctor) once the process is gone. Code:
// WORKSPACE_DISPOSED (already closed).
func (w *Workspace) Abandon(ctx context.Context) error {
	d, err := w.beginClose()
	if err != nil {
		return err
	}
	attest.Revoke(w)
	w.endJobs()
	// The next run's spare, being made, is waited for (within ctx).
	defer w.waitSpare(ctx)
	if w.stopOpen != nil {
		w.stopOpen()
	}
	var cid, claim string
	select {
	case <-w.ready:
		cid, claim = w.cid, w.spare.claimed
	default:
		// Still opening: the open, canceled, removes what it made, unless
		// the process exits first. A container it has already made or
		// claimed (a running spare) is removed here too, so that it does
		// not hold its memory until the next run's reaper.
		go func() {
			<-w.ready
			_ = w.cli.Close()
		}()
		w.makeMu.Lock() // waits for a create or claim in flight
		cid, claim = w.opening, w.openingClaim
		w.makeMu.Unlock()
		if cid == "" {
			return nil
		}
		return w.removeOnExit(ctx, cid, claim, false)
	}
	if cid == "" || d.act == actLeave { // nothing made, or set aside by Keep
		_ = w.cli.Close()
		return nil
	}
	return w.removeOnExit(ctx, cid, claim, true)
}

// removeOnExit asks the daemon to remove container cid (and the owner
// record of claim, a claimed spare's) and returns once
// the request is written (the daemon finishes it when this process has
// exited), once it is done, or when ctx ends. With closeCli set it closes
// the client after the removal (Abandon's open goroutine closes it
// otherwise).
func (w *Workspace) removeOnExit(ctx context.Context, cid, claim string, closeCli bool) error {
	sent := make(chan struct{})
	var once sync.Once
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { once.Do(func() { close(sent) }) }}
	rctx, cancel := context.WithTimeout(httptrace.WithClientTrace(context.WithoutCancel(ctx), trace), 30*time.Second)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer cancel()
		_, _ = w.cli.ContainerRemove(rctx, cid, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		w.disposeClaimOf(rctx, w.cli, claim)
		if closeCli {
			_ = w.cli.Close()
		}
	}()
	select {
	case <-sent:
	case <-finished:
	case <-ctx.Done():
	}
	return nil
}

// isClosed reports whether Close has started.
func (w *Workspace) isClosed() bool { return w.Phase() == PhaseClosed }

// acquire takes the mutation lock, waiting for the operation in progress.
func (w *Workspace) acquire(ctx context.Context, op string) error {
	d, err := w.step(evOperate, op)
	if err != nil {
		return err
	}
	if d.act == actWait {
		if err := w.waitReady(ctx, op); err != nil {
			return err
		}
	}
	select {
	case w.lock <- struct{}{}:
		// Decided again: the workspace may have closed, or been found
		// lost, while the caller waited.
		if _, err := w.step(evOperate, op); err != nil {
			<-w.lock
			return err
		}
		return nil
	case <-w.done:
		return disposed(op)
	case <-ctx.Done():
		return canceled(ctx, op)
	}
}

// release gives the mutation lock back. After the first operation that
// needed the container, a spare for the next open is made (Options.Spare).
func (w *Workspace) release() {
	<-w.lock
	w.replaceSpare()
}

// Ping reports whether a Docker daemon answers at dockerHost ("" for the
// environment's DOCKER_HOST or the default socket) with an API this client
// speaks (1.40 or later). Code: WORKSPACE_CONTAINER_FAILED.
func Ping(ctx context.Context, dockerHost string) error {
	cli, err := newClient(dockerHost)
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return dockerError(ctx, "ping docker daemon", err)
	}
	return nil
}

// newClient makes a Docker client for host, or from the environment
// (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH, DOCKER_API_VERSION)
// when host is empty. The API version is negotiated on first use.
func newClient(host string) (*client.Client, error) {
	opts := []client.Opt{client.FromEnv}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	cli, err := client.New(opts...)
	if err != nil {
		return nil, &errcode.Error{Code: errcode.WorkspaceContainerFailed, Op: "connect to docker",
			Message: fmt.Sprintf("bad docker host %q", host), Err: err}
	}
	return cli, nil
}

// ImageID resolves image to its immutable ID without pulling it: the check
// `harness doctor` runs. Codes: WORKSPACE_NOT_FOUND (the image is not on the
// daemon; the message says how to build the default one),
// WORKSPACE_CONTAINER_FAILED.
func ImageID(ctx context.Context, dockerHost, image string) (string, error) {
	cli, err := newClient(dockerHost)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	img, err := cli.ImageInspect(ctx, image)
	if err != nil {
		return "", imageError(ctx, "resolve image", image, err)
	}
	return img.ID, nil
}
