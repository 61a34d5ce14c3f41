#!/usr/bin/env bash
# scripts/docker.sh: make sure a Docker daemon answers. Idempotent.
#
#   - a daemon already answers (DOCKER_HOST or the default socket): do nothing;
#   - as root, install btrfs-progs when mkfs.btrfs is missing (best effort:
#     the tests that run a second daemon on btrfs skip without it);
#   - otherwise, as root: install Debian's docker.io when dockerd is missing,
#     start `dockerd --iptables=false --ip6tables=false --bridge=none` detached
#     from this shell (setsid + nohup), logging to $HARNESS_DOCKERD_LOG, first
#     with the overlay2 storage driver and, if that daemon dies, with vfs;
#     then wait (bounded by $HARNESS_DOCKERD_WAIT seconds) until it answers;
#   - otherwise (not root, or DOCKER_HOST names a remote daemon): fail with a
#     message saying what to do.
#
# Harness containers need no network and no bridge: every workspace runs
# with network "none", so the daemon is started without iptables rules.
#
# Environment:
#   HARNESS_DOCKERD_LOG   daemon log file   (default /var/log/harness-dockerd.log)
#   HARNESS_DOCKERD_WAIT  seconds to wait   (default 30)
#   HARNESS_DOCKERD_DRIVER force a storage driver (overlay2 or vfs)
set -euo pipefail

log() { printf 'docker.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

LOG_FILE=${HARNESS_DOCKERD_LOG:-/var/log/harness-dockerd.log}
WAIT_SECONDS=${HARNESS_DOCKERD_WAIT:-30}

answers() {
	command -v docker >/dev/null 2>&1 || return 1
	docker info --format '{{.ServerVersion}}' >/dev/null 2>&1
}

describe() {
	docker info --format 'server {{.ServerVersion}}, storage driver {{.Driver}}, root {{.DockerRootDir}}' 2>/dev/null
}

# btrfs-progs (mkfs.btrfs) lets the tests start a second daemon on a
# loop-mounted btrfs, whose storage gives a workspace a disk quota. Best
# effort, as root with apt-get: without it those tests skip.
if [ "$(id -u)" -eq 0 ] && ! command -v mkfs.btrfs >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	log "installing btrfs-progs (mkfs.btrfs, for the disk-storage tests)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends btrfs-progs >/dev/null 2>&1 ||
		{ apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends btrfs-progs >/dev/null 2>&1; } ||
		log "could not install btrfs-progs; the btrfs-backed tests will skip"
fi

if answers; then
	log "a Docker daemon already answers ($(describe)); nothing to do"
	exit 0
fi

case ${DOCKER_HOST:-} in
"" | unix:///var/run/docker.sock | unix:///run/docker.sock) ;;
*) die "DOCKER_HOST=$DOCKER_HOST does not answer; start that daemon, or unset DOCKER_HOST to use a local one" ;;
esac

if [ "$(id -u)" -ne 0 ]; then
	die "no Docker daemon answers and this script is not running as root; start Docker (e.g. 'sudo scripts/docker.sh') or join the docker group"
fi

if ! command -v dockerd >/dev/null 2>&1; then
	log "dockerd not found; installing Debian's docker.io"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends docker.io >/dev/null; then
		apt-get update >/dev/null || die "apt-get update failed"
		apt-get install -y --no-install-recommends docker.io >/dev/null ||
			die "apt-get install docker.io failed"
	fi
	log "installed docker.io ($(dpkg-query -W -f '${Version}' docker.io 2>/dev/null || echo unknown))"
fi
command -v docker >/dev/null 2>&1 || die "the docker command is missing; install docker.io"

# A stale pid file from a crashed daemon stops a new one from starting.
PID_FILE=/var/run/docker.pid
if [ -f "$PID_FILE" ] && ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
	log "removing stale $PID_FILE"
	rm -f "$PID_FILE"
fi
if [ -f "$PID_FILE" ]; then
	die "dockerd (pid $(cat "$PID_FILE")) is running but does not answer; see $LOG_FILE"
fi

mkdir -p "$(dirname "$LOG_FILE")"

# start_daemon DRIVER: start dockerd in the background and wait until it
# answers; returns non-zero when the daemon exits or the wait runs out.
start_daemon() {
	local driver=$1 pid deadline
	log "starting dockerd (storage driver $driver, log $LOG_FILE)"
	printf '\n=== %s: dockerd --storage-driver=%s ===\n' "$(date -u +%FT%TZ)" "$driver" >>"$LOG_FILE"
	setsid nohup dockerd --iptables=false --ip6tables=false --bridge=none \
		--storage-driver="$driver" </dev/null >>"$LOG_FILE" 2>&1 &
	pid=$!
	deadline=$((SECONDS + WAIT_SECONDS))
	while [ "$SECONDS" -lt "$deadline" ]; do
		if answers; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			log "dockerd with $driver exited; last log lines:"
			tail -n 5 "$LOG_FILE" >&2 || true
			return 1
		fi
		sleep 0.1
	done
	log "dockerd with $driver did not answer within ${WAIT_SECONDS}s; stopping it"
	kill "$pid" 2>/dev/null || true
	return 1
}

started=$SECONDS
if [ -n "${HARNESS_DOCKERD_DRIVER:-}" ]; then
	start_daemon "$HARNESS_DOCKERD_DRIVER" || die "dockerd did not start; see $LOG_FILE"
elif ! start_daemon overlay2; then
	rm -f "$PID_FILE"
	start_daemon vfs || die "dockerd started with neither overlay2 nor vfs; see $LOG_FILE"
fi
log "dockerd answers after $((SECONDS - started))s ($(describe))"
