package tools

import (
	"strings"
	"testing"
)

// A write's patch is kept up to MaxPatchBytes, that size included; a
// larger one is left out, its line counts kept.
func TestWritePatchBoundIsInclusive(t *testing.T) {
	lines := strings.Repeat(strings.Repeat("w", 99)+"\n", 2000)
	p, _ := writePatch("f.txt", nil, false, lines+"x\n")
	contents := lines + strings.Repeat("x", 1+MaxPatchBytes-len(p)) + "\n" // the same lines, the last longer
	p, n := writePatch("f.txt", nil, false, contents)
	if len(p) != MaxPatchBytes || n == nil || n.Added != 2001 {
		t.Fatalf("patch of %d bytes (want exactly %d), counts %+v", len(p), MaxPatchBytes, n)
	}
	p, n = writePatch("f.txt", nil, false, "x"+contents)
	if p != "" || n == nil || n.Added != 2001 {
		t.Fatalf("a patch over the bound: %d bytes kept, counts %+v", len(p), n)
	}
}
