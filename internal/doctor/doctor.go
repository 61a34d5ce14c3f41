// Package doctor checks what harness needs — the Docker daemon, the
// sandbox image, the session store, the model provider — and says for each
// what is wrong and how to fix it.
package doctor

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model/openai"
	"github.com/harness-dev/harness/internal/workspace"
)

// Run checks the Docker daemon, the sandbox image, the provider settings
// and the store with the options o, writes to w for each what is wrong and
// how to fix it, and reports whether every check passed. It removes the
// workspaces of processes that are gone and lists the kept ones (turns
// whose diff failed) with their session and how to recover or remove them.
// It says where the daemon keeps a workspace's files: on disk, with a size
// quota, when its storage driver gives one, else in tmpfs (host memory).
//
// In a project that needs a toolchain (Go, Node, Python, Rust), it says
// which, where the sandbox gets each from and what it mounts, and runs each
// toolchain's version command in a throwaway workspace of the image with
// those mounts. It lists the user's idle warm spare containers and the
// build cache volumes; with clean it removes the spares and the current
// project's cache (not while a running session uses it).
//
// It lists the current project's caches and kept workspaces, and the
// named session's (Scope): those of other projects and sessions only with
// Scope.All, else it counts them.
func Run(ctx context.Context, o app.Options, e app.Env, sc Scope, w io.Writer) bool {
	clean := sc.Clean
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	bad := 0
	report := func(name string, err error, fix string) {
		if err == nil {
			fmt.Fprintf(w, "✓ %s\n", name)
			return
		}
		bad++
		fmt.Fprintf(w, "✗ %s: %s: %s\n    fix: %s\n", name, errcode.Of(err), errcode.Message(err), fix)
	}
	r, err := app.Resolve(o, e)
	report("configuration", err, "check the flags and "+app.DefaultConfigPath(e))
	dockerErr := dockerws.Ping(ctx, "")
	report("docker daemon", dockerErr, dockerws.StartDaemon)
	if dockerErr == nil {
		_, err := dockerws.ImageID(ctx, "", r.Image)
		report("sandbox image "+r.Image, err, "make sandbox-image (builds harness-sandbox offline from Debian packages), or pass --image with an image you have")
		fmt.Fprint(w, storageLine(ctx, r.Image, err == nil, report))
		// Workspaces of processes that are gone (killed, crashed, or exited
		// before the daemon finished removing their container).
		n, err := dockerws.Reap(ctx, "")
		report(fmt.Sprintf("leftover workspaces (%d removed)", n), err, "check the Docker daemon; `docker ps -a --filter label="+dockerws.LabelWorkspace+"` lists them")
		kept, err := dockerws.ListKept(ctx, "", "")
		if err != nil {
			report("kept workspaces", err, "check the Docker daemon")
		}
		ours := sc.sessions(ctx, r)
		others := 0
		for _, k := range kept {
			if !sc.All && !ours[k.SessionID] {
				others++
				continue
			}
			fmt.Fprint(w, keptLine(k))
		}
		if others > 0 {
			fmt.Fprintf(w, "  (%d kept workspace(s) of other projects' sessions not listed: harness doctor --all lists them)\n", others)
		}
		bad += spares(ctx, clean, w)
		if err == nil {
			bad += toolchains(ctx, o, r, w)
		}
		bad += caches(ctx, clean, sc.All, w)
	}
	st, err := app.OpenStore(ctx, r.DB, r.HostID)
	report("session store "+redactDSN(r.DB), err, "check that the directory is writable or the server reachable (scripts/postgres.sh starts a local one), or pass --db")
	if err == nil {
		// Sessions without events that killed processes left behind.
		gone, err := app.RemoveEmptySessions(ctx, st)
		if errcode.Of(err) != errcode.SessReadOnly {
			report(fmt.Sprintf("sessions without events (%d removed)", len(gone)), err, "check that the store is writable")
		}
		_ = st.Close()
	}
	switch {
	case o.FakeModel != "":
		fmt.Fprintf(w, "✓ model: scripted (%s)\n", o.FakeModel)
	case r.Model == "" && r.APIKey == "" && r.BaseURL == "":
		fmt.Fprintln(w, "! model: none configured — the built-in demo model is used\n    fix: export OPENAI_API_KEY=… and pass --model (or --base-url http://127.0.0.1:PORT/v1 for a local server)")
	case r.Model == "":
		report("model", errcode.New(errcode.ModelInvalidConfig, "a provider is configured but no model"), "pass --model or set HARNESS_MODEL")
	default:
		base := orDefault(r.BaseURL, openai.DefaultBaseURL)
		name := "provider: model " + r.Model + " at " + redactURL(base)
		c, err := openai.New(openai.Config{BaseURL: base, APIKey: r.APIKey, Model: r.Model, Timeout: 10 * time.Second})
		if err != nil {
			report(name, err, "check --base-url and OPENAI_API_KEY")
			break
		}
		p, err := c.Probe(ctx)
		switch {
		case err != nil:
			report(name, err, providerFix(errcode.Of(err)))
		case !p.Found:
			report(name, errcode.Errorf(errcode.ModelInvalidConfig, "the server is reachable and takes the key, but does not serve %s (it lists %s)", r.Model, listSome(p.Models, 8)),
				"pass --model with one of the listed models")
		default:
			how := "listed by GET /models"
			if p.Answered {
				how = "answered a one-token request"
			}
			fmt.Fprintf(w, "✓ %s: reachable, key accepted, model %s\n", name, how)
			r = app.WithServerWindow(r, p.Window)
		}
	}
	origin := ""
	if r.WindowSource == app.WindowFromServer && r.WindowOrigin != "" {
		origin = ", from " + r.WindowOrigin
	}
	fmt.Fprintf(w, "✓ context window: %d tokens (%s)%s\n", r.Window, windowSource(r.WindowSource), origin)
	return bad == 0
}

