package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/workspace"
)

func needDocker(t *testing.T) {
	t.Helper()
	if err := dockerws.Ping(t.Context(), ""); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "no daemon answers: "+errcode.Message(err))
	}
	if out, err := exec.Command("docker", "image", "inspect", "harness-busybox").CombinedOutput(); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "image harness-busybox is missing (scripts/images.sh builds it): "+strings.TrimSpace(string(out)))
	}
}

// treeHash hashes every path, mode and content under root.
func treeHash(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		h.Write([]byte(rel + "\x00" + info.Mode().String() + "\x00"))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The five-tool fixture of issue 3, in real Docker: an allowed edit, a
// test command, the diff, and invalid attempts that each end as a coded
// tool.result; the turn completes and the host tree is untouched.
func TestFiveToolFixtureDocker(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("main.go", "package main\n\nfunc main() {}\n")
	u.write("README.md", "# tool fixture\n")
	before := treeHash(t, u.project)
	s := fixture(t, "five-tools.json")
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", s, "add verbose logging")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	results := resultsByModelCall(r.events)
	for _, d := range eventsOf[event.WorkspaceLifecycle](r.events) {
		if d.Backend != "docker" || d.ImageID == "" {
			t.Errorf("workspace = %+v", d)
		}
	}
	for _, ok := range []string{"w1", "x1", "d1"} {
		if !results[ok].OK {
			t.Errorf("%s failed: %+v", ok, results[ok].Error)
		}
	}
	if !strings.Contains(string(results["x1"].Output), `"stdout":"1\n"`) {
		t.Errorf("test command output = %s", results["x1"].Output)
	}
	if !strings.Contains(string(results["d1"].Output), "+// verbose logging") {
		t.Errorf("diff output = %s", results["d1"].Output)
	}
	for id, code := range map[string]errcode.Code{"bad1": errcode.ToolBadInput, "bad2": errcode.ToolBadInput, "bad3": errcode.WorkspacePath} {
		if res := results[id]; res.OK || res.Error == nil || res.Error.Code != string(code) {
			t.Errorf("%s = %+v, want %s", id, res, code)
		}
	}
	if after := treeHash(t, u.project); after != before {
		t.Fatal("the host tree changed")
	}

	// The recorded patch applies to a copy of the original tree, and
	// `harness apply` applies it to the host after its check.
	id := sessionOf(t, r.events)
	d := u.run("", "diff", id)
	if d.code != 0 || !strings.Contains(d.stdout, "diff --git a/main.go b/main.go") {
		t.Fatalf("diff: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	a := u.run("", "apply", id, "--yes")
	if a.code != 0 {
		t.Fatalf("apply: exit %d\n%s", a.code, a.stderr)
	}
	got, _ := os.ReadFile(filepath.Join(u.project, "main.go"))
	if !strings.Contains(string(got), "// verbose logging") {
		t.Errorf("main.go after apply = %q", got)
	}
	// Applying again is refused cleanly, and says why.
	if again := u.run("", "apply", id, "--yes"); again.code == 0 || !strings.Contains(again.stderr, "already applied") {
		t.Errorf("a second apply: exit %d\n%s", again.code, again.stderr)
	}
	// The session goes on after its work was applied: the workspace opens
	// on the tree that now holds it (not SESS_PATCH_CONFLICT), says so,
	// and its diff starts from there.
	done := filepath.Join(u.home, "done.json")
	if err := os.WriteFile(done, []byte(`[{"content":"nothing more"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Resumed from another directory, it says so in one coherent
	// account, one line each: working in the project, its changes
	// already there — and not that its patch is being replayed.
	more := u.runIn(t.TempDir(), "", "exec", "--image", "harness-busybox", "--fake-model", done, "--resume", id, "anything else?")
	if more.code != 0 || !strings.Contains(more.stderr, "already in the project tree") || !strings.Contains(more.stderr, u.project) {
		t.Fatalf("resume after apply: exit %d\n%s", more.code, more.stderr)
	}
	if strings.Contains(more.stderr, "replaying its patch") || strings.Count(more.stderr, "harness:") != strings.Count(more.stderr, "\nharness:")+btoi(strings.HasPrefix(more.stderr, "harness:")) {
		t.Errorf("resume after apply, from another directory: contradicting or run-together messages:\n%s", more.stderr)
	}
	if d := u.run("", "diff", id); d.code != 0 || strings.TrimSpace(d.stdout) != "" {
		t.Errorf("diff after the applied work: exit %d\n%q%s", d.code, d.stdout, d.stderr)
	}
}

// A write through the local workspace is refused before any effect, with
// the evidence tool.call → policy.decision(allow) → tool.result(error).
func TestWriteThroughLocalWorkspace(t *testing.T) {
	u := newUser(t)
	u.write("a.txt", "original\n")
	before := treeHash(t, u.project)
	s := u.script(`[{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"a.txt","contents":"changed"}}]},{"content":"could not"}]`)
	r := u.run("", "exec", "--json", "--workspace", "local", "--fake-model", s, "change a.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var seq []string
	for _, e := range r.events {
		switch d := e.Data.(type) {
		case event.ToolCall:
			seq = append(seq, "tool.call")
		case event.PolicyDecision:
			seq = append(seq, "policy.decision:"+d.Effect)
		case event.ToolResult:
			if d.Error != nil {
				seq = append(seq, "tool.result:"+d.Error.Code)
			}
		}
	}
	want := "tool.call policy.decision:allow tool.result:WORKSPACE_ISOLATION_REQUIRED"
	if strings.Join(seq, " ") != want {
		t.Errorf("evidence = %v, want %s", seq, want)
	}
	if treeHash(t, u.project) != before {
		t.Fatal("the host tree changed")
	}
}

// A resumed session's Docker workspace is rebuilt from the host tree plus
// the patch recorded at its last finished turn; a host tree that changed
// since is reported.
func TestResumeRebuildsDockerWorkspace(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("notes.txt", "one\n")
	u.write("other.txt", "unrelated\n")
	s1 := u.script(`[{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"notes.txt","contents":"one\ntwo\n"}}]},{"content":"wrote"}]`)
	r1 := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", s1, "add a line")
	if r1.code != 0 {
		t.Fatalf("first: exit %d\n%s", r1.code, r1.stderr)
	}
	id := sessionOf(t, r1.events)
	read := `[{"toolCalls":[{"id":"r1","name":"fs.read","arguments":{"path":"notes.txt"}}]},{"content":"read"}]`
	r2 := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", u.script(read), "--resume", id, "what is in notes?")
	if r2.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r2.code, r2.stderr)
	}
	var content string
	for _, e := range r2.events {
		if d, ok := e.Data.(event.ToolResult); ok {
			content = string(d.Output)
		}
	}
	if !strings.Contains(content, `one\ntwo\n`) {
		t.Fatalf("the resumed workspace lost the earlier edit: %s", content)
	}
	if strings.Contains(r2.stderr, "changed since") {
		t.Errorf("an unchanged host was reported as changed: %s", r2.stderr)
	}
	// The host changes elsewhere: the rebuild goes on and says so.
	u.write("other.txt", "edited on the host\n")
	read2 := strings.ReplaceAll(read, `"r1"`, `"r2"`)
	r3 := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", u.script(read2), "--resume", id, "again")
	if r3.code != 0 || !strings.Contains(r3.stderr, "changed since this session started") {
		t.Fatalf("changed host: exit %d\n%s", r3.code, r3.stderr)
	}
	// The host changes under the patch: the resume is refused before its
	// turn starts (the replay is waited for), naming the file.
	u.write("notes.txt", "rewritten on the host\n")
	read3 := strings.ReplaceAll(read, `"r1"`, `"r3"`)
	r4 := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", u.script(read3), "--resume", id, "and now")
	if r4.code != 1 || !strings.Contains(r4.stderr, string(errcode.SessPatchConflict)) || !strings.Contains(r4.stderr, "notes.txt") {
		t.Fatalf("resume on a tree changed under the patch: exit %d, want 1 with %s naming notes.txt\n%s", r4.code, errcode.SessPatchConflict, r4.stderr)
	}
	for _, e := range r4.events {
		if _, ok := e.Data.(event.TurnStarted); ok {
			t.Fatalf("a turn started on a workspace whose patch did not replay")
		}
	}
	// The recorded work is not lost: the session still holds its patch.
	if d := u.run("", "diff", id); d.code != 0 || !strings.Contains(d.stdout, "+two") {
		t.Fatalf("diff after the failed replay: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
}

// refusedOpen checks a run whose workspace was refused in the background:
// the tool call that needed it got the code and the turn ended failed with
// it (the workspace never opened: nothing could work), exec printed the
// refusal with the code and exited 1.
func refusedOpen(t *testing.T, r result, code errcode.Code) {
	t.Helper()
	if r.code != 1 || !strings.Contains(r.stderr, "harness: "+string(code)+": the workspace could not be opened") {
		t.Fatalf("exit %d, want 1 with %s printed\n%s", r.code, code, r.stderr)
	}
	var res *event.ToolResult
	var done *event.TurnCompleted
	for _, e := range r.events {
		switch d := e.Data.(type) {
		case event.ToolResult:
			res = &d
		case event.TurnCompleted:
			done = &d
		}
	}
	if res == nil || res.OK || res.Error == nil || res.Error.Code != string(code) {
		t.Fatalf("tool result = %+v, want %s", res, code)
	}
	if done == nil || done.Status != "failed" || done.ErrorCode != string(code) {
		t.Fatalf("turn.completed = %+v, want failed with %s", done, code)
	}
}

// A credential-like file stops the copy with its code until it is
// excluded: the copy runs in the background, so the tool call that needs
// the workspace gets the code, exec prints it and fails.
func TestCredentialNeedsExclude(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("main.go", "package main\n")
	u.write(".env", "TOKEN=secret\n")
	before := treeHash(t, u.project)
	s := u.script(`[{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["true"]}}]},{"content":"ok"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", s, "hi")
	refusedOpen(t, r, errcode.WorkspaceCredentialInput)
	if !strings.Contains(r.stderr, "--exclude .env") {
		t.Errorf("the refusal does not name the file with the flag that leaves it out:\n%s", r.stderr)
	}
	// The refused session is not stuck: resumed with the exclusion, it works.
	id := sessionOf(t, r.events)
	again := u.script(`[{"toolCalls":[{"id":"x2","name":"process.exec","arguments":{"argv":["true"]}}]},{"content":"ok"}]`)
	r = u.run("", "exec", "--image", "harness-busybox", "--exclude", ".env", "--fake-model", again, "--resume", id, "hi")
	if r.code != 0 {
		t.Fatalf("resumed with --exclude: exit %d\n%s", r.code, r.stderr)
	}
	r = u.run("", "exec", "--image", "harness-busybox", "--exclude", ".env", "--fake-model", s, "hi")
	if r.code != 0 {
		t.Fatalf("with --exclude: exit %d\n%s", r.code, r.stderr)
	}
	if treeHash(t, u.project) != before {
		t.Fatal("the host tree changed")
	}
}

