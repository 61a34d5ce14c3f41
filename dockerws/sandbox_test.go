package dockerws

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/toolchain"
	"github.com/harness-dev/harness/internal/workspace"
)

// sandboxPlan is a plan of two read-only trees of the host: a "toolchain"
// with a program on PATH and a credential-like file, and a dependency
// folder linked into the workspace.
func sandboxPlan(t *testing.T) toolchain.Plan {
	t.Helper()
	tc := t.TempDir()
	writeTree(t, tc, map[string]string{"bin/hello*": "#!/bin/sh\necho hello from the host toolchain\n", "etc/.netrc": "machine x password SECRET\n", "etc/ok.txt": "fine\n"})
	deps := t.TempDir()
	writeTree(t, deps, map[string]string{"dep/index.js": "module.exports = 1\n", "dep/.npmrc": "//r/:_authToken=SECRET\n"})
	p := toolchain.Plan{
		Mounts: []workspace.Mount{
			{What: "toolchain", Source: tc, Target: "/opt/harness/tc", ReadOnly: true},
			{What: "deps", Source: deps, Target: "/opt/harness/deps/node_modules", ReadOnly: true},
		},
		Links: []toolchain.Link{{Name: WorkDir + "/node_modules", Target: "/opt/harness/deps/node_modules"}},
		Env:   []string{"HARNESS_TEST_VAR=set"},
		Path:  []string{"/opt/harness/tc/bin"},
	}
	return p
}

// The plan's trees are reachable read-only, their credential-like files
// are empty, the dependency folder is linked into the workspace but never
// part of the patch, the plan's variables and PATH are set, and the
// network stays off.
func TestSandboxMounts(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"main.go": "package main\n"})
	plan := sandboxPlan(t)
	w := open(t, root, sandboxImage, func(o *Options) { o.Toolchain = plan })
	run := func(script string) workspace.ExecResult {
		t.Helper()
		return mustExec(t, w, "sh", "-c", script)
	}
	if r := run("hello"); r.ExitCode != 0 || r.Stdout != "hello from the host toolchain\n" {
		t.Errorf("the toolchain's program on PATH: %+v", r)
	}
	if r := run("cat /opt/harness/tc/etc/ok.txt"); r.Stdout != "fine\n" {
		t.Errorf("a toolchain file: %+v", r)
	}
	for _, p := range []string{"/opt/harness/tc/etc/.netrc", "node_modules/dep/.npmrc"} {
		if r := run("cat " + p); strings.Contains(r.Stdout, "SECRET") {
			t.Errorf("%s can be read: %q", p, r.Stdout)
		}
	}
	for _, p := range []string{"/opt/harness/tc/new", "/opt/harness/tc/etc/ok.txt", "node_modules/new.js", "node_modules/dep/index.js"} {
		if r := run("echo x >> " + p); r.ExitCode == 0 {
			t.Errorf("%s could be written", p)
		}
	}
	if r := run("cat node_modules/dep/index.js"); r.Stdout != "module.exports = 1\n" {
		t.Errorf("the linked dependency folder: %+v", r)
	}
	if r := run(`echo "$HARNESS_TEST_VAR $HOME"; echo "$PATH"`); !strings.HasPrefix(r.Stdout, "set "+HomeDir+"\n/opt/harness/tc/bin:") {
		t.Errorf("environment: %q", r.Stdout)
	}
	// No interface but loopback, so no route anywhere.
	if r := run("ls /sys/class/net"); strings.TrimSpace(r.Stdout) != "lo" {
		t.Errorf("network interfaces: %q", r.Stdout)
	}
	if r := run("echo '# changed' >> main.go"); r.ExitCode != 0 {
		t.Fatal(r.Stderr)
	}
	patch, err := w.Diff(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(patch, "node_modules") || !strings.Contains(patch, "main.go") {
		t.Errorf("patch:\n%s", patch)
	}
	info := w.Info()
	var targets []string
	for _, m := range info.Mounts {
		targets = append(targets, m.Target)
	}
	if strings.Join(targets, " ") != "/opt/harness/tc /opt/harness/deps/node_modules /workspace/node_modules" {
		t.Errorf("Info().Mounts: %+v", info.Mounts)
	}
}

