package workspace

import (
	"path"
	"strings"
)

// credentialNames are base names that look like secrets (DESIGN §6, and
// the ones adversarial runs found); a backup of one (".npmrc.bak",
// "id_rsa.orig", ".netrc~") counts too.
var credentialNames = []string{
	".env", ".npmrc", ".netrc", "_netrc", ".ssh", ".aws", ".docker", ".kube",
	".git-credentials", ".pgpass", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519",
	".pypirc", ".vault-token", ".htpasswd", "kubeconfig", "terraform.tfstate",
	"service-account.json", "service_account.json",
}

// templateExts end the names of templates of a credential file
// (".env.example", "secrets.yaml.sample"): they hold placeholders, a
// project documents its settings with them, and they are copied in.
var templateExts = map[string]bool{".example": true, ".sample": true, ".template": true, ".dist": true}

// credentialPaths are paths that hold a secret although their base name is
// common: the GitHub CLI's token file.
var credentialPaths = []string{"gh/hosts.yml", "gh/hosts.yaml"}

// sourceExts are extensions of program source and prose: a
// "credentials.go" or "credentials_test.py" is code that handles secrets,
// not a secret, and refusing it would refuse most real repositories
// (this one has workspace/credentials.go). Data files ("credentials.json",
// ".yml", ".xml", ".csv", ".toml", ".enc", none) and shell scripts, which
// often export secrets, stay refused.
var sourceExts = map[string]bool{
	".go": true, ".py": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".tsx": true,
	".jsx": true, ".rs": true, ".java": true, ".kt": true, ".rb": true, ".c": true, ".h": true,
	".cc": true, ".cpp": true, ".hpp": true, ".cs": true, ".swift": true, ".php": true,
	".scala": true, ".ex": true, ".exs": true, ".dart": true, ".lua": true, ".vue": true,
	".svelte": true, ".md": true, ".rst": true, ".adoc": true,
}

// IsCredential reports whether a base name looks like a secret: a name
// above or a backup of one, ".env.*", "credentials*" and "secrets.*" other
// than source code ("credentials.go" is not a secret), Terraform state
// ("*.tfstate"), or a private key ("*.pem", "*.key"). Public keys
// ("id_rsa.pub") and templates (".env.example") are not secrets. Both workspaces
// use it: the Docker copy-in refuses such a path, the local workspace
// never reads or lists one.
func IsCredential(name string) bool {
	n := strings.ToLower(name)
	if templateExts[path.Ext(n)] {
		return false
	}
	if strings.HasPrefix(n, ".env.") || strings.HasSuffix(n, ".pem") || strings.HasSuffix(n, ".key") ||
		strings.HasSuffix(n, ".tfstate") || strings.HasSuffix(n, ".tfstate.backup") {
		return true
	}
	if strings.HasPrefix(n, "credentials") || n == "secrets" || strings.HasPrefix(n, "secrets.") {
		return !sourceExts[path.Ext(n)]
	}
	for _, c := range credentialNames {
		if n == c || n == c+"~" || (strings.HasPrefix(n, c+".") && !strings.HasSuffix(n, ".pub")) {
			return true
		}
	}
	return false
}

// IsCredentialAt reports whether the slash path p names a secret by its
// base name (IsCredential) or as a whole (".config/gh/hosts.yml").
func IsCredentialAt(p string) bool {
	if IsCredential(path.Base(p)) {
		return true
	}
	l := strings.ToLower(p)
	for _, c := range credentialPaths {
		if l == c || strings.HasSuffix(l, "/"+c) {
			return true
		}
	}
	return false
}

// CredentialPath returns the leading part of the slash path p that ends in
// a credential-like name (".ssh" for ".ssh/id_rsa.pub"), or "" when no
// segment of p is one.
func CredentialPath(p string) string {
	end := 0
	for seg := range strings.SplitSeq(p, "/") {
		end += len(seg)
		if IsCredentialAt(p[:end]) {
			return p[:end]
		}
		end++ // the slash
	}
	return ""
}
