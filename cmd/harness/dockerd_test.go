package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/testenv"
)

// secondDockerd starts a dockerd of its own, listening on host, with its
// state under dir (data-root, exec-root, pidfile) and the extra flags
// given, loads harness-busybox into it (images are never pulled) and stops
// it at cleanup. It returns a function that runs the docker CLI against
// it. It skips the test unless it runs as root with a dockerd binary.
func secondDockerd(t *testing.T, host, dir string, flags ...string) func(args ...string) ([]byte, error) {
	t.Helper()
	dockerd, err := exec.LookPath("dockerd")
	if err != nil || os.Getuid() != 0 {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "a second dockerd needs root and the dockerd binary")
	}
	args := append([]string{"-H", host, "--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "dockerd.pid"), "--iptables=false", "--ip6tables=false", "--bridge=none"}, flags...)
	if !slicesContains(flags, "--data-root") {
		args = append(args, "--data-root", filepath.Join(dir, "data"))
	}
	d := exec.Command(dockerd, args...)
	// The daemon says "API listen on" once it answers: read its log
	// as it comes (no polling).
	logr, err := d.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	d.Stdout = io.Discard
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = d.Process.Signal(os.Interrupt)
		_ = d.Wait()
	})
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(logr)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), "API listen on") {
				said = true
				listening <- true
			}
		}
		if !said {
			listening <- false
		}
	}()
	if !<-listening {
		t.Fatal("the second dockerd exited before it listened")
	}
	remote := func(args ...string) ([]byte, error) {
		return exec.Command("docker", append([]string{"-H", host}, args...)...).CombinedOutput()
	}
	if out, err := remote("info"); err != nil {
		t.Fatalf("the second dockerd does not answer: %v: %s", err, out)
	}
	save := exec.Command("docker", "save", "harness-busybox")
	load := exec.Command("docker", "-H", host, "load")
	pipe, err := save.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	load.Stdin = pipe
	if err := save.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("docker load: %v: %s", err, out)
	}
	if err := save.Wait(); err != nil {
		t.Fatal(err)
	}
	return remote
}
