package store

import (
	"os"
	"strings"
	"testing"
)

func TestHostID(t *testing.T) {
	for _, tc := range []struct {
		name, machineID, want string
	}{
		{"devbox", "4f2a9c01b2d34e5f8a6b7c8d9e0f1a2b\n", "devbox/4f2a9c01b2d3"},
		{"devbox", "4F2A9C01B2D34E5F8A6B7C8D9E0F1A2B", "devbox/4f2a9c01b2d3"},
		{"devbox", "", "devbox"},
		{"devbox", "   \n", "devbox"},
		{"devbox", "uninitialized\n", "devbox"},
		{"", "4f2a9c01b2d34e5f8a6b7c8d9e0f1a2b", "localhost/4f2a9c01b2d3"},
		{"", "", "localhost"},
	} {
		if got := hostID(tc.name, []byte(tc.machineID)); got != tc.want {
			t.Errorf("hostID(%q, %q) = %q, want %q", tc.name, tc.machineID, got, tc.want)
		}
	}
}

// On this machine HostID is stable, starts with the host name, and carries
// the machine ID when the system has one.
func TestHostIDOfThisMachine(t *testing.T) {
	id := HostID()
	if id != HostID() {
		t.Fatal("HostID changed between two calls")
	}
	name, _ := os.Hostname()
	if name != "" && !strings.HasPrefix(id, name) {
		t.Fatalf("HostID %q does not start with the host name %q", id, name)
	}
	if b, err := os.ReadFile("/etc/machine-id"); err == nil && len(strings.TrimSpace(string(b))) >= 12 {
		if want := strings.ToLower(strings.TrimSpace(string(b))[:12]); !strings.HasSuffix(id, "/"+want) {
			t.Fatalf("HostID %q does not carry the machine ID %s…", id, want)
		}
	}
}
