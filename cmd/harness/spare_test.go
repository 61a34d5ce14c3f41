package main

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/testenv"
)

// sparesWithMemory lists the idle warm spares whose memory limit is mem
// (a quota of the test's own makes it unique): their IDs.
func sparesWithMemory(ctx context.Context, t *testing.T, cli *client.Client, mem int64) []string {
	t.Helper()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", dockerws.LabelSpare).Add("name", dockerws.SparePrefix)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list.Items {
		got, err := cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
		if err == nil && got.Container.HostConfig != nil && got.Container.HostConfig.Memory == mem {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// harness exec leaves a warm spare once its workspace ran a command; the
// next run claims it (and leaves the next one); with --no-spare a run
// neither claims nor makes one.
func TestExecWarmSpare(t *testing.T) {
	needDocker(t)
	testenv.Exclusive(t, "spares") // doctor --clean removes every idle spare of the user
	u := newUser(t)
	u.write("a.txt", "one\n")
	script := u.script(`[{"toolCalls":[{"id":"c1","name":"process.exec","arguments":{"argv":["cat","a.txt"]}}]},{"content":"done"}]`)
	// A quota of this test's own: no other run's spare is of this
	// configuration, and this test's are found by their memory limit.
	quota := int64(1<<30) + int64(os.Getpid()%100_000)*4096
	mem := int64(dockerws.DefaultMemoryBytes) + 2*quota + dockerws.TmpBytes
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer cli.Close()
		for _, id := range sparesWithMemory(context.Background(), t, cli, mem) {
			_, _ = cli.ContainerRemove(context.Background(), id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		}
	})
	run := func(extra ...string) {
		t.Helper()
		args := append([]string{"exec", "--json", "--image", "harness-busybox", "--max-workspace-bytes", strconv.FormatInt(quota, 10),
			"--fake-model", script}, extra...)
		r := u.run("", append(args, "go")...)
		if r.code != 0 {
			t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
		}
	}
	run("--no-spare")
	if s := sparesWithMemory(t.Context(), t, cli, mem); len(s) != 0 {
		t.Fatalf("a --no-spare run left spares: %v", s)
	}
	run()
	first := sparesWithMemory(t.Context(), t, cli, mem)
	if len(first) != 1 {
		t.Fatalf("spares after a run: %v, want one", first)
	}
	run("--no-spare")
	if s := sparesWithMemory(t.Context(), t, cli, mem); len(s) != 1 || s[0] != first[0] {
		t.Fatalf("a --no-spare run touched the spare: %v, want %v", s, first)
	}
	run()
	next := sparesWithMemory(t.Context(), t, cli, mem)
	if len(next) != 1 || next[0] == first[0] {
		t.Fatalf("spares after the next run: %v; want one other than the claimed %s", next, first[0])
	}
	// harness doctor leaves it (it has time left); --clean removes it.
	u.run("", "doctor")
	if s := sparesWithMemory(t.Context(), t, cli, mem); len(s) != 1 {
		t.Fatalf("spares after doctor: %v, want %v", s, next)
	}
	u.run("", "doctor", "--clean")
	if s := sparesWithMemory(t.Context(), t, cli, mem); len(s) != 0 {
		t.Fatalf("spares after doctor --clean: %v, want none", s)
	}
}