// Scope is what doctor lists and cleans: the current project's caches and
// kept workspaces, and those of Session; All lists every project's.
type Scope struct {
	Clean   bool   // remove the spares and the current project's cache
	All     bool   // list every project's caches and kept workspaces
	Session string // a session whose kept workspaces are listed too
}

// sessions is the set of sessions whose kept workspaces are listed: the
// current project's (as the store records them) and the named one.
func (sc Scope) sessions(ctx context.Context, r app.Resolved) map[string]bool {
	ours := map[string]bool{}
	if sc.Session != "" {
		ours[sc.Session] = true
	}
	if sc.All {
		return ours
	}
	cwd, err := os.Getwd()
	if err != nil {
		return ours
	}
	st, err := app.OpenStore(ctx, r.DB, r.HostID)
	if err != nil {
		return ours // the store's own check says why
	}
	defer func() { _ = st.Close() }()
	list, _ := app.Sessions(ctx, st, app.ProjectRoot(cwd))
	for _, s := range list {
		ours[s.ID] = true
	}
	return ours
}

// storageLine says where the daemon keeps a workspace's files and why:
// on disk with a size quota, or in tmpfs, which holds them in the host's
// memory. An overlay2 on xfs is probed with the image, when it is there.
func storageLine(ctx context.Context, image string, haveImage bool, report func(string, error, string)) string {
	if !haveImage {
		image = ""
	}
	s, err := dockerws.DaemonStorage(ctx, "", image)
	if err != nil {
		report("workspace storage", err, "check the Docker daemon")
		return ""
	}
	if s.Kind == workspace.StorageDisk {
		return fmt.Sprintf("✓ workspace storage: disk (the container's own layer, with a size quota): %s\n", s.Why)
	}
	return fmt.Sprintf("✓ workspace storage: tmpfs (host memory): %s\n", s.Why)
}

// spares lists this user's idle warm spare containers (harness exec
// leaves one for the next run) and, with clean, removes them. It returns
// the number of failures.
func spares(ctx context.Context, clean bool, w io.Writer) int {
	if clean {
		n, err := dockerws.RemoveSpares(ctx, "")
		if err != nil {
			fmt.Fprintf(w, "✗ warm spare containers: %s: %s\n    fix: check the Docker daemon\n", errcode.Of(err), errcode.Message(err))
			return 1
		}
		fmt.Fprintf(w, "✓ warm spare containers (%d removed)\n", n)
		return 0
	}
	list, err := dockerws.ListSpares(ctx, "")
	if err != nil {
		fmt.Fprintf(w, "✗ warm spare containers: %s: %s\n    fix: check the Docker daemon\n", errcode.Of(err), errcode.Message(err))
		return 1
	}
	if len(list) > 0 {
		fmt.Fprintf(w, "✓ warm spare containers: %d idle, the last removed at %s unless a run claims it (harness doctor --clean removes them now; --no-spare or HARNESS_SPARE=0 makes none)\n",
			len(list), list[len(list)-1].Until.Local().Format("15:04"))
	}
	return 0
}

