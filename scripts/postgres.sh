#!/usr/bin/env bash
# scripts/postgres.sh: make sure the Postgres test database answers. Idempotent.
#
#   - the DSN already answers (a query succeeds as its role, in its
#     database): do nothing, unless the server, on this machine, allows
#     fewer than 200 connections: then, as root, raise max_connections to
#     200 and restart its cluster (the same after creating one);
#   - otherwise, as root, on this machine (the DSN's host is loopback,
#     localhost or a unix-socket directory): install Debian's postgresql when
#     pg_ctlcluster is missing; pick the newest installed major version (or
#     the one whose cluster already serves the DSN's port); create its "main"
#     cluster (or, when "main" serves another port, harness_<port>) on that
#     port with pg_createcluster when absent; start it with
#     pg_ctlcluster; wait (bounded by $HARNESS_POSTGRES_WAIT seconds) until it
#     accepts connections; create or update the DSN's role (LOGIN, its
#     password) and database (owned by the role, UTF8, C collation) through
#     `su postgres -c psql`; then check that the DSN answers;
#   - otherwise (not root, a remote host, no apt-get): fail with a message
#     saying what to do.
#
# Environment:
#   HARNESS_TEST_POSTGRES  the DSN the tests use
#                          (default postgres://harness:harness@127.0.0.1:5432/harness_test?sslmode=disable)
#   HARNESS_POSTGRES_WAIT  seconds to wait for the server (default 30)
set -euo pipefail

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