// A project that is a subdirectory of a git repository: the patch applies
// relative to the project, not to the repository's top.
func TestApplyInSubdirectoryOfARepo(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("app/notes.txt", "one\n")
	u.write("other/x.txt", "x\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", u.project}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	app := filepath.Join(u.project, "app")
	s := u.script(`[{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"notes.txt","contents":"one\ntwo\n"}}]},{"content":"ok"}]`)
	r := u.runIn(app, "", "exec", "--json", "--image", "harness-busybox", "--fake-model", s, "add a line")
	if r.code != 0 {
		t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	a := u.runIn(app, "", "apply", id, "--yes")
	if a.code != 0 {
		t.Fatalf("apply: exit %d\n%s", a.code, a.stderr)
	}
	got, _ := os.ReadFile(filepath.Join(app, "notes.txt"))
	if string(got) != "one\ntwo\n" {
		t.Fatalf("notes.txt after apply = %q\n%s", got, a.stderr)
	}
}

// The copy-in limits are flags; going over one stops the copy with its code.
func TestCopyInLimitFlags(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("a.txt", "a\n")
	u.write("b.txt", "b\n")
	s := u.script(`[{"toolCalls":[{"id":"r1","name":"fs.read","arguments":{"path":"a.txt"}}]},{"content":"ok"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--max-files", "1", "--fake-model", s, "hi")
	refusedOpen(t, r, errcode.WorkspaceLimit)
	if r := u.run("", "exec", "--image", "harness-busybox", "--max-files", "2", "--fake-model", s, "hi"); r.code != 0 {
		t.Fatalf("within the limit: exit %d\n%s", r.code, r.stderr)
	}
}

// failTheDiff runs a turn whose end-of-turn diff fails: fs.write keep.txt,
// then a process.exec writing files that pass the diff's cap. It returns
// the session and the kept container's name (removed at the test's end).
func failTheDiff(t *testing.T, u *userEnv, write string, flags ...string) (string, string) {
	t.Helper()
	s := u.script(`[{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"keep.txt","contents":"keep me\n"}}]},` +
		`{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["sh","-c",` + strconv.Quote(write) + `]}}]},` +
		`{"content":"done"}]`)
	args := append([]string{"exec", "--json", "--image", "harness-busybox"}, flags...)
	r := u.run("", append(args, "--fake-model", s, "write a lot")...)
	if r.code != 1 {
		t.Fatalf("exec: exit %d, want 1\n%s", r.code, r.stderr)
	}
	var done *event.TurnCompleted
	for _, e := range r.events {
		if d, ok := e.Data.(event.TurnCompleted); ok {
			done = &d
		}
	}
	if done == nil || done.Status != "failed" || done.ErrorCode != string(errcode.WorkspaceLimit) {
		t.Fatalf("turn.completed = %+v", done)
	}
	name := regexp.MustCompile(dockerws.KeptPrefix + `[0-9a-f-]{12}(_sess-[0-9a-f-]+)?`).FindString(done.Note)
	if name == "" {
		t.Fatalf("the note names no kept container: %s", done.Note)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", "-v", name).Run() })
	out, err := exec.Command("docker", "exec", name, "cat", "/workspace/keep.txt").CombinedOutput()
	if err != nil || string(out) != "keep me\n" {
		t.Fatalf("the kept container lost keep.txt: %v %q", err, out)
	}
	return sessionOf(t, r.events), name
}

// A patch over what a session can record (8 MiB; its checkpoints hold 16
// MiB) is a failed diff whose files are kept, like one over the copy's
// cap: five files of 2 MiB are within every copy-in limit.
func TestPatchOverTheSessionBoundKeepsTheWork(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("a.txt", "a\n")
	failTheDiff(t, u, `i=0; while [ $i -lt 5 ]; do yes abcdefg | head -c 2097152 > big$i.txt || exit 1; i=$((i+1)); done`)
}

// running reports whether container name runs.
func running(name string) bool {
	out, err := exec.Command("docker", "inspect", "-f", "{{.State.Running}}", name).CombinedOutput()
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// A process writes 140 files of 2 MiB, more text than the diff may hold:
// the turn fails with WORKSPACE_LIMIT instead of completing with "no
// changes", and the workspace's container is kept, named in the note, the
// earlier fs.write in it; harness doctor lists it. diff and apply recover
// the work only when it fits: with the session's own limits they fail
// again, naming the container; with a larger cap the patch would pass what
// a session records, which is refused before anything is copied out. A
// resume that leaves the generated files out (--max-file-bytes) recovers
// it: the patch is recorded (workspace.recovered), the container removed,
// the resumed workspace holds keep.txt, and diff and apply work without
// flags. The host tree changes only with apply.
func TestFailedDiffKeepsTheWork(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("notes.txt", "one\n")
	before := treeHash(t, u.project)
	id, name := failTheDiff(t, u, `i=0; while [ $i -lt 140 ]; do yes abcdefg | head -c 2097152 > big$i.txt || exit 1; i=$((i+1)); done`)

	doc := u.run("", "doctor", "--image", "harness-busybox")
	if !strings.Contains(doc.stdout, "kept workspace "+name+" of session "+id) || !strings.Contains(doc.stdout, "harness discard "+id) {
		t.Errorf("doctor does not list the kept workspace:\n%s", doc.stdout)
	}
	for _, args := range [][]string{{"diff", id}, {"apply", id, "--yes"}, {"diff", id, "--max-total-bytes", "400000000"}} {
		res := u.run("", args...)
		if res.code != 1 || !strings.Contains(res.stderr, string(errcode.WorkspaceLimit)) || !strings.Contains(res.stderr, name) {
			t.Errorf("%v: exit %d, want WORKSPACE_LIMIT naming %s\n%s%s", args, res.code, name, res.stdout, res.stderr)
		}
		if !running(name) {
			t.Fatalf("%v: a failed recovery removed the kept container", args)
		}
	}
	if res := u.run("", "diff", id, "--max-total-bytes", "400000000"); !strings.Contains(res.stderr, "bytes a session records") {
		t.Errorf("the larger cap's refusal does not say why:\n%s", res.stderr)
	}
	// A later open's reaping leaves the kept container alone.
	if _, err := dockerws.Reap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if !running(name) {
		t.Fatal("the kept container is gone after Reap")
	}
	if got := treeHash(t, u.project); got != before {
		t.Fatal("the host tree changed")
	}

	rd := u.script(`[{"toolCalls":[{"id":"r1","name":"fs.read","arguments":{"path":"keep.txt"}}]},{"content":"it is there"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--max-file-bytes", "1048576", "--fake-model", rd, "--resume", id, "go on")
	if r.code != 0 {
		t.Fatalf("resume with the big files left out: exit %d\n%s", r.code, r.stderr)
	}
	var recovered *event.WorkspaceRecovered
	var read *event.ToolResult
	for _, e := range r.events {
		switch d := e.Data.(type) {
		case event.WorkspaceRecovered:
			recovered = &d
		case event.ToolResult:
			read = &d
		}
	}
	// The big files are carried while they fit the patch; the rest are
	// named as left out.
	if recovered == nil || recovered.Container != name || !strings.Contains(recovered.Patch, "+keep me") || len(workspace.LeftOut(recovered.Patch)) == 0 {
		t.Fatalf("workspace.recovered = %+v", recovered)
	}
	if read == nil || !read.OK || !strings.Contains(string(read.Output), "keep me") {
		t.Fatalf("fs.read keep.txt after the recovery = %+v", read)
	}
	if running(name) || exec.Command("docker", "inspect", name).Run() == nil {
		t.Error("the kept container is still there after its work was recorded")
	}
	if got := treeHash(t, u.project); got != before {
		t.Fatal("the host tree changed before apply")
	}
	if d := u.run("", "diff", id); d.code != 0 || !strings.Contains(d.stdout, "b/keep.txt") {
		t.Fatalf("diff after the recovery: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	if a := u.run("", "apply", id, "--yes"); a.code != 0 {
		t.Fatalf("apply after the recovery: exit %d\n%s", a.code, a.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(u.project, "keep.txt")); string(b) != "keep me\n" {
		t.Fatalf("keep.txt on the host = %q", b)
	}
}

// The kept work can be given up: harness discard removes the container and
// records it, and the session resumes from the project tree as it is. A
// host tree that changed since the copy is refused for a recovery, and the
// container stays.
func TestDiscardKeptWork(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("notes.txt", "one\n")
	id, name := failTheDiff(t, u, `for i in 1 2 3 4; do yes abcdefg | head -c 900000 > big$i.txt; done`, "--max-total-bytes", "1000000")

	u.write("notes.txt", "edited on the host\n")
	res := u.run("", "diff", id, "--max-total-bytes", "10000000")
	if res.code != 1 || !strings.Contains(res.stderr, string(errcode.WorkspaceScope)) || !running(name) {
		t.Fatalf("recovery on a changed host tree: exit %d\n%s", res.code, res.stderr)
	}
	u.write("notes.txt", "one\n")

	d := u.run("", "discard", id)
	if d.code != 0 || !strings.Contains(d.stderr, name) {
		t.Fatalf("discard: exit %d\n%s", d.code, d.stderr)
	}
	if exec.Command("docker", "inspect", name).Run() == nil {
		t.Error("the discarded container is still there")
	}
	if again := u.run("", "discard", id); again.code != 1 || !strings.Contains(again.stderr, string(errcode.WorkspaceNotFound)) {
		t.Errorf("a second discard: exit %d\n%s", again.code, again.stderr)
	}
	if df := u.run("", "diff", id); df.code != 0 || df.stdout != "" {
		t.Errorf("diff after discard: exit %d %q\n%s", df.code, df.stdout, df.stderr)
	}
	rd := u.script(`[{"toolCalls":[{"id":"r1","name":"fs.read","arguments":{"path":"keep.txt"}}]},{"content":"gone"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", rd, "--resume", id, "go on")
	if r.code != 0 {
		t.Fatalf("resume after discard: exit %d\n%s", r.code, r.stderr)
	}
	ev := u.run("", "events", id)
	if !strings.Contains(ev.stdout, `"type":"workspace.recovered"`) || !strings.Contains(ev.stdout, `"discarded":true`) {
		t.Errorf("no discard recorded:\n%s", ev.stdout)
	}
}

// A Docker session resumed from another directory is rebuilt from its own
// project tree plus its recorded patch, never from the current directory.
func TestDockerResumeElsewhereReplaysOnTheProject(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("notes.txt", "milk\n")
	w := u.script(`[{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"notes.txt","contents":"oat milk\n"}}]},{"content":"written"}]`)
	r1 := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", w, "change the notes")
	if r1.code != 0 {
		t.Fatalf("first: exit %d\n%s", r1.code, r1.stderr)
	}
	id := sessionOf(t, r1.events)

	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "notes.txt"), []byte("not this tree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rd := u.script(`[{"toolCalls":[{"id":"r1","name":"fs.read","arguments":{"path":"notes.txt"}}]},{"content":"read"}]`)
	r2 := u.runIn(elsewhere, "", "exec", "--json", "--image", "harness-busybox", "--fake-model", rd, "--resume", id, "read them")
	if r2.code != 0 {
		t.Fatalf("resume elsewhere: exit %d\n%s", r2.code, r2.stderr)
	}
	var read *event.ToolResult
	for _, e := range r2.events {
		if d, ok := e.Data.(event.ToolResult); ok {
			read = &d
		}
	}
	if read == nil || !read.OK || !strings.Contains(string(read.Output), "oat milk") {
		t.Fatalf("fs.read after the resume: %+v", read)
	}
	if b, _ := os.ReadFile(filepath.Join(u.project, "notes.txt")); string(b) != "milk\n" {
		t.Fatalf("the host project changed: %q", b)
	}
}

// --max-workspace-bytes is the workspace's quota: a write beyond it fails
// in the container; the host tree is untouched.
func TestWorkspaceQuotaFlag(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("a.txt", "a\n")
	before := treeHash(t, u.project)
	s := u.script(`[{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["sh","-c","dd if=/dev/zero of=big bs=1M count=16 2>&1; rm -f big"]}}]},{"content":"ok"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--max-workspace-bytes", "4194304", "--fake-model", s, "fill it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var out string
	for _, e := range r.events {
		if d, ok := e.Data.(event.ToolResult); ok {
			out = string(d.Output)
		}
	}
	if !strings.Contains(out, "No space left on device") {
		t.Errorf("the write beyond the quota did not fail: %s", out)
	}
	if got := treeHash(t, u.project); got != before {
		t.Error("the host tree changed")
	}
	if r := u.run("", "exec", "--workspace", "local", "--max-workspace-bytes", "-1", "--fake-model", s, "x"); r.code != 2 {
		t.Errorf("--max-workspace-bytes -1: exit %d, want 2", r.code)
	}
}

