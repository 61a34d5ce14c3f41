// Package toolchain decides what of the host a sandbox may see so that a
// project builds and tests there as on the developer's machine: the
// toolchains the project needs (Go, Node, Python, Rust) and their
// dependency caches, each read-only, plus the environment that keeps every
// tool offline and points its caches at the project's cache volume.
//
// Detect reads the project's files (go.mod, package.json, pyproject.toml,
// requirements*.txt, a .venv, Cargo.toml) to say what it needs and the host
// (the go on PATH and `go env`, node, a venv's base interpreter, `rustc
// --print sysroot`, the cargo registry) to say where each is. The result is
// a Plan: read-only mounts at fixed places under /opt/harness, links the
// copy places in the workspace for the project's ignored dependency folders
// (node_modules, .venv), the variables to set, the directories to put first
// on PATH, the credential-like files under the mounted trees that the
// container must mask, and a sentence for each thing the project needs
// that the sandbox will not have.
//
// Why mounts and not a derived image: a mount costs nothing to set up,
// shows the host's toolchain and caches as they are now (a `go get` on the
// host is seen by the next session), and cannot be written from inside;
// an image layer would copy gigabytes of module cache per change. The cost
// is that mounts need the daemon on this machine: with a remote DOCKER_HOST
// the plan is dropped and a note says so (dockerws needs no change for
// that: the app does not pass the mounts).
//
// Nothing here is ever writable from the sandbox but the cache volume
// (Cache), which Harness owns, one per project.
package toolchain

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/workspace"
)

// Places inside the container.
const (
	// Base holds every mount of the plan.
	Base = "/opt/harness"
	// Cache is where the project's cache volume is mounted: the only
	// writable place of the plan, outside the workspace and its patch.
	Cache = Base + "/cache"

	goRoot     = Base + "/go"
	goModCache = Base + "/gomodcache"
	nodeDir    = Base + "/node"
	rustDir    = Base + "/rust"
	depsDir    = Base + "/deps"
	cargoDir   = Base + "/cargo"
	// cargoHome is CARGO_HOME: in the sandbox user's $HOME (writable, for
	// cargo's locks), with links to the read-only registry and git
	// checkouts; never the host's CARGO_HOME, which holds credentials.toml.
	cargoHome = "/home/harness/.cargo"
	// homeBin holds links to the plan's commands that a prefix's bin
	// would have (npm, npx), in the sandbox user's $HOME.
	homeBin = "/home/harness/.local/bin"
	workDir = "/workspace"
)

// Bounds of the credential scan of a mounted tree: a tree with more
// entries than this, or one that takes longer, is not mounted (it could
// not be checked) and a note says so.
const (
	maxScanEntries = 1_000_000
	maxScanTime    = 20 * time.Second
)

// Need is something the project's files say it needs.
type Need struct {
	Name    string `json:"name"`              // go, node, python, rust
	Version string `json:"version,omitempty"` // as the project states it ("1.24" from go.mod's go line), when it does
	From    string `json:"from"`              // the file that says so
}

// Link is a symbolic link the copy makes in the container: in the
// workspace, to the project's git-ignored dependency folder mounted
// read-only outside the tree (a link is never part of the patch: the diff
// carries regular files only), or in $HOME, to a read-only cache.
type Link struct {
	Name   string // absolute path in the container, e.g. /workspace/node_modules
	Target string // absolute path in the container
}

// Plan is what a sandbox gets of the host for one project.
type Plan struct {
	Needs  []Need
	Mounts []workspace.Mount // every one read-only
	Links  []Link
	// Env is set in the sandbox over the image's own variables.
	Env []string
	// Path is put before the image's PATH, in this order.
	Path []string
	// Masked are container paths of credential-like files and folders
	// under the mounts: the container shows them empty.
	Masked []string
	// Have says, per need, where the sandbox gets it from (a line each).
	Have []string
	// Missing says, a sentence each, what the project needs that the
	// sandbox will not have, and how to add it.
	Missing []string
}

// Host is what Detect may ask of the host.
type Host struct {
	// Env is the environment host processes run with (workspace.HostEnv):
	// PATH, HOME, CARGO_HOME, RUSTUP_HOME, GOROOT… are read from it.
	Env []string
	// ShadowDir is a directory of Harness's own where Detect may make the
	// empty stand-ins of image directories that mounts below must be
	// reached through (see shadow); "" leaves such mounts out.
	ShadowDir string
}

