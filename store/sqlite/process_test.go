package sqlite

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/store"
)

// child is this test binary re-executed as a helper process (TestMain).
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // complete stdout lines; closed at EOF
	stderr *syncBuffer
	once   sync.Once
	err    error
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startChild(t *testing.T, mode string, env ...string) *child {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode}, env...)...)
	c := &child{t: t, cmd: cmd, lines: make(chan string, 1024), stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	go func() {
		defer close(c.lines)
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return // a line cut by the kill is not acknowledged
			}
			c.lines <- strings.TrimSuffix(line, "\n")
		}
	}()
	t.Cleanup(func() {
		c.kill()
		for range c.lines {
		}
		c.reap()
	})
	return c
}

// next returns the next stdout line, false at EOF.
func (c *child) next() (string, bool) {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		return l, ok
	case <-time.After(2 * time.Minute):
		c.t.Fatalf("helper %d said nothing for 2 minutes; stderr:\n%s", c.cmd.Process.Pid, c.stderr.String())
		return "", false
	}
}

// kill sends SIGKILL. The caller then drains lines (whatever the child
// printed before it died) and reaps it.
func (c *child) kill() { _ = c.cmd.Process.Kill() }

// reap waits for the process once its stdout is drained (Wait closes the
// pipe, so it must come after the last read).
func (c *child) reap() {
	c.once.Do(func() { c.err = c.cmd.Wait() })
}

// wait closes stdin and waits for a normal exit.
func (c *child) wait() {
	c.t.Helper()
	_ = c.stdin.Close()
	for range c.lines {
	}
	c.reap()
	if c.err != nil {
		c.t.Fatalf("helper %d: %v; stderr:\n%s", c.cmd.Process.Pid, c.err, c.stderr.String())
	}
}

func fields(t *testing.T, line string, n int) []string {
	t.Helper()
	f := strings.Fields(line)
	if len(f) != n {
		t.Fatalf("helper line %q: want %d fields", line, n)
	}
	return f
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return n
}

// crashN recovers the n crashEvent was called with from an event ID
// (evt-NAME-I or evt-NAME-I-J for the J-th event of a batch at I).
func crashN(t *testing.T, id string) int {
	t.Helper()
	f := strings.Split(id, "-")
	switch len(f) {
	case 3:
		return int(atoi(t, f[2]))
	case 4:
		return int(atoi(t, f[2]) + atoi(t, f[3]))
	}
	t.Fatalf("unexpected event id %q", id)
	return 0
}

type crashState struct {
	acked  map[string]int64 // event ID → seq, every acknowledged event so far
	rev    int64            // last acknowledged checkpoint revision
	stored int              // events in the log at the last check
}

func (st *crashState) record(t *testing.T, line string) {
	t.Helper()
	switch {
	case strings.HasPrefix(line, "ack "):
		f := fields(t, line, 3)
		st.acked[f[2]] = atoi(t, f[1])
	case strings.HasPrefix(line, "cp "):
		st.rev = atoi(t, fields(t, line, 3)[1])
	case strings.HasPrefix(line, "ready "):
	default:
		t.Fatalf("helper said %q", line)
	}
}

