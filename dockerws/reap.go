package dockerws

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Reap removes the containers (with their volumes) and the dangling
// volumes that Harness labeled and whose creating process is gone: what a
// crashed or killed run left behind. Objects of a live Harness process, on
// this machine or another one sharing the daemon, are left alone; so is a
// running container whose owner cannot be checked (another machine, or
// another PID namespace: a Harness in a container), and
// one that Keep set aside (named KeptPrefix…). It returns how many containers and volumes it removed. Open calls it too.
//
// Code: WORKSPACE_CONTAINER_FAILED.
func Reap(ctx context.Context, dockerHost string) (int, error) {
	cli, err := newClient(dockerHost)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	return reap(ctx, cli, true)
}

// reap removes the leftovers. A leftover already being removed (by the
// daemon for a process that abandoned it on exit, or by another reaper) is
// waited for when wait is set, so that it is gone when Reap returns; Open
// does not wait for it.
func reap(ctx context.Context, cli *client.Client, wait bool) (int, error) {
	const op = "reap leftover containers"
	filter := make(client.Filters).Add("label", LabelWorkspace)
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: filter})
	if err != nil {
		return 0, dockerError(ctx, op, err)
	}
	n := 0
	for _, c := range list.Items {
		if slices.ContainsFunc(c.Names, func(n string) bool { return strings.HasPrefix(strings.TrimPrefix(n, "/"), KeptPrefix) }) {
			continue // set aside by Keep: the user removes it
		}
		if c.State != container.StateRemoving && ownerAlive(c.Labels, c.State == container.StateRunning) {
			continue
		}
		var err error
		if c.State != container.StateRemoving {
			_, err = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		}
		if c.State == container.StateRemoving || cerrdefs.IsConflict(err) {
			// Already being removed by someone else.
			if wait && waitRemoved(ctx, cli, c.ID) {
				n++
			}
			continue
		}
		if err != nil && !isNotFound(err) {
			return n, dockerError(ctx, op, err)
		}
		n++
	}
	// Spares before the dangling volumes: a dead claimer's owner record
	// (a dangling volume) tells which claimed spare to remove.
	n += reapSpares(ctx, cli, false)
	vols, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", LabelWorkspace).Add("dangling", "true")})
	if err != nil {
		return n, dockerError(ctx, op, err)
	}
	for _, v := range vols.Items {
		if ownerAlive(v.Labels, false) {
			continue
		}
		_, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{})
		if err != nil && !isNotFound(err) {
			// In use again (a container took it meanwhile): not a leftover.
			continue
		}
		n++
	}
	return n + reapCaches(ctx, cli), nil
}

// reapCaches removes the build cache volumes of this user's projects that
// are gone from this machine (a deleted checkout, a test's temporary
// project), when the daemon runs here; a cache in use stays. It returns
// how many it removed.
func reapCaches(ctx context.Context, cli *client.Client) int {
	if !strings.HasPrefix(cli.DaemonHost(), "unix://") {
		return 0
	}
	vols, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", LabelCache+"."+"user="+strconv.Itoa(os.Getuid()))})
	if err != nil {
		return 0
	}
	n := 0
	for _, v := range vols.Items {
		project := v.Labels[LabelCache]
		if !filepath.IsAbs(project) {
			continue
		}
		if _, err := os.Stat(project); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if _, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{}); err == nil {
			n++
		}
	}
	return n
}

// waitRemoved waits, at most 30 s, until container id is gone, and
// reports whether it is.
func waitRemoved(ctx context.Context, cli *client.Client, id string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res := cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionRemoved})
	select {
	case <-res.Result:
		return true
	case err := <-res.Error:
		return isNotFound(err)
	}
}

// ownerLabel identifies this process across pid reuse and reboots:
// "<boot id>/<pid>/<start time in clock ticks>", or "unknown/<pid>/0"
// where /proc is missing. Its PID namespace goes beside it (ownerLabels).
func ownerLabel() string {
	pid := os.Getpid()
	boot, start := bootID(), procStart(pid)
	if boot == "" || start == "" {
		return fmt.Sprintf("unknown/%d/0", pid)
	}
	return fmt.Sprintf("%s/%d/%s", boot, pid, start)
}

// withOwner adds ownerLabels to labels and returns them.
func withOwner(labels map[string]string) map[string]string {
	maps.Copy(labels, ownerLabels())
	return labels
}

// ownerLabels are the labels that name this process as an object's
// owner: LabelOwner, and LabelOwnerNS, its PID namespace (the inode of
// /proc/self/ns/pid), which says where its PID means this process. A
// Harness in a container sharing the host's daemon has the host's boot ID
// but PIDs of its own. The namespace is a label of its own so that
// LabelOwner keeps the form every Harness reads.
func ownerLabels() map[string]string {
	l := map[string]string{LabelOwner: ownerLabel()}
	if ns := pidNS(); ns != "" {
		l[LabelOwnerNS] = ns
	}
	return l
}

// ownerAlive reports whether the process named by an object's owner
// labels still runs. Its PID is looked up only where it means what it
// meant to its owner: on this kernel (the boot ID) and in this PID
// namespace. An owner in another PID namespace on this kernel (a Harness
// in a container, or on the host when the reaper is in one) is never
// judged dead: a workspace that may be live is not removed on a guess.
// One on another machine or boot, or without /proc or a label, counts as
// alive exactly when its container runs. A label without a namespace
// (written before it was recorded) is judged by its PID, as it was.
func ownerAlive(labels map[string]string, running bool) bool {
	parts := strings.Split(labels[LabelOwner], "/")
	if len(parts) != 3 || parts[0] == "unknown" || parts[0] != bootID() || parts[0] == "" {
		return running
	}
	if ns, ok := labels[LabelOwnerNS]; ok && ns != pidNS() {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return running
	}
	return procStart(pid) == parts[2]
}

// pidNS is the inode of this process's PID namespace ("4026531836" of
// "pid:[4026531836]"), or "" where it cannot be read.
func pidNS() string {
	l, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	ns, ok := strings.CutPrefix(l, "pid:[")
	if !ok || !strings.HasSuffix(ns, "]") {
		return ""
	}
	return strings.TrimSuffix(ns, "]")
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStart returns field 22 of /proc/<pid>/stat (the start time), or ""
// when the process does not exist.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}