func (h Host) getenv(k string) string {
	for i := len(h.Env) - 1; i >= 0; i-- {
		if name, v, ok := strings.Cut(h.Env[i], "="); ok && name == k {
			return v
		}
	}
	return ""
}

// lookPath finds a command on the host's PATH, as a shell would.
func (h Host) lookPath(name string) string {
	for _, dir := range filepath.SplitList(h.getenv("PATH")) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// run runs a host command with the host environment, bounded in time.
func (h Host) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = h.Env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Detect makes the plan for the project at root. It never fails: what it
// cannot provide is a Missing sentence. It reads a few files and runs no
// more than git check-ignore (and `go env` or `rustc --print sysroot` where
// a file cannot tell), so it is cheap enough to run as a session opens;
// the credential scan of the mounted trees is Checked's, later.
func Detect(ctx context.Context, root string, h Host) Plan {
	var p Plan
	p.Needs = Needs(root)
	if len(p.Needs) == 0 {
		return p
	}
	ignored := ignoredDirs(ctx, root, h, "node_modules", ".venv", "venv")
	for _, n := range p.Needs {
		switch n.Name {
		case "go":
			p.planGo(ctx, h, root, n)
		case "node":
			p.planNode(h, root, ignored)
		case "python":
			p.planPython(root, ignored)
		case "rust":
			p.planRust(ctx, h)
		}
	}
	p.shadow(h.ShadowDir)
	return p
}

// shadow gives the mounts below /root a way in. Images keep /root at mode
// 0700, so the sandbox user could not reach a venv's interpreter mounted
// at /root/.pyenv/…; a tmpfs there does not help (Docker copies the
// image's mode onto it). Instead an empty directory of Harness's own, mode
// 0755, holding only the mount points, is mounted read-only over /root.
func (p *Plan) shadow(dir string) {
	var below []string
	for _, m := range p.Mounts {
		if strings.HasPrefix(m.Target, "/root/") {
			below = append(below, strings.TrimPrefix(m.Target, "/root/"))
		}
	}
	if len(below) == 0 {
		return
	}
	slices.Sort(below)
	sum := sha256.Sum256([]byte(strings.Join(below, "\x00")))
	skel := filepath.Join(dir, hex.EncodeToString(sum[:8]))
	err := errors.New("no directory for it")
	if dir != "" {
		err = nil
		for _, b := range below {
			if err = os.MkdirAll(filepath.Join(skel, b), 0o755); err != nil {
				break
			}
		}
	}
	if err != nil {
		p.Mounts = slices.DeleteFunc(p.Mounts, func(m workspace.Mount) bool { return strings.HasPrefix(m.Target, "/root/") })
		p.Missing = append(p.Missing, "the mounts below /root could not be prepared ("+err.Error()+"): "+strings.Join(below, ", ")+" are not in the sandbox")
		return
	}
	p.Mounts = append(p.Mounts, workspace.Mount{What: "an empty /root, to reach the mounts below it", Source: skel, Target: "/root", ReadOnly: true})
}

// Needs reads what the project at root says it needs, in a fixed order
// (go, node, python, rust).
func Needs(root string) []Need {
	var needs []Need
	if data, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
		needs = append(needs, Need{Name: "go", Version: goLine(data), From: "go.mod"})
	} else if _, err := os.Stat(filepath.Join(root, "go.work")); err == nil {
		needs = append(needs, Need{Name: "go", From: "go.work"})
	}
	if _, err := os.Stat(filepath.Join(root, "package.json")); err == nil {
		needs = append(needs, Need{Name: "node", From: "package.json"})
	}
	for _, f := range []string{"pyproject.toml", "setup.py", "requirements.txt", ".venv/pyvenv.cfg", "venv/pyvenv.cfg"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			needs = append(needs, Need{Name: "python", From: f})
			break
		}
		if f == "requirements.txt" {
			if m, _ := filepath.Glob(filepath.Join(root, "requirements*.txt")); len(m) > 0 {
				needs = append(needs, Need{Name: "python", From: filepath.Base(m[0])})
				break
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "Cargo.toml")); err == nil {
		needs = append(needs, Need{Name: "rust", From: "Cargo.toml"})
	}
	return needs
}

