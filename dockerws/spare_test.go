package dockerws

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/testenv"
)

// spareOpts turns spares on with a configuration of the test's own (a
// pids limit no other test uses), so that no other test claims its
// spares; they are removed at the end.
func spareOpts(t *testing.T) func(*Options) {
	// harness doctor --clean (cmd/harness's tests) removes every idle
	// spare of the user; these tests count their own.
	testenv.Exclusive(t, "spares")
	h := fnv.New32a()
	h.Write([]byte(t.Name() + "/" + strconv.Itoa(os.Getpid())))
	pids := 1000 + int64(h.Sum32()%100000)
	t.Cleanup(func() { removeSparesOfPids(t, pids) })
	return func(o *Options) { o.Spare, o.PidsLimit = true, pids }
}

// removeSparesOfPids removes the spares (idle or claimed) made with the
// pids limit pids, and their owner records.
func removeSparesOfPids(t *testing.T, pids int64) {
	ctx := context.Background()
	cli := dockerCLI(t)
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelSpare)})
	if err != nil {
		t.Error(err)
		return
	}
	for _, c := range list.Items {
		got, err := cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
		if err != nil || got.Container.HostConfig == nil || got.Container.HostConfig.PidsLimit == nil || *got.Container.HostConfig.PidsLimit != pids {
			continue
		}
		_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		_, _ = cli.VolumeRemove(ctx, ClaimPrefix+strings.TrimPrefix(strings.TrimPrefix(nameOf(c.Names), SparePrefix), ClaimPrefix), client.VolumeRemoveOptions{Force: true})
	}
}

