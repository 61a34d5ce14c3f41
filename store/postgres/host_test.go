package postgres

import (
	"os/exec"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// TestHostSeparatesMachines: two machines share one database. A holder
// whose process is gone is dead only to a store on the machine it was
// recorded on; a store under another host name waits its lease out, even
// though no process of that PID runs where it looks.
func TestHostSeparatesMachines(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	ctx := t.Context()
	a := mustOpen(t, dsn, Options{LocalHost: "machine-a"})
	b := mustOpen(t, dsn, Options{LocalHost: "machine-b"})
	again := mustOpen(t, dsn, Options{LocalHost: "machine-a"})
	if _, err := a.CreateSession(ctx, store.SessionInit{ID: "sess-a"}); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Acquire(ctx, "sess-a", store.Owner{ID: "proc-a", PID: holder.Process.Pid}, store.AcquireOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()

	_, err := b.Acquire(ctx, "sess-a", storetest.Me("proc-b"), store.AcquireOptions{})
	storetest.WantCode(t, err, errcode.SessBusy)
	who, err := again.Acquire(ctx, "sess-a", storetest.Me("proc-a2"), store.AcquireOptions{})
	if err != nil {
		t.Fatalf("machine-a's own dead holder was not taken as dead: %v", err)
	}
	if who.Host != "machine-a" || who.Epoch != 2 {
		t.Fatalf("acquired as %+v, want host machine-a epoch 2", who)
	}
}