// goLine is the version of go.mod's go directive ("" when it has none).
func goLine(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "go" {
			return f[1]
		}
	}
	return ""
}

// goEnv is what `go env -json` says of the host toolchain.
type goEnv struct {
	GOROOT, GOMODCACHE, GOVERSION string
}

func (p *Plan) planGo(ctx context.Context, h Host, root string, n Need) {
	bin := h.lookPath("go")
	if bin == "" {
		p.Missing = append(p.Missing, fmt.Sprintf("Go: %s needs Go%s but the host has no go on PATH: install Go, or use an image that has it (make sandbox-image IMAGE_PACKAGES=golang rebuilds the default image with it)", n.From, spaced(n.Version)))
		return
	}
	ge, err := hostGo(ctx, h, bin)
	if err != nil {
		p.Missing = append(p.Missing, fmt.Sprintf("Go: the host's go (%s) did not say where it lives (%v): the sandbox has only the image's Go", bin, err))
		return
	}
	if n.Version != "" && versionLess(strings.TrimPrefix(ge.GOVERSION, "go"), n.Version) {
		p.Missing = append(p.Missing, fmt.Sprintf("Go: %s needs go %s but the host's Go is %s, and the sandbox cannot download a toolchain (GOTOOLCHAIN=local): install Go %s on the host", n.From, n.Version, ge.GOVERSION, n.Version))
	}
	p.Mounts = append(p.Mounts, workspace.Mount{What: "go toolchain " + ge.GOVERSION, Source: ge.GOROOT, Target: goRoot, ReadOnly: true})
	p.Path = append(p.Path, goRoot+"/bin")
	// A vendored module builds from its vendor directory, as on the host;
	// any other from the module cache, never the network, with go.mod
	// read-only as go's default is: a build or a test never edits go.mod
	// (go get and go mod tidy still do when asked, from the cache).
	p.Env = append(p.Env, "GOROOT="+goRoot, "GOTOOLCHAIN=local", "GOPROXY=off",
		"GOCACHE="+Cache+"/go-build", "GOTELEMETRY=off")
	if _, err := os.Stat(filepath.Join(root, "vendor", "modules.txt")); err == nil {
		p.Env = append(p.Env, "GOFLAGS=-mod=vendor")
	}
	have := "go: " + ge.GOVERSION + " from " + ge.GOROOT
	if isDir(ge.GOMODCACHE) {
		p.Mounts = append(p.Mounts, workspace.Mount{What: "go module cache", Source: ge.GOMODCACHE, Target: goModCache, ReadOnly: true})
		p.Env = append(p.Env, "GOMODCACHE="+goModCache)
		have += ", modules from " + ge.GOMODCACHE
	} else {
		// No cache on the host: modules the project needs are missing,
		// which go says itself, by module, at the first build.
		p.Env = append(p.Env, "GOMODCACHE="+Cache+"/gomod")
	}
	p.Have = append(p.Have, have)
}

// hostGo finds the host toolchain's GOROOT, version and module cache the
// way go itself does, from files and the environment: GOROOT is where the
// go binary lives (or $GOROOT), its VERSION file names the release, and
// the module cache is $GOMODCACHE, else the first $GOPATH's pkg/mod, else
// ~/go/pkg/mod. Only when a file is missing is `go env` asked (tens of
// milliseconds).
func hostGo(ctx context.Context, h Host, bin string) (goEnv, error) {
	var ge goEnv
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		ge.GOROOT = filepath.Dir(filepath.Dir(real))
	}
	if r := h.getenv("GOROOT"); r != "" {
		ge.GOROOT = r
	}
	if v, err := os.ReadFile(filepath.Join(ge.GOROOT, "VERSION")); err == nil && bytes.HasPrefix(v, []byte("go")) {
		ge.GOVERSION, _, _ = strings.Cut(string(v), "\n")
	}
	ge.GOMODCACHE = h.getenv("GOMODCACHE")
	if ge.GOMODCACHE == "" {
		gopath, _, _ := strings.Cut(h.getenv("GOPATH"), string(filepath.ListSeparator))
		if gopath == "" && h.getenv("HOME") != "" {
			gopath = filepath.Join(h.getenv("HOME"), "go")
		}
		if gopath != "" {
			ge.GOMODCACHE = filepath.Join(gopath, "pkg", "mod")
		}
	}
	if ge.GOVERSION != "" && isDir(filepath.Join(ge.GOROOT, "src", "runtime")) && ge.GOMODCACHE != "" {
		return ge, nil
	}
	out, err := h.run(ctx, bin, "env", "-json", "GOROOT", "GOMODCACHE", "GOVERSION")
	if err != nil {
		return ge, err
	}
	if err := json.Unmarshal(out, &ge); err != nil {
		return ge, err
	}
	if ge.GOROOT == "" {
		return ge, errors.New("go env names no GOROOT")
	}
	return ge, nil
}

