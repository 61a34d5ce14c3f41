package main

import (
	"cmp"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// initLine is one package's line of GODEBUG=inittrace=1: "init PKG @T ms,
// D ms clock, N bytes, M allocs".
var initLine = regexp.MustCompile(`(?m)^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, ([0-9]+) bytes, ([0-9]+) allocs$`)

// Init costs, in bytes allocated by the packages' initialization before
// main runs, whatever the command: every run pays them, and their pages
// stay resident (a one-answer `harness exec` runs no collection). Harness's
// own packages compile their regexps and build their tables when first
// used (sync.OnceValue), not at init; what they still allocate there is
// the event codec's registry and the tool table, which every command
// uses. The bounds are today's figures with a little room: a package
// that starts compiling a regexp at init (5–40 KB each) fails the first.
const (
	maxOwnInitBytes = 96 << 10 // 87 KB at the bound's writing
	maxInitBytes    = 950_000  // 844 KB, most of it the Docker client's image-reference regexps
)

// TestInitAllocations runs the built binary's cheapest full start (help)
// with GODEBUG=inittrace=1 and bounds what the packages' initialization
// allocated, Harness's own and in all.
func TestInitAllocations(t *testing.T) {
	cmd := exec.Command(harnessBin, "help")
	cmd.Env = []string{"GODEBUG=inittrace=1", "HOME=/nonexistent"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("harness help: %v\n%s", err, stderr.String())
	}
	type pkg struct {
		name          string
		bytes, allocs int
	}
	var pkgs []pkg
	own, all := 0, 0
	for _, m := range initLine.FindAllStringSubmatch(stderr.String(), -1) {
		b, _ := strconv.Atoi(m[2])
		a, _ := strconv.Atoi(m[3])
		pkgs = append(pkgs, pkg{m[1], b, a})
		all += b
		if strings.HasPrefix(m[1], "github.com/harness-dev/harness/") {
			own += b
		}
	}
	if !slices.ContainsFunc(pkgs, func(p pkg) bool { return p.name == "github.com/harness-dev/harness/internal/event" }) {
		t.Fatalf("GODEBUG=inittrace=1 listed no init of internal/event:\n%s", stderr.String())
	}
	slices.SortFunc(pkgs, func(a, b pkg) int { return cmp.Compare(b.bytes, a.bytes) })
	top := func(prefix string) string {
		var sb strings.Builder
		n := 0
		for _, p := range pkgs {
			if strings.HasPrefix(p.name, prefix) && n < 8 {
				fmt.Fprintf(&sb, "\n  %8d bytes %5d allocs  %s", p.bytes, p.allocs, p.name)
				n++
			}
		}
		return sb.String()
	}
	t.Logf("init allocations: %d bytes in all, %d by Harness's packages", all, own)
	if own > maxOwnInitBytes {
		t.Errorf("Harness's packages allocate %d bytes at init, want at most %d (make the new table or regexp lazy):%s",
			own, maxOwnInitBytes, top("github.com/harness-dev/harness/"))
	}
	if all > maxInitBytes {
		t.Errorf("the packages allocate %d bytes at init, want at most %d:%s", all, maxInitBytes, top(""))
	}
}
