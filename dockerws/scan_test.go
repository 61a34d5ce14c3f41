package dockerws

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

func mustScan(t *testing.T, root string, edit func(*Options)) (*snapshot, error) {
	t.Helper()
	opts := Options{Root: root}
	if edit != nil {
		edit(&opts)
	}
	opts.defaults()
	excl, err := workspace.CompileExcludes(opts.Exclude)
	if err != nil {
		return nil, err
	}
	return scan(t.Context(), opts, excl)
}

func TestScanCopiesTextAndReportsTheRest(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"README.md":          "hello\n",
		"src/main.py":        "print('hi')\n",
		"bin/run.sh*":        "#!/bin/sh\n",
		"empty.txt":          "",
		".git/config":        "[core]\n",
		"sub/.git":           "gitdir: ../.git/modules/sub\n",
		"link":               "->README.md",
		"dangling":           "->nowhere",
		"pipe":               "fifo",
		"logo.png":           "\x89PNG\x00\x00",
		"latin1.txt":         "caf\xe9\n",
		"big.txt":            strings.Repeat("x", 2048),
		"node_modules/a.js":  "x",
		"build/out.txt":      "x",
		"docs/build/keep.md": "kept: the pattern is rooted\n",
		"tab\tname.txt":      "x",
	})
	s, err := mustScan(t, root, func(o *Options) {
		o.MaxFileBytes = 1024
		o.Exclude = []string{"node_modules/", "/build", "# a comment", ""}
	})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for p := range s.files {
		files = append(files, p)
	}
	want := []string{"README.md", "bin/run.sh", "docs/build/keep.md", "empty.txt", "src/main.py"}
	if diff := cmp.Diff(want, sortedCopy(files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if got := s.files["bin/run.sh"].mode; got != 0o755 {
		t.Errorf("run.sh mode = %o, want 755", got)
	}
	if got := s.files["README.md"].mode; got != 0o644 {
		t.Errorf("README.md mode = %o, want 644", got)
	}
	wantSkipped := map[string]string{
		"link":          skipSymlink,
		"dangling":      skipSymlink,
		"pipe":          skipSpecial,
		"logo.png":      skipBinary,
		"latin1.txt":    skipNonUTF8,
		"big.txt":       skipLimit,
		"node_modules":  skipExcluded,
		"build":         skipExcluded,
		"tab\tname.txt": skipName,
	}
	gotSkipped := map[string]string{}
	for _, sk := range s.skipped {
		gotSkipped[sk.Path] = sk.Reason
	}
	if diff := cmp.Diff(wantSkipped, gotSkipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}

// This repository is a real project: it opens (internal/workspace/credentials.go is
// code, not a secret; make bench once refused it).
func TestScanThisRepository(t *testing.T) {
	s, err := mustScan(t, "..", nil)
	if err != nil {
		t.Fatalf("scanning this repository: %v", err)
	}
	if _, ok := s.files["internal/workspace/credentials.go"]; !ok {
		t.Error("internal/workspace/credentials.go is not in the copy")
	}
}

func TestScanRefusesCredentials(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		exclude []string
		want    errcode.Code
	}{
		{"dotenv", map[string]string{".env": "KEY=1"}, nil, errcode.WorkspaceCredentialInput},
		{"dotenv variant deep", map[string]string{"app/.env.local": "KEY=1"}, nil, errcode.WorkspaceCredentialInput},
		{"npmrc", map[string]string{".npmrc": "//registry/:_authToken=x"}, nil, errcode.WorkspaceCredentialInput},
		{"netrc", map[string]string{".netrc": "machine x"}, nil, errcode.WorkspaceCredentialInput},
		{"ssh dir", map[string]string{".ssh/config": "Host x"}, nil, errcode.WorkspaceCredentialInput},
		{"aws dir", map[string]string{"home/.aws/credentials": "[default]"}, nil, errcode.WorkspaceCredentialInput},
		{"docker dir", map[string]string{".docker/config.json": "{}"}, nil, errcode.WorkspaceCredentialInput},
		{"credentials file", map[string]string{"config/credentials.json": "{}"}, nil, errcode.WorkspaceCredentialInput},
		{"private keys", map[string]string{"keys/id_rsa": "k", "keys/id_ed25519": "k"}, nil, errcode.WorkspaceCredentialInput},
		{"git credentials", map[string]string{".git-credentials": "https://u:p@host"}, nil, errcode.WorkspaceCredentialInput},
		{"pgpass", map[string]string{"db/.pgpass": "*:*:*:u:p"}, nil, errcode.WorkspaceCredentialInput},
		{"windows netrc", map[string]string{"_netrc": "machine x"}, nil, errcode.WorkspaceCredentialInput},
		{"kube config", map[string]string{".kube/config": "apiVersion: v1"}, nil, errcode.WorkspaceCredentialInput},
		{"npmrc backup", map[string]string{".npmrc.bak": "//registry/:_authToken=x"}, nil, errcode.WorkspaceCredentialInput},
		{"netrc backup", map[string]string{".netrc~": "machine x"}, nil, errcode.WorkspaceCredentialInput},
		{"pem key", map[string]string{"certs/server.pem": "-----BEGIN PRIVATE KEY-----"}, nil, errcode.WorkspaceCredentialInput},
		{"key file", map[string]string{"tls/server.key": "-----BEGIN PRIVATE KEY-----"}, nil, errcode.WorkspaceCredentialInput},
		{"ecdsa and ed25519 keys", map[string]string{"k/id_ecdsa": "k", "k/id_ed25519.old": "k"}, nil, errcode.WorkspaceCredentialInput},
		{"pypirc", map[string]string{".pypirc": "[pypi]\npassword = x"}, nil, errcode.WorkspaceCredentialInput},
		{"service account", map[string]string{"deploy/service-account.json": "{}"}, nil, errcode.WorkspaceCredentialInput},
		{"kubeconfig", map[string]string{"kubeconfig": "apiVersion: v1"}, nil, errcode.WorkspaceCredentialInput},
		{"gh hosts", map[string]string{".config/gh/hosts.yml": "github.com:\n  oauth_token: x"}, nil, errcode.WorkspaceCredentialInput},
		{"vault token", map[string]string{".vault-token": "s.x"}, nil, errcode.WorkspaceCredentialInput},
		{"terraform state", map[string]string{"infra/terraform.tfstate": "{}"}, nil, errcode.WorkspaceCredentialInput},
		{"htpasswd", map[string]string{".htpasswd": "u:$apr1$x"}, nil, errcode.WorkspaceCredentialInput},
		{"secrets yaml", map[string]string{"k8s/secrets.yaml": "kind: Secret"}, nil, errcode.WorkspaceCredentialInput},
		{"templates are copied", map[string]string{".env.example": "KEY=", ".env.sample": "KEY=", ".env.template": "KEY=", "ansible/hosts.yml": "all:"}, nil, ""},
		{"excluded by name", map[string]string{".env": "KEY=1", "a.txt": "a"}, []string{".env"}, ""},
		{"excluded dir", map[string]string{"secrets/.ssh/id_rsa": "k", "a.txt": "a"}, []string{"secrets/"}, ""},
		{"public key is fine", map[string]string{"id_rsa.pub": "ssh-rsa AAA"}, nil, ""},
		{"code about credentials is fine", map[string]string{"auth/credentials.go": "package auth", "credentials_test.py": "x"}, nil, ""},
		{"inside .git is never read", map[string]string{".git/credentials": "x"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			_, err := mustScan(t, root, func(o *Options) { o.Exclude = tc.exclude })
			if got := errcode.Of(err); got != tc.want {
				t.Fatalf("code = %q, want %q (%v)", got, tc.want, err)
			}
			if tc.want != "" {
				// The message names a refused path.
				for p := range tc.files {
					first, _, _ := strings.Cut(p, "/")
					if strings.Contains(errcode.Message(err), first) {
						return
					}
				}
				t.Errorf("message %q names none of the credential paths", errcode.Message(err))
			}
		})
	}
}

func TestScanLimits(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "aaaa", "b.txt": "bbbb", "c.txt": "cccc"})
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want errcode.Code
	}{
		{"within limits", func(*Options) {}, ""},
		{"too many files", func(o *Options) { o.MaxFiles = 2 }, errcode.WorkspaceLimit},
		{"too many bytes", func(o *Options) { o.MaxTotalBytes = 10 }, errcode.WorkspaceLimit},
		{"exactly at the limits", func(o *Options) { o.MaxFiles = 3; o.MaxTotalBytes = 12 }, ""},
		{"missing root", func(o *Options) { o.Root += "/nope" }, errcode.WorkspaceNotFound},
		{"bad exclude pattern", func(o *Options) { o.Exclude = []string{"[a"} }, errcode.WorkspacePath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mustScan(t, root, tc.edit)
			if got := errcode.Of(err); got != tc.want {
				t.Fatalf("code = %q, want %q (%v)", got, tc.want, err)
			}
		})
	}
}

