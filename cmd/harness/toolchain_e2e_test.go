package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/event"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/workspace"
)

// The sandbox runs the project's own build and tests with no flag: the
// host's toolchains and dependency caches, read-only, offline. Each test
// is a real project, the real binary, the default image and real Docker.

// needSandbox is needDocker for the default image, which the toolchain
// tests run in (the host's toolchains need its libc).
func needSandbox(t *testing.T) {
	t.Helper()
	needDocker(t)
	if out, err := exec.Command("docker", "image", "inspect", "harness-sandbox").CombinedOutput(); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "image harness-sandbox is missing (scripts/images.sh builds it): "+strings.TrimSpace(string(out)))
	}
}

// needHost is a host tool the test's project needs.
func needHost(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "toolchain", tool+" is not on PATH: "+err.Error())
	}
	return p
}

// execScript is a scripted turn of one process.exec per command, each
// with the longest timeout, then an answer.
func execScript(t *testing.T, u *userEnv, commands ...string) string {
	t.Helper()
	var steps []map[string]any
	for i, c := range commands {
		steps = append(steps, map[string]any{"toolCalls": []map[string]any{{"id": "c" + string(rune('1'+i)), "name": "process.exec",
			"arguments": map[string]any{"argv": []string{"sh", "-c", c}, "timeoutMs": 600000}}}})
	}
	steps = append(steps, map[string]any{"content": "done"})
	b, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	return u.script(string(b))
}

// execResults runs the turn and returns each command's result in order.
func execResults(t *testing.T, u *userEnv, script string) ([]workspace.ExecResult, result) {
	t.Helper()
	r := u.run("", "exec", "--json", "--fake-model", script, "build and test")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var out []workspace.ExecResult
	for _, e := range r.events {
		if d, ok := e.Data.(event.ToolResult); ok {
			if !d.OK {
				t.Fatalf("tool result %s: %+v", d.CallID, d.Error)
			}
			var res workspace.ExecResult
			if err := json.Unmarshal(d.Output, &res); err != nil {
				t.Fatal(err)
			}
			out = append(out, res)
		}
	}
	return out, r
}

func opened(r result) *event.WorkspaceLifecycle {
	for _, e := range r.events {
		if d, ok := e.Data.(event.WorkspaceLifecycle); ok && d.Phase == event.PhaseOpened {
			return &d
		}
	}
	return nil
}

func cleanupCache(t *testing.T, root string) {
	t.Cleanup(func() {
		_ = exec.Command("docker", "volume", "rm", "-f", dockerws.CacheVolume(root, os.Getuid())).Run()
	})
}

