package dockerws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/toolchain"
	"github.com/harness-dev/harness/internal/workspace"
)

// The project's build cache.
//
// A session's caches (Go's GOCACHE, npm's and pip's) live in a Docker
// volume of the project's own, so a second session does not compile
// everything again: one volume per project and host user (CacheVolume
// names it by a hash of both), labelled LabelCache with the project's
// path, mounted writable at toolchain.Cache and nowhere else. It is the
// only thing a container writes that outlives it; it never reaches the
// patch. At open, a cache holding more than Options.CacheBytes is emptied
// (Go's own cache also drops what it has not used for days). harness
// doctor lists the cache volumes, and --clean removes them.

// Labels of a cache volume.
const (
	LabelCache     = "dev.harness.cache"      // the project's path on the host
	LabelCacheUser = "dev.harness.cache.user" // the host user's uid
)

// DefaultCacheBytes bounds a project's build cache.
const DefaultCacheBytes = 4 << 30

// CacheVolume is the name of the build cache volume of the project at
// root for the host user uid: never shared between projects or users.
func CacheVolume(root string, uid int) string {
	h := sha256.Sum256([]byte(root + "\x00" + strconv.Itoa(uid)))
	return "harness-cache-" + hex.EncodeToString(h[:8])
}

// defaultMasked is the set of paths Docker masks by default; naming
// MaskedPaths replaces that set, so the plan's paths are added to it.
var defaultMasked = []string{
	"/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
	"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
	"/sys/firmware", "/sys/devices/virtual/powercap",
}

// sandboxMounts are the plan's read-only mounts and the cache volume.
func (w *Workspace) sandboxMounts() []mount.Mount {
	var ms []mount.Mount
	for _, m := range w.plan.Mounts {
		ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: true,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}})
	}
	if w.opts.CacheVolume != "" {
		ms = append(ms, mount.Mount{Type: mount.TypeVolume, Source: w.opts.CacheVolume, Target: toolchain.Cache,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true}})
	}
	return ms
}

// maskedPaths is Docker's default set plus the credential-like paths under
// the plan's mounts.
func (w *Workspace) maskedPaths() []string {
	if len(w.plan.Masked) == 0 {
		return nil // Docker's defaults
	}
	return append(slices.Clone(defaultMasked), w.plan.Masked...)
}

// withPlanEnv sets the plan's variables over env and puts its directories
// first on PATH.
func withPlanEnv(env []string, p toolchain.Plan) []string {
	if len(p.Env) == 0 && len(p.Path) == 0 {
		return env
	}
	over := map[string]bool{}
	for _, kv := range p.Env {
		k, _, _ := strings.Cut(kv, "=")
		over[k] = true
	}
	out := make([]string, 0, len(env)+len(p.Env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if over[k] {
			continue
		}
		if k == "PATH" && len(p.Path) > 0 {
			kv = "PATH=" + strings.Join(p.Path, ":") + ":" + v
		}
		out = append(out, kv)
	}
	return append(out, p.Env...)
}

// ensureCache makes the cache volume when it does not exist yet.
func (w *Workspace) ensureCache(ctx context.Context) error {
	if w.opts.CacheVolume == "" {
		return nil
	}
	if _, err := w.cli.VolumeInspect(ctx, w.opts.CacheVolume, client.VolumeInspectOptions{}); err == nil {
		return nil
	} else if !isNotFound(err) {
		return dockerError(ctx, "inspect the build cache volume", err)
	}
	_, err := w.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: w.opts.CacheVolume, Driver: "local",
		Labels: map[string]string{LabelCache: w.opts.CacheProject, LabelCacheUser: strconv.Itoa(os.Getuid())}})
	if err != nil {
		return dockerError(ctx, "create the build cache volume", err)
	}
	return nil
}

// Cache is one project's build cache volume.
type Cache struct {
	Name    string
	Project string // the project's path on the host
	Bytes   int64  // -1 when the daemon did not say
	InUse   bool
}