func TestScanCanceled(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.txt": "a"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	opts := Options{Root: root}
	opts.defaults()
	_, err := scan(ctx, opts, nil)
	wantCode(t, err, errcode.ToolCanceled)
}

func TestSnapshotDigest(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	files := map[string]string{"x.txt": "1\n", "d/y.txt": "2\n"}
	writeTree(t, a, files)
	writeTree(t, b, files)
	sa, err := mustScan(t, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := mustScan(t, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sa.digest != sb.digest || !strings.HasPrefix(sa.digest, "sha256:") {
		t.Errorf("same trees, digests %q and %q", sa.digest, sb.digest)
	}
	writeTree(t, b, map[string]string{"x.txt": "changed\n"})
	sc, err := mustScan(t, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sc.digest == sa.digest {
		t.Error("a changed file kept the digest")
	}
	writeTree(t, a, map[string]string{"z.sh*": ""})
	sd, _ := mustScan(t, a, nil)
	writeTree(t, b, map[string]string{"x.txt": "1\n", "z.sh": ""})
	se, _ := mustScan(t, b, nil)
	if sd.digest == se.digest {
		t.Error("a mode change kept the digest")
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// In a git work tree, what git ignores stays out of the copy (reported as
// gitignored), a gitignored credential file included; tracked files and
// untracked files that are not ignored are copied.
func TestScanHonorsGitignore(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".gitignore":         "build/\n*.log\n.env\n",
		"main.go":            "package main\n",
		"notes.txt":          "untracked but not ignored\n",
		"build/out.txt":      "x",
		"debug.log":          "x",
		".env":               "SECRET=1\n",
		"sub/keep.go":        "package sub\n",
		"sub/deep/trace.log": "x",
	})
	for _, args := range [][]string{{"init", "-q"}, {"add", "main.go", ".gitignore"}} {
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	s, err := mustScan(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for p := range s.files {
		files = append(files, p)
	}
	want := []string{".gitignore", "main.go", "notes.txt", "sub/keep.go"}
	if diff := cmp.Diff(want, sortedCopy(files)); diff != "" {
		t.Errorf("copied (-want +got):\n%s", diff)
	}
	ignored := map[string]bool{}
	for _, sk := range s.skipped {
		if sk.Reason == skipIgnored {
			ignored[sk.Path] = true
		}
	}
	for _, p := range []string{"build", "debug.log", ".env", "sub/deep"} { // a directory holding only ignored files is skipped whole
		if !ignored[p] {
			t.Errorf("%s not reported as gitignored (skipped: %+v)", p, s.skipped)
		}
	}
}
