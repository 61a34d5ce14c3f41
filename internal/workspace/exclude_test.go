package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/workspace"
)

func TestExcludePatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		path    string
		isDir   bool
		want    bool
	}{
		{"*.log", "a.log", false, true},
		{"*.log", "deep/dir/a.log", false, true},
		{"*.log", "a.txt", false, false},
		{"vendor/", "vendor", true, true},
		{"vendor/", "vendor", false, false},
		{"/build", "build", true, true},
		{"/build", "src/build", true, false},
		{"docs/*.md", "docs/a.md", false, true},
		{"docs/*.md", "x/docs/a.md", false, false},
		{"**/gen", "a/b/gen", true, true},
		{"**/gen", "gen", true, true},
		{"a/**/z.txt", "a/z.txt", false, true},
		{"a/**/z.txt", "a/b/c/z.txt", false, true},
		{"a/**", "a/b", false, true},
	} {
		t.Run(tc.pattern+" "+tc.path, func(t *testing.T) {
			x, err := workspace.CompileExcludes([]string{tc.pattern})
			if err != nil {
				t.Fatal(err)
			}
			if got := x.Match(tc.path, tc.isDir); got != tc.want {
				t.Errorf("match = %v, want %v", got, tc.want)
			}
		})
	}
	x, _ := workspace.CompileExcludes([]string{"node_modules/"})
	if !x.Excluded("web/node_modules/react/index.js") {
		t.Error("a file under an excluded directory is not excluded")
	}
}

// The credential-name rules both workspaces share.
func TestIsCredential(t *testing.T) {
	for name, want := range map[string]bool{
		".env": true, ".env.local": true, ".npmrc": true, ".npmrc.bak": true, ".netrc": true, "_netrc": true,
		".netrc~": true, ".ssh": true, ".aws": true, ".docker": true, ".kube": true, ".git-credentials": true,
		".pgpass": true, "credentials": true, "credentials.json": true, "id_rsa": true, "id_rsa.orig": true,
		"id_ed25519": true, "id_ecdsa": true, "server.pem": true, "tls.key": true, "ID_RSA": true,
		"id_rsa.pub": false, "README.md": false, "env.go": false, "keys.go": false, "main.go": false, ".envrc": false,
		"credentials.go": false, "credentials_test.go": false, "credentials.py": false, "credentials.md": false,
		"credentials.yml.enc": true, "credentials.xml": true, "credentials.sh": true, "credentials.go~": true,
		// Secrets of common tools are refused; templates of secrets, which
		// hold placeholders, and code about secrets are copied.
		".pypirc": true, "service-account.json": true, "kubeconfig": true, ".vault-token": true,
		"terraform.tfstate": true, "terraform.tfstate.backup": true, "prod.tfstate": true, ".htpasswd": true,
		"secrets.yaml": true, "secrets.yml": true, "secrets.json": true, "kubeconfig.yaml": true,
		".env.example": false, ".env.sample": false, ".env.template": false, ".ENV.EXAMPLE": false,
		"secrets.yaml.example": false, "secrets.go": false, "secrets_manager.tf": false, "hosts.yml": false,
	} {
		if got := workspace.IsCredential(name); got != want {
			t.Errorf("IsCredential(%q) = %v, want %v", name, got, want)
		}
	}
	for p, want := range map[string]string{
		".ssh/id_rsa.pub": ".ssh", "deploy/.env": "deploy/.env", "a/b/c.txt": "", "keys/tls.key": "keys/tls.key",
		".config/gh/hosts.yml": ".config/gh/hosts.yml", "ansible/hosts.yml": "", "gh/hosts.yml": "gh/hosts.yml",
		"deploy/.env.example": "",
	} {
		if got := workspace.CredentialPath(p); got != want {
			t.Errorf("CredentialPath(%q) = %q, want %q", p, got, want)
		}
	}
}

// Host git runs without the environment's secrets, the configured key
// variable (named in no way a secret would be) included.
func TestGitIgnoredRunsWithoutSecrets(t *testing.T) {
	bin := t.TempDir()
	dump := filepath.Join(bin, "env.txt")
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\nenv > "+dump+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	t.Setenv("GROQ_KEY", "gsk-must-not-leak")
	t.Setenv("HARNESS_TEST_PLAIN", "kept")
	workspace.GitIgnored(t.Context(), t.TempDir(), []string{"GROQ_KEY"})
	env, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the git stand-in did not run: %v", err)
	}
	if strings.Contains(string(env), "must-not-leak") || !strings.Contains(string(env), "HARNESS_TEST_PLAIN=kept") {
		t.Errorf("host git's environment:\n%s", env)
	}
}