// ListCaches lists the build cache volumes of every project.
//
// Code: WORKSPACE_CONTAINER_FAILED.
func ListCaches(ctx context.Context, dockerHost string) ([]Cache, error) {
	cli, err := newClient(dockerHost)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	vols, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", LabelCache)})
	if err != nil {
		return nil, dockerError(ctx, "list build cache volumes", err)
	}
	var out []Cache
	for _, v := range vols.Items {
		out = append(out, Cache{Name: v.Name, Project: v.Labels[LabelCache], Bytes: -1})
	}
	// Sizes and use come from the daemon's disk usage report (one call).
	if du, err := cli.DiskUsage(ctx, client.DiskUsageOptions{Volumes: true}); err == nil {
		for i := range out {
			for _, v := range du.Volumes.Items {
				if v.Name == out[i].Name && v.UsageData != nil {
					out[i].Bytes = v.UsageData.Size
					out[i].InUse = v.UsageData.RefCount > 0
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Cache) int { return strings.Compare(a.Project, b.Project) })
	return out, nil
}

// RemoveCache removes a build cache volume (not one a container uses).
//
// Codes: WORKSPACE_BUSY (in use), WORKSPACE_CONTAINER_FAILED.
func RemoveCache(ctx context.Context, dockerHost, name string) error {
	cli, err := newClient(dockerHost)
	if err != nil {
		return err
	}
	defer cli.Close()
	v, err := cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{})
	if err != nil {
		return dockerError(ctx, "inspect "+name, err)
	}
	if _, ok := v.Volume.Labels[LabelCache]; !ok {
		return &errcode.Error{Code: errcode.WorkspaceNotFound, Op: "remove build cache", Message: name + " is not a Harness build cache"}
	}
	if _, err := cli.VolumeRemove(ctx, name, client.VolumeRemoveOptions{}); err != nil {
		if strings.Contains(err.Error(), "in use") {
			return &errcode.Error{Code: errcode.WorkspaceBusy, Op: "remove build cache", Message: name + " is in use by a running session", Err: err}
		}
		return dockerError(ctx, "remove "+name, err)
	}
	return nil
}

// mountsInfo is what Info reports of the plan and the cache: as checked
// once the workspace is open, as planned before.
func (w *Workspace) mountsInfo() []workspace.Mount {
	p := w.opts.Toolchain
	select {
	case <-w.ready:
		p = w.plan
	default:
	}
	ms := slices.Clone(p.Mounts)
	for _, l := range p.Links {
		ms = append(ms, workspace.Mount{What: "link to " + l.Target, Source: l.Target, Target: l.Name, ReadOnly: true})
	}
	if w.opts.CacheVolume != "" {
		ms = append(ms, workspace.Mount{What: "build cache", Source: "volume " + w.opts.CacheVolume, Target: toolchain.Cache})
	}
	return ms
}

// hostConfigExtras puts the plan into a host config.
func (w *Workspace) hostConfigExtras(h *container.HostConfig) {
	h.Mounts = append(h.Mounts, w.sandboxMounts()...)
	h.MaskedPaths = w.maskedPaths()
}

// copyInArgs are the copy-in script's arguments: the workspace, $HOME,
// the cache ("" for none) and its bound in KiB, the count of the plan's
// links, then a link and its target for each.
func (w *Workspace) copyInArgs() []string {
	args := []string{WorkDir, HomeDir, "", "0", strconv.Itoa(len(w.opts.Toolchain.Links))}
	if w.opts.CacheVolume != "" {
		args[2], args[3] = toolchain.Cache, fmt.Sprint(max(w.opts.CacheBytes>>10, 1))
	}
	for _, l := range w.opts.Toolchain.Links {
		args = append(args, l.Name, l.Target)
	}
	return args
}

// DaemonIsLocal reports whether the daemon at dockerHost ("" for
// DOCKER_HOST or the default socket) runs on this machine (a unix socket),
// so that host paths mean the same to it, and names its address.
func DaemonIsLocal(dockerHost string) (bool, string) {
	cli, err := newClient(dockerHost)
	if err != nil {
		return false, dockerHost
	}
	defer cli.Close()
	h := cli.DaemonHost()
	return strings.HasPrefix(h, "unix://"), h
}