// keptLine says what a kept workspace is and how to recover or remove it.
// Its files hold memory until then: it is a warning, not a failure.
func keptLine(k dockerws.Kept) string {
	if !k.Running {
		return fmt.Sprintf("! kept workspace %s of session %s (since %s) is stopped: its files are lost\n    fix: harness discard %s (or docker rm -f -v %s)\n",
			k.Name, k.SessionID, k.Created.Local().Format("2006-01-02 15:04"), k.SessionID, k.Name)
	}
	return fmt.Sprintf("! kept workspace %s of session %s (since %s): the work of a turn whose diff failed\n"+
		"    fix: recover it with harness diff %s (or apply, or resume) and larger --max-total-bytes, or --max-file-bytes/--exclude; remove it with harness discard %s (or docker rm -f -v %s)\n",
		k.Name, k.SessionID, k.Created.Local().Format("2006-01-02 15:04"), k.SessionID, k.SessionID, k.Name)
}

func windowSource(src string) string {
	switch src {
	case app.WindowFromServer:
		return "stated by the server"
	case app.WindowFromConfig:
		return "--context-window or the config file"
	}
	return "default; the server states none"
}

// providerFix says what to do about a provider that failed the check.
func providerFix(code errcode.Code) string {
	switch code {
	case errcode.ModelAuthError:
		return "the server refused the key: check OPENAI_API_KEY (or the variable apiKeyEnv names in the config file)"
	case errcode.ModelTransportError, errcode.ModelTimeout:
		return "start the server, or check --base-url / OPENAI_BASE_URL (host, port, http on loopback only)"
	case errcode.ModelRateLimited:
		return "the server is rate-limiting this key: wait, or check the account's limits"
	case errcode.ModelInvalidResponse:
		return "the URL does not answer like an OpenAI-compatible API: check --base-url (it usually ends in /v1)"
	}
	return "check --base-url, --model and the server's logs"
}

// listSome names up to n items and how many more there are.
func listSome(items []string, n int) string {
	if len(items) == 0 {
		return "none"
	}
	out := strings.Join(items[:min(n, len(items))], ", ")
	if len(items) > n {
		out += fmt.Sprintf(" and %d more", len(items)-n)
	}
	return out
}

// redactURL hides credentials and query values of a URL for display.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparseable URL)"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	if u.RawQuery != "" {
		u.RawQuery = "xxxxx"
	}
	return u.String()
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// redactDSN hides the password of a postgres:// URL for display.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// versionCommands are what proves each toolchain runs in the sandbox.
var versionCommands = map[string][]string{
	"go":     {"go", "version"},
	"node":   {"node", "--version"},
	"python": {"python3", "--version"},
	"rust":   {"cargo", "--version"},
}

