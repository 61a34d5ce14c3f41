package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

// A store in a read-only directory can still be listed and read: sessions,
// events and request work without writing anything, and exec fails with
// SESS_READ_ONLY naming the file. Root ignores file modes, so as root the
// binary runs as nobody.
func TestReadOnlyStoreReads(t *testing.T) {
	u := newUser(t)
	r := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", u.script(`[{"content":"ok"}]`), "go")
	if r.code != 0 {
		t.Fatalf("exec: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)

	// Everything the other user touches lives under one open directory.
	top, err := os.MkdirTemp("", "harness-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(top, "ro"), 0o755); _ = os.RemoveAll(top) })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(top, 0o755))
	bin := filepath.Join(top, "harness")
	must(copyFile(harnessBin, bin, 0o755))
	home := filepath.Join(top, "home")
	must(os.Mkdir(home, 0o777))
	must(os.Chmod(home, 0o777))
	ro := filepath.Join(top, "ro")
	must(os.Mkdir(ro, 0o755))
	db := filepath.Join(ro, "harness.db")
	must(copyFile(u.db, db, 0o444))
	must(os.Chmod(ro, 0o555))
	before, err := os.ReadFile(db)
	must(err)

	run := func(args ...string) result {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), bin, append(args, "--db", db)...)
		cmd.Dir = home
		cmd.Env = []string{"HOME=" + home, "XDG_DATA_HOME=" + home, "XDG_CONFIG_HOME=" + home, "PATH=" + os.Getenv("PATH")}
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		res := result{stdout: out.String(), stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			res.code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("run harness: %v", err)
		}
		return res
	}
	for _, args := range [][]string{{"sessions"}, {"events", id}, {"request", id}} {
		r := run(args...)
		if r.code != 0 || r.stdout == "" || args[0] != "request" && !strings.Contains(r.stdout, id) {
			t.Errorf("%v on a read-only store: exit %d; stdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
	script := filepath.Join(home, "script.json")
	must(os.WriteFile(script, []byte(`[{"content":"ok"}]`), 0o644))
	r = run("exec", "--workspace", "local", "--fake-model", script, "go")
	if r.code == 0 || !strings.Contains(r.stderr, string(errcode.SessReadOnly)) || !strings.Contains(r.stderr, db) {
		t.Errorf("exec on a read-only store: exit %d, want %s naming %s; stderr:\n%s", r.code, errcode.SessReadOnly, db, r.stderr)
	}
	after, err := os.ReadFile(db)
	must(err)
	if !bytes.Equal(before, after) {
		t.Error("the read-only store file changed")
	}
	entries, err := os.ReadDir(ro)
	must(err)
	if len(entries) != 1 {
		t.Errorf("the read-only directory holds %d files, want only the store", len(entries))
	}
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(to, mode)
}
