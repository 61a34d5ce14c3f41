#!/usr/bin/env bash
# Records ../session.jsonl, the log the whole-session golden tests replay:
# a real session of the real binary on real SQLite and a Docker workspace
# (harness-busybox), with scripted models (turn*.json). Four exec runs on
# one session: tool calls of every kind and outcome, steering, a message
# queued for the next turn, compaction with a budget warning, a failed turn
# and a canceled one. Rerun it only to refresh the fixture; the goldens
# then need -update.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/harness" ./cmd/harness)
mkdir "$tmp/proj"
cd "$tmp/proj"
printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello")\n}\n' >main.go
printf '# demo\n\nA tiny CLI.\n' >README.md
for i in $(seq 1 40); do echo "Note $i: the CLI must stay small, print a greeting, and log more only with --verbose."; done >NOTES.md
export HOME=$tmp XDG_DATA_HOME=$tmp/data XDG_CONFIG_HOME=$tmp/config
h() {
	local cmd=$1
	shift
	"$tmp/harness" "$cmd" --db "$tmp/h.db" --image harness-busybox "$@"
}

# Turn 1 steered while its second model request waits; turn 2 queued.
{
	sleep 0.7
	echo "also update the README"
	echo ">>then say how to run the tests"
	sleep 8
} | h exec --json --fake-model "$here/turn1.json" --context-window "${WINDOW:-28400}" --compact-at 50 --budget-tokens 30000 \
	"Add a --verbose flag to the CLI" >"$tmp/1.jsonl" || true
id=$(sed -n 's/.*"sessionId":"\(sess-[^"]*\)".*/\1/p' "$tmp/1.jsonl" | head -1)
echo "session $id" >&2

# Turn 3 passes the compaction threshold (half the window set at creation):
# it compacts first (NOTES.md, read early, leaves the context), and passes
# half the token budget.
h exec --resume "$id" --fake-model "$here/turn2.json" "What does the CLI do now? Answer in one line, and mention the flag." </dev/null >/dev/null 2>&1 || true
# Turn 4 fails with the provider's code.
h exec --resume "$id" --fake-model "$here/turn3.json" "Try again" </dev/null >/dev/null 2>&1 || true
# Turn 5 is canceled (SIGINT, as Ctrl+C in exec) while the model streams.
"$tmp/harness" exec --db "$tmp/h.db" --image harness-busybox --resume "$id" --fake-model "$here/turn4.json" "Read everything" </dev/null >/dev/null 2>&1 &
pid=$!
sleep 1.5
kill -INT "$pid"
wait "$pid" || true
h events "$id" >"$here/../session.jsonl"
echo "wrote $(wc -l <"$here/../session.jsonl") events" >&2
