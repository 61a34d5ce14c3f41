// Package version names the build of harness and answers `harness
// --version` before the rest of the program starts.
//
// A Go program runs the init of every package it links before main, and
// harness links some whose init is slow (the Docker client's image
// reference regexps, the provider SDK's tables, the SQLite library): about
// 15–30 ms together, while printing a line takes a few. Go initializes a
// package as soon as everything it imports is initialized (among those
// ready, in import-path order), so this package imports nothing but os and
// runtime: it is initialized among the first, and its init answers the
// command line `harness --version` (or -version, or version) and exits
// there. Any other command line goes on to main untouched.
//
// The answer needs the version and commit the build set:
//
//	go build -ldflags "-X github.com/harness-dev/harness/internal/version.version=v1.2.3
//	  -X github.com/harness-dev/harness/internal/version.commit=1a2b3c4d5e6f"
//
// (make build sets both from git). A build without them (go install, go
// build) is answered by main instead, from the module's build information.
package version

import (
	"os"
	"runtime"
)

// Set by the linker (see the package doc).
var version, commit string

func init() {
	if version == "" || len(os.Args) != 2 || !IsFlag(os.Args[1]) {
		return
	}
	if _, err := os.Stdout.WriteString(Line(version, commit) + "\n"); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// IsFlag reports whether arg asks for the version.
func IsFlag(arg string) bool {
	return arg == "--version" || arg == "-version" || arg == "version"
}

// Linked returns the version and commit the linker set ("" when unset).
func Linked() (v, c string) { return version, commit }

// Line is the one-line answer: the version, the commit it was built from
// (with "+dirty" when the tree had changes) and the Go toolchain and
// platform, e.g. "harness v0.3.0 (commit 1a2b3c4d5e6f, go1.26.8
// linux/amd64)". An empty version reads "devel".
func Line(v, c string) string {
	if v == "" {
		v = "devel"
	}
	built := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if c != "" {
		built = "commit " + c + ", " + built
	}
	return "harness " + v + " (" + built + ")"
}
