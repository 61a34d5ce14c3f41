package doctor

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/testenv"
)

// doctor lists this project's build caches and kept workspaces and the
// named session's, and only counts the others (every project's and every
// session's were listed: other users' work and paths on a shared daemon);
// --all lists them all.
func TestDoctorListsThisProjectOnly(t *testing.T) {
	if err := dockerws.Ping(t.Context(), ""); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "no Docker daemon answers: "+err.Error())
	}
	if exec.Command("docker", "image", "inspect", "harness-busybox").Run() != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "no image harness-busybox")
	}
	home, project, other := t.TempDir(), t.TempDir(), t.TempDir()
	t.Chdir(project)
	tag := strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	docker := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
			t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	user := dockerws.LabelCache + ".user=" + strconv.Itoa(os.Getuid())
	mine, theirs := "harness-cache-test-mine-"+tag, "harness-cache-test-other-"+tag
	docker("volume", "create", "--label", dockerws.LabelCache+"="+project, "--label", user, mine)
	docker("volume", "create", "--label", dockerws.LabelCache+"="+other, "--label", user, theirs)
	named, foreign := dockerws.KeptPrefix+"named-"+tag, dockerws.KeptPrefix+"foreign-"+tag
	for name, sess := range map[string]string{named: "sess-named-" + tag, foreign: "sess-foreign-" + tag} {
		docker("create", "--network", "none", "--name", name, "--label", dockerws.LabelWorkspace+"=ws-"+tag,
			"--label", dockerws.LabelSession+"="+sess, "harness-busybox", "sleep", "infinity")
	}
	t.Cleanup(func() {
		_ = exec.Command("docker", "rm", "-f", "-v", named, foreign).Run()
		_ = exec.Command("docker", "volume", "rm", mine, theirs).Run()
	})
	run := func(sc Scope) string {
		var out bytes.Buffer
		o := app.Options{DB: filepath.Join(home, "h.db"), Image: "harness-busybox", FakeModel: filepath.Join(home, "script.json")}
		Run(t.Context(), o, app.Env{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config")}, sc, &out)
		return out.String()
	}
	out := run(Scope{Session: "sess-named-" + tag})
	for _, want := range []string{mine, named, "harness doctor --all lists them"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not list %s:\n%s", want, out)
		}
	}
	for _, not := range []string{theirs, other, foreign} {
		if strings.Contains(out, not) {
			t.Errorf("doctor lists %s, of another project or session:\n%s", not, out)
		}
	}
	out = run(Scope{All: true})
	for _, want := range []string{mine, theirs, named, foreign} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor --all does not list %s:\n%s", want, out)
		}
	}
}
