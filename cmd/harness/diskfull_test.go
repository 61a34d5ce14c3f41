package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/testenv"
)

// A store whose disk fills up: harness sessions still lists it, exec says
// the disk is full naming the file (SESS_DISK_FULL, not a disk I/O
// error), and creating a new store there says so too.
func TestStoreOnAFullDisk(t *testing.T) {
	u := newUser(t)
	disk := testenv.Tmpfs(t, 2<<20)
	u.db = filepath.Join(disk, "harness.db")
	r := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", u.script(`[{"content":"ok"}]`), "go")
	if r.code != 0 {
		t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	f, err := os.Create(filepath.Join(disk, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{64 << 10, 1} {
		for buf := make([]byte, size); ; {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	f.Close()

	if ls := u.run("", "sessions"); ls.code != 0 || !strings.Contains(ls.stdout, id) {
		t.Fatalf("sessions on a full disk: exit %d\n%s%s", ls.code, ls.stdout, ls.stderr)
	}
	if ev := u.run("", "events", id); ev.code != 0 || ev.stdout == "" {
		t.Fatalf("events on a full disk: exit %d\n%s", ev.code, ev.stderr)
	}
	x := u.run("", "exec", "--workspace", "local", "--fake-model", u.script(`[{"content":"ok"}]`), "again")
	if x.code != 1 || !strings.Contains(x.stderr, string(errcode.SessDiskFull)) || !strings.Contains(x.stderr, u.db) {
		t.Fatalf("exec on a full disk: exit %d, want %s naming %s\n%s", x.code, errcode.SessDiskFull, u.db, x.stderr)
	}
	fresh := filepath.Join(disk, "new", "harness.db")
	n := u.run("", "sessions", "--db", fresh)
	if n.code != 1 || !strings.Contains(n.stderr, string(errcode.SessDiskFull)) || !strings.Contains(n.stderr, fresh) {
		t.Fatalf("a new store on a full disk: exit %d\n%s", n.code, n.stderr)
	}
}