func (p *Plan) planNode(h Host, root string, ignored map[string]bool) {
	bin := h.lookPath("node")
	if bin == "" {
		p.Missing = append(p.Missing, "Node: package.json needs Node but the host has no node on PATH: install Node, or use an image that has it (make sandbox-image IMAGE_PACKAGES=nodejs rebuilds the default image with it)")
	} else if real, err := filepath.EvalSymlinks(bin); err != nil {
		p.Missing = append(p.Missing, "Node: the host's node ("+bin+") cannot be resolved: "+err.Error())
	} else if lib := sharedNode(real); lib != "" {
		p.Missing = append(p.Missing, fmt.Sprintf("Node: the host's node (%s) is built against the system's %s, which a sandbox cannot share: use an image that has Node (make sandbox-image IMAGE_PACKAGES=nodejs rebuilds the default image with it)", real, lib))
	} else {
		prefix := filepath.Dir(filepath.Dir(real))
		if filepath.Base(filepath.Dir(real)) == "bin" && !systemPrefix(prefix) && isDir(filepath.Join(prefix, "lib", "node_modules")) {
			// A prefix of its own (nvm, a tarball in /opt): all of it.
			p.Mounts = append(p.Mounts, workspace.Mount{What: "node", Source: prefix, Target: nodeDir, ReadOnly: true})
			p.Path = append(p.Path, nodeDir+"/bin")
		} else {
			p.Mounts = append(p.Mounts, workspace.Mount{What: "node", Source: real, Target: nodeDir + "/bin/node", ReadOnly: true})
			p.Path = append(p.Path, nodeDir+"/bin")
			if npm := filepath.Join(prefix, "lib", "node_modules", "npm"); isDir(npm) {
				// npm and npx as a prefix's bin has them: links to their
				// scripts, which find the rest of npm from where they are.
				target := nodeDir + "/lib/node_modules/npm"
				p.Mounts = append(p.Mounts, workspace.Mount{What: "npm", Source: npm, Target: target, ReadOnly: true})
				p.Links = append(p.Links, Link{Name: homeBin + "/npm", Target: target + "/bin/npm-cli.js"},
					Link{Name: homeBin + "/npx", Target: target + "/bin/npx-cli.js"})
				p.Path = append(p.Path, homeBin)
			}
		}
		p.Env = append(p.Env, "npm_config_cache="+Cache+"/npm", "npm_config_offline=true", "npm_config_update_notifier=false")
		p.Have = append(p.Have, "node: "+real)
	}
	if ignored["node_modules"] {
		src := filepath.Join(root, "node_modules")
		p.Mounts = append(p.Mounts, workspace.Mount{What: "node_modules", Source: src, Target: depsDir + "/node_modules", ReadOnly: true})
		p.Links = append(p.Links, Link{Name: workDir + "/node_modules", Target: depsDir + "/node_modules"})
		p.Have = append(p.Have, "node_modules: "+src+" (read-only)")
	}
}