// toolchains reports what the project in the current directory needs,
// where the sandbox gets it, and whether it runs there; it returns the
// number of failed checks.
func toolchains(ctx context.Context, o app.Options, r app.Resolved, w io.Writer) int {
	root, err := os.Getwd()
	if err != nil {
		return 0
	}
	plan, notes := app.SandboxPlan(ctx, root, []string{r.KeyEnv})
	if len(plan.Needs) == 0 {
		fmt.Fprintln(w, "✓ toolchains: this project names none (no go.mod, package.json, pyproject.toml, requirements*.txt or Cargo.toml)")
		return 0
	}
	var needs []string
	for _, n := range plan.Needs {
		s := n.Name
		if n.Version != "" {
			s += " " + n.Version
		}
		needs = append(needs, s+" ("+n.From+")")
	}
	fmt.Fprintf(w, "✓ toolchains the project needs: %s\n", strings.Join(needs, ", "))
	for _, h := range plan.Have {
		fmt.Fprintf(w, "    %s\n", h)
	}
	checked := plan.Checked(ctx)
	for _, m := range checked.Mounts {
		fmt.Fprintf(w, "    mount %s → %s (read-only): %s\n", m.Source, m.Target, m.What)
	}
	if len(checked.Masked) > 0 {
		fmt.Fprintf(w, "    %d credential-like files under the mounts are empty in the sandbox\n", len(checked.Masked))
	}
	bad := 0
	for _, n := range append(notes, checked.Missing[len(plan.Missing):]...) {
		bad++
		fmt.Fprintf(w, "✗ toolchain: %s\n", n)
	}
	// Each version command in a throwaway workspace of an empty project,
	// with the same mounts and variables a session gets.
	empty, err := os.MkdirTemp("", "harness-doctor-")
	if err != nil {
		return bad
	}
	defer os.RemoveAll(empty)
	ws, err := dockerws.Open(ctx, dockerws.Options{Root: empty, Image: r.Image, SessionID: "doctor", Toolchain: plan})
	if err != nil {
		fmt.Fprintf(w, "✗ toolchains in the sandbox: %s: %s\n", errcode.Of(err), errcode.Message(err))
		return bad + 1
	}
	defer func() { _ = ws.Close(context.WithoutCancel(ctx)) }() // a throwaway: a failed removal is left to the reaper
	for _, n := range plan.Needs {
		argv := versionCommands[n.Name]
		res, err := ws.Exec(ctx, workspace.ExecRequest{Argv: argv, Timeout: 20 * time.Second})
		out := strings.TrimSpace(res.Stdout + " " + res.Stderr)
		switch {
		case err != nil:
			bad++
			fmt.Fprintf(w, "✗ %s in the sandbox (%s): %s: %s\n", n.Name, strings.Join(argv, " "), errcode.Of(err), errcode.Message(err))
		case res.ExitCode != 0:
			bad++
			fmt.Fprintf(w, "✗ %s in the sandbox (%s): exit %d: %s\n    fix: install it on this machine, or use an image that has it (make sandbox-image IMAGE_PACKAGES=… rebuilds the default image with it)\n",
				n.Name, strings.Join(argv, " "), res.ExitCode, firstLine(out))
		default:
			fmt.Fprintf(w, "✓ %s in the sandbox: %s\n", n.Name, firstLine(out))
		}
	}
	return bad
}

// caches lists the build cache volumes and, with clean, removes the one of
// the project in the current directory (never another project's: tests
// and other checkouts may be using theirs); it returns the number of
// failed removals.
func caches(ctx context.Context, clean, all bool, w io.Writer) int {
	root, _ := os.Getwd()
	project := app.ProjectRoot(root)
	list, err := dockerws.ListCaches(ctx, "")
	if err != nil {
		fmt.Fprintf(w, "✗ build caches: %s: %s\n", errcode.Of(err), errcode.Message(err))
		return 1
	}
	bad, others := 0, 0
	for _, c := range list {
		if mine := c.Project == root || app.ProjectRoot(c.Project) == project; !mine && !all {
			others++
			continue
		}
		size := "size unknown"
		if c.Bytes >= 0 {
			size = fmt.Sprintf("%.1f MiB", float64(c.Bytes)/(1<<20))
		}
		if !clean || c.Project != root {
			fmt.Fprintf(w, "  build cache %s of %s: %s\n", c.Name, c.Project, size)
			continue
		}
		if err := dockerws.RemoveCache(ctx, "", c.Name); err != nil {
			bad++
			fmt.Fprintf(w, "✗ build cache %s of %s not removed: %s: %s\n", c.Name, c.Project, errcode.Of(err), errcode.Message(err))
			continue
		}
		fmt.Fprintf(w, "✓ build cache %s of %s removed (%s)\n", c.Name, c.Project, size)
	}
	if len(list) > others && !clean {
		fmt.Fprintln(w, "    (harness doctor --clean in a project removes its cache, which its next session rebuilds; a project deleted from this machine loses its cache at the next session or doctor)")
	}
	if others > 0 {
		fmt.Fprintf(w, "  (%d build cache(s) of other projects not listed: harness doctor --all lists them)\n", others)
	}
	return bad
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