// TestCrashSafety kills a writing process with SIGKILL at random moments,
// 50 times, and checks after each that the file opens cleanly, seq is
// contiguous, every acknowledged event is there byte-identical, nothing is
// half-written and the summary and checkpoint agree with the log.
func TestCrashSafety(t *testing.T) {
	path := filepath.Join(t.TempDir(), "harness.db")
	const sess = "sess-crash"
	s := mustOpen(t, path, Options{})
	if _, err := s.CreateSession(t.Context(), store.SessionInit{ID: sess}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	st := &crashState{acked: map[string]int64{}}
	const rounds = 50
	for round := range rounds {
		c := startChild(t, "crash", helperDB+"="+path, helperSess+"="+sess, fmt.Sprintf("%s=r%d", helperName, round))
		// A negative count kills at once: during Open, migration or Acquire.
		stopAfter := rng.IntN(40) - 6
		for acks := 0; acks <= stopAfter; {
			line, ok := c.next()
			if !ok {
				t.Fatalf("round %d: helper ended early: %v; stderr:\n%s", round, c.err, c.stderr.String())
			}
			st.record(t, line)
			if strings.HasPrefix(line, "ack ") {
				acks++
			}
		}
		c.kill()
		for line := range c.lines { // printed before the kill: acknowledged
			st.record(t, line)
		}
		c.reap()
		verifyCrash(t, path, sess, st)
	}
	if len(st.acked) < rounds {
		t.Fatalf("only %d events acknowledged over %d rounds", len(st.acked), rounds)
	}
	t.Logf("%d rounds: %d events acknowledged, %d stored (committed before the kill but not yet acknowledged: %d)",
		rounds, len(st.acked), st.stored, st.stored-len(st.acked))
}

func verifyCrash(t *testing.T, path, sess string, st *crashState) {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	var check string
	if err := s.wdb.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity check: %q, %v", check, err)
	}
	var recs []store.Record
	for after := int64(-1); ; {
		page, err := s.ReadEvents(ctx, sess, after, store.MaxPage)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		recs = append(recs, page...)
		after = page[len(page)-1].Seq
	}
	turns := 0
	byID := map[string]int64{}
	for i, r := range recs {
		if r.Seq != int64(i) {
			t.Fatalf("record %d has seq %d: a gap", i, r.Seq)
		}
		if want := crashEvent(r.ID, crashN(t, r.ID)); !bytes.Equal(r.Body, want.Body) || r.Type != want.Type {
			t.Fatalf("event %s at seq %d is not byte-identical to what was written", r.ID, r.Seq)
		}
		if r.Type == "turn.completed" {
			turns++
		}
		byID[r.ID] = r.Seq
	}
	st.stored = len(recs)
	for id, seq := range st.acked {
		if got, ok := byID[id]; !ok || got != seq {
			t.Fatalf("acknowledged event %s at seq %d: stored %v at %d", id, seq, ok, got)
		}
	}
	info, err := s.Session(ctx, sess)
	if err != nil {
		t.Fatal(err)
	}
	if info.LastSeq != int64(len(recs))-1 || info.Turns != turns || info.Tokens != int64(turns) {
		t.Fatalf("summary LastSeq %d turns %d tokens %d; log has %d events, %d turns", info.LastSeq, info.Turns, info.Tokens, len(recs), turns)
	}
	cp, err := s.LoadCheckpoint(ctx, sess)
	if st.rev == 0 && err != nil {
		return
	}
	if err != nil {
		t.Fatalf("load checkpoint after an acknowledged revision %d: %v", st.rev, err)
	}
	if cp.Revision < st.rev || cp.AfterSeq > info.LastSeq || !bytes.Equal(cp.Payload, crashPayload(cp.Revision, cp.AfterSeq)) {
		t.Fatalf("checkpoint revision %d after %d (acknowledged %d, last seq %d) is not what was written", cp.Revision, cp.AfterSeq, st.rev, info.LastSeq)
	}
}

// TestTwoWritersBusy starts two processes on one file at once, both asking
// for one session: exactly one gets it and writes everything, the other is
// refused with SESS_BUSY while the first lives.
func TestTwoWritersBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "harness.db")
	const sess, count = "sess-two", 40
	s := mustOpen(t, path, Options{})
	if _, err := s.CreateSession(t.Context(), store.SessionInit{ID: sess}); err != nil {
		t.Fatal(err)
	}
	var kids []*child
	for _, name := range []string{"a", "b"} {
		kids = append(kids, startChild(t, "writer", helperDB+"="+path, helperSess+"="+sess,
			helperName+"="+name, fmt.Sprintf("%s=%d", helperCount, count)))
	}
	var winner *child
	winnerName := ""
	for i, c := range kids {
		line, ok := c.next()
		switch {
		case ok && strings.HasPrefix(line, "acquired "):
			if winner != nil {
				t.Fatalf("both writers acquired the session")
			}
			winner, winnerName = c, []string{"a", "b"}[i]
		case ok && line == "busy":
		default:
			t.Fatalf("writer %d said %q; stderr:\n%s", i, line, c.stderr.String())
		}
	}
	if winner == nil {
		t.Fatalf("neither writer acquired the session")
	}
	for n := 0; ; n++ {
		line, ok := winner.next()
		if !ok {
			t.Fatalf("winner ended early; stderr:\n%s", winner.stderr.String())
		}
		if line == "done" {
			if n != count {
				t.Fatalf("winner acknowledged %d events, want %d", n, count)
			}
			break
		}
		f := fields(t, line, 3)
		if f[0] != "ack" || atoi(t, f[1]) != int64(n) || f[2] != fmt.Sprintf("evt-%s-%d", winnerName, n) {
			t.Fatalf("winner line %d = %q", n, line)
		}
	}
	// The loser, started again while the winner still lives, is refused.
	again := startChild(t, "writer", helperDB+"="+path, helperSess+"="+sess, helperName+"=late", helperCount+"=1")
	if line, _ := again.next(); line != "busy" {
		t.Fatalf("late writer said %q, want busy", line)
	}
	again.wait()
	for _, c := range kids {
		c.wait()
	}
	recs, err := s.ReadEvents(t.Context(), sess, -1, store.MaxPage)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != count {
		t.Fatalf("%d events stored, want %d", len(recs), count)
	}
	for i, r := range recs {
		if r.Seq != int64(i) || r.ID != fmt.Sprintf("evt-%s-%d", winnerName, i) {
			t.Fatalf("record %d = seq %d id %s", i, r.Seq, r.ID)
		}
	}
}

