package workspace

import "strings"

// credentialNames are base names that look like secrets (DESIGN §6, and
// the ones adversarial runs found); a backup of one (".npmrc.bak",
// "id_rsa.orig", ".netrc~") counts too.
var credentialNames = []string{
	".env", ".npmrc", ".netrc", "_netrc", ".ssh", ".aws", ".docker", ".kube",
	".git-credentials", ".pgpass", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519",
}

// IsCredential reports whether a base name looks like a secret: a name
// above or a backup of one, ".env.*", "credentials*", or a private key
// ("*.pem", "*.key"). Public keys ("id_rsa.pub") are not secrets. Both
// workspaces use it: the Docker copy-in refuses such a path, the local
// workspace never reads or lists one.
func IsCredential(name string) bool {
	n := strings.ToLower(name)
	if strings.HasPrefix(n, ".env.") || strings.HasPrefix(n, "credentials") ||
		strings.HasSuffix(n, ".pem") || strings.HasSuffix(n, ".key") {
		return true
	}
	for _, c := range credentialNames {
		if n == c || n == c+"~" || (strings.HasPrefix(n, c+".") && !strings.HasSuffix(n, ".pub")) {
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
		if IsCredential(seg) {
			return p[:end]
		}
		end++ // the slash
	}
	return ""
}
