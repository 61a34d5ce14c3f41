package dockerws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Warm spares.
//
// Creating and starting a container is most of what the first tool call
// of a run would wait for (~190 ms). With Options.Spare, a workspace whose
// tree is accepted first tries to claim a spare: a started, empty
// container that an earlier run of the same host user made with exactly
// the configuration this workspace would create (image ID, environment,
// mounts, limits, hardening: the hash of containerConfig without labels,
// LabelSpare). The tree is then copied into it as into a new one. Once the
// workspace is used (its first write, command, patch or listing of a
// changed tree is over) a new spare of that configuration is made in the
// background, unless one with time left exists; Close and Abandon wait for
// it (Abandon within its ctx), so that the next run finds it.
//
// Life and reaping. A spare has no owner process (its LabelOwner is
// spareOwner) and no LabelWorkspace, so the owner rule of reap.go, and an
// older Harness's reaper, never see it; reapSpares, part of every reap
// (each open, harness doctor), decides its life: a spare that never
// started (its maker was killed) is removed a claimMargin after its
// creation, a running one once past its idle deadline (LabelSpareUntil,
// DefaultSpareIdle after it was made); harness doctor --clean removes the
// user's idle ones.
//
// Claiming is a rename of the spare (SparePrefix+x, by that name) to a name
// that depends only on the spare (ClaimPrefix+x): the daemon reserves a
// name for one container at a time, so of two processes claiming the same
// spare exactly one rename succeeds (the other gets a conflict, or no
// container of the old name), and a claimed container never takes the
// spare's name again. The reaper claims a spare the same way before it
// removes it, so it never removes one a run has just claimed. The claimer
// then records itself as the owner in a volume named after the claim
// (ClaimPrefix+x, LabelOwner set to the claiming process): while that
// process lives the claimed container stays; once it is gone, the reaper
// removes both. A claimed container without that record (its claimer was
// killed between the two steps, or its dead claimer's record was removed
// first by a reaper that does not know spares) is removed once its idle
// deadline is past; a claimer only takes a spare with claimMargin left
// before it.
//
// A spare is never shared between users: it is labelled with the uid
// (LabelSpareUser) and a claimer lists only its own. Container labels
// cannot change, so a claimed container keeps the spare's labels (no
// session): Keep names a kept one after its session instead (keptName).

// Labels of a spare.
const (
	LabelSpare      = "dev.harness.spare"       // the hash of the configuration it was made with
	LabelSpareUser  = "dev.harness.spare.user"  // the host user's uid
	LabelSpareUntil = "dev.harness.spare.until" // its idle deadline, in Unix seconds
)

// Names of spares: SparePrefix+x while idle, ClaimPrefix+x once claimed
// (the container and its owner record, a volume).
const (
	SparePrefix = "harness-spare-"
	ClaimPrefix = "harness-claim-"
)

// DefaultSpareIdle bounds how long a spare waits for a run.
const DefaultSpareIdle = 10 * time.Minute

// spareOwner is the LabelOwner of a spare: no process.
const spareOwner = "spare"

// claimMargin is the idle time a spare must have left to be claimed: the
// claimer's time to record itself before the reaper may take the claim
// for a dead one.
const claimMargin = time.Minute

// spareState is a workspace's part in the spares: the configuration hash
// (set by the open, before Opened), the claim name when its container was
// a spare, and the replacement.
type spareState struct {
	hash    string
	imgEnv  []string
	claimed string
	noClaim bool // the claimed spare failed: the open creates a container
	// recorded gets the outcome of the owner record of the claim, made
	// while the tree is copied in (build waits for it).
	recorded chan error

	replace sync.Once
	done    chan struct{} // closed once the replacement is over; guarded by Workspace.mu
}

