package dockerws

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/workspace"
)

// Images of the live tests; scripts/images.sh builds both.
const (
	busyboxImage = "harness-busybox"
	sandboxImage = "harness-sandbox"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(abandonChildEnv); spec != "" {
		os.Exit(abandonChild(spec))
	}
	// Leftovers of crashed test runs (their process is gone) are removed
	// before the tests create their own; live runs of other packages keep
	// theirs. A missing daemon is reported by each test that needs it.
	if n, err := Reap(context.Background(), ""); err == nil && n > 0 {
		fmt.Fprintf(os.Stderr, "dockerws: reaped %d leftover containers and volumes\n", n)
	}
	os.Exit(m.Run())
}

// needDocker skips (or, with HARNESS_REQUIRE_DOCKER=1, fails) a test when
// the daemon or the image is missing.
func needDocker(t testing.TB, image string) {
	t.Helper()
	ctx := context.Background()
	if err := Ping(ctx, ""); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", "no Docker daemon answers: "+err.Error())
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker", err.Error())
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, image); err != nil {
		testenv.Unavailable(t, testenv.RequireDocker, "docker",
			"image "+image+" is missing; run scripts/images.sh: "+err.Error())
	}
}

// open opens a workspace on root with image and closes it at the end.
func open(t testing.TB, root, image string, edit ...func(*Options)) *Workspace {
	t.Helper()
	needDocker(t, image)
	opts := Options{Root: root, Image: image, SessionID: "sess-test-" + t.Name()}
	for _, f := range edit {
		f(&opts)
	}
	w, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(context.Background()); err != nil && errcode.Of(err) != errcode.WorkspaceDisposed {
			t.Errorf("Close: %v", err)
		}
	})
	return w
}

// writeTree creates files under dir; a value starting with "->" makes a
// symlink, "fifo" a named pipe; a key ending in "*" is executable.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		mode := fs.FileMode(0o644)
		if n, ok := strings.CutSuffix(name, "*"); ok {
			name, mode = n, 0o755
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasPrefix(content, "->"):
			err = os.Symlink(strings.TrimPrefix(content, "->"), p)
		case content == "fifo":
			err = syscall.Mkfifo(p, 0o644)
		default:
			err = os.WriteFile(p, []byte(content), mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// treeDigest hashes every entry under dir (type, mode, content, link
// target, modification time), so any change to the host tree shows.
func treeDigest(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		line := fmt.Sprintf("%s %v %d", rel, fi.Mode(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// mustExec runs argv and fails the test on an error.
func mustExec(t testing.TB, w workspace.Workspace, argv ...string) workspace.ExecResult {
	t.Helper()
	res, err := w.Exec(context.Background(), workspace.ExecRequest{Argv: argv})
	if err != nil {
		t.Fatalf("Exec %q: %v", argv, err)
	}
	return res
}

// wantCode fails unless err carries code.
func wantCode(t testing.TB, err error, code errcode.Code) {
	t.Helper()
	if got := errcode.Of(err); got != code {
		t.Fatalf("code = %q, want %q (err: %v)", got, code, err)
	}
}
