// Package attest holds the registry of isolated workspaces.
//
// Only dockerws registers values, from its constructor, and revokes them on
// dispose; workspace.Attested reads the registry. The registry is keyed by
// the interface value itself (dynamic type and pointer), so a wrapper, a
// type that embeds a registered workspace, or a copy is never attested.
// The dependency test in the module root pins the importers of this package
// to dockerws and workspace.
package attest

import (
	"reflect"
	"sync"
)

var (
	mu  sync.RWMutex
	set = map[any]struct{}{} // guarded by mu
)

// Register marks v, which must be a pointer, as an isolated workspace.
func Register(v any) {
	mu.Lock()
	set[v] = struct{}{}
	mu.Unlock()
}

// Revoke removes v from the registry.
func Revoke(v any) {
	mu.Lock()
	delete(set, v)
	mu.Unlock()
}

// Is reports whether v itself was registered and not revoked.
func Is(v any) bool {
	if v == nil || !reflect.ValueOf(v).Comparable() {
		// A value that cannot be a map key was never registered.
		return false
	}
	mu.RLock()
	defer mu.RUnlock()
	_, ok := set[v]
	return ok
}
