package runtime_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/runtime"
	"github.com/harness-dev/harness/tools"
)

// answerOn answers every question sess asks after seq after with answer
// and counts them.
func answerOn(t *testing.T, sess *runtime.Session, after int64, answer runtime.PermissionAnswer) (asked func() int) {
	t.Helper()
	sub, err := sess.Events(t.Context(), after)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	done := make(chan struct{})
	t.Cleanup(func() { close(done); sub.Close() })
	go func() {
		for {
			select {
			case <-sub.Ready():
			case <-done:
				return
			}
			for _, p := range sub.Drain() {
				if q, ok := p.Event.Data.(event.PermissionRequested); ok {
					mu.Lock()
					n++
					mu.Unlock()
					if err := sess.Answer(t.Context(), q.PermissionID, answer); err != nil {
						t.Errorf("answer %s: %v", q.PermissionID, err)
					}
				}
			}
		}
	}()
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// An answer "for this session" (scope session) answers the matching
// questions of the next turns, survives a resume in another runtime (the
// terminal checkpoint carries it), and Revoke takes it back, recorded as
// permission.revoked, folded by the next resume: the call is asked about
// again. A fork starts with no grant.
func TestSessionGrant(t *testing.T) {
	askAll := runtime.PolicyFunc(func(tools.Call) runtime.Decision {
		return runtime.Decision{Effect: runtime.Ask, RuleID: "ask-all"}
	})
	read := func(id, path string) string {
		return `{"toolCalls":[{"id":"` + id + `","name":"fs.read","arguments":{"path":"` + path + `"}}]},{"content":"ok"}`
	}
	m := script(t, `[`+read("c1", "README.md")+`,`+read("c2", "main.go")+`,`+read("c3", "README.md")+`,`+read("c4", "main.go")+`]`)
	f := newFixture(t, m, m, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { c.Policy = askAll })
	ctx := t.Context()
	asked := answerOn(t, f.sess, -1, runtime.PermissionAnswer{Allow: true, Scope: runtime.ScopeSession, Note: "approved for this session"})

	// Turn 1 asks once; turn 2's read of another file is not asked.
	for i, in := range []string{"read the readme", "read main.go"} {
		if out := f.wait(f.start(in)); out.Status != runtime.StatusCompleted {
			t.Fatalf("turn %d: %+v", i+1, out)
		}
	}
	if n := asked(); n != 1 {
		t.Fatalf("asked %d times in two turns, want once", n)
	}
	if got := f.sess.Grants(); !cmp.Equal(got, []string{"fs.read"}) {
		t.Fatalf("grants = %v", got)
	}
	evs := f.events()
	if pr := ofType[event.PermissionResolved](evs); len(pr) != 1 || pr[0].Scope != event.ScopeSession || pr[0].Decision != event.DecisionAllow {
		t.Fatalf("permission.resolved = %+v", pr)
	}
	for _, r := range ofType[event.ToolResult](evs) {
		if !r.OK {
			t.Errorf("result = %+v", r)
		}
	}
	// The log says why turn 2's call was not asked: the policy's answer
	// stands, with the grant that covered it.
	if pd := ofType[event.PolicyDecision](evs); len(pd) != 2 || pd[0].Effect != "ask" || pd[0].Reason != "" ||
		pd[1].Effect != "ask" || pd[1].Reason != "not asked: the user allowed fs.read for this session" {
		t.Fatalf("policy.decision = %+v", pd)
	}

	// Resumed in another runtime: turn 3 is not asked either.
	f.sess.Close(ctx)
	rp, err := runtime.LatestTerminal(ctx, f.st, f.sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := rp.Checkpoint.Control.SessionGrants; !cmp.Equal(got, []string{"fs.read"}) {
		t.Fatalf("checkpoint's session grants = %v", got)
	}
	// The format: sorted, each once.
	for _, bad := range [][]string{{"process.exec", "fs.read"}, {"fs.read", "fs.read"}} {
		c := *rp.Checkpoint
		c.Control.SessionGrants = bad
		b, err := checkpoint.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		_, err = checkpoint.Parse(b)
		mustCode(t, err, errcode.RuntimeCheckpointInvalid)
	}
	rt2 := runtime.New(runtime.Config{})
	s2, err := rt2.RestoreSession(ctx, f.log, runtime.SessionConfig{Model: m, Workspace: mustLocal(t, f.root), Policy: askAll}, rp.Checkpoint, checkpoint.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	asked2 := answerOn(t, s2, rp.LastSeq, runtime.PermissionAnswer{Note: "denied in a test"})
	next, err := s2.Send(ctx, "read the readme again")
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := rt2.Wait(ctx, next.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("turn 3: %+v", out)
	}
	if n := asked2(); n != 0 {
		t.Fatalf("asked %d times after the resume, want none", n)
	}

	// Revoked: recorded, and a revoke of what is not granted is refused
	// with nothing recorded.
	if err := s2.Revoke(ctx, "fs.read"); err != nil {
		t.Fatal(err)
	}
	mustCode(t, s2.Revoke(ctx, "fs.read"), errcode.RuntimeInvalidInput)
	mustCode(t, s2.Revoke(ctx, "process.exec"), errcode.RuntimeInvalidInput)
	if got := s2.Grants(); len(got) != 0 {
		t.Fatalf("grants after revoke = %v", got)
	}
	if rv := ofType[event.PermissionRevoked](f.events()); len(rv) != 1 || rv[0].Action != "fs.read" || rv[0].SessionID != f.sess.ID() {
		t.Fatalf("permission.revoked = %+v", rv)
	}

	// The revocation follows the terminal checkpoint: a resume folds it,
	// and turn 4 is asked (and denied).
	s2.Close(ctx)
	rp, err = runtime.LatestTerminal(ctx, f.st, f.sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := rp.Checkpoint.Control.SessionGrants; len(got) != 0 {
		t.Fatalf("resumed grants after the revocation = %v", got)
	}
	rt3 := runtime.New(runtime.Config{})
	s3, err := rt3.RestoreSession(ctx, f.log, runtime.SessionConfig{Model: m, Workspace: mustLocal(t, f.root), Policy: askAll}, rp.Checkpoint, checkpoint.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close(ctx)
	asked3 := answerOn(t, s3, rp.LastSeq, runtime.PermissionAnswer{Note: "denied in a test"})
	next, err = s3.Send(ctx, "read main.go again")
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := rt3.Wait(ctx, next.RunID); out.Status != runtime.StatusCompleted {
		t.Fatalf("turn 4: %+v", out)
	}
	if n := asked3(); n != 1 {
		t.Fatalf("asked %d times after the revocation, want once", n)
	}
	res := ofType[event.ToolResult](f.events())
	if last := res[len(res)-1]; last.OK || last.Error == nil || last.Error.Code != string(errcode.ToolPermissionDenied) {
		t.Errorf("turn 4's read = %+v, want denied", last)
	}
}

// A fork is another session: it does not inherit the grants.
func TestSessionGrantNotForked(t *testing.T) {
	askAll := runtime.PolicyFunc(func(tools.Call) runtime.Decision {
		return runtime.Decision{Effect: runtime.Ask, RuleID: "ask-all"}
	})
	m := script(t, `[{"toolCalls":[{"id":"c1","name":"fs.read","arguments":{"path":"README.md"}}]},{"content":"ok"}]`)
	f := newFixture(t, m, m, func(c *runtime.SessionConfig, _ *checkpoint.Settings) { c.Policy = askAll })
	ctx := t.Context()
	answerOn(t, f.sess, -1, runtime.PermissionAnswer{Allow: true, Scope: runtime.ScopeSession})
	if out := f.wait(f.start("read")); out.Status != runtime.StatusCompleted {
		t.Fatalf("turn: %+v", out)
	}
	cp, _, err := runtime.LastFinished(ctx, f.st, f.sess.ID())
	if err != nil || cp == nil || !cmp.Equal(cp.Control.SessionGrants, []string{"fs.read"}) {
		t.Fatalf("last finished = %+v, %v", cp, err)
	}
	_, log := memLog(t, event.NewID("sess"), "test-owner")
	rt2 := runtime.New(runtime.Config{})
	fork, err := rt2.Fork(ctx, log, runtime.SessionConfig{Model: m, Workspace: mustLocal(t, f.root), Policy: askAll}, f.sess.ID(), cp, "", checkpoint.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	defer fork.Close(ctx)
	if got := fork.Grants(); len(got) != 0 {
		t.Errorf("fork's grants = %v", got)
	}
}