// configHash identifies a container configuration: cfg and host made
// without labels, and the user processes run as.
func configHash(cfg *container.Config, host *container.HostConfig, user string) string {
	b, err := json.Marshal(struct {
		Config *container.Config
		Host   *container.HostConfig
		User   string
	}{cfg, host, user})
	if err != nil {
		return "" // never claims, never makes one
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// useSpare computes the configuration's hash and claims a spare made with
// it; it reports whether it did (then w.cid is the spare). A failure to
// list or claim is no error: the open creates a container.
func (w *Workspace) useSpare(ctx context.Context, imgEnv []string) bool {
	cfg, host := w.containerConfig(imgEnv, nil)
	w.spare.hash, w.spare.imgEnv = configHash(cfg, host, w.user), imgEnv
	if w.spare.hash == "" {
		return false
	}
	// Under makeMu, so that an Abandon learns of the claim (closed is
	// checked after makeMu is taken: a workspace abandoned first claims
	// nothing).
	w.makeMu.Lock()
	defer w.makeMu.Unlock()
	if w.isClosed() {
		return false
	}
	id, claim, ok := claimSpare(ctx, w.cli, w.spare.hash, time.Now())
	if !ok {
		return false
	}
	w.cid, w.spare.claimed = id, claim
	w.opening, w.openingClaim = id, claim
	// The owner record, made while the tree is copied in: without it the
	// claimed container would outlive this process until its idle
	// deadline. A failure fails the claim (build).
	rec := make(chan error, 1)
	w.spare.recorded = rec
	go func() {
		_, err := w.cli.VolumeCreate(context.WithoutCancel(ctx), client.VolumeCreateOptions{Name: claim, Driver: "local",
			Labels: withOwner(map[string]string{LabelWorkspace: w.id, LabelSession: w.opts.SessionID, LabelSpare: w.spare.hash})})
		if err != nil {
			err = dockerError(ctx, "record the claim of a spare container", err)
		}
		rec <- err
	}()
	return true
}

// claimSpare claims one of this user's running spares made with
// configuration hash, with claimMargin left at now: it returns the
// container's ID and its new name.
func claimSpare(ctx context.Context, cli *client.Client, hash string, now time.Time) (id, claim string, ok bool) {
	f := make(client.Filters).Add("label", LabelSpare+"="+hash).Add("label", LabelSpareUser+"="+strconv.Itoa(os.Getuid())).
		Add("status", "running").Add("name", SparePrefix)
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: f})
	if err != nil {
		return "", "", false
	}
	// The oldest first: the one the reaper would take soonest.
	slices.SortFunc(list.Items, func(a, b container.Summary) int { return int(a.Created - b.Created) })
	for _, c := range list.Items {
		name := nameOf(c.Names)
		if !strings.HasPrefix(name, SparePrefix) || c.Labels[LabelSpare] != hash ||
			spareUntil(c.Labels).Sub(now) < claimMargin {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		claim := ClaimPrefix + strings.TrimPrefix(name, SparePrefix)
		// By the old name: once claimed, no container answers to it. The
		// rename runs to its answer even when ctx ends: one canceled in
		// flight is still carried out by the daemon, and a claim this
		// process does not know of would never be removed by it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		_, err := cli.ContainerRename(rctx, name, client.ContainerRenameOptions{NewName: claim})
		cancel()
		if err != nil {
			continue
		}
		return c.ID, claim, true
	}
	return "", "", false
}

// nameOf is a container's first name without its slash.
func nameOf(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return strings.TrimPrefix(names[0], "/")
}

// spareUntil is a spare's idle deadline (the zero time when unreadable:
// past).
func spareUntil(labels map[string]string) time.Time {
	s, err := strconv.ParseInt(labels[LabelSpareUntil], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(s, 0)
}

// replaceSpare makes, once, a spare for the next open in the background,
// with the configuration this workspace was opened with.
func (w *Workspace) replaceSpare() {
	if !w.opts.Spare || w.spare.hash == "" {
		return
	}
	w.spare.replace.Do(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.life.phase == PhaseClosed {
			return
		}
		done := make(chan struct{})
		w.spare.done = done
		go func() {
			defer close(done)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_, _ = w.makeSpare(ctx, time.Now().Add(w.opts.SpareIdle), false)
		}()
	})
}

// waitSpare waits for the replacement spare, if one is being made, or
// until ctx ends.
func (w *Workspace) waitSpare(ctx context.Context) {
	w.mu.Lock()
	done := w.spare.done
	w.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// makeSpare creates and starts a spare with this workspace's configuration
// and idle deadline until, on a client of its own (the workspace's may be
// closed meanwhile); unless always is set, not when this user has one of
// that configuration with time left. It returns the spare's ID ("" when
// none was needed).
func (w *Workspace) makeSpare(ctx context.Context, until time.Time, always bool) (string, error) {
	const op = "make a spare container"
	cli, err := newClient(w.opts.DockerHost)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	uid := strconv.Itoa(os.Getuid())
	if !always {
		f := make(client.Filters).Add("label", LabelSpare+"="+w.spare.hash).Add("label", LabelSpareUser+"="+uid).
			Add("status", "running").Add("name", SparePrefix)
		list, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: f})
		if err != nil {
			return "", dockerError(ctx, op, err)
		}
		for _, c := range list.Items {
			if strings.HasPrefix(nameOf(c.Names), SparePrefix) && time.Until(spareUntil(c.Labels)) >= 2*claimMargin {
				return "", nil
			}
		}
	}
	id := uuid.NewString()
	// No LabelWorkspace: a reaper that does not know spares (an older
	// Harness) never sees one, so never removes one it listed before its
	// start, nor a claimed one.
	labels := map[string]string{
		LabelOwner:      spareOwner,
		LabelSpare:      w.spare.hash,
		LabelSpareUser:  uid,
		LabelSpareUntil: strconv.FormatInt(until.Unix(), 10),
	}
	cfg, host := w.containerConfig(w.spare.imgEnv, labels)
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host,
		Name: SparePrefix + strings.ReplaceAll(id, "-", "")[:12]})
	if err != nil {
		return "", dockerError(ctx, op, err)
	}
	if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		// Not started: a leftover for any reaper (its owner is not alive).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, _ = cli.ContainerRemove(rctx, res.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		return "", dockerError(ctx, "start a spare container", err)
	}
	return res.ID, nil
}

// disposeClaim removes the owner record of a claimed spare.
func (w *Workspace) disposeClaim(ctx context.Context, cli *client.Client) {
	w.disposeClaimOf(ctx, cli, w.spare.claimed)
}

