package toolchain

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/workspace"
)

func write(t *testing.T, p, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
}

func TestNeeds(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []Need
	}{
		{"none", map[string]string{"README.md": "x"}, nil},
		{"go line", map[string]string{"go.mod": "module x\n\ngo 1.24.1\n\ntoolchain go1.25.0\n"}, []Need{{Name: "go", Version: "1.24.1", From: "go.mod"}}},
		{"go without a go line", map[string]string{"go.mod": "module x\n"}, []Need{{Name: "go", From: "go.mod"}}},
		{"go.work only", map[string]string{"go.work": "go 1.24\n"}, []Need{{Name: "go", From: "go.work"}}},
		{"node", map[string]string{"package.json": "{}"}, []Need{{Name: "node", From: "package.json"}}},
		{"python pyproject", map[string]string{"pyproject.toml": ""}, []Need{{Name: "python", From: "pyproject.toml"}}},
		{"python requirements variant", map[string]string{"requirements-dev.txt": ""}, []Need{{Name: "python", From: "requirements-dev.txt"}}},
		{"python venv only", map[string]string{".venv/pyvenv.cfg": "home = /usr/bin\n"}, []Need{{Name: "python", From: ".venv/pyvenv.cfg"}}},
		{"rust", map[string]string{"Cargo.toml": ""}, []Need{{Name: "rust", From: "Cargo.toml"}}},
		{"all, in order", map[string]string{"Cargo.toml": "", "setup.py": "", "package.json": "{}", "go.mod": "go 1.22\n"},
			[]Need{{Name: "go", Version: "1.22", From: "go.mod"}, {Name: "node", From: "package.json"}, {Name: "python", From: "setup.py"}, {Name: "rust", From: "Cargo.toml"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for p, body := range c.files {
				write(t, filepath.Join(root, p), body, 0o644)
			}
			if diff := cmp.Diff(c.want, Needs(root)); diff != "" {
				t.Errorf("Needs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVersionLess(t *testing.T) {
	cases := []struct {
		a, b string
		less bool
	}{
		{"1.26.8", "1.27", true},
		{"1.26.8", "1.26", false},
		{"1.26", "1.26.0", false},
		{"1.26.0", "1.26.1", true},
		{"1.9", "1.10", true}, // numeric, not lexical
		{"1.27rc1", "1.27", false},
		{"1.27", "1.26.99", false},
	}
	for _, c := range cases {
		if got := versionLess(c.a, c.b); got != c.less {
			t.Errorf("versionLess(%q, %q) = %v, want %v", c.a, c.b, got, c.less)
		}
	}
}

// fakeGo makes a host Go toolchain the way go lays one out: bin/go,
// VERSION, src/runtime. Its go is a shell script that must not run (Detect
// reads files).
func fakeGo(t *testing.T, version string) string {
	t.Helper()
	root := t.TempDir()
	write(t, filepath.Join(root, "bin", "go"), "#!/bin/sh\necho ran >&2\nexit 1\n", 0o755)
	write(t, filepath.Join(root, "VERSION"), version+"\ntime 2026-01-01T00:00:00Z\n", 0o644)
	write(t, filepath.Join(root, "src", "runtime", "proc.go"), "package runtime\n", 0o644)
	return root
}

// A Go module gets the host's GOROOT and module cache read-only, Go kept
// offline (GOPROXY=off, GOTOOLCHAIN=local; go.mod read-only, go's default) and its build
// cache on the cache volume; the credential-like files under the module
// cache are masked once the plan is checked.
func TestDetectGo(t *testing.T) {
	goroot := fakeGo(t, "go1.26.8")
	modcache := t.TempDir()
	write(t, filepath.Join(modcache, "example.com", "m@v1.0.0", "m.go"), "package m\n", 0o644)
	write(t, filepath.Join(modcache, "example.com", "m@v1.0.0", "testdata", "id_rsa"), "key", 0o644)
	write(t, filepath.Join(modcache, ".netrc"), "machine x password y", 0o644)
	write(t, filepath.Join(modcache, "example.com", "m@v1.0.0", ".ssh", "config"), "x", 0o644)
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module x\n\ngo 1.24\n", 0o644)
	h := Host{Env: []string{"PATH=" + filepath.Join(goroot, "bin"), "GOMODCACHE=" + modcache, "HOME=" + t.TempDir()}}
	p := Detect(t.Context(), root, h)
	if len(p.Missing) != 0 {
		t.Fatalf("missing: %q", p.Missing)
	}
	wantMounts := []string{goroot + " → " + goRoot, modcache + " → " + goModCache}
	if diff := cmp.Diff(wantMounts, mountList(p)); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	for _, kv := range []string{"GOPROXY=off", "GOTOOLCHAIN=local", "GOROOT=" + goRoot, "GOMODCACHE=" + goModCache, "GOCACHE=" + Cache + "/go-build"} {
		if !slices.Contains(p.Env, kv) {
			t.Errorf("env lacks %s: %q", kv, p.Env)
		}
	}
	for _, kv := range p.Env {
		if strings.HasPrefix(kv, "GOFLAGS=") {
			t.Errorf("a module without vendor gets %s: go.mod must stay read-only, as go's default is", kv)
		}
	}
	if diff := cmp.Diff([]string{goRoot + "/bin"}, p.Path); diff != "" {
		t.Errorf("path (-want +got):\n%s", diff)
	}
	if len(p.Masked) != 0 {
		t.Errorf("Detect masked before the check: %q", p.Masked)
	}
	write(t, filepath.Join(root, "vendor", "modules.txt"), "# example.com/m v1.0.0\n", 0o644)
	if v := Detect(t.Context(), root, h); !slices.Contains(v.Env, "GOFLAGS=-mod=vendor") {
		t.Errorf("a vendored module: env %q", v.Env)
	}
	os.RemoveAll(filepath.Join(root, "vendor"))
	c := p.Checked(t.Context())
	want := []string{goModCache + "/.netrc", goModCache + "/example.com/m@v1.0.0/.ssh", goModCache + "/example.com/m@v1.0.0/testdata/id_rsa"}
	if diff := cmp.Diff(want, c.Masked); diff != "" {
		t.Errorf("masked (-want +got):\n%s", diff)
	}
	if len(c.Mounts) != 2 {
		t.Errorf("checked mounts: %q", mountList(c))
	}
}

func mountList(p Plan) []string {
	var out []string
	for _, m := range p.Mounts {
		if !m.ReadOnly {
			out = append(out, "WRITABLE "+m.Source)
			continue
		}
		out = append(out, m.Source+" → "+m.Target)
	}
	return out
}

// What the project needs and the host cannot give is a sentence, not a
// mount: no go at all, a go older than go.mod's go line.
func TestDetectGoMissing(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module x\n\ngo 1.99\n", 0o644)
	p := Detect(t.Context(), root, Host{Env: []string{"PATH=" + t.TempDir()}})
	if len(p.Missing) != 1 || len(p.Mounts) != 0 || !strings.Contains(p.Missing[0], "1.99") {
		t.Errorf("no go on PATH: missing %q, mounts %q", p.Missing, mountList(p))
	}
	goroot := fakeGo(t, "go1.26.8")
	p = Detect(t.Context(), root, Host{Env: []string{"PATH=" + filepath.Join(goroot, "bin"), "GOMODCACHE=" + t.TempDir()}})
	if len(p.Missing) != 1 || !strings.Contains(p.Missing[0], "go1.26.8") {
		t.Errorf("an older go: missing %q", p.Missing)
	}
	if len(p.Mounts) == 0 {
		t.Error("an older go is still mounted (go says what it cannot build)")
	}
}

// A Node project: a standalone node's prefix is mounted whole; the
// project's git-ignored node_modules is mounted read-only and linked into
// the workspace; a node_modules git does not ignore is the tree's own
// (copied), not mounted.
func TestDetectNode(t *testing.T) {
	prefix := t.TempDir()
	write(t, filepath.Join(prefix, "bin", "node"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(prefix, "lib", "node_modules", "npm", "package.json"), "{}", 0o644)
	write(t, filepath.Join(prefix, "etc", "npmrc"), "//r/:_authToken=x", 0o644)
	root := t.TempDir()
	gitInit(t, root)
	write(t, filepath.Join(root, "package.json"), "{}", 0o644)
	write(t, filepath.Join(root, ".gitignore"), "node_modules/\n", 0o644)
	write(t, filepath.Join(root, "node_modules", "dep", "index.js"), "", 0o644)
	write(t, filepath.Join(root, "node_modules", "dep", ".npmrc"), "//r/:_authToken=x", 0o644)
	h := Host{Env: []string{"PATH=" + filepath.Join(prefix, "bin")}}
	p := Detect(t.Context(), root, h)
	want := []string{prefix + " → " + nodeDir, filepath.Join(root, "node_modules") + " → " + depsDir + "/node_modules"}
	if diff := cmp.Diff(want, mountList(p)); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Link{{Name: workDir + "/node_modules", Target: depsDir + "/node_modules"}}, p.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	c := p.Checked(t.Context())
	if diff := cmp.Diff([]string{depsDir + "/node_modules/dep/.npmrc"}, c.Masked); diff != "" {
		t.Errorf("masked (-want +got):\n%s", diff)
	}
	// etc/npmrc is npm's global config, which may hold a token: not a
	// name IsCredential knows, so it is left to the prefix's owner; the
	// per-user .npmrc is.

	write(t, filepath.Join(root, ".gitignore"), "", 0o644)
	p = Detect(t.Context(), root, h)
	if len(p.Links) != 0 || len(p.Mounts) != 1 {
		t.Errorf("a node_modules git does not ignore: links %q, mounts %q", p.Links, mountList(p))
	}
}

// A venv whose interpreter lives below /root gets that interpreter at its
// own path and an empty stand-in of /root, made in the shadow directory,
// that holds only the mount point. The venv is at its host path too, for
// its scripts, though it is under /tmp.
func TestDetectPythonVenv(t *testing.T) {
	root := t.TempDir()
	gitInit(t, root)
	write(t, filepath.Join(root, ".gitignore"), ".venv/\n", 0o644)
	write(t, filepath.Join(root, ".venv", "pyvenv.cfg"), "home = /root/.pyenv/versions/3.11.7/bin\nversion = 3.11.7\n", 0o644)
	write(t, filepath.Join(root, ".venv", "pip.conf"), "[global]\n", 0o644)
	shadow := t.TempDir()
	p := Detect(t.Context(), root, Host{ShadowDir: shadow})
	got := mountList(p)
	venv := filepath.Join(root, ".venv")
	if len(got) != 4 || got[0] != venv+" → "+depsDir+"/venv" || got[1] != venv+" → "+venv ||
		got[2] != "/root/.pyenv/versions/3.11.7 → /root/.pyenv/versions/3.11.7" || !strings.HasSuffix(got[3], " → /root") {
		t.Fatalf("mounts: %q", got)
	}
	skel := p.Mounts[3].Source
	if !strings.HasPrefix(skel, shadow) {
		t.Errorf("the stand-in of /root is not in the shadow directory: %s", skel)
	}
	fi, err := os.Stat(filepath.Join(skel, ".pyenv", "versions", "3.11.7"))
	if err != nil || !fi.IsDir() {
		t.Errorf("the stand-in lacks the mount point: %v", err)
	}
	for _, kv := range []string{"VIRTUAL_ENV=/workspace/.venv", "PIP_NO_INDEX=1"} {
		if !slices.Contains(p.Env, kv) {
			t.Errorf("env lacks %s: %q", kv, p.Env)
		}
	}
	if diff := cmp.Diff([]string{"/workspace/.venv/bin"}, p.Path); diff != "" {
		t.Errorf("path (-want +got):\n%s", diff)
	}

	// Without a shadow directory the interpreter cannot be reached: left
	// out, and said.
	p = Detect(t.Context(), root, Host{})
	if len(p.Missing) != 1 || len(p.Mounts) != 2 {
		t.Errorf("no shadow directory: missing %q, mounts %q", p.Missing, mountList(p))
	}
}

// A mounted tree that cannot be read is not mounted: what it holds could
// not be checked for credential files.
func TestCheckedDropsUnreadable(t *testing.T) {
	p := Plan{}
	p.Mounts = append(p.Mounts, mountOf("gone", filepath.Join(t.TempDir(), "gone"), "/opt/harness/gone"))
	c := p.Checked(t.Context())
	if len(c.Mounts) != 0 || len(c.Missing) != 1 {
		t.Errorf("mounts %q, missing %q", mountList(c), c.Missing)
	}
}

func mountOf(what, src, target string) workspace.Mount {
	return workspace.Mount{What: what, Source: src, Target: target, ReadOnly: true}
}
