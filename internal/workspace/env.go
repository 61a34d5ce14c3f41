package workspace

import (
	"os"
	"strings"
)

// HostEnv is the environment for the host processes Harness starts (git):
// this process's own, less every variable that may hold a secret — an API
// key, token, password or secret by its name (OPENAI_API_KEY,
// GITHUB_TOKEN, PGPASSWORD…), any OPENAI_* variable, and the names given
// (a configured key variable) — plus extra.
func HostEnv(secretNames []string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !secretName(name, secretNames) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

func secretName(name string, also []string) bool {
	for _, n := range also {
		if n != "" && name == n {
			return true
		}
	}
	u := strings.ToUpper(name)
	if strings.HasPrefix(u, "OPENAI_") {
		return true
	}
	for _, w := range []string{"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// HasOtherLinks reports whether the regular file fi describes has more
// than one hard link: another name, possibly outside the project, shares
// its content, so Harness neither copies nor reads it.
func HasOtherLinks(fi os.FileInfo) bool {
	n, ok := linkCount(fi)
	return ok && n > 1 && fi.Mode().IsRegular()
}