// What the copy left out (binary files, a file with another hard link,
// a symlink) is recorded in workspace.lifecycle(opened), counted per
// reason with the first paths, and exec prints it in one line.
func TestSkippedFilesReported(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("main.go", "package main\n")
	u.write("assets/logo.png", "\x89PNG\x00\x00")
	u.write("data/dump.bin", "\x00\x01")
	u.write("notes.txt", "linked\n")
	outside := filepath.Join(u.home, "outside.txt")
	if err := os.Link(filepath.Join(u.project, "notes.txt"), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("main.go", filepath.Join(u.project, "link.go")); err != nil {
		t.Fatal(err)
	}
	s := u.script(`[{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["true"]}}]},{"content":"ok"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", s, "hi")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var opened *event.WorkspaceLifecycle
	for _, e := range r.events {
		if d, ok := e.Data.(event.WorkspaceLifecycle); ok && d.Phase == event.PhaseOpened {
			opened = &d
		}
	}
	want := &event.SkippedFiles{Count: 4,
		Reasons: []event.SkipCount{{Reason: "binary", Count: 2}, {Reason: "hardlink", Count: 1}, {Reason: "symlink", Count: 1}},
		Paths:   []string{"assets/logo.png", "data/dump.bin", "link.go", "notes.txt"}}
	if opened == nil || opened.Files == nil || *opened.Files != 1 {
		t.Fatalf("workspace.lifecycle(opened) = %+v", opened)
	}
	if diff := cmp.Diff(want, opened.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	r = u.run("", "exec", "--image", "harness-busybox", "--fake-model", s, "hi")
	line := "harness: left out of the workspace: 4 files (2 binary, 1 with other hard links, 1 symlinks): assets/logo.png, data/dump.bin, link.go, notes.txt\n"
	if r.code != 0 || !strings.Contains(r.stderr, line) {
		t.Fatalf("exit %d, want the line %q in\n%s", r.code, line, r.stderr)
	}
}

// A kept container that was restarted comes back with an empty
// /workspace: diff, apply and resume refuse to adopt it (its files are
// lost) and nothing is deleted on the host, untracked files included.
func TestRestartedKeptContainerDeletesNothing(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "untracked.txt"} {
		u.write(f, f+"\n")
	}
	before := treeHash(t, u.project)
	id, name := failTheDiff(t, u, `for i in 1 2 3 4; do yes abcdefg | head -c 900000 > big$i.txt; done`, "--max-total-bytes", "1000000")
	if out, err := exec.Command("docker", "restart", name).CombinedOutput(); err != nil || !running(name) {
		t.Fatalf("docker restart %s: %v %s", name, err, out)
	}
	for _, args := range [][]string{
		{"diff", id, "--max-total-bytes", "10000000"},
		{"apply", id, "--yes", "--allow-mass-delete", "--max-total-bytes", "10000000"},
		{"exec", "--image", "harness-busybox", "--max-total-bytes", "10000000", "--fake-model", u.script(`[{"content":"on"}]`), "--resume", id, "go on"},
	} {
		res := u.run("", args...)
		if res.code != 1 || !strings.Contains(res.stderr, string(errcode.WorkspaceNotFound)) {
			t.Errorf("%v: exit %d, want WORKSPACE_NOT_FOUND\n%s%s", args[0], res.code, res.stdout, res.stderr)
		}
		if got := treeHash(t, u.project); got != before {
			t.Fatalf("%v changed the host tree", args[0])
		}
	}
}

// A patch that deletes most of the project is never applied silently:
// apply says what it deletes and asks; with --yes it is refused
// (WORKSPACE_MASS_DELETE) unless --allow-mass-delete says it is meant.
func TestApplyMassDeleteAsks(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		u.write(f, f+"\n")
	}
	before := treeHash(t, u.project)
	s := u.script(`[{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["rm","a.txt","b.txt","c.txt"]}}]},{"content":"done"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", s, "clean up")
	if r.code != 0 {
		t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	if res := u.run("", "apply", id, "--yes"); res.code != 1 || !strings.Contains(res.stderr, string(errcode.WorkspaceMassDelete)) || !strings.Contains(res.stderr, "a.txt") {
		t.Fatalf("apply --yes: exit %d, want WORKSPACE_MASS_DELETE\n%s", res.code, res.stderr)
	}
	if res := u.run("n\n", "apply", id); res.code != 1 || !strings.Contains(res.stderr, "c.txt") {
		t.Fatalf("apply answered no: exit %d\n%s", res.code, res.stderr)
	}
	if got := treeHash(t, u.project); got != before {
		t.Fatal("a refused mass deletion changed the host tree")
	}
	if res := u.run("", "apply", id, "--yes", "--allow-mass-delete"); res.code != 0 {
		t.Fatalf("apply --yes --allow-mass-delete: exit %d\n%s", res.code, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(u.project, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("a.txt after an allowed mass deletion: %v", err)
	}
}

// A turn writes a PNG, a file holding a NUL, a 3 MB text file and a file
// whose name holds a newline: the first three reach the host through
// apply byte for byte; the last is named as left out in git.diff's
// result, in the outcome and by apply.
func TestApplyCarriesBinaryAndNamesWhatIsLeftOut(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("a.txt", "a\n")
	write := `printf '\211PNG\r\n\032\n\000\000\000\rIHDR' > logo.png && printf 'a\000b\n' > nul.txt && ` +
		`yes 'a line of text' | head -c 3145728 > big.txt && printf x > "$(printf 'new\nline')" && echo b >> a.txt`
	s := u.script(`[{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["sh","-c",` + strconv.Quote(write) + `]}}]},` +
		`{"toolCalls":[{"id":"d1","name":"git.diff","arguments":{}}]},{"content":"done"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", s, "make files")
	if r.code != 0 {
		t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	const newline = `"new\nline"`
	var diffed bool
	for _, e := range r.events {
		if d, ok := e.Data.(event.ToolResult); ok && d.Tool == "git.diff" {
			var out struct{ Patch string }
			if err := json.Unmarshal(d.Output, &out); err != nil || !d.OK {
				t.Fatalf("git.diff result: %+v, %v", d, err)
			}
			left := workspace.LeftOut(out.Patch)
			if len(left) != 1 || !strings.HasPrefix(left[0], newline) || !strings.Contains(out.Patch, "GIT binary patch") {
				t.Errorf("git.diff left out %q; patch head %.300q", left, out.Patch)
			}
			diffed = true
		}
	}
	if !diffed {
		t.Fatal("no git.diff result")
	}
	if !strings.Contains(r.stderr, newline) {
		t.Errorf("the outcome does not name the file left out:\n%s", r.stderr)
	}
	if d := u.run("", "diff", id); d.code != 0 || !strings.Contains(d.stderr, newline) || !strings.Contains(d.stdout, newline) {
		t.Errorf("diff: exit %d, stderr:\n%s", d.code, d.stderr)
	}
	a := u.run("", "apply", id, "--yes")
	if a.code != 0 || !strings.Contains(a.stderr, newline) {
		t.Fatalf("apply: exit %d\n%s", a.code, a.stderr)
	}
	for p, body := range map[string]string{
		"logo.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"nul.txt":  "a\x00b\n",
		"big.txt":  strings.Repeat("a line of text\n", 3145728/15+1)[:3145728],
	} {
		if got, err := os.ReadFile(filepath.Join(u.project, p)); err != nil || string(got) != body {
			t.Errorf("%s on the host: %d bytes, %v", p, len(got), err)
		}
	}
	// The session goes on from the tree that holds its patch now.
	rd := u.script(`[{"toolCalls":[{"id":"r1","name":"fs.read","arguments":{"path":"a.txt"}}]},{"content":"ok"}]`)
	if res := u.run("", "exec", "--image", "harness-busybox", "--fake-model", rd, "--resume", id, "go on"); res.code != 0 {
		t.Fatalf("resume after apply: exit %d\n%s", res.code, res.stderr)
	}
}

// A mode-000 file read and a read-only file written are tool errors the
// model gets (WORKSPACE_PERMISSION); the turn goes on and completes, and
// the end-of-turn diff names the unreadable file as left out.
func TestPermissionErrorsLeaveTheTurnGoing(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("secret.txt", "s\n")
	u.write("ro.txt", "r\n")
	s := u.script(`[{"toolCalls":[{"id":"x1","name":"process.exec","arguments":{"argv":["chmod","000","secret.txt"]}}]},` +
		`{"toolCalls":[{"id":"x2","name":"process.exec","arguments":{"argv":["chmod","444","ro.txt"]}}]},` +
		`{"toolCalls":[{"id":"r1","name":"fs.read","arguments":{"path":"secret.txt"}}]},` +
		`{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"ro.txt","contents":"changed\n"}}]},` +
		`{"content":"I could not"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", s, "try")
	if r.code != 0 {
		t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
	}
	got := map[string]string{}
	var done *event.TurnCompleted
	for _, e := range r.events {
		switch d := e.Data.(type) {
		case event.ToolResult:
			if d.Error != nil {
				got[d.Tool] = d.Error.Code
			}
		case event.TurnCompleted:
			done = &d
		}
	}
	if got["fs.read"] != string(errcode.WorkspacePermission) || got["fs.write"] != string(errcode.WorkspacePermission) {
		t.Errorf("tool error codes = %v, want WORKSPACE_PERMISSION for fs.read and fs.write", got)
	}
	if done == nil || done.Status != "completed" {
		t.Fatalf("turn.completed = %+v", done)
	}
	if !strings.Contains(r.stderr, "secret.txt (permission denied") {
		t.Errorf("the outcome does not name the unreadable file:\n%s", r.stderr)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A Docker session resumed with --workspace local (read-only) keeps its
// work: the local turn records the session's patch again, not an empty
// one, so `harness diff` still shows the file the Docker turn wrote and
// `harness apply` brings it to the host.
func TestLocalResumeKeepsTheDockerPatch(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("a.txt", "original\n")
	w := u.script(`[{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"new.txt","contents":"made in docker\n"}}]},{"content":"wrote"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", w, "write")
	if r.code != 0 {
		t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	l := u.run("", "exec", "--json", "--workspace", "local", "--resume", id, "--fake-model", u.script(`[{"content":"hello"}]`), "just talk")
	if l.code != 0 {
		t.Fatalf("local resume: exit %d\n%s", l.code, l.stderr)
	}
	d := u.run("", "diff", id)
	if d.code != 0 || !strings.Contains(d.stdout, "+made in docker") {
		t.Fatalf("diff after a local turn: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	a := u.run("", "apply", "--yes", id)
	if a.code != 0 {
		t.Fatalf("apply: exit %d\n%s", a.code, a.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(u.project, "new.txt")); err != nil || string(b) != "made in docker\n" {
		t.Fatalf("new.txt on the host: %q, %v", b, err)
	}
}

// Giving up a failed turn's kept work gives up that turn's changes only:
// what the turns before it recorded stays the session's, in diff, in the
// resumed workspace and in apply (a daemon restart between turns left
// discard as the only way on, and it dropped every earlier turn's work).
func TestDiscardKeepsEarlierTurns(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("notes.txt", "one\n")
	first := u.script(`[{"toolCalls":[{"id":"w0","name":"fs.write","arguments":{"path":"first.txt","contents":"from turn one\n"}}]},{"content":"written"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", first, "write first.txt")
	if r.code != 0 {
		t.Fatalf("turn 1: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	got, name := failTheDiff(t, u, `for i in 1 2 3 4; do yes abcdefg | head -c 900000 > big$i.txt; done`, "--max-total-bytes", "1000000", "--resume", id)
	if got != id {
		t.Fatalf("the failed turn ran in session %s, want %s", got, id)
	}
	if d := u.run("", "discard", id); d.code != 0 || !strings.Contains(d.stderr, name) {
		t.Fatalf("discard: exit %d\n%s", d.code, d.stderr)
	}
	df := u.run("", "diff", id)
	if df.code != 0 || !strings.Contains(df.stdout, "+from turn one") || strings.Contains(df.stdout, "keep.txt") {
		t.Fatalf("diff after discard: exit %d, want turn 1's first.txt and not turn 2's keep.txt\n%s%s", df.code, df.stdout, df.stderr)
	}
	rd := u.script(`[{"toolCalls":[{"id":"r1","name":"fs.read","arguments":{"path":"first.txt"}}]},{"content":"still there"}]`)
	r = u.run("", "exec", "--json", "--image", "harness-busybox", "--fake-model", rd, "--resume", id, "is first.txt there?")
	if res := resultsByModelCall(r.events)["r1"]; r.code != 0 || !res.OK || !strings.Contains(string(res.Output), "from turn one") {
		t.Fatalf("resume after discard: exit %d, read %+v\n%s", r.code, res, r.stderr)
	}
	if a := u.run("", "apply", id, "--yes"); a.code != 0 {
		t.Fatalf("apply: exit %d\n%s", a.code, a.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(u.project, "first.txt")); string(b) != "from turn one\n" {
		t.Errorf("first.txt on the host = %q", b)
	}
}

// A Docker session resumed while Docker is not available is read-only,
// and says why (Docker's own words) before it says its patch was not
// replayed.
func TestResumeWithoutDockerSaysWhy(t *testing.T) {
	needDocker(t)
	u := newUser(t)
	u.write("README.md", "# why\n")
	w := u.script(`[{"toolCalls":[{"id":"w1","name":"fs.write","arguments":{"path":"a.txt","contents":"a\n"}}]},{"content":"wrote"}]`)
	r := u.run("", "exec", "--json", "--image", "harness-busybox", "--no-spare", "--fake-model", w, "write")
	if r.code != 0 {
		t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events)
	u.extra = append(u.extra, "DOCKER_HOST=unix://"+filepath.Join(u.home, "no-docker.sock"))
	r = u.run("", "exec", "--resume", id, "--fake-model", u.script(`[{"content":"read only"}]`), "look")
	if r.code != 0 {
		t.Fatalf("resume without Docker: exit %d\n%s", r.code, r.stderr)
	}
	why := strings.Index(r.stderr, "Docker is not available")
	patch := strings.Index(r.stderr, "the recorded workspace patch was not replayed")
	if why < 0 || patch < why {
		t.Fatalf("the resume does not say why it is read-only before its patch note:\n%s", r.stderr)
	}
}