func (p *Plan) planPython(root string, ignored map[string]bool) {
	for _, name := range []string{".venv", "venv"} {
		dir := filepath.Join(root, name)
		cfg, err := os.ReadFile(filepath.Join(dir, "pyvenv.cfg"))
		if err != nil || !ignored[name] {
			continue
		}
		target := depsDir + "/venv"
		p.Mounts = append(p.Mounts, workspace.Mount{What: "python venv", Source: dir, Target: target, ReadOnly: true})
		p.Links = append(p.Links, Link{Name: workDir + "/" + name, Target: target})
		// The venv's console scripts (pip, pytest…) name their
		// interpreter by its host path: the venv is there too.
		if reachable(dir) {
			p.Mounts = append(p.Mounts, workspace.Mount{What: "python venv (its host path, for its scripts)", Source: dir, Target: dir, ReadOnly: true})
		} else {
			p.Missing = append(p.Missing, "Python: the venv's scripts (pip, pytest…) name their interpreter by its host path "+dir+", which the sandbox uses itself: run them as python -m pip, python -m pytest, or move the project")
		}
		venv := workDir + "/" + name
		p.Env = append(p.Env, "VIRTUAL_ENV="+venv)
		p.Path = append(p.Path, venv+"/bin")
		have := "python: the venv " + dir
		if home := venvHome(cfg); home != "" && !systemPrefix(filepath.Dir(home)) {
			prefix := filepath.Dir(home)
			if reachable(prefix) {
				p.Mounts = append(p.Mounts, workspace.Mount{What: "python interpreter", Source: prefix, Target: prefix, ReadOnly: true})
				have += ", its interpreter from " + prefix
			} else {
				p.Missing = append(p.Missing, "Python: the venv's interpreter lives at "+prefix+", which cannot be mounted at its own path in the sandbox: recreate the venv with a system python")
			}
		}
		p.Have = append(p.Have, have)
		break
	}
	p.Env = append(p.Env, "PIP_CACHE_DIR="+Cache+"/pip", "PIP_NO_INDEX=1", "PIP_DISABLE_PIP_VERSION_CHECK=1")
}

func (p *Plan) planRust(ctx context.Context, h Host) {
	bin := h.lookPath("rustc")
	if bin == "" {
		p.Missing = append(p.Missing, "Rust: Cargo.toml needs Rust but the host has no rustc on PATH: install Rust (rustup), or use an image that has it (make sandbox-image IMAGE_PACKAGES=\"rustc cargo gcc\" rebuilds the default image with it)")
		return
	}
	out, err := h.run(ctx, bin, "--print", "sysroot")
	sysroot := strings.TrimSpace(string(out))
	if err != nil || !isDir(filepath.Join(sysroot, "bin")) {
		p.Missing = append(p.Missing, fmt.Sprintf("Rust: the host's rustc (%s) did not name its sysroot (%v): the sandbox has only the image's Rust", bin, err))
		return
	}
	p.Mounts = append(p.Mounts, workspace.Mount{What: "rust toolchain", Source: sysroot, Target: rustDir, ReadOnly: true})
	p.Path = append(p.Path, rustDir+"/bin")
	p.Env = append(p.Env, "CARGO_HOME="+cargoHome, "CARGO_NET_OFFLINE=true")
	home := h.getenv("CARGO_HOME")
	if home == "" && h.getenv("HOME") != "" {
		home = filepath.Join(h.getenv("HOME"), ".cargo")
	}
	have := "rust: " + sysroot
	for _, sub := range []string{"registry", "git"} {
		// Only these two: CARGO_HOME itself holds credentials.toml.
		if d := filepath.Join(home, sub); home != "" && isDir(d) {
			p.Mounts = append(p.Mounts, workspace.Mount{What: "cargo " + sub, Source: d, Target: cargoDir + "/" + sub, ReadOnly: true})
			p.Links = append(p.Links, Link{Name: cargoHome + "/" + sub, Target: cargoDir + "/" + sub})
			have += ", crates from " + d
		}
	}
	p.Have = append(p.Have, have)
}

// sharedNode names the shared libnode a node binary is linked against
// ("" when it is a standalone build, as the official ones are).
func sharedNode(bin string) string {
	f, err := elf.Open(bin)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }() // only read
	libs, _ := f.ImportedLibraries()
	for _, l := range libs {
		if strings.HasPrefix(l, "libnode") {
			return l
		}
	}
	return ""
}