// disposeClaimOf removes the owner record named claim ("": none). One
// still being made when it runs is left dangling, for the reaper once
// this process is gone.
func (w *Workspace) disposeClaimOf(ctx context.Context, cli *client.Client, claim string) {
	if claim == "" {
		return
	}
	_, _ = cli.VolumeRemove(ctx, claim, client.VolumeRemoveOptions{Force: true})
}

// reapSpares removes the spares past their idle deadline (and stopped
// ones), and the claimed spares whose claimer is gone; mine only, with
// idle set, removes every idle spare of this user instead (harness doctor
// --clean). It returns how many containers it removed.
func reapSpares(ctx context.Context, cli *client.Client, mine bool) int {
	f := make(client.Filters).Add("label", LabelSpare)
	if mine {
		f = f.Add("label", LabelSpareUser+"="+strconv.Itoa(os.Getuid()))
	}
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0
	}
	now := time.Now()
	n := 0
	for _, c := range list.Items {
		name := nameOf(c.Names)
		running := c.State == container.StateRunning
		switch {
		case strings.HasPrefix(name, SparePrefix):
			if !mine && running && now.Before(spareUntil(c.Labels)) {
				continue
			}
			if !mine && c.State == container.StateCreated && now.Sub(time.Unix(c.Created, 0)) < claimMargin {
				continue // being started by its maker
			}
			// Claimed first, so that no run claims it while it goes.
			claim := ClaimPrefix + strings.TrimPrefix(name, SparePrefix)
			if _, err := cli.ContainerRename(ctx, name, client.ContainerRenameOptions{NewName: claim}); err != nil {
				continue
			}
		case strings.HasPrefix(name, ClaimPrefix) && !mine:
			v, err := cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{})
			switch {
			case err == nil:
				if ownerAlive(v.Volume.Labels, running) {
					continue
				}
			case !isNotFound(err):
				continue
			case running && now.Before(spareUntil(c.Labels)):
				continue // its claimer has yet to record itself
			}
		default:
			continue // kept, or claimed and reaped only when its claimer is gone
		}
		_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if err == nil || isNotFound(err) {
			n++
		}
		if strings.HasPrefix(name, ClaimPrefix) {
			_, _ = cli.VolumeRemove(ctx, name, client.VolumeRemoveOptions{Force: true})
		}
	}
	// A spare's own volumes left by a removal without them (docker rm
	// without -v); owner records (LabelWorkspace) follow the owner rule.
	vols, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", LabelSpare).Add("dangling", "true")})
	if err == nil {
		for _, v := range vols.Items {
			if _, rec := v.Labels[LabelWorkspace]; rec || (mine && v.Labels[LabelSpareUser] != strconv.Itoa(os.Getuid())) {
				continue
			}
			if _, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{}); err == nil {
				n++
			}
		}
	}
	return n
}

// Spare is an idle spare container.
type Spare struct {
	Name  string
	Until time.Time // its idle deadline
}

// ListSpares lists this user's idle spares. Code:
// WORKSPACE_CONTAINER_FAILED.
func ListSpares(ctx context.Context, dockerHost string) ([]Spare, error) {
	cli, err := newClient(dockerHost)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	f := make(client.Filters).Add("label", LabelSpare).Add("label", LabelSpareUser+"="+strconv.Itoa(os.Getuid())).Add("name", SparePrefix)
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, dockerError(ctx, "list spare containers", err)
	}
	var out []Spare
	for _, c := range list.Items {
		if name := nameOf(c.Names); strings.HasPrefix(name, SparePrefix) {
			out = append(out, Spare{Name: name, Until: spareUntil(c.Labels)})
		}
	}
	slices.SortFunc(out, func(a, b Spare) int { return a.Until.Compare(b.Until) })
	return out, nil
}

// RemoveSpares removes this user's idle spares (harness doctor --clean)
// and returns how many. Code: WORKSPACE_CONTAINER_FAILED.
func RemoveSpares(ctx context.Context, dockerHost string) (int, error) {
	cli, err := newClient(dockerHost)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return 0, dockerError(ctx, "remove spare containers", err)
	}
	return reapSpares(ctx, cli, true), nil
}

// keptSession is the session of a kept container: its label, or, for a
// claimed spare (which has none), the part of its name after the last
// "_" (keptName).
func keptSession(labels map[string]string, name string) string {
	if s := labels[LabelSession]; s != "" {
		return s
	}
	if i := strings.LastIndexByte(name, '_'); i >= 0 && strings.HasPrefix(name, KeptPrefix) {
		return name[i+1:]
	}
	return ""
}

// keptNameFor is the name Keep gives the workspace's container: a claimed
// spare's names its session too, which its labels cannot.
func (w *Workspace) keptNameFor() string {
	name := KeptPrefix + strings.TrimPrefix(w.id, "ws-")[:12]
	if w.spare.claimed != "" && validName(w.opts.SessionID) {
		name += "_" + w.opts.SessionID
	}
	return name
}

// validName reports whether s may end a container name.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
