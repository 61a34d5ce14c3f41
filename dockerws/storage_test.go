package dockerws

import (
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/workspace"
)

// Which daemons store a workspace on disk: those whose storage gives a
// container's layer a size quota.
func TestStorageOf(t *testing.T) {
	for _, tc := range []struct {
		driver, backing, want string
	}{
		{"btrfs", "", workspace.StorageDisk},
		{"zfs", "", workspace.StorageDisk},
		{"overlay2", "xfs", workspace.StorageDisk}, // tried: a refused create falls back
		{"overlay2", "extfs", workspace.StorageTmpfs},
		{"overlay2", "", workspace.StorageTmpfs},
		{"vfs", "", workspace.StorageTmpfs},
		{"fuse-overlayfs", "", workspace.StorageTmpfs},
	} {
		s := storageOf(tc.driver, tc.backing)
		if s.Kind != tc.want || s.Why == "" {
			t.Errorf("storageOf(%q, %q) = %+v, want %s with a reason", tc.driver, tc.backing, s, tc.want)
		}
	}
	if got := backingFS([][2]string{{"Supports d_type", "true"}, {"Backing Filesystem", "xfs"}}); got != "xfs" {
		t.Errorf("backingFS = %q", got)
	}
}

// The disk quota is what both tmpfs volumes held, plus the image on
// btrfs, which counts it.
func TestDiskQuota(t *testing.T) {
	o := Options{MaxWorkspaceBytes: 100}
	if got := diskQuota(o, 7, "btrfs"); got != 207 {
		t.Errorf("btrfs: %d, want 207", got)
	}
	if got := diskQuota(o, 7, "overlay2 on xfs"); got != 200 {
		t.Errorf("overlay2 on xfs: %d, want 200", got)
	}
}

// A refused quota is remembered for the daemon: later opens use tmpfs.
func TestRefusedQuotaIsRemembered(t *testing.T) {
	c := &storageChoice{known: true, s: storageOf("overlay2", "xfs")}
	c.refuse()
	if s := c.current(); s.Kind != workspace.StorageTmpfs || s.Why != refusedWhy {
		t.Errorf("after refuse: %+v", s)
	}
}

// A daemon that refuses the size quota (overlay2 on a file system without
// project quotas, taken here for an xfs one) gets tmpfs volumes: the open
// does not fail, the workspace says tmpfs, and the process remembers it.
func TestRefusedQuotaFallsBackToTmpfs(t *testing.T) {
	needDocker(t, busyboxImage)
	const host = "" // the environment's daemon, as the other tests
	cli, err := newClient(host)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	res, err := cli.Info(t.Context(), client.InfoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := storageOf(res.Info.Driver, backingFS(res.Info.DriverStatus)); got.Kind != workspace.StorageTmpfs {
		needRefusingDaemon(t, got)
	}
	c := choiceFor(host)
	t.Cleanup(func() { storages.Delete(host) })
	c.mu.Lock()
	c.s, c.known = storageOf("overlay2", "xfs"), true
	c.mu.Unlock()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a\n"})
	w := open(t, dir, busyboxImage, func(o *Options) { o.DockerHost = host })
	if got := w.Info().Storage; got != workspace.StorageTmpfs {
		t.Errorf("Info().Storage = %q, want tmpfs", got)
	}
	if s := c.current(); s.Kind != workspace.StorageTmpfs || s.Why != refusedWhy {
		t.Errorf("the refusal is not remembered: %+v", s)
	}
	got, err := cli.ContainerInspect(t.Context(), w.ContainerID(), client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hc := got.Container.HostConfig; len(hc.StorageOpt) != 0 || !hc.ReadonlyRootfs || len(hc.Mounts) != 2 {
		t.Errorf("the container is not a tmpfs one: storage %v, read-only %v, mounts %d", hc.StorageOpt, hc.ReadonlyRootfs, len(hc.Mounts))
	}
	if r := mustExec(t, w, "stat", "-c", "%a", WorkDir, HomeDir); r.Stdout != "1777\n1777\n" {
		t.Errorf("modes: %q", r.Stdout)
	}
}

// DaemonStorage (harness doctor) tries an overlay2 on xfs with a container
// it never starts: on a daemon that refuses the quota it says tmpfs, and
// leaves no container behind.
func TestDaemonStorageProbesTheQuota(t *testing.T) {
	needDocker(t, busyboxImage)
	const host = "" // the environment's daemon, as the other tests
	s, err := DaemonStorage(t.Context(), host, busyboxImage)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != workspace.StorageTmpfs {
		needRefusingDaemon(t, s)
	}
	c := choiceFor(host)
	t.Cleanup(func() { storages.Delete(host) })
	c.mu.Lock()
	c.s, c.known = storageOf("overlay2", "xfs"), true
	c.mu.Unlock()
	cli, err := newClient(host)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s, err = DaemonStorage(t.Context(), host, busyboxImage)
	if err != nil || s.Kind != workspace.StorageTmpfs || s.Why != refusedWhy {
		t.Errorf("DaemonStorage = %+v, %v; want tmpfs, refused", s, err)
	}
	after, err := cli.ContainerList(t.Context(), client.ContainerListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range after.Items {
		if _, ok := c.Labels[LabelWorkspace]; ok && strings.HasPrefix(c.Labels[LabelWorkspace], "probe-") {
			t.Errorf("a probe container is left: %s %v", c.ID, c.Names)
		}
	}
}

// needRefusingDaemon skips (or, with HARNESS_REQUIRE_DOCKER=1, fails) a
// test of the refused quota on a daemon that gives one: it needs a daemon
// whose storage refuses it (overlay2 without xfs project quotas, as
// Docker's usual setup).
func needRefusingDaemon(t *testing.T, s Storage) {
	t.Helper()
	testenv.Unavailable(t, testenv.RequireDocker, "docker", "this daemon's "+s.Driver+" storage gives a size quota; the test needs one that refuses it")
}