// venvHome is pyvenv.cfg's home (the base interpreter's bin directory).
func venvHome(cfg []byte) string {
	for line := range strings.SplitSeq(string(cfg), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == "home" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// systemPrefix reports a directory the image owns (/usr, /usr/local, /):
// what lives there is the image's, never mounted over.
func systemPrefix(dir string) bool {
	switch filepath.Clean(dir) {
	case "/", "/usr", "/usr/local", "/bin", "/usr/bin", "/usr/local/bin", "/opt":
		return true
	}
	return false
}

// reachable reports whether a host path can be mounted at the same path in
// the container: not under a place the container uses itself. Below /tmp
// is fine (Docker mounts it on the container's tmpfs /tmp), /tmp itself
// is not.
func reachable(p string) bool {
	for _, r := range []string{"/workspace", "/home/harness", "/proc", "/sys", "/dev", "/etc", Base} {
		if p == r || strings.HasPrefix(p, r+"/") {
			return false
		}
	}
	return p != "/tmp" && !systemPrefix(p) && filepath.IsAbs(p)
}

// ignoredDirs asks the project's git which of names are ignored
// directories at its root (the copy leaves them out, so they may be
// mounted without clashing with the tree).
func ignoredDirs(ctx context.Context, root string, h Host, names ...string) map[string]bool {
	var present []string
	for _, n := range names {
		if isDir(filepath.Join(root, n)) {
			present = append(present, n)
		}
	}
	out := map[string]bool{}
	if len(present) == 0 {
		return out
	}
	res, _ := h.run(ctx, "git", append([]string{"-C", root, "check-ignore", "--"}, present...)...)
	for line := range strings.SplitSeq(string(res), "\n") {
		if line = strings.TrimSuffix(strings.TrimSpace(line), "/"); line != "" {
			out[line] = true
		}
	}
	return out
}

// Checked is the plan with every mounted tree walked for credential-like
// names (workspace.IsCredential): their container paths are Masked. A tree
// that cannot be read, or walked within the bounds, is dropped from the
// mounts with a Missing note, since what it holds could not be checked.
// The trees are walked at once, each in its own goroutine; a module cache
// of 20,000 entries takes tens of milliseconds.
func (p Plan) Checked(ctx context.Context) Plan {
	type result struct {
		found []string
		err   error
	}
	results := make([]result, len(p.Mounts))
	var wg sync.WaitGroup
	for i, m := range p.Mounts {
		wg.Go(func() {
			fi, err := os.Stat(m.Source)
			switch {
			case err != nil:
				results[i].err = err
			case fi.IsDir():
				results[i].found, results[i].err = scanTree(ctx, m.Source)
			case workspace.IsCredential(filepath.Base(m.Source)):
				results[i].err = errors.New("it is a credential-like file")
			}
		})
	}
	wg.Wait()
	out := p
	out.Mounts, out.Masked, out.Missing = nil, slices.Clone(p.Masked), slices.Clone(p.Missing)
	for i, m := range p.Mounts {
		if err := results[i].err; err != nil {
			out.Missing = append(out.Missing, fmt.Sprintf("%s: %s was not mounted: it could not be checked for credential files (%v)", m.What, m.Source, err))
			continue
		}
		for _, rel := range results[i].found {
			out.Masked = append(out.Masked, m.Target+"/"+filepath.ToSlash(rel))
		}
		out.Mounts = append(out.Mounts, m)
	}
	slices.Sort(out.Masked)
	out.Masked = slices.Compact(out.Masked)
	return out
}

var errTooLarge = errors.New("more than " + strconv.Itoa(maxScanEntries) + " entries")

// scanTree lists the credential-like paths under dir, relative to it; a
// credential-like directory is listed once, not its contents.
func scanTree(ctx context.Context, dir string) ([]string, error) {
	deadline := time.Now().Add(maxScanTime)
	var found []string
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable part cannot be read in the sandbox either
		}
		if n++; n > maxScanEntries {
			return errTooLarge
		}
		if n%4096 == 0 && (ctx.Err() != nil || time.Now().After(deadline)) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errors.New("took longer than " + maxScanTime.String())
		}
		if p == dir || !workspace.IsCredential(d.Name()) {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		found = append(found, rel)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	return found, err
}

// versionLess compares dotted Go versions ("1.26.8" < "1.27").
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		x, y := part(pa, i), part(pb, i)
		if x != y {
			return x < y
		}
	}
	return false
}

func part(p []string, i int) int {
	if i >= len(p) {
		return 0
	}
	s := p[i]
	if j := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
		s = s[:j] // "0rc1" → 0
	}
	n, _ := strconv.Atoi(s)
	return n
}

func spaced(v string) string {
	if v == "" {
		return ""
	}
	return " " + v
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