func dockerCLI(t *testing.T) *client.Client {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// sparesOf lists the idle spares made with hash: name → ID.
func sparesOf(t *testing.T, hash string) map[string]string {
	t.Helper()
	f := make(client.Filters).Add("label", LabelSpare+"="+hash)
	list, err := dockerCLI(t).ContainerList(t.Context(), client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range list.Items {
		if n := nameOf(c.Names); strings.HasPrefix(n, SparePrefix) {
			out[n] = c.ID
		}
	}
	return out
}

func onlySpare(t *testing.T, hash string) string {
	t.Helper()
	s := sparesOf(t, hash)
	if len(s) != 1 {
		t.Fatalf("spares of the configuration: %v, want one", s)
	}
	for _, id := range s {
		return id
	}
	return ""
}

// A workspace first used makes a spare; the next open of that
// configuration runs in it (the tree copied in), records itself as its
// owner, and makes the next spare; Close removes the claimed container
// and its owner record.
func TestSpareClaimedByNextOpenAndReplaced(t *testing.T) {
	edit := spareOpts(t)
	first := open(t, t.TempDir(), busyboxImage, edit)
	mustExec(t, first, "true")
	if err := first.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	hash := first.spare.hash
	spare := onlySpare(t, hash)

	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "one\n", "d/b.txt": "two\n"})
	w := open(t, root, busyboxImage, edit)
	if w.ContainerID() != spare {
		t.Fatalf("the second workspace's container = %s, want the spare %s", w.ContainerID(), spare)
	}
	if len(sparesOf(t, hash)) != 0 {
		t.Fatalf("the claimed spare is still idle: %v", sparesOf(t, hash))
	}
	cli := dockerCLI(t)
	got, err := cli.ContainerInspect(t.Context(), spare, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim := strings.TrimPrefix(got.Container.Name, "/")
	if !strings.HasPrefix(claim, ClaimPrefix) || claim != w.spare.claimed {
		t.Fatalf("claimed container's name = %q, want %s… (%q)", claim, ClaimPrefix, w.spare.claimed)
	}
	v, err := cli.VolumeInspect(t.Context(), claim, client.VolumeInspectOptions{})
	if err != nil || v.Volume.Labels[LabelOwner] != ownerLabel() {
		t.Fatalf("owner record of the claim: %+v, %v; want owner %s", v.Volume.Labels, err, ownerLabel())
	}
	res := mustExec(t, w, "cat", "a.txt", "d/b.txt")
	if res.Stdout != "one\ntwo\n" {
		t.Fatalf("the tree in the claimed spare: %q", res.Stdout)
	}
	// The reaper leaves a claimed spare whose claimer runs.
	if _, err := Reap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ContainerInspect(t.Context(), spare, client.ContainerInspectOptions{}); err != nil {
		t.Fatalf("the reaper removed a claimed spare in use: %v", err)
	}
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	next := onlySpare(t, hash)
	if next == spare {
		t.Fatalf("the spare was not replaced")
	}
	if _, err := cli.ContainerInspect(t.Context(), spare, client.ContainerInspectOptions{}); !isNotFound(err) {
		t.Fatalf("claimed container after Close: %v, want gone", err)
	}
	if _, err := cli.VolumeInspect(t.Context(), claim, client.VolumeInspectOptions{}); !isNotFound(err) {
		t.Fatalf("owner record after Close: %v, want gone", err)
	}
}

// The spare has the hardening of a workspace's container: its
// configuration is the one a workspace gets, labels aside.
func TestSpareHasWorkspaceConfig(t *testing.T) {
	edit := spareOpts(t)
	w := open(t, t.TempDir(), busyboxImage, edit)
	id, err := w.makeSpare(t.Context(), time.Now().Add(time.Hour), true)
	if err != nil {
		t.Fatal(err)
	}
	cli := dockerCLI(t)
	sp, err := cli.ContainerInspect(t.Context(), id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := cli.ContainerInspect(t.Context(), w.ContainerID(), client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := sp.Container, ws.Container
	if a.HostConfig.NetworkMode != "none" || a.HostConfig.ReadonlyRootfs != b.HostConfig.ReadonlyRootfs || a.Config.User != b.Config.User ||
		fmt.Sprint(a.HostConfig.StorageOpt) != fmt.Sprint(b.HostConfig.StorageOpt) ||
		*a.HostConfig.PidsLimit != *b.HostConfig.PidsLimit || a.HostConfig.Memory != b.HostConfig.Memory ||
		strings.Join(a.HostConfig.CapAdd, ",") != strings.Join(b.HostConfig.CapAdd, ",") ||
		strings.Join(a.HostConfig.SecurityOpt, ",") != strings.Join(b.HostConfig.SecurityOpt, ",") ||
		len(a.Mounts) != len(b.Mounts) || a.Image != b.Image || strings.Join(a.Config.Env, ",") != strings.Join(b.Config.Env, ",") {
		t.Fatalf("spare config differs from a workspace's:\n%+v\n%+v", a.HostConfig, b.HostConfig)
	}
	if a.Config.Labels[LabelSpareUser] != strconv.Itoa(os.Getuid()) || a.Config.Labels[LabelOwner] != spareOwner {
		t.Fatalf("spare labels: %v", a.Config.Labels)
	}
}

// Reaping removes a spare idle past its bound (and doctor --clean any
// idle one of the user), and a claimed spare whose claimer is gone; it
// keeps a spare with time left.
func TestSpareReaped(t *testing.T) {
	edit := spareOpts(t)
	w := open(t, t.TempDir(), busyboxImage, edit)
	ctx := t.Context()
	old, err := w.makeSpare(ctx, time.Now().Add(-time.Second), true)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := w.makeSpare(ctx, time.Now().Add(time.Hour), true)
	if err != nil {
		t.Fatal(err)
	}
	// A claimed spare whose claimer died: its owner record names a
	// process that is gone.
	dead, err := w.makeSpare(ctx, time.Now().Add(time.Hour), true)
	if err != nil {
		t.Fatal(err)
	}
	cli := dockerCLI(t)
	got, err := cli.ContainerInspect(ctx, dead, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim := ClaimPrefix + strings.TrimPrefix(strings.TrimPrefix(got.Container.Name, "/"), SparePrefix)
	if _, err := cli.ContainerRename(ctx, dead, client.ContainerRenameOptions{NewName: claim}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: claim, Labels: map[string]string{
		LabelWorkspace: "ws-dead", LabelOwner: bootID() + "/1/999999999", LabelOwnerNS: pidNS(), LabelSpare: w.spare.hash}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Reap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{old, dead} {
		if _, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); !isNotFound(err) {
			t.Errorf("spare %s (old %s) after Reap: %v, want gone", id, old, err)
		}
	}
	if _, err := cli.VolumeInspect(ctx, claim, client.VolumeInspectOptions{}); !isNotFound(err) {
		t.Errorf("dead claimer's owner record after Reap: %v, want gone", err)
	}
	if all := sparesOf(t, w.spare.hash); len(all) != 1 {
		out, _ := exec.Command("docker", "ps", "-a", "--filter", "label="+LabelSpare+"="+w.spare.hash, "--format", "{{.ID}} {{.Names}} {{.Status}}").CombinedOutput()
		t.Fatalf("spares after Reap: %v (fresh %s); docker ps: %s", all, fresh, out)
	}
	if got := onlySpare(t, w.spare.hash); got != fresh {
		t.Fatalf("spare with time left = %s, want %s kept", got, fresh)
	}
	list, err := ListSpares(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range list {
		found = found || (strings.HasPrefix(s.Name, SparePrefix) && time.Until(s.Until) > 0)
	}
	if !found {
		t.Fatalf("ListSpares = %v, want the idle spare", list)
	}
	if n, err := RemoveSpares(ctx, ""); err != nil || n < 1 {
		t.Fatalf("RemoveSpares = %d, %v", n, err)
	}
	if s := sparesOf(t, w.spare.hash); len(s) != 0 {
		t.Fatalf("spares after RemoveSpares: %v", s)
	}
	// The workspace itself is no spare: untouched.
	mustExec(t, w, "true")
}

// Of many processes claiming the same spares at once, each spare goes to
// exactly one.
func TestSpareClaimRace(t *testing.T) {
	edit := spareOpts(t)
	w := open(t, t.TempDir(), busyboxImage, edit)
	ctx := t.Context()
	const spares, claimers = 3, 8
	for round := range 2 {
		made := map[string]bool{}
		for range spares {
			id, err := w.makeSpare(ctx, time.Now().Add(time.Hour), true)
			if err != nil {
				t.Fatal(err)
			}
			made[id] = true
		}
		var mu sync.Mutex
		got := map[string]int{}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range claimers {
			cli := dockerCLI(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// Each claimer tries until none is left for it.
				for {
					id, _, ok := claimSpare(ctx, cli, w.spare.hash, time.Now())
					if !ok {
						return
					}
					mu.Lock()
					got[id]++
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(got) != spares {
			t.Fatalf("round %d: claimed %v, want each of %d spares", round, got, spares)
		}
		for id, n := range got {
			if n != 1 || !made[id] {
				t.Fatalf("round %d: spare %s claimed %d times (made: %v)", round, id, n, made[id])
			}
		}
	}
}

// A spare of another user, another image or another configuration is
// never claimed.
func TestSpareOfOthersNotClaimed(t *testing.T) {
	edit := spareOpts(t)
	w := open(t, t.TempDir(), busyboxImage, edit)
	ctx := t.Context()
	cli := dockerCLI(t)
	// Another user's: the same configuration, another uid.
	labels := map[string]string{LabelWorkspace: "ws-other-user", LabelOwner: spareOwner, LabelSpare: w.spare.hash,
		LabelSpareUser: strconv.Itoa(os.Getuid() + 1), LabelSpareUntil: strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)}
	cfg, host := w.containerConfig(w.spare.imgEnv, labels)
	res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host, Name: SparePrefix + "otheruser" + strconv.Itoa(os.Getpid())})
	if err != nil {
		t.Fatal(err)
	}
	other := res.ID
	t.Cleanup(func() {
		_, _ = cli.ContainerRemove(context.Background(), other, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	})
	if _, err := cli.ContainerStart(ctx, other, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	if id, _, ok := claimSpare(ctx, cli, w.spare.hash, time.Now()); ok {
		t.Fatalf("claimed %s, another user's spare", id)
	}
	// This user's spare, of this configuration and image.
	mine, err := w.makeSpare(ctx, time.Now().Add(time.Hour), true)
	if err != nil {
		t.Fatal(err)
	}
	// Another configuration (a larger quota) and another image: not it.
	for _, o := range []struct {
		image string
		edit  func(*Options)
	}{
		{busyboxImage, func(o *Options) { o.MaxWorkspaceBytes = DefaultMaxWorkspaceBytes + 4096 }},
		{sandboxImage, func(o *Options) {}},
	} {
		x := open(t, t.TempDir(), o.image, edit, o.edit)
		if x.ContainerID() == mine || x.ContainerID() == other {
			t.Fatalf("%s: a workspace of another configuration runs in a spare", o.image)
		}
		if x.spare.hash == w.spare.hash {
			t.Fatalf("%s: another configuration has the same hash", o.image)
		}
	}
	// A spare near its idle bound is not claimed either.
	if id, _, ok := claimSpare(ctx, cli, w.spare.hash, time.Now().Add(time.Hour-claimMargin/2)); ok {
		t.Fatalf("claimed %s with less than the claim margin left", id)
	}
	if id, _, ok := claimSpare(ctx, cli, w.spare.hash, time.Now()); !ok || id != mine {
		t.Fatalf("claim = %s, %v; want this user's spare %s", id, ok, mine)
	}
}

// A claimed spare kept for its work (its labels name no session) is
// listed and adopted by its session, and by no other; the reaper leaves
// it.
func TestKeptClaimedSpare(t *testing.T) {
	edit := spareOpts(t)
	first := open(t, t.TempDir(), busyboxImage, edit)
	mustExec(t, first, "true")
	if err := first.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	spare := onlySpare(t, first.spare.hash)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"notes.txt": "one\n"})
	const session = "sess-kept-spare"
	w := open(t, root, busyboxImage, edit, func(o *Options) { o.SessionID = session })
	if w.ContainerID() != spare {
		t.Fatalf("container %s, want the spare %s", w.ContainerID(), spare)
	}
	ctx := t.Context()
	if err := w.WriteFile(ctx, "keep.txt", []byte("keep me\n")); err != nil {
		t.Fatal(err)
	}
	name, err := w.Keep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = RemoveKept(context.Background(), "", name) })
	snap := w.Snapshot()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Reap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	kept, err := ListKept(ctx, "", session)
	if err != nil || len(kept) != 1 || kept[0].Name != name || kept[0].SessionID != session || !kept[0].Running {
		t.Fatalf("ListKept = %+v, %v", kept, err)
	}
	if other, err := ListKept(ctx, "", "sess-other"); err != nil || len(other) != 0 {
		t.Fatalf("ListKept of another session = %+v, %v", other, err)
	}
	_, err = Adopt(ctx, Options{Root: root, SessionID: "sess-other"}, name, snap)
	wantCode(t, err, errcode.WorkspaceScope)
	a, err := Adopt(ctx, Options{Root: root, SessionID: session}, name, snap)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	patch, err := a.Diff(ctx)
	if err != nil || !strings.Contains(patch, "keep me") {
		t.Fatalf("diff of the adopted kept spare: %q, %v", patch, err)
	}
}

// The child process of TestAbandonedClaimLeavesNoContainer: it opens a
// workspace, waits until the open has claimed the spare (the daemon's
// rename event), abandons it while the tree is being copied in and exits at
// once, as harness exec does after a one-answer turn.
const abandonChildEnv = "HARNESS_TEST_ABANDON_CHILD" // root|pids|spare ID

func abandonChild(spec string) int {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		return 2
	}
	pids, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli, err := newClient("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cli.Close()
	ev := cli.Events(ctx, client.EventsListOptions{Filters: make(client.Filters).Add("container", parts[2]).Add("event", "rename")})
	w, err := Start(ctx, Options{Root: parts[0], Image: busyboxImage, SessionID: "sess-test-abandon-child", Spare: true, PidsLimit: pids})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {
	case <-ev.Messages:
	case err := <-ev.Err:
		fmt.Fprintln(os.Stderr, "events:", err)
		return 1
	}
	if err := w.Abandon(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// A process that abandons its workspace while the open is still copying
// the tree into a claimed spare, and exits, leaves no running container:
// the claimed spare is removed (before, it ran until the next run's
// reaper noticed its claimer was gone).
func TestAbandonedClaimLeavesNoContainer(t *testing.T) {
	edit := spareOpts(t)
	var opts Options
	edit(&opts)
	root := t.TempDir()
	files := map[string]string{}
	for i := range 400 {
		files[fmt.Sprintf("d%d/f%d.txt", i%10, i)] = strings.Repeat("x", 8192)
	}
	writeTree(t, root, files)
	w := open(t, root, busyboxImage, edit) // the configuration's hash
	ctx := t.Context()
	cli := dockerCLI(t)
	for range 3 {
		id, err := w.makeSpare(ctx, time.Now().Add(time.Hour), true)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), abandonChildEnv+"="+root+"|"+strconv.FormatInt(opts.PidsLimit, 10)+"|"+id)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !waitRemoved(ctx, cli, id) {
			got, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Fatalf("the claimed spare %s (%s) is still there after its claimer exited", got.Container.Name, got.Container.State.Status)
		}
	}
}
