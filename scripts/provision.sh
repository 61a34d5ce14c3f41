#!/usr/bin/env bash
# Provisions what the tests and the TUI need, as far as this machine allows:
# the command-line tools the tests drive (sqlite3, tmux, git), a Docker daemon
# and the sandbox images, and a Postgres server with a test database.
#
# Usage: scripts/provision.sh [test|run|bench]
# Each step is idempotent. A step that cannot be done is reported loudly; it
# is fatal only when the matching HARNESS_REQUIRE_* variable is 1 (as in CI).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-test}
failed=0

say()  { printf '\033[1m[provision]\033[0m %s\n' "$*"; }
loud() { printf '\033[1;33m[provision] WARNING:\033[0m %s\n' "$*" >&2; }

# On a fresh machine the package lists may be empty or stale: refresh them
# once, before any step installs a package, when something is missing.
refresh_lists() {
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 0
	local t
	for t in sqlite3 tmux git /usr/bin/time dockerd mmdebstrap busybox pg_ctlcluster; do
		if ! command -v "$t" >/dev/null 2>&1; then
			say "refreshing the package lists ($t is missing)"
			apt-get update -qq >/dev/null 2>&1 || loud "apt-get update failed"
			return 0
		fi
	done
}

need_tools() {
	local missing=()
	for t in sqlite3 tmux git; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
	# GNU time measures the benchmarks' peak memory (the shell's time is a
	# keyword, so look for the file).
	[ -x /usr/bin/time ] || missing+=(time)
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		say "installing ${missing[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
			|| loud "could not install ${missing[*]}"
	else
		loud "missing ${missing[*]}; tests that drive them will skip or fail"
	fi
}

step() { # step NAME REQUIRE_VAR command...
	local name=$1 req=$2; shift 2
	if "$@"; then return 0; fi
	if [ "${!req:-}" = 1 ]; then
		loud "$name could not be provisioned and $req=1: failing"
		failed=1
	else
		loud "$name could not be provisioned: its tests will SKIP (set $req=1 to make that a failure)"
	fi
}

refresh_lists
need_tools
if [ -x scripts/docker.sh ]; then
	step "docker daemon" HARNESS_REQUIRE_DOCKER scripts/docker.sh \
		&& step "sandbox images" HARNESS_REQUIRE_DOCKER scripts/images.sh
fi
if [ "$mode" != run ] && [ -x scripts/postgres.sh ]; then
	step "postgres" HARNESS_REQUIRE_POSTGRES scripts/postgres.sh
fi
exit $failed
