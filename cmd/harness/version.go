package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the release this binary was built as, set by the build:
// go build -ldflags "-X main.version=v1.2.3" (make build sets it from git
// describe). Unset, the module version of `go install …@v1.2.3` is used,
// else "devel".
var version string

// printVersion writes one line: the version, the commit it was built from
// (with "+dirty" when the tree had changes) and the Go toolchain and
// platform, e.g. "harness v0.3.0 (commit 1a2b3c4d5e6f, go1.26.8 linux/amd64)".
func printVersion(w io.Writer) {
	v, commit := version, ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if commit != "" && dirty {
			commit += "+dirty"
		}
	}
	if v == "" {
		v = "devel"
	}
	built := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if commit != "" {
		built = "commit " + commit + ", " + built
	}
	fmt.Fprintf(w, "harness %s (%s)\n", v, built)
}
