// Package dockerws is the isolated workspace: a copy of the project inside
// one long-lived, locked-down Docker container, reached through the Docker
// Engine Go client (github.com/moby/moby/client, API 1.40 or later, so
// Debian's docker.io 20.10 works). It owns the copy-in, the container's
// life, process execution, the patch of what changed, the rebuild of a
// workspace from a patch, the removal of leftovers, and attestation: Start
// (and Open, which is Start waiting for the open to finish) are the only
// constructors; each registers the value it returns with
// internal/attest and Close revokes it, so a wrapper, an embedding type or a
// look-alike is never attested.
//
// # Opening in the background
//
// Start returns as soon as what costs the same for any project is checked
// (the exclude patterns, the root, the syntax of a patch to replay, the
// image); a turn that never touches the workspace never waits for the rest,
// whatever the project's size. In the background (at once, or from Begin
// for Options.Defer) the scan reads the tree, crash leftovers being reaped
// alongside; the patch to replay (Options.Patch) is applied in memory;
// then, once the scan has accepted the tree — no container is ever made
// for a refused one, and none competes for the machine with a turn that
// ends before the scan does — the container is created and started and
// the tree streamed in. A call waits only for what it needs: reads and
// listings of a workspace nothing was written, run or patched in yet
// answer from the scanned tree (which is what the container holds), the
// untouched Diff answers at once, writes, commands and patches wait for
// the container. A tree refused in the background (a credential-like
// path, a limit, an unreadable file, a replay that no longer applies) or a
// container that fails fails every later call with the open's code,
// marked workspace.ErrOpenFailed; Scanned, Opened and OpenError let the
// caller report it as soon as it is known. The host keeps the tree as
// copied in once (Diff needs it), so its memory grows with the project's
// text, bounded by MaxTotalBytes; the stream to the container adds one
// buffer (256 KiB).
//
// # Copy-in
//
// The scan reads the project through an os.Root (nothing outside it is
// opened), and the tar stream goes into `tar -x` running in the container
// as the sandbox user: no mount, no host path in the container. .git (any
// letter case, any depth) is skipped silently. Credential-like names (.env,
// .env.*, .npmrc, .netrc, _netrc, .ssh, .aws, .docker, .kube,
// .git-credentials, .pgpass, credentials* except source code such as
// credentials.go, id_rsa, id_dsa, id_ecdsa,
// id_ed25519, a backup of any of them such as .npmrc.bak, and private keys
// *.pem, *.key) are never read and fail the open with
// WORKSPACE_CREDENTIAL_INPUT naming them, unless Options.Exclude covers
// them. The host git that lists
// ignored paths runs without the environment's secrets (workspace.HostEnv).
// Left out and reported in Info().Skipped: symlinks, special files, files
// with other hard links ("hardlink": the other name may lie outside the
// project; ReadFile of one is WORKSPACE_SCOPE, as in the local workspace),
// binary (a NUL byte) and non-UTF-8 files, excluded paths, files over
// MaxFileBytes ("limit"), and names no tool could send back ("name").
// More than MaxFiles text files or MaxTotalBytes of text fail with
// WORKSPACE_LIMIT. Defaults: 20,000 files, 2 MiB per file, 128 MiB in all.
// Exclude patterns are gitignore-like: a name without a slash matches at
// any depth, one with a slash from the root, a trailing slash only
// directories; *, ?, [...] within a segment and ** across segments. The
// project's .gitignore is not read. Snapshot() hashes the copied tree.
//
// # Container
//
// One container per workspace, created from the image's immutable ID
// (resolved at Open and reported in Info; nothing is ever pulled — a
// missing image is WORKSPACE_NOT_FOUND saying how to build harness-sandbox):
// network "none", processes run as 65534:65534 unless the image names a
// non-root user, all capabilities dropped, no-new-privileges, pids (512),
// memory (2 GiB, no swap) and CPU limits (every core, so builds run at the
// host's speed, at a quarter of a host process's CPU weight, so the host is
// served first). The container's main process
// is a reaper: a root sh whose only capability is CAP_KILL (the sandbox
// user cannot signal it), which sleeps and, on SIGUSR1, kills every other
// process in the container. Docker's init is PID 1
// so orphans are reaped. The workspace (/workspace) and $HOME
// (/home/harness, with TMPDIR under it, so caches stay out of the patch)
// are stored one of two ways, chosen per daemon (Storage, asked once per
// process alongside the scan):
//
//   - disk, where the daemon's storage gives a container's layer a size
//     quota (btrfs, zfs, overlay2 on xfs mounted with pquota): both are
//     directories of the container's own writable layer, whose
//     --storage-opt size is 2×MaxWorkspaceBytes (plus the image on btrfs,
//     which counts it); a write beyond it fails in the container (ENOSPC,
//     or EDQUOT on btrfs). The root file system is then writable, which
//     the sandbox user, with no capability, can use only where the image
//     lets any user write. A create refused for the quota falls back to
//     tmpfs, for the rest of the process;
//   - tmpfs, on any other daemon: a read-only root file system with two
//     anonymous volumes, each a tmpfs of the local driver sized
//     MaxWorkspaceBytes (2 GiB), so the host's disk is never written. Those
//     files live in memory: the container's memory limit is MemoryBytes
//     plus both quotas plus /tmp.
//
// Both ways, the two directories are world-writable and sticky, and a
// 64 MiB tmpfs is on /tmp; no host mounts. The environment is the image's own
// plus HOME, TMPDIR, TERM=dumb and PYTHONDONTWRITEBYTECODE=1; nothing comes
// from the host. Container and volumes carry labels naming the workspace,
// the session and the owning process; Close removes them, Abandon (for a
// process about to exit) hands their removal to the daemon without waiting
// for it, and Open (and Reap, which harness doctor runs) remove those whose
// owner process is gone.
//
// # Warm spares
//
// With Options.Spare the open claims, instead of creating a container, a
// started, empty one of the same host user made with exactly the
// configuration it would create (a hash of it is the spare's label), and
// a used workspace makes the next one in the background: see spare.go for
// the claim (a rename only one process wins), the owner record of a
// claimed spare, and the idle deadline after which Reap removes a spare.
//
// # The workspace's life
//
// A workspace is opening (reading the tree, making the container),
// copying (the tree going in; no command rides the copy-in any more),
// ready, kept (ready, and set aside by Keep), lost (its container stopped
// or went away: a Docker daemon restart stops every container), failed
// (the open failed) or closed. What each call and each step of the open
// does in each of them is decided in one place, decideLife
// (lifecycle.go), a pure function held to a table test; Phase reports
// where a workspace stands. Lost is sticky: once Lost has seen the
// container gone, every operation that needs it fails at once with that
// error, and Close leaves a container Keep set aside before.
//
// # Kept containers
//
// Keep sets a workspace's container aside (KeptPrefix…) when its work
// cannot be turned into a patch (an end-of-turn diff over the cap): Close
// and Reap leave it. ListKept lists them, Adopt opens one again as a
// workspace on the project it was copied from (checked against the
// snapshot the session recorded), whose first Diff reads every file again
// within the new limits (MaxPatchBytes bounds what a session can record),
// and RemoveKept removes one for good.
//
// The image needs a POSIX sh and busybox or coreutils, findutils and an
// awk (tar, stat printing nanosecond change times, find, sleep): busybox-
// and Debian-based images (harness-busybox, harness-sandbox, golang:1.26)
// qualify; distroless images do not: a missing tool fails Open with
// WORKSPACE_CONTAINER_FAILED.
//
// # Processes
//
// Exec runs argv through a fixed sh wrapper that never interprets it: the
// wrapper changes to the working directory (refusing one that resolves
// outside the workspace), reports its PID on stderr — stripped before the
// caller sees it — and runs argv as "$@" in a subshell that execs it. No
// process outlives its command: when argv ends, the wrapper kills every
// other process of the sandbox user (setsid and nohup children included)
// with the kill builtin, looping until none is left, so a fork bomb ends
// too. On timeout or cancellation, or when the wrapper itself was killed,
// a second exec does the same sweep and the hijacked stream is closed; a
// timed-out result says timedOut with exit code 124. When no exec can start
// because the command took every PID, the reaper is signaled (a signal
// needs no new process) and the sweep retried (the container is never
// restarted: its file systems live in memory; the reaper itself never needs
// a new process to survive it). A wrapper that could not start for lack of
// PIDs is WORKSPACE_LIMIT, saying so; a command during which the pids
// limit refused forks gets a result whose Note names the limit (the
// wrapper compares the cgroup's count of refused forks before and after,
// with builtins only, and tells the host in a trailer of its stderr,
// which the host takes off). The exit code comes from
// exec inspect after the stream ends. Stdout and stderr are captured
// separately, each capped (64 KiB unless ExecRequest.MaxOutput says
// otherwise) to its first quarter and its end, with a line between saying
// how many bytes were left out there; the rest is drained and the stream
// flagged as truncated.
//
// # Background jobs
//
// StartJob runs argv the same way but returns once it has started
// (workspace.Jobs, jobs.go): the job is its wrapper's session, which the
// sweep of every later command spares (the command's wrapper gets the
// running jobs' session IDs) while it kills everything else. A job's
// output (stdout and stderr as one log) goes into a ring of
// workspace.JobLogBytes in this process, its tail kept; at most
// Options.MaxJobs run at once (WORKSPACE_LIMIT). A job ends when its
// program exits (its wrapper then kills what is left of its session),
// when StopJob kills its session (SIGTERM, SIGKILL after 3 s), when
// EndJobs or Close ends the session, or when the container goes; it is
// never restarted, and WatchJobs hears how it ended (exit code, reason,
// last lines).
//
// # Diff
//
// Diff is computed in Go (go-udiff) from the tree as copied in to the tree
// now, processes' changes included, as a git-style patch that `git apply`
// accepts on the original tree: "diff --git" headers, new/deleted file
// modes and mode changes of the owner's execute bit. It does not copy the
// tree out each time: the host keeps the last seen tree, and one exec lists
// every file with its change time (which an unprivileged process cannot
// forge) and tars only those changed since the previous look; see diff.go.
// Binary, non-UTF-8 and oversized files go in git's binary patch format
// (oversized ones while they fit the cap and the patch bound); symlinks,
// .git and excluded paths are not in the patch, and what changed but
// cannot be carried (a name no tool can use, a file the sandbox user
// cannot read, an oversized file with no room left) is named in the
// note the patch starts with (workspace.LeftOut). After fs.write alone,
// only the files written are read again. The host holds at most twice MaxTotalBytes of text
// (and one file more): the listing's sizes fail a tree that would pass it
// with WORKSPACE_LIMIT before any content is copied out, and what is copied
// out is counted as it arrives. ApplyPatch applies such a patch
// (go-gitdiff, in Go, all or nothing); a resumed workspace replays its
// patch while it opens (Options.Patch), in memory, before the copy-in.
//
// # Ordering
//
// WriteFile, Exec, Diff, ApplyPatch and List (a command's clean-up would
// kill a listing) run one at a time per workspace (a later call waits, or
// gives up when its ctx ends); ReadFile does not wait for them, nor does
// List of an untouched workspace. Close may be called at any time: calls in
// flight and every later call end with WORKSPACE_DISPOSED. Info, Snapshot,
// ContainerID and User never fail (Info's Files and Skipped, and Snapshot,
// are known once the tree is scanned).
//
// # Codes
//
// WORKSPACE_NOT_FOUND (project root, image, file or directory missing),
// WORKSPACE_CREDENTIAL_INPUT, WORKSPACE_LIMIT, WORKSPACE_PATH,
// WORKSPACE_SCOPE (a symlink leading out of the workspace or into .git),
// WORKSPACE_CONTAINER_FAILED (daemon unreachable, container gone or
// misbehaving; every Docker error is translated once, in errors.go),
// WORKSPACE_DISPOSED, WORKSPACE_PERMISSION (a file or directory the
// sandbox user may not read or write), TOOL_BAD_INPUT (empty argv, NUL
// byte, unparsable patch, a binary file without its content),
// TOOL_EXECUTION_FAILED (a write the container refused, a
// patch that does not apply) and TOOL_CANCELED (ctx ended; wraps the
// cause). A non-zero exit status is a result, never an error.
package dockerws