// A Go module that depends on a module in the host's module cache passes
// go vet and go test in the sandbox; writing to the toolchain or the module
// cache fails; there is no network; the mounts are on the record.
func TestSandboxRunsGoTests(t *testing.T) {
	needSandbox(t)
	gobin := needHost(t, "go")
	modcache, err := exec.Command(gobin, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	u := newUser(t)
	u.extra = append(u.extra, "GOMODCACHE="+strings.TrimSpace(string(modcache)))
	cleanupCache(t, u.project)
	u.write("go.mod", "module example.com/proj\n\ngo 1.24\n\nrequire github.com/google/go-cmp v0.7.0\n")
	// A module without a go line, as many published ones are: a test must
	// not add one (go.mod is read-only there, as on the host).
	u.write("u/go.mod", "module example.com/u\n")
	u.write("u/u_test.go", "package u\n\nimport \"testing\"\n\nfunc TestU(t *testing.T) {}\n")
	u.write("go.sum", goSumLines(t, "github.com/google/go-cmp v0.7.0"))
	u.write("same.go", "package proj\n\nimport \"github.com/google/go-cmp/cmp\"\n\n// Same reports whether a and b hold the same.\nfunc Same(a, b []int) bool { return cmp.Equal(a, b) }\n")
	u.write("same_test.go", "package proj\n\nimport \"testing\"\n\nfunc TestSame(t *testing.T) {\n\tif !Same([]int{1}, []int{1}) || Same([]int{1}, nil) {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n")
	before := treeHash(t, u.project)
	s := execScript(t, u,
		"go vet ./... && go test ./... && cd u && go test ./...",
		`touch "$(go env GOROOT)/x"; echo "goroot $?"; touch "$(go env GOMODCACHE)/x"; echo "modcache $?"; ls /sys/class/net; go env GOPROXY GOFLAGS GOTOOLCHAIN`,
	)
	res, r := execResults(t, u, s)
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
	if res[0].ExitCode != 0 || !strings.Contains(res[0].Stdout, "ok  \texample.com/proj") {
		t.Fatalf("go vet && go test in the sandbox: %+v", res[0])
	}
	want := "goroot 1\nmodcache 1\nlo\noff\n\nlocal\n"
	if res[1].Stdout != want {
		t.Errorf("inside the sandbox:\n%s\nwant\n%s\nstderr %s", res[1].Stdout, want, res[1].Stderr)
	}
	op := opened(r)
	if op == nil {
		t.Fatal("no workspace.lifecycle(opened)")
	}
	var what []string
	for _, m := range op.Mounts {
		what = append(what, m.What)
	}
	if got := strings.Join(what, ", "); !strings.Contains(got, "go toolchain") || !strings.Contains(got, "go module cache") || !strings.Contains(got, "build cache") {
		t.Errorf("mounts on the record: %s", got)
	}
	if treeHash(t, u.project) != before {
		t.Error("the host tree changed")
	}
	if d := u.run("", "diff", sessionOf(t, r.events)); strings.Contains(d.stdout, "go.mod") {
		t.Errorf("go vet and go test changed a go.mod:\n%s", d.stdout)
	}
}

// goSumLines are this repository's go.sum lines of a module version.
func goSumLines(t *testing.T, modVersion string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, modVersion+" ") || strings.HasPrefix(line, modVersion+"/go.mod ") {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		t.Fatalf("go.sum has no %s", modVersion)
	}
	return strings.Join(out, "\n") + "\n"
}

// A Node project whose dependency sits in a git-ignored node_modules passes
// node --test; node_modules cannot be written and a token file in it reads
// empty; node_modules never reaches the patch.
func TestSandboxRunsNodeTests(t *testing.T) {
	needSandbox(t)
	needHost(t, "node")
	u := newUser(t)
	cleanupCache(t, u.project)
	u.write("package.json", `{"name":"proj","version":"1.0.0","scripts":{"test":"node --test"}}`+"\n")
	u.write(".gitignore", "node_modules/\n")
	u.write("node_modules/leftpad/package.json", `{"name":"leftpad","main":"index.js"}`+"\n")
	u.write("node_modules/leftpad/index.js", "module.exports = (s, n) => String(s).padStart(n, '0');\n")
	u.write("node_modules/leftpad/.npmrc", "//registry.invalid/:_authToken=SECRET\n")
	u.write("pad.test.js", "const test = require('node:test');\nconst assert = require('node:assert');\nconst leftpad = require('leftpad');\ntest('pads', () => assert.strictEqual(leftpad(5, 3), '005'));\n")
	gitInit(t, u.project)
	s := execScript(t, u,
		"node --test",
		`touch node_modules/x; echo "deps $?"; wc -c < node_modules/leftpad/.npmrc; echo '// more' >> pad.test.js`,
	)
	res, _ := execResults(t, u, s)
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
	if res[0].ExitCode != 0 || !strings.Contains(res[0].Stdout, "# pass 1") {
		t.Fatalf("node --test in the sandbox: %+v", res[0])
	}
	if res[1].Stdout != "deps 1\n0\n" {
		t.Errorf("inside the sandbox: %q (stderr %q)", res[1].Stdout, res[1].Stderr)
	}
	d := u.run("", "diff", lastSession(t, u))
	if !strings.Contains(d.stdout, "pad.test.js") || strings.Contains(d.stdout, "node_modules") {
		t.Errorf("patch:\n%s", d.stdout)
	}
}

