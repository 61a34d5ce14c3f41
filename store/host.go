package store

import (
	"os"
	"strings"
)

// machineIDFiles hold the machine's ID (systemd, then D-Bus), 32 hex
// digits chosen once when the system was installed.
var machineIDFiles = []string{"/etc/machine-id", "/var/lib/dbus/machine-id"}

// HostID names this machine in leases (Owner.Host): its host name and the
// first 12 digits of its machine ID, as "devbox/4f2a9c01b2d3". Stores take
// a holder recorded under this name whose process is gone as dead, and
// wait out a holder under any other name until its lease expires, so the
// name must differ between machines sharing a database: the machine ID
// tells apart machines that share a host name, the host name containers
// that share an image's machine ID. Without a machine ID it is the host
// name alone; without either, "localhost". A deployment where both are
// cloned sets its own name (harness --host-id).
func HostID() string {
	name, err := os.Hostname()
	if err != nil {
		name = ""
	}
	var id []byte
	for _, f := range machineIDFiles {
		if b, err := os.ReadFile(f); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			id = b
			break
		}
	}
	return hostID(name, id)
}

// hostID is HostID from a host name and the contents of a machine-id file.
func hostID(name string, machineID []byte) string {
	if name == "" {
		name = "localhost"
	}
	id := strings.TrimSpace(string(machineID))
	for _, r := range id {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return name // not a machine ID
		}
	}
	if len(id) > 12 {
		id = id[:12]
	}
	if id == "" {
		return name
	}
	return name + "/" + strings.ToLower(id)
}