// The cache volume outlives a workspace, is the project's own, is written
// by the sandbox user, and is emptied at open once past its bound.
func TestSandboxCacheVolume(t *testing.T) {
	needDocker(t, busyboxImage)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a\n"})
	name := CacheVolume(root, os.Getuid())
	t.Cleanup(func() { _ = RemoveCache(context.Background(), "", name) })
	withCache := func(bound int64) func(*Options) {
		return func(o *Options) { o.CacheVolume, o.CacheProject, o.CacheBytes = name, root, bound }
	}
	w := open(t, root, busyboxImage, withCache(64<<20))
	if r := mustExec(t, w, "sh", "-c", "mkdir -p "+toolchain.Cache+"/go-build && echo warm > "+toolchain.Cache+"/go-build/entry && dd if=/dev/zero of="+toolchain.Cache+"/big bs=1024 count=200 2>/dev/null"); r.ExitCode != 0 {
		t.Fatalf("write the cache: %+v", r)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	w2 := open(t, root, busyboxImage, withCache(64<<20))
	if r := mustExec(t, w2, "cat", toolchain.Cache+"/go-build/entry"); r.Stdout != "warm\n" {
		t.Errorf("a second session's cache: %+v", r)
	}
	patch, err := w2.Diff(context.Background())
	if err != nil || patch != "" {
		t.Errorf("the cache reached the patch: %q %v", patch, err)
	}
	if err := w2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	caches, err := ListCaches(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range caches {
		found = found || (c.Name == name && c.Project == root)
	}
	if !found {
		t.Errorf("ListCaches does not list %s for %s: %+v", name, root, caches)
	}
	// Past its bound (100 KiB here, 200 KiB held) the cache starts empty.
	w3 := open(t, root, busyboxImage, withCache(100<<10))
	if r := mustExec(t, w3, "sh", "-c", "ls -A "+toolchain.Cache); strings.TrimSpace(r.Stdout) != "" {
		t.Errorf("an over-full cache was kept: %q", r.Stdout)
	}
	// Another project never sees it.
	other := t.TempDir()
	if CacheVolume(other, os.Getuid()) == name || CacheVolume(root, os.Getuid()+1) == name {
		t.Error("two projects or users share a cache volume name")
	}
}

// A cache volume whose project is gone from this machine is reaped.
func TestReapCacheOfGoneProject(t *testing.T) {
	needDocker(t, busyboxImage)
	root := filepath.Join(t.TempDir(), "proj")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, map[string]string{"a.txt": "a\n"})
	name := CacheVolume(root, os.Getuid())
	t.Cleanup(func() { _ = RemoveCache(context.Background(), "", name) })
	w := open(t, root, busyboxImage, func(o *Options) { o.CacheVolume, o.CacheProject = name, root })
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := Reap(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if !hasCache(t, name) {
		t.Fatal("the cache of a project that is still there was reaped")
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if _, err := Reap(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if hasCache(t, name) {
		t.Error("the cache of a deleted project stays")
	}
}

func hasCache(t *testing.T, name string) bool {
	t.Helper()
	caches, err := ListCaches(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caches {
		if c.Name == name {
			return true
		}
	}
	return false
}

// A venv made on the host by `python3 -m venv` runs in the sandbox: its
// console scripts (pip) name their interpreter by the venv's host path,
// which the sandbox has too, read-only; so with the project under /tmp (a
// tmpfs in the container) as elsewhere. The venv comes from the host's
// python3 (its interpreter mounted when it is not the image's) and from
// /usr/bin/python3 (the image's own, as a distribution's venv has it).
func TestSandboxRunsAHostVenvsScripts(t *testing.T) {
	needDocker(t, sandboxImage)
	hostPython, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("the host has no python3 to make a venv with")
	}
	varTmp, err := os.MkdirTemp("/var/tmp", "harness-venv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(varTmp) })
	cases := []struct{ python, root string }{{hostPython, filepath.Join(t.TempDir(), "proj")}}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		cases = append(cases, struct{ python, root string }{"/usr/bin/python3", filepath.Join(varTmp, "proj")})
	}
	for _, c := range cases {
		python, root := c.python, c.root
		t.Run(python+" in "+root, func(t *testing.T) {
			writeTree(t, root, map[string]string{".gitignore": ".venv/\n", "app.py": "print('app')\n"})
			for _, argv := range [][]string{{"git", "-C", root, "init", "-q"}, {python, "-m", "venv", filepath.Join(root, ".venv")}} {
				if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
				}
			}
			plan := toolchain.Detect(t.Context(), root, toolchain.Host{Env: os.Environ(), ShadowDir: t.TempDir()}).Checked(t.Context())
			if len(plan.Missing) != 0 {
				t.Fatalf("the plan misses: %q", plan.Missing)
			}
			w := open(t, root, sandboxImage, func(o *Options) { o.Toolchain = plan })
			for _, script := range []string{"pip --version", ".venv/bin/pip3 --version", "python -c 'import sys; print(sys.prefix)'"} {
				r := mustExec(t, w, "sh", "-c", script)
				if r.ExitCode != 0 || !strings.Contains(r.Stdout, ".venv") {
					t.Errorf("%s: exit %d\n%s%s", script, r.ExitCode, r.Stdout, r.Stderr)
				}
			}
			if r := mustExec(t, w, "sh", "-c", "echo x > "+filepath.Join(root, ".venv", "new")); r.ExitCode == 0 {
				t.Error("the venv at its host path can be written")
			}
		})
	}
}