// A Python project whose .venv holds a dependency imports it under the
// venv's python (whose interpreter may live below /root, as pyenv's does).
func TestSandboxRunsPythonVenv(t *testing.T) {
	needSandbox(t)
	py := needHost(t, "python3")
	u := newUser(t)
	cleanupCache(t, u.project)
	u.write(".gitignore", ".venv/\n")
	u.write("requirements.txt", "tinydep\n")
	u.write("test_app.py", "import tinydep\nassert tinydep.hello() == 'hi'\nprint('ok')\n")
	venv := filepath.Join(u.project, ".venv")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "toolchain", "python3 -m venv: "+err.Error()+": "+string(out))
	}
	sp, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if len(sp) != 1 {
		t.Fatalf("site-packages: %q", sp)
	}
	u.write(filepath.Join(strings.TrimPrefix(sp[0], u.project+"/"), "tinydep", "__init__.py"), "def hello():\n    return 'hi'\n")
	u.write(".venv/.netrc", "machine pypi.invalid login user password SECRET\n")
	gitInit(t, u.project)
	s := execScript(t, u,
		"python test_app.py && .venv/bin/python -c 'import sys, tinydep; print(sys.prefix)'",
		`touch .venv/x; echo "venv $?"; cat .venv/.netrc | grep -c SECRET`,
	)
	res, _ := execResults(t, u, s)
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
	if res[0].ExitCode != 0 || res[0].Stdout != "ok\n/workspace/.venv\n" {
		t.Fatalf("python in the venv: %+v", res[0])
	}
	if res[1].Stdout != "venv 1\n0\n" {
		t.Errorf("inside the sandbox: %q (stderr %q)", res[1].Stdout, res[1].Stderr)
	}
}

// A project that names a toolchain the host lacks gets a line at start, on
// exec's stderr, naming what is missing and how to add it.
func TestSandboxSaysWhatIsMissing(t *testing.T) {
	needSandbox(t)
	u := newUser(t)
	u.write("Cargo.toml", "[package]\nname = \"x\"\nversion = \"0.1.0\"\n")
	u.write("go.mod", "module x\n\ngo 1.999\n")
	cleanupCache(t, u.project)
	u.extra = append(u.extra, "PATH="+filepath.Dir(needHost(t, "go"))) // go only: no rustc
	// In text and JSON modes alike: stderr is the human's in both.
	for _, mode := range [][]string{nil, {"--json"}} {
		s := u.script(`[{"content":"hi"}]`)
		r := u.run("", append(append([]string{"exec"}, mode...), "--fake-model", s, "hello")...)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		for _, want := range []string{"Rust", "rustc", "go 1.999"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr does not name %q:\n%s", mode, want, r.stderr)
			}
		}
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
}

// lastSession is the ID of the newest session of u's store.
func lastSession(t *testing.T, u *userEnv) string {
	t.Helper()
	r := u.run("", "sessions", "--json")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var row struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &row); err != nil {
		t.Fatalf("sessions --json: %v: %s", err, r.stdout)
	}
	return row.ID
}

