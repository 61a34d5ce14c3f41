package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/harness-dev/harness/internal/version"
)

// printVersion writes the version line. A build that set the version
// (make build) is answered by internal/version before main runs; this
// serves the other builds, whose version and commit come from the
// module's build information (`go install …@v1.2.3`, a VCS checkout).
func printVersion(w io.Writer) {
	v, commit := version.Linked()
	if info, ok := debug.ReadBuildInfo(); ok && (v == "" || commit == "") {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		if commit == "" {
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
	}
	fmt.Fprintln(w, version.Line(v, commit))
}
