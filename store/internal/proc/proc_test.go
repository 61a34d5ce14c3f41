package proc

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestIdentity(t *testing.T) {
	self, err := Identity(os.Getpid())
	if err != nil {
		t.Fatalf("identity of this process: %v", err)
	}
	if again, _ := Identity(os.Getpid()); again != self || !strings.Contains(self, ":") {
		t.Fatalf("identity %q then %q", self, again)
	}
	if !Alive(os.Getpid(), self) || !Alive(os.Getpid(), "") {
		t.Fatal("this process is not alive")
	}
	if Alive(os.Getpid(), "other-boot:1") {
		t.Fatal("a recorded identity that differs counts as alive")
	}
	for _, pid := range []int{0, -1} {
		if _, err := Identity(pid); !errors.Is(err, ErrNoProcess) {
			t.Fatalf("identity of pid %d: %v", pid, err)
		}
	}

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid // exited and reaped
	if _, err := Identity(pid); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("identity of exited pid %d: %v", pid, err)
	}
	if Alive(pid, "") {
		t.Fatalf("exited pid %d is alive", pid)
	}
}

func TestZombieIsDead(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child has exited once its stdout reaches EOF; until Wait it is a zombie.
	buf := make([]byte, 512)
	for {
		if _, err := out.Read(buf); err != nil {
			break
		}
	}
	pid := cmd.Process.Pid
	// The exit may trail the EOF by a moment: poll with a deadline.
	for deadline := time.Now().Add(10 * time.Second); Alive(pid, "") && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	if Alive(pid, "") {
		t.Fatalf("zombie %d counts as alive", pid)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// An identity taken in another PID namespace (a container that shares
// the host's name and the store's file) names a PID that means nothing
// here: the process is never judged dead by looking it up, whatever this
// namespace's process of that PID is. One recorded before namespaces
// were named is still compared on boot and start time.
func TestIdentityOfAnotherPIDNamespace(t *testing.T) {
	self, err := Identity(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(self, ":", 3)
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "pid:") {
		t.Fatalf("identity %q names no PID namespace", self)
	}
	other := parts[0] + ":1:pid:[1]"
	if !Alive(os.Getpid(), other) || !Alive(1<<22, other) {
		t.Fatal("a process of another PID namespace was judged by this one's PID")
	}
	legacy := parts[0] + ":" + parts[1]
	if !Alive(os.Getpid(), legacy) {
		t.Fatal("an identity recorded without its namespace no longer matches its process")
	}
	if Alive(os.Getpid(), parts[0]+":1") {
		t.Fatal("an identity without its namespace and another start time counts as alive")
	}
}
