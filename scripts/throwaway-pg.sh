# throwaway-pg.sh — sourced by the record-*.sh scripts: starts a throwaway
# PostgreSQL 15 cluster (initdb --locale=C.UTF-8 --encoding=UTF8, fsync off,
# loopback only) and stops and deletes it when the sourcing script exits,
# also when something fails.
#
# Usage (after PG_BIN is set):
#   . "$ROOT/scripts/throwaway-pg.sh"
#   throwaway_pg_start record-foo      # sets $port (and $work, the cluster's directory)
#
# PostgreSQL refuses to run as root, so as root the cluster is created and
# run by the `postgres` OS user.

if [ "$(id -u)" = 0 ]; then
    as_pg() { su postgres -s /bin/sh -c "$*"; }
else
    as_pg() { sh -c "$*"; }
fi

throwaway_pg_start() {
    local name=$1
    work=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
    chmod 755 "$work"
    [ "$(id -u)" = 0 ] && chown postgres "$work"
    throwaway_pg_started=0
    trap throwaway_pg_cleanup EXIT
    as_pg "'$PG_BIN/initdb' -D '$work/data' -U postgres --auth=trust --locale=C.UTF-8 --encoding=UTF8 --no-sync" >"$work/initdb.log" 2>&1 \
        || { cat "$work/initdb.log" >&2; exit 1; }
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_pg "'$PG_BIN/pg_ctl' -D '$work/data' -l '$work/postgres.log' -w -t 60 -o \"-p $port -k '$work' -c listen_addresses=127.0.0.1 -c fsync=off\" start" >/dev/null
    throwaway_pg_started=1
    echo "$name: $(as_pg "'$PG_BIN/postgres' --version") on 127.0.0.1:$port" >&2
}

throwaway_pg_cleanup() {
    local status=$?
    [ "${throwaway_pg_started:-0}" = 1 ] && as_pg "'$PG_BIN/pg_ctl' -D '$work/data' -m immediate -w stop" >/dev/null 2>&1 || true
    rm -rf "$work"
    exit "$status"
}
