#!/usr/bin/env bash
# Reads a `go test` log and lists, loudly, every test that skipped because a
# service was missing (lines tagged HARNESS-SKIP by internal/testenv). Exits
# with the status of the log's test run: non-zero when any package failed.
set -uo pipefail
log=${1:?usage: scripts/skips.sh TESTLOG}
skips=$(grep -h 'HARNESS-SKIP' "$log" | sed 's/^[[:space:]]*//' | sort | uniq -c | sort -rn)
if [ -n "$skips" ]; then
	printf '\n\033[1;33m==== SKIPPED: these tests did not run (service missing) ====\033[0m\n'
	printf '%s\n' "$skips"
	printf '\033[1;33m==== set HARNESS_REQUIRE_DOCKER=1 / HARNESS_REQUIRE_POSTGRES=1 to fail instead ====\033[0m\n\n'
fi
pass=$(grep -c '^ok ' "$log")
fail=$(grep -cE '^(FAIL|--- FAIL)' "$log")
printf 'packages: %s ok, %s failing lines\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
