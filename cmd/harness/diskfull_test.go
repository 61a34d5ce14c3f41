package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
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

// The disk fills in the middle of a turn (each round reads a 20 KB file
// into the log): the turn stops with SESS_DISK_FULL naming the store's
// file, every event appended before is intact, and once space is freed the
// session resumes: the cut turn is told as interrupted, never replayed, and
// a new turn completes.
func TestDiskFillsMidTurn(t *testing.T) {
	u := newUser(t)
	disk := testenv.Tmpfs(t, 4<<20)
	u.db = filepath.Join(disk, "harness.db")
	var body strings.Builder
	for body.Len() < 20<<10 {
		body.WriteString("a line of a file that fills the store's disk, round by round\n")
	}
	for i := range 7 {
		u.write("big"+strconv.Itoa(i)+".txt", body.String())
	}
	var calls []string
	for i := range 400 {
		calls = append(calls, `{"toolCalls":[{"id":"r`+strconv.Itoa(i)+`","name":"fs.read","arguments":{"path":"big`+strconv.Itoa(i%7)+`.txt"}}]}`)
	}
	script := u.script("[" + strings.Join(append(calls, `{"content":"done"}`), ",") + "]")
	// The store exists first (a new store's schema, made in one
	// transaction, is itself a few hundred KB in its log), then the disk
	// is taken but for 400 KB, so the turn's rounds fill it before the
	// context needs compacting (the script asks for no summary).
	if first := u.run("", "exec", "--workspace", "local", "--fake-model", u.script(`[{"content":"ok"}]`), "first"); first.code != 0 {
		t.Fatalf("exec: exit %d\n%s", first.code, first.stderr)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(disk, &st); err != nil {
		t.Fatal(err)
	}
	fill := filepath.Join(disk, "fill")
	if err := os.WriteFile(fill, make([]byte, int64(st.Bavail)*st.Bsize-400<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	r := u.run("", "exec", "--json", "--workspace", "local", "--max-rounds", "1000", "--fake-model", script, "read it again and again")
	var cut *event.TurnCompleted
	for _, e := range r.events {
		if d, ok := e.Data.(event.TurnCompleted); ok {
			cut = &d
		}
	}
	// Its end, when it still fitted in the log, names the full disk: as
	// its code, or in the sentence of the append that failed.
	if cut != nil && cut.ErrorCode != string(errcode.SessDiskFull) &&
		(cut.ErrorCode != string(errcode.RuntimeEventAppendFailed) || !strings.Contains(cut.Note, string(errcode.SessDiskFull)+": write the store file "+u.db)) {
		t.Fatalf("the cut turn ended %+v, want %s", cut, errcode.SessDiskFull)
	}
	if r.code == 0 || !strings.Contains(r.stderr, string(errcode.SessDiskFull)) || !strings.Contains(r.stderr, u.db) {
		t.Fatalf("exec whose disk fills: exit %d, want %s naming %s\n%s", r.code, errcode.SessDiskFull, u.db, r.stderr)
	}
	// The turn's end is told even when the store could not record it.
	told := cut != nil
	for _, line := range strings.Split(r.stderr, "\n") {
		told = told || strings.HasPrefix(line, "turn ") && strings.Contains(line, string(errcode.SessDiskFull))
	}
	if !told {
		t.Errorf("no outcome line names %s:\n%s", errcode.SessDiskFull, r.stderr)
	}
	id := sessionOf(t, r.events)
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	ev := u.run("", "events", "--json", id)
	if ev.code != 0 {
		t.Fatalf("events after the full disk: exit %d\n%s", ev.code, ev.stderr)
	}
	stored := strings.Count(ev.stdout, `"type":"tool.result"`)
	if stored < 1 || !strings.Contains(ev.stdout, `"type":"turn.started"`) {
		t.Fatalf("the log kept %d tool results of the cut turn, want its start and the rounds before the disk filled", stored)
	}
	// The way on: the session resumes, or, when the disk filled between
	// the turn's terminal checkpoint and its turn.completed, the refusal
	// says so with its code and --fork continues from that checkpoint.
	again := u.run("", "exec", "--json", "--workspace", "local", "--resume", id, "--fake-model", u.script(`[{"content":"back"}]`), "go on")
	if again.code != 0 {
		if !strings.Contains(again.stderr, string(errcode.RuntimeCheckpointInterrupted)) || !strings.Contains(again.stderr, "--fork") {
			t.Fatalf("resume after freeing space: exit %d, want success or %s naming --fork\n%s", again.code, errcode.RuntimeCheckpointInterrupted, again.stderr)
		}
		again = u.run("", "exec", "--json", "--workspace", "local", "--resume", id, "--fork", "--fake-model", u.script(`[{"content":"back"}]`), "go on")
		if again.code != 0 {
			t.Fatalf("fork after freeing space: exit %d\n%s", again.code, again.stderr)
		}
	}
	var completed []event.TurnCompleted
	for _, e := range again.events {
		if d, ok := e.Data.(event.TurnCompleted); ok {
			completed = append(completed, d)
		}
	}
	if len(completed) != 1 || completed[0].Status != "completed" {
		t.Fatalf("the resumed session's turns: %+v", completed)
	}
	if strings.Count(again.stdout+again.stderr, "read it again and again") > 1 {
		t.Errorf("the cut turn's message was sent again")
	}
}

// The TUI on a disk that fills mid-turn: the turn's end, which the store
// could not record, still ends the turn on screen (its code, never a card
// left running), and the screen goes on.
func TestTUIDiskFillsMidTurn(t *testing.T) {
	u := newUser(t)
	disk := testenv.Tmpfs(t, 4<<20)
	u.db = filepath.Join(disk, "harness.db")
	var body strings.Builder
	for body.Len() < 20<<10 {
		body.WriteString("a line of a file that fills the store's disk, round by round\n")
	}
	for i := range 7 {
		u.write("big"+strconv.Itoa(i)+".txt", body.String())
	}
	var calls []string
	for i := range 400 {
		calls = append(calls, `{"toolCalls":[{"id":"r`+strconv.Itoa(i)+`","name":"fs.read","arguments":{"path":"big`+strconv.Itoa(i%7)+`.txt"}}]}`)
	}
	script := u.script("[" + strings.Join(append(calls, `{"content":"done"}`), ",") + "]")
	tm := newTerminal(t, u)
	tm.line(harnessCmd(u, "--workspace", "local", "--max-rounds", "1000", "--fake-model", script))
	tm.waitFor("Ready.")
	var st syscall.Statfs_t
	if err := syscall.Statfs(disk, &st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(disk, "fill"), make([]byte, int64(st.Bavail)*st.Bsize-400<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	tm.typeText("read them all")
	tm.keys("Enter")
	tm.waitFor("✗ failed", string(errcode.SessDiskFull))
	tm.waitGone("running")
	tm.quit(1)
}
