#!/usr/bin/env bash
# record-slt.sh — record the expected answers of tests/slt/*.slt from PostgreSQL 15.
#
# The SQL logic tests (crates/tusk/tests/slt.rs) compare Tusk's answers with
# answers written in the .slt files. Those answers come from here, never from
# Tusk and never from a keyboard: this script starts a throwaway PostgreSQL 15
# cluster (initdb --locale=C.UTF-8 --encoding=UTF8; TimeZone and DateStyle
# stay at initdb's defaults), runs the harness in record mode against it, which
# rewrites each file's expected blocks in place, and then stops and deletes the
# cluster, also when something fails.
#
# Usage:
#   scripts/record-slt.sh                     # record every tests/slt/*.slt
#   scripts/record-slt.sh joins.slt cte       # only these files (names, stems or paths)
#   scripts/record-slt.sh --check [files...]  # do not rewrite: verify the files against
#                                             # a fresh PostgreSQL (are the answers deterministic?)
#
# Environment: PG_BIN (default /usr/lib/postgresql/15/bin), CARGO (default cargo),
# CARGO_TARGET_DIR (passed through), KEEP_PG=1 to leave the cluster's directory
# behind for inspection. Extra cargo test arguments can go after `--`, e.g.
# `scripts/record-slt.sh -- --test-threads=1`.
#
# PostgreSQL refuses to run as root, so when this script runs as root the
# cluster is created and run by the `postgres` OS user (via su).

set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
CARGO=${CARGO:-cargo}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Build where every other script builds (RocksDB takes 20 minutes to compile).
. "$ROOT/scripts/env.sh"

mode=record
files=()
harness_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --check) mode=check; shift ;;
        -h|--help) sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; harness_args=("$@"); break ;;
        -*) echo "record-slt.sh: unknown option $1" >&2; exit 2 ;;
        *) files+=("$(basename "$1" .slt)"); shift ;;
    esac
done

for f in "${files[@]}"; do
    if [ ! -f "$ROOT/tests/slt/$f.slt" ]; then
        echo "record-slt.sh: no such file tests/slt/$f.slt" >&2
        exit 2
    fi
done

for tool in initdb pg_ctl pg_isready; do
    if [ ! -x "$PG_BIN/$tool" ]; then
        echo "record-slt.sh: $PG_BIN/$tool not found (set PG_BIN)" >&2
        exit 2
    fi
done

# Run a command as the user that owns the cluster.
if [ "$(id -u)" = 0 ]; then
    pg_user=postgres
    as_pg() { su "$pg_user" -s /bin/sh -c "$*"; }
else
    pg_user=$(id -un)
    as_pg() { sh -c "$*"; }
fi

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

work=$(mktemp -d "${TMPDIR:-/tmp}/record-slt.XXXXXX")
chmod 755 "$work"
pgdata="$work/data"
started=0

cleanup() {
    local status=$?
    if [ "$started" = 1 ]; then
        as_pg "'$PG_BIN/pg_ctl' -D '$pgdata' -m immediate -w stop" >/dev/null 2>&1 || true
    fi
    if [ "${KEEP_PG:-}" = 1 ]; then
        echo "record-slt.sh: KEEP_PG=1: cluster left in $work" >&2
    else
        rm -rf "$work"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ "$(id -u)" = 0 ]; then
    chown "$pg_user" "$work"
fi

echo "record-slt.sh: initdb in $pgdata" >&2
as_pg "'$PG_BIN/initdb' -D '$pgdata' -U postgres --auth=trust --locale=C.UTF-8 --encoding=UTF8 --no-sync" \
    >"$work/initdb.log" 2>&1 || { cat "$work/initdb.log" >&2; exit 1; }

# A port can be taken between the probe and the bind: try a few.
for attempt in 1 2 3 4 5; do
    port=$(free_port)
    started=1
    if as_pg "'$PG_BIN/pg_ctl' -D '$pgdata' -l '$work/postgres.log' -w -t 60 \
            -o \"-p $port -k '$work' -c listen_addresses=127.0.0.1 -c fsync=off \
                 -c synchronous_commit=off -c full_page_writes=off -c max_connections=50\" start" \
            >/dev/null 2>&1; then
        break
    fi
    started=0
    if [ "$attempt" = 5 ]; then
        echo "record-slt.sh: PostgreSQL did not start; its log:" >&2
        cat "$work/postgres.log" >&2 || true
        exit 1
    fi
done

version=$(as_pg "'$PG_BIN/postgres' --version")
echo "record-slt.sh: $version on 127.0.0.1:$port" >&2

conn="host=127.0.0.1 port=$port user=postgres"
file_list=$(IFS=,; echo "${files[*]:-}")
cd "$ROOT"
status=0
if [ "$mode" = record ]; then
    TUSK_SLT_RECORD=1 TUSK_SLT_PG="$conn" TUSK_SLT_FILES="$file_list" \
        "$CARGO" test --release -p tusk --test slt -- "${harness_args[@]}" || status=$?
else
    TUSK_SLT_TARGET="$conn" TUSK_SLT_FILES="$file_list" \
        "$CARGO" test --release -p tusk --test slt -- "${harness_args[@]}" || status=$?
fi
exit "$status"
