// Package workspace defines the workspace port the tools act on, the path
// rules every backend shares, and the read-only local workspace.
//
// Two backends exist: the local workspace in this package (read-only, on
// os.Root, so symlinks, ".." and a directory swapped under it cannot escape
// the project root) and the Docker workspace in dockerws (a copy of the
// project inside a locked-down container). Mutations (WriteFile, Exec) are
// allowed only on a workspace for which Attested reports true; the tools
// check that before any effect, and the local workspace refuses them itself.
//
// Both backends leave out the same paths, by the rules of this package:
// credential-like names (IsCredential) — the Docker copy-in refuses them
// until excluded, the local workspace never reads or lists them —, the
// --exclude patterns (CompileExcludes) and what the project's git ignores
// (GitIgnored). Host processes (git) run with HostEnv, without secrets.
//
// Codes returned: WORKSPACE_PATH (a path breaking the rules of CheckPath),
// WORKSPACE_SCOPE (a path resolving outside the root), WORKSPACE_NOT_FOUND,
// WORKSPACE_CREDENTIAL_INPUT, WORKSPACE_LIMIT, WORKSPACE_ISOLATION_REQUIRED,
// WORKSPACE_DISPOSED, WORKSPACE_BUSY and, from dockerws,
// WORKSPACE_CONTAINER_FAILED.
package workspace

import (
	"context"
	"errors"
	"time"

	"github.com/harness-dev/harness/internal/attest"
)

// Backend names, as recorded in workspace.lifecycle.
const (
	BackendLocal  = "local"
	BackendDocker = "docker"
)

// ErrOpenFailed is wrapped by the error of every call on a workspace
// whose open failed after it was returned (the Docker workspace opens in
// the background): the code says why (a credential-like file, a limit, a
// patch that no longer applies), and it is about the workspace, not about
// the path or command the call named.
var ErrOpenFailed = errors.New("the workspace could not be opened")

// Workspace is what the tools act on. Paths are relative, slash-separated
// and checked with CheckPath by every implementation.
type Workspace interface {
	// Info describes the workspace for events and the status line.
	Info() Info
	// ReadFile returns a file's bytes.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// List returns the sorted, slash-separated paths of the regular files
	// under path ("." for the whole tree), relative to the workspace root.
	List(ctx context.Context, path string) ([]string, error)
	// WriteFile creates or replaces a file, creating parent directories.
	WriteFile(ctx context.Context, path string, data []byte) error
	// Exec runs argv without a shell inside the workspace.
	Exec(ctx context.Context, req ExecRequest) (ExecResult, error)
	// Diff returns a unified patch of the workspace against its initial
	// snapshot that applies with `git apply` to the original tree.
	Diff(ctx context.Context) (string, error)
	// Close disposes of the workspace; later calls fail with WORKSPACE_DISPOSED.
	Close(ctx context.Context) error
}

// Info describes a workspace.
type Info struct {
	ID      string    `json:"workspaceId"`
	Backend string    `json:"backend"`
	Image   string    `json:"image,omitempty"`   // the name the user gave
	ImageID string    `json:"imageId,omitempty"` // the immutable ID it resolved to
	Root    string    `json:"root"`              // host directory the copy came from
	Files   int       `json:"files"`             // files copied in (docker) or 0
	Skipped []Skipped `json:"skipped,omitempty"` // what copy-in left out, and why
	Mounts  []Mount   `json:"mounts,omitempty"`  // what of the host the sandbox sees besides the copy
	// Storage is where a Docker workspace keeps its files once it is
	// open: StorageDisk or StorageTmpfs; "" before, and for a local one.
	Storage string `json:"storage,omitempty"`
}

// Storage of a Docker workspace's /workspace and $HOME: the container's
// own writable layer with a size quota, or tmpfs volumes in host memory.
const (
	StorageDisk  = "disk"
	StorageTmpfs = "tmpfs"
)

// Mount is a host file or directory a sandbox sees: a toolchain, a
// dependency cache, the project's ignored dependency folder (read-only),
// or the project's build cache volume (Source names the volume).
type Mount struct {
	What     string `json:"what"`
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly"`
}

// Skipped is one path the copy-in left out.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"` // symlink, special, binary, non-utf8, excluded, gitignored, limit, name
}

// ExecRequest is one process to run.
type ExecRequest struct {
	Argv      []string
	Cwd       string        // relative to the workspace root; "" is the root
	Timeout   time.Duration // 0 means the default of 30 s
	MaxOutput int           // cap per stream in bytes (its start and end are kept); 0 means the default of 64 KiB
	// OnOutput, when set, receives the output as it comes: stream is
	// "stdout" or "stderr", p is only valid during the call (copy it) and
	// the call must not block. The result still carries the whole
	// (capped) output.
	OnOutput func(stream string, p []byte)
}

// ExecResult is what a process did. A non-zero exit is a result, not an error.
type ExecResult struct {
	ExitCode        int    `json:"exitCode"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	TimedOut        bool   `json:"timedOut,omitempty"`
	StdoutTruncated bool   `json:"stdoutTruncated,omitempty"`
	StderrTruncated bool   `json:"stderrTruncated,omitempty"`
	// Note says what the workspace saw of the run that the output may not
	// (the Docker workspace: the command reached its pids limit).
	Note string `json:"note,omitempty"`
}

// Attested reports whether ws is a Docker workspace built by the dockerws
// constructor and not yet disposed. Wrappers, embedding types and look-alikes
// are never attested: the registry is keyed by the exact value the
// constructor returned.
func Attested(ws Workspace) bool { return attest.Is(ws) }
