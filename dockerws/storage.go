package dockerws

import (
	"context"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/workspace"
)

// Storage is where a daemon puts a workspace's /workspace and $HOME, and
// why.
type Storage struct {
	// Kind is workspace.StorageDisk (the container's own writable layer,
	// with a size quota: --storage-opt size) or workspace.StorageTmpfs
	// (tmpfs volumes, counted in the host's memory).
	Kind string
	// Driver is the daemon's storage driver ("overlay2 on extfs" when
	// it names its backing file system).
	Driver string
	// Why says, in a few words, why the daemon gives that storage.
	Why string
}

// storageOf decides, from the daemon's storage driver and the file system
// under it, whether a container's writable layer can take a size quota:
// btrfs and zfs always give one; overlay2 on xfs does only when that xfs
// is mounted with pquota, which only a create can tell (a refused create
// falls back to tmpfs, storageChoice.refuse); anything else gives none.
func storageOf(driver, backing string) Storage {
	s := Storage{Kind: workspace.StorageTmpfs, Driver: driver}
	if backing != "" {
		s.Driver += " on " + backing
	}
	switch {
	case driver == "btrfs" || driver == "zfs":
		s.Kind, s.Why = workspace.StorageDisk, "the daemon's "+driver+" storage gives each container a size quota"
	case driver == "overlay2" && backing == "xfs":
		s.Kind, s.Why = workspace.StorageDisk, "the daemon's overlay2 storage on xfs gives a size quota when the xfs is mounted with pquota"
	default:
		s.Why = "the daemon's " + s.Driver + " storage gives no size quota; a daemon on btrfs, zfs or xfs with pquota stores workspaces on disk"
	}
	return s
}

// refusedWhy is Storage.Why once the daemon refused the size quota.
const refusedWhy = "the daemon refused a size quota for the container's layer (overlay2 needs xfs mounted with pquota); a daemon on btrfs, zfs or xfs with pquota stores workspaces on disk"

// storageChoice is what this process learned of one daemon's storage: it
// asks the daemon until one answer comes, and remembers a refused quota.
type storageChoice struct {
	mu    sync.Mutex
	known bool    // guarded by mu
	s     Storage // guarded by mu
}

// storages holds a storageChoice per Docker host ("" for the environment's).
var storages sync.Map

func choiceFor(dockerHost string) *storageChoice {
	c, _ := storages.LoadOrStore(dockerHost, &storageChoice{})
	return c.(*storageChoice)
}

// get asks the daemon for its storage driver unless an earlier call
// learned it, and returns what this process knows of it. A failed
// question gives tmpfs for this call (and the error, for doctor) and is
// asked again next time: it never fails an open.
func (c *storageChoice) get(ctx context.Context, cli *client.Client) (Storage, error) {
	c.mu.Lock()
	if c.known {
		defer c.mu.Unlock()
		return c.s, nil
	}
	c.mu.Unlock()
	res, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return Storage{Kind: workspace.StorageTmpfs, Why: "the daemon did not say its storage driver"}, dockerError(ctx, "ask the daemon's storage driver", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known {
		c.s, c.known = storageOf(res.Info.Driver, backingFS(res.Info.DriverStatus)), true
	}
	return c.s, nil
}

// refuse records that the daemon refused a size quota: every later open of
// this process uses tmpfs.
func (c *storageChoice) refuse() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.s.Kind, c.s.Why, c.known = workspace.StorageTmpfs, refusedWhy, true
}

// backingFS is the "Backing Filesystem" of a driver's status, if it names
// one.
func backingFS(status [][2]string) string {
	for _, kv := range status {
		if strings.EqualFold(kv[0], "Backing Filesystem") {
			return kv[1]
		}
	}
	return ""
}

// DaemonStorage says where the daemon at dockerHost ("" for the
// environment's) would put a workspace's files, and why; an overlay2 on xfs
// is tried with a throwaway container (never started) so the answer is
// what an open gets. Codes: WORKSPACE_CONTAINER_FAILED, TOOL_CANCELED.
func DaemonStorage(ctx context.Context, dockerHost, image string) (Storage, error) {
	cli, err := newClient(dockerHost)
	if err != nil {
		return Storage{}, err
	}
	defer cli.Close()
	c := choiceFor(dockerHost)
	s, err := c.get(ctx, cli)
	if err != nil || s.Kind != workspace.StorageDisk || !strings.HasPrefix(s.Driver, "overlay2") || image == "" {
		return s, err
	}
	// A container never started, labeled so that Reap removes it if this
	// process dies before it does.
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{Image: image, Entrypoint: []string{"true"}, NetworkDisabled: true,
			Labels: withOwner(map[string]string{LabelWorkspace: "probe-" + uuid.NewString()})},
		HostConfig: &container.HostConfig{NetworkMode: "none", StorageOpt: map[string]string{"size": "1G"}},
	})
	if err != nil {
		if ctx.Err() != nil {
			return s, canceled(ctx, "probe the daemon's storage")
		}
		if isNotFound(err) {
			return s, imageError(ctx, "probe the daemon's storage", image, err)
		}
		c.refuse()
		return c.current(), nil
	}
	_, _ = cli.ContainerRemove(context.WithoutCancel(ctx), res.ID, client.ContainerRemoveOptions{Force: true})
	return s, nil
}

func (c *storageChoice) current() Storage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s
}
