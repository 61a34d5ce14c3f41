package dockerws

import (
	"testing"

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
	c := &storageChoice{}
	c.once.Do(func() {})
	c.s = storageOf("overlay2", "xfs")
	c.refuse()
	if s := c.current(); s.Kind != workspace.StorageTmpfs || s.Why != refusedWhy {
		t.Errorf("after refuse: %+v", s)
	}
}
