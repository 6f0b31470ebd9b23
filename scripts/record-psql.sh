#!/usr/bin/env bash
# record-psql.sh — record the expected output of tests/psql/*.sql from PostgreSQL 15.
#
# The psql script tests (crates/tusk/tests/psql.rs) run each script through
# psql against Tusk and compare the whole output with tests/psql/<name>.out.
# Those files come from here: this script starts a throwaway PostgreSQL 15
# cluster (initdb --locale=C.UTF-8 --encoding=UTF8), runs the same harness
# in record mode against it, then stops and deletes the cluster.
#
# Usage:
#   scripts/record-psql.sh              # record every tests/psql/*.sql
#   scripts/record-psql.sh copy         # only these scripts (names or stems)
set -euo pipefail
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/scripts/env.sh"
files=()
for f in "$@"; do files+=("$(basename "$f" .sql)"); done

if [ "$(id -u)" = 0 ]; then
    as_pg() { su postgres -s /bin/sh -c "$*"; }
else
    as_pg() { sh -c "$*"; }
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/record-psql.XXXXXX")
chmod 755 "$work"
[ "$(id -u)" = 0 ] && chown postgres "$work"
started=0
cleanup() {
    local status=$?
    [ "$started" = 1 ] && as_pg "'$PG_BIN/pg_ctl' -D '$work/data' -m immediate -w stop" >/dev/null 2>&1 || true
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
as_pg "'$PG_BIN/initdb' -D '$work/data' -U postgres --auth=trust --locale=C.UTF-8 --encoding=UTF8 --no-sync" >"$work/initdb.log" 2>&1 \
    || { cat "$work/initdb.log" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "'$PG_BIN/pg_ctl' -D '$work/data' -l '$work/postgres.log' -w -t 60 -o \"-p $port -k '$work' -c listen_addresses=127.0.0.1 -c fsync=off\" start" >/dev/null
started=1
echo "record-psql.sh: $(as_pg "'$PG_BIN/postgres' --version") on 127.0.0.1:$port" >&2
cd "$ROOT"
TUSK_PSQL_RECORD=1 TUSK_PSQL_PG="host=127.0.0.1 port=$port" TUSK_PSQL_FILES="$(IFS=,; echo "${files[*]:-}")" \
    cargo test --release -p tusk --test psql