DSN=${HARNESS_TEST_POSTGRES:-postgres://harness:harness@127.0.0.1:5432/harness_test?sslmode=disable}
WAIT_SECONDS=${HARNESS_POSTGRES_WAIT:-30}

# Split the URL: postgres[ql]://user[:password]@[host][:port]/dbname[?params].
re='^postgres(ql)?://([^:@/?]+)(:([^@/?]*))?@([^:/?]*|\[[^]]*\])(:([0-9]+))?/([^?]+)(\?(.*))?$'
[[ $DSN =~ $re ]] || die "cannot parse HARNESS_TEST_POSTGRES (want postgres://user:password@host:port/dbname?...)"
PGUSER_=${BASH_REMATCH[2]}
PGPASS_=${BASH_REMATCH[4]}
PGHOST_=${BASH_REMATCH[5]}
PGPORT_=${BASH_REMATCH[7]:-5432}
PGDB_=${BASH_REMATCH[8]}
params=${BASH_REMATCH[10]:-}
# A host=/dir parameter names a unix-socket directory.
if [[ "&$params&" =~ \&host=([^\&]*)\& ]]; then
	PGHOST_=${BASH_REMATCH[1]}
fi
[[ $PGHOST_ == \[*\] ]] && PGHOST_=${PGHOST_:1:${#PGHOST_}-2}
ident='^[A-Za-z_][A-Za-z0-9_]*$'
[[ $PGUSER_ =~ $ident && $PGDB_ =~ $ident ]] ||
	die "role '$PGUSER_' and database '$PGDB_' must be plain identifiers (letters, digits, _)"
[[ $PGPASS_ != *"'"* ]] || die "the password must not contain a single quote"

answers() {
	command -v psql >/dev/null 2>&1 || return 1
	PGCONNECT_TIMEOUT=3 psql "$DSN" -Atqc 'SELECT 1' >/dev/null 2>&1
}

describe() {
	PGCONNECT_TIMEOUT=3 psql "$DSN" -Atqc "SELECT 'server ' || current_setting('server_version') || ', database ' || current_database() || ' as ' || current_user" 2>/dev/null
}

# The benchmarks compare the store's appends with pgbench sending the same
# statements (store/postgres BenchmarkAppendVsPgbench): Debian's
# postgresql-client provides it. Not being able to install it fails only
# that benchmark, which says so.
if ! command -v pgbench >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		log "pgbench not found; installing Debian's postgresql-client"
		apt-get install -y --no-install-recommends postgresql-client >/dev/null 2>&1 ||
			{ apt-get update >/dev/null && apt-get install -y --no-install-recommends postgresql-client >/dev/null; } ||
			log "warning: could not install postgresql-client (pgbench)"
	else
		log "warning: pgbench is missing (install postgresql-client); the Postgres append benchmark needs it"
	fi
fi

# BenchmarkAppendVsPgbench holds pgbench's 64 connections and the store's 64
# at once: a server of this machine allowing fewer than MIN_CONNECTIONS is
# raised to that (ALTER SYSTEM, then a restart of its cluster).
MIN_CONNECTIONS=200
ensure_connections() {
	local have v c
	have=$(PGCONNECT_TIMEOUT=3 psql "$DSN" -Atqc 'SHOW max_connections' 2>/dev/null) || return 0
	[ "${have:-0}" -lt "$MIN_CONNECTIONS" ] || return 0
	local short="max_connections is $have, and BenchmarkAppendVsPgbench needs $MIN_CONNECTIONS"
	case $PGHOST_ in
	127.0.0.1 | localhost | ::1 | "" | /*) ;;
	*)
		log "warning: $short; raise it on $PGHOST_"
		return 0
		;;
	esac
	if [ "$(id -u)" -ne 0 ] || ! command -v pg_lsclusters >/dev/null 2>&1; then
		log "warning: $short; run 'sudo scripts/postgres.sh' or raise it"
		return 0
	fi
	read -r v c < <(pg_lsclusters -h | awk -v p="$PGPORT_" '$3 == p { print $1, $2; exit }') || true
	if [ -z "${v:-}" ]; then
		log "warning: $short; no cluster of this machine serves port $PGPORT_"
		return 0
	fi
	log "raising max_connections of cluster $v/$c from $have to $MIN_CONNECTIONS (a restart)"
	su postgres -c "psql -p $PGPORT_ -X -q -v ON_ERROR_STOP=1 -d postgres -c 'ALTER SYSTEM SET max_connections = $MIN_CONNECTIONS'" ||
		die "ALTER SYSTEM SET max_connections failed"
	pg_ctlcluster "$v" "$c" restart ||
		die "pg_ctlcluster $v $c restart failed; see /var/log/postgresql/postgresql-$v-$c.log"
	local deadline=$((SECONDS + WAIT_SECONDS))
	until answers; do
		[ "$SECONDS" -lt "$deadline" ] || die "the server does not answer within ${WAIT_SECONDS}s of its restart"
		sleep 0.1
	done
}

if answers; then
	ensure_connections
	log "$(describe) answers; nothing else to do"
	exit 0
fi

case $PGHOST_ in
127.0.0.1 | localhost | ::1 | "" | /*) ;;
*) die "$PGHOST_ is not this machine; start Postgres there and create role $PGUSER_ and database $PGDB_, or point HARNESS_TEST_POSTGRES at a reachable server" ;;
esac

if [ "$(id -u)" -ne 0 ]; then
	die "the DSN does not answer and this script is not running as root; run 'sudo scripts/postgres.sh', or set HARNESS_TEST_POSTGRES to a server that answers"
fi

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
	command -v apt-get >/dev/null 2>&1 || die "pg_ctlcluster is missing and apt-get is not available; install PostgreSQL"
	log "pg_ctlcluster not found; installing Debian's postgresql"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends postgresql >/dev/null 2>&1; then
		apt-get update >/dev/null || die "apt-get update failed"
		apt-get install -y --no-install-recommends postgresql >/dev/null || die "apt-get install postgresql failed"
	fi
	log "installed postgresql ($(dpkg-query -W -f '${Version}' postgresql 2>/dev/null || echo unknown))"
fi
command -v psql >/dev/null 2>&1 || die "psql is missing; install postgresql-client"

# The cluster: one already configured for the DSN's port, else "main" of the
# newest installed major version (Debian 12 ships 15; nothing is hard-coded).
read -r VER CLUSTER < <(pg_lsclusters -h 2>/dev/null | awk -v p="$PGPORT_" '$3 == p { print $1, $2; exit }') || true
if [ -z "${VER:-}" ]; then
	VER=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort -n | tail -n 1)
	if [ -z "$VER" ] || [ ! -x "/usr/lib/postgresql/$VER/bin/postgres" ]; then
		die "no PostgreSQL server binaries under /usr/lib/postgresql"
	fi
	# "main" unless it exists already (on another port): then a cluster of
	# its own for this port.
	CLUSTER=main
	if pg_lsclusters -h | awk -v v="$VER" '$1 == v && $2 == "main" { f = 1 } END { exit !f }'; then
		CLUSTER=harness_$PGPORT_
	fi
	log "creating cluster $VER/$CLUSTER on port $PGPORT_"
	pg_createcluster --port "$PGPORT_" --encoding UTF8 --locale C.UTF-8 "$VER" "$CLUSTER" >/dev/null ||
		die "pg_createcluster $VER $CLUSTER failed"
fi

status=$(pg_lsclusters -h | awk -v v="$VER" -v c="$CLUSTER" '$1 == v && $2 == c { print $4 }')
if [ "$status" != online ]; then
	log "starting cluster $VER/$CLUSTER (port $PGPORT_)"
	pg_ctlcluster "$VER" "$CLUSTER" start ||
		die "pg_ctlcluster $VER $CLUSTER start failed; see /var/log/postgresql/postgresql-$VER-$CLUSTER.log"
else
	log "cluster $VER/$CLUSTER is already online"
fi

# Wait until the server accepts connections on its socket.
started=$SECONDS
deadline=$((SECONDS + WAIT_SECONDS))
until su postgres -c "pg_isready -q -p $PGPORT_" >/dev/null 2>&1; do
	[ "$SECONDS" -lt "$deadline" ] || die "cluster $VER/$CLUSTER did not accept connections within ${WAIT_SECONDS}s; see /var/log/postgresql/postgresql-$VER-$CLUSTER.log"
	sleep 0.1
done
log "server accepts connections after $((SECONDS - started))s"

# The role and the database, created or brought in line with the DSN.
su postgres -c "psql -p $PGPORT_ -X -q -v ON_ERROR_STOP=1 -d postgres" <<SQL || die "creating role $PGUSER_ and database $PGDB_ failed"
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', '$PGUSER_', '$PGPASS_')
	WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PGUSER_') \gexec
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', '$PGUSER_', '$PGPASS_') \gexec
SELECT format('CREATE DATABASE %I OWNER %I ENCODING ''UTF8'' LC_COLLATE ''C'' LC_CTYPE ''C'' TEMPLATE template0', '$PGDB_', '$PGUSER_')
	WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$PGDB_') \gexec
SELECT format('ALTER DATABASE %I OWNER TO %I', '$PGDB_', '$PGUSER_') \gexec
SQL
log "role $PGUSER_ and database $PGDB_ are ready"

deadline=$((SECONDS + WAIT_SECONDS))
until answers; do
	[ "$SECONDS" -lt "$deadline" ] || die "the server runs but the DSN does not answer within ${WAIT_SECONDS}s (authentication? pg_hba.conf?)"
	sleep 0.1
done
ensure_connections
log "$(describe) answers"