// TestTwoWritersTakeOver has a second process take a session over while
// the first is writing flat out: the first is fenced out with
// SESS_OWNERSHIP_LOST, and the log holds the first's acknowledged events,
// then the second's, never interleaved.
func TestTwoWritersTakeOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "harness.db")
	const sess, countB = "sess-take", 30
	s := mustOpen(t, path, Options{})
	if _, err := s.CreateSession(t.Context(), store.SessionInit{ID: sess}); err != nil {
		t.Fatal(err)
	}
	a := startChild(t, "writer", helperDB+"="+path, helperSess+"="+sess, helperName+"=a", helperCount+"=1000000")
	var ackedA []string
	readA := func(line string) bool {
		switch {
		case strings.HasPrefix(line, "ack "):
			f := fields(t, line, 3)
			if atoi(t, f[1]) != int64(len(ackedA)) {
				t.Fatalf("a's line %q out of order", line)
			}
			ackedA = append(ackedA, f[2])
		case line == "lost":
			return false
		case strings.HasPrefix(line, "acquired "):
		default:
			t.Fatalf("a said %q; stderr:\n%s", line, a.stderr.String())
		}
		return true
	}
	for len(ackedA) < 10 {
		line, ok := a.next()
		if !ok || !readA(line) {
			t.Fatalf("a ended before b started: %q", line)
		}
	}
	b := startChild(t, "writer", helperDB+"="+path, helperSess+"="+sess, helperName+"=b",
		fmt.Sprintf("%s=%d", helperCount, countB), helperTake+"=1")
	if line, _ := b.next(); line != "acquired 2" {
		t.Fatalf("b said %q, want acquired 2; stderr:\n%s", line, b.stderr.String())
	}
	var seqB []int64
	for {
		line, ok := b.next()
		if !ok {
			t.Fatalf("b ended early; stderr:\n%s", b.stderr.String())
		}
		if line == "done" {
			break
		}
		seqB = append(seqB, atoi(t, fields(t, line, 3)[1]))
	}
	lost := false
	for line := range a.lines {
		if !readA(line) {
			lost = true
		}
	}
	if !lost {
		t.Fatalf("a was never told it lost the session; stderr:\n%s", a.stderr.String())
	}
	a.wait()
	b.wait()

	recs, err := s.ReadEvents(t.Context(), sess, -1, store.MaxPage)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(ackedA)+countB {
		t.Fatalf("%d events stored; a acknowledged %d, b %d", len(recs), len(ackedA), countB)
	}
	for i, r := range recs {
		want := ""
		if i < len(ackedA) {
			want = ackedA[i]
		} else {
			want = fmt.Sprintf("evt-b-%d", i-len(ackedA))
			if seqB[i-len(ackedA)] != int64(i) {
				t.Fatalf("b acknowledged seq %d for its event %d, stored at %d", seqB[i-len(ackedA)], i-len(ackedA), i)
			}
		}
		if r.Seq != int64(i) || r.ID != want {
			t.Fatalf("record %d = seq %d id %s, want %s", i, r.Seq, r.ID, want)
		}
	}
	info, err := s.Session(t.Context(), sess)
	if err != nil || info.Lease != nil {
		t.Fatalf("after both writers: lease %+v, %v", info.Lease, err)
	}
}
