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