// This repository itself builds and tests in the sandbox: its tools and
// the packages they use. (`go build ./... && go test ./tools/...` of the
// whole module, from a cold cache, took about three minutes by hand here:
// too long beside the other packages' tests.)
func TestSandboxBuildsThisRepository(t *testing.T) {
	needSandbox(t)
	needHost(t, "go")
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	u := newUser(t)
	u.extra = append(u.extra, "GOMODCACHE="+strings.TrimSpace(string(modcache)))
	cleanupCache(t, root)
	before := treeHash(t, filepath.Join(root, "tools"))
	s := execScript(t, u, "go vet ./tools/... && go test ./tools/...")
	r := u.runIn(root, "", "exec", "--json", "--fake-model", s, "build and test")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var res workspace.ExecResult
	for _, e := range r.events {
		if d, ok := e.Data.(event.ToolResult); ok {
			if err := json.Unmarshal(d.Output, &res); err != nil {
				t.Fatal(err)
			}
		}
	}
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "ok  \tgithub.com/harness-dev/harness/tools") {
		t.Fatalf("go vet && go test ./tools/... in the sandbox: %+v", res)
	}
	if treeHash(t, filepath.Join(root, "tools")) != before {
		t.Error("the repository changed")
	}
}

// With DOCKER_HOST naming a daemon on another machine (here: a second
// dockerd on a loopback TCP port, with its own state), host paths mean
// nothing to it: the toolchain mounts are left out and a line at start says
// so; the session still works in that daemon's image.
func TestSandboxRemoteDaemonSaysMountsNeedLocal(t *testing.T) {
	needDocker(t)
	host := "tcp://127.0.0.1:23759"
	remote := secondDockerd(t, host, t.TempDir())
	u := newUser(t)
	u.write("go.mod", "module x\n\ngo 1.24\n")
	u.extra = append(u.extra, "DOCKER_HOST="+host)
	s := execScript(t, u, "echo hi; ls /opt/harness")
	r := u.run("", "exec", "--image", "harness-busybox", "--fake-model", s, "hello")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "toolchain mounts need a Docker daemon on this machine") || !strings.Contains(r.stderr, host) {
		t.Errorf("stderr does not say the mounts need a local daemon:\n%s", r.stderr)
	}
	ev := u.run("", "events", lastSession(t, u))
	op := opened(result{events: decodeLines(t, ev.stdout)})
	if op == nil {
		t.Fatal("no workspace.lifecycle(opened)")
	}
	for _, m := range op.Mounts {
		if m.ReadOnly {
			t.Errorf("a host path was mounted on the remote daemon: %+v", m)
		}
	}
	if out, _ := remote("volume", "ls", "-q", "--filter", "label=dev.harness.cache"); len(strings.TrimSpace(string(out))) == 0 {
		t.Error("no build cache volume on the remote daemon")
	}
}

// harness doctor in a Go project says what it needs, where the sandbox
// gets it from, and runs go version in a throwaway sandbox; it lists the
// project's build cache, and --clean removes it.
func TestDoctorChecksTheToolchains(t *testing.T) {
	needSandbox(t)
	gobin := needHost(t, "go")
	modcache, err := exec.Command(gobin, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	u := newUser(t)
	u.extra = append(u.extra, "GOMODCACHE="+strings.TrimSpace(string(modcache)))
	u.write("go.mod", "module x\n\ngo 1.24\n")
	cleanupCache(t, u.project)
	// A session that runs a command makes the project's cache.
	if r := u.run("", "exec", "--fake-model", execScript(t, u, "go version"), "hello"); r.code != 0 {
		t.Fatalf("exec: exit %d\n%s", r.code, r.stderr)
	}
	volume := dockerws.CacheVolume(u.project, os.Getuid())
	r := u.run("", "doctor")
	for _, want := range []string{"toolchains the project needs: go 1.24 (go.mod)", "→ /opt/harness/go (read-only)", "✓ go in the sandbox: go version go", volume} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor does not say %q:\n%s", want, r.stdout)
		}
	}
	testenv.Exclusive(t, "spares") // --clean removes every idle spare of the user
	r = u.run("", "doctor", "--clean")
	if !strings.Contains(r.stdout, volume+" of "+u.project+" removed") {
		t.Errorf("doctor --clean:\n%s", r.stdout)
	}
	if out, err := exec.Command("docker", "volume", "inspect", volume).CombinedOutput(); err == nil {
		t.Errorf("the cache volume is still there: %s", out)
	}
}
