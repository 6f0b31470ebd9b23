#!/usr/bin/env bash
# pgbench.sh — compare Tusk with PostgreSQL 15 on this machine, with pgbench.
#
# What it measures (docs/benchmarks.md explains each number):
#   1. `pgbench -i -s SCALE` wall time on each server (default scale 10);
#   2. tps of these pgbench configurations, each run for -T seconds on both
#      servers INTERLEAVED (configuration by configuration: Tusk, PostgreSQL,
#      Tusk, PostgreSQL, ... for --rounds rounds), reported as the median per
#      configuration and server, with the ratio Tusk/PostgreSQL:
#        select-prepared  -S -M prepared  -c CLIENTS -j THREADS  (default -c 8 -j 2)
#        select-simple    -S -M simple    -c CLIENTS -j THREADS
#        tpcb-prepared    (tpcb-like) -M prepared -c CLIENTS -j THREADS
#        select-c100      -S -M prepared  -c 100 -j 2   (peak memory under many connections)
#      and, only when asked for with --configs (bench/pgbench_serializable.sh):
#        tpcb-serializable  tpcb-like -M prepared -c CLIENTS -j THREADS
#                           --max-tries=MAX_TRIES, every transaction SERIALIZABLE
#                           (PGOPTIONS=-c default_transaction_isolation=serializable);
#                           its serialization failures are retried and counted
#   3. peak server memory during every step: the sum over the server's
#      processes (PostgreSQL: postmaster + all children; Tusk: its one process)
#      of PSS from /proc/PID/smaps_rollup (falls back to RSS, and says so),
#      sampled every 200 ms by bench/memsample.py (less often when a sample
#      is expensive: it keeps itself under 5% of a core); the RSS sum is
#      shown too;
#   4. `pgbench -i -s INIT_SCALE` wall time (default 50), after the runs, into
#      a fresh database (bench_init, dropped afterwards); --quick skips it.
#
# Progress and a summary table go to stdout and to the results file, which
# also has one machine-readable `raw ...` line per init and per run.
#
# Both servers run with the same durability: fsync on and synchronous_commit
# on (PostgreSQL's defaults, and Tusk's). PostgreSQL gets an ordinary setup:
# shared_buffers=256MB, max_connections=200, everything else default. Each
# server has a fresh data directory under $TMPDIR (default /tmp), a free port
# on 127.0.0.1, and both are stopped (by PID) and their directories removed on
# exit, on errors and on Ctrl-C.
#
# Usage:
#   bench/pgbench.sh                      # full run: scale 10, 3 rounds x 30 s, init -s 50
#   bench/pgbench.sh --quick              # same without the -s 50 init measurement
#   bench/pgbench.sh -T 3 --rounds 1 --scale 1 --quick --no-build   # smoke test
#
# Options:
#   -T SECONDS            duration of each pgbench run (default 30)
#   -R, --rounds N        rounds of interleaved runs (default 3)
#   -s, --scale N         pgbench scale for the tps runs (default 10)
#   -c, --clients N       clients of the -c 8 configurations (default 8)
#   -j, --threads N       pgbench threads of those configurations (default 2)
#   --mem-clients N       clients of the select-c100 run (default 100; 0 skips it)
#   --init-scale N        scale of the separate init timing (default 50; 0 skips it)
#   --quick               skip the separate init timing (= --init-scale 0)
#   --init-steps STEPS    pgbench -i -I STEPS (default: pgbench's own, dtgvp;
#                         dtGvp generates the data server-side instead of COPY)
#   --mem-interval SECONDS  memory sampling period (default 0.2)
#   --configs LIST        comma-separated subset of the configurations above
#   --max-tries N         pgbench --max-tries of tpcb-serializable (default 10)
#   --only tusk|pg        benchmark one server only
#   --results FILE        where to write the results (default bench/results/<timestamp>.txt)
#   --no-build            do not run `cargo build --release --bin tusk` (also BENCH_NO_BUILD=1)
#   --keep                leave the data directories and logs behind
#   -h, --help            this text
#
# Environment: PG_BIN (default /usr/lib/postgresql/15/bin), TUSK_BIN (default
# $CARGO_TARGET_DIR/release/tusk), CARGO_TARGET_DIR (scripts/env.sh),
# BENCH_NO_BUILD=1, PG_EXTRA_OPTS (more `-c name=value` for postgres), TMPDIR.
#
# PostgreSQL refuses to run as root: when this script runs as root the
# cluster belongs to and runs as the `postgres` OS user (via su).

set -uo pipefail
# Plain connections to both servers: Tusk offers TLS by default (a
# certificate is generated at init), the reference PostgreSQL does not, and
# libpq's sslmode=prefer would otherwise measure TLS on one side only.
export PGSSLMODE=disable

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/scripts/env.sh"

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
TUSK_BIN=${TUSK_BIN:-$CARGO_TARGET_DIR/release/tusk}
PGBENCH="$PG_BIN/pgbench"
PSQL="$PG_BIN/psql"
MEMSAMPLE="$ROOT/bench/memsample.py"

# PostgreSQL's configuration (printed in the results). Durability settings are
# spelled out even though they are the defaults.
PG_SETTINGS=(shared_buffers=256MB max_connections=200 fsync=on synchronous_commit=on full_page_writes=on)
TUSK_MAX_CONNECTIONS=200

duration=30
rounds=3
scale=10
clients=8
threads=2
mem_clients=100
init_scale=50
mem_interval=0.2
init_steps=""
configs_arg=""
max_tries=10
only=""
results=""
build=1
[ "${BENCH_NO_BUILD:-}" = 1 ] && build=0
keep=0

usage() { sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "pgbench.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
        -T) duration=${2:?}; shift 2 ;;
        -R|--rounds) rounds=${2:?}; shift 2 ;;
        -s|--scale) scale=${2:?}; shift 2 ;;
        -c|--clients) clients=${2:?}; shift 2 ;;
        -j|--threads) threads=${2:?}; shift 2 ;;
        --mem-clients) mem_clients=${2:?}; shift 2 ;;
        --init-scale) init_scale=${2:?}; shift 2 ;;
        --quick) init_scale=0; shift ;;
        --init-steps) init_steps=${2:?}; shift 2 ;;
        --mem-interval) mem_interval=${2:?}; shift 2 ;;
        --configs) configs_arg=${2:?}; shift 2 ;;
        --max-tries) max_tries=${2:?}; shift 2 ;;
        --only) only=${2:?}; shift 2 ;;
        --results) results=${2:?}; shift 2 ;;
        --no-build) build=0; shift ;;
        --keep) keep=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done

for n in "$duration" "$rounds" "$scale" "$clients" "$threads" "$mem_clients" "$init_scale"; do
    [[ "$n" =~ ^[0-9]+$ ]] || die "not a number: $n"
done
[[ "$mem_interval" =~ ^[0-9]*\.?[0-9]+$ ]] || die "not a number: $mem_interval"
[ "$rounds" -ge 1 ] && [ "$duration" -ge 1 ] && [ "$scale" -ge 1 ] || die "-T, --rounds and --scale must be at least 1"

case "$only" in
    "") systems=(tusk pg) ;;
    tusk) systems=(tusk) ;;
    pg|postgres|postgresql) systems=(pg) ;;
    *) die "--only takes tusk or pg" ;;
esac

# ---------------------------------------------------------------- configurations
# name -> pgbench arguments
declare -A CONFIG_ARGS=(
    [select-prepared]="-S -M prepared -c $clients -j $threads"
    [select-simple]="-S -M simple -c $clients -j $threads"
    [tpcb-prepared]="-M prepared -c $clients -j $threads"
    [select-c100]="-S -M prepared -c $mem_clients -j 2"
    [tpcb-serializable]="-M prepared -c $clients -j $threads --max-tries=$max_tries"
)
# Session options a configuration's connections start with.
declare -A CONFIG_PGOPTIONS=(
    [tpcb-serializable]="-c default_transaction_isolation=serializable"
)
ALL_CONFIGS=(select-prepared select-simple tpcb-prepared select-c100)
if [ -n "$configs_arg" ]; then
    IFS=, read -r -a configs <<<"$configs_arg"
    for c in "${configs[@]}"; do
        [ -n "${CONFIG_ARGS[$c]:-}" ] || die "unknown configuration $c (one of: ${ALL_CONFIGS[*]})"
    done
else
    configs=()
    for c in "${ALL_CONFIGS[@]}"; do
        [ "$c" = select-c100 ] && [ "$mem_clients" = 0 ] && continue
        configs+=("$c")
    done
fi
# The memory run's name follows its client count.
label() { if [ "$1" = select-c100 ]; then echo "select-c$mem_clients"; else echo "$1"; fi; }

sysname() { case "$1" in tusk) echo Tusk ;; pg) echo PostgreSQL ;; esac; }

# ---------------------------------------------------------------- output
stamp=$(date +%Y%m%d-%H%M%S)
if [ -z "$results" ]; then
    mkdir -p "$ROOT/bench/results"
    results="$ROOT/bench/results/$stamp.txt"
else
    mkdir -p "$(dirname "$results")"
fi
: >"$results" || die "cannot write $results"

# say: print and append to the results file.
say() { printf '%s\n' "$*" | tee -a "$results"; }
# raw: only into the results file (machine-readable lines).
raw() { printf '%s\n' "$*" >>"$results"; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# ---------------------------------------------------------------- prerequisites
for tool in initdb pg_ctl postgres pgbench psql; do
    [ -x "$PG_BIN/$tool" ] || die "$PG_BIN/$tool not found (set PG_BIN)"
done
command -v python3 >/dev/null || die "python3 is needed for the memory sampler"
command -v timeout >/dev/null || die "timeout (coreutils) is needed"

if [ "$(id -u)" = 0 ]; then
    pg_user=postgres
    id "$pg_user" >/dev/null 2>&1 || die "running as root but there is no 'postgres' OS user"
    as_pg() { su "$pg_user" -s /bin/sh -c "$*"; }
else
    pg_user=$(id -un)
    as_pg() { sh -c "$*"; }
fi

build_tusk() {
    if [ "$build" = 1 ] && [[ " ${systems[*]} " == *" tusk "* ]]; then
        echo "pgbench.sh: cargo build --release --bin tusk" >&2
        (cd "$ROOT" && cargo build --release --bin tusk) || die "build failed"
    fi
    if [[ " ${systems[*]} " == *" tusk "* ]]; then
        [ -x "$TUSK_BIN" ] || die "$TUSK_BIN not found (build it, or set TUSK_BIN)"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ---------------------------------------------------------------- servers and cleanup
work=""
tusk_pid=""
tusk_port=""
pg_pid=""
pg_port=""
pg_started=0
sampler_pid=""

stop_sampler() {
    if [ -n "$sampler_pid" ]; then
        kill -TERM "$sampler_pid" 2>/dev/null
        wait "$sampler_pid" 2>/dev/null
        sampler_pid=""
    fi
}

# Wait up to $2 seconds for PID $1 to exit; 0 if it did.
wait_gone() {
    local pid=$1 i
    for ((i = 0; i < $2 * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

stop_tusk() {
    [ -n "$tusk_pid" ] || return 0
    if kill -0 "$tusk_pid" 2>/dev/null; then
        kill -INT "$tusk_pid" 2>/dev/null         # SIGINT = fast shutdown
        if ! wait_gone "$tusk_pid" 30; then
            echo "pgbench.sh: Tusk (pid $tusk_pid) did not stop in 30 s; killing it" >&2
            kill -KILL "$tusk_pid" 2>/dev/null
            wait_gone "$tusk_pid" 5
        fi
    fi
    wait "$tusk_pid" 2>/dev/null
    tusk_pid=""
}

stop_pg() {
    [ "$pg_started" = 1 ] || return 0
    # pg_ctl signals the PID in postmaster.pid; fall back to that PID ourselves.
    as_pg "'$PG_BIN/pg_ctl' -D '$work/pg' -m fast -w -t 30 stop" >/dev/null 2>&1
    if [ -n "$pg_pid" ] && kill -0 "$pg_pid" 2>/dev/null; then
        kill -QUIT "$pg_pid" 2>/dev/null          # immediate shutdown
        wait_gone "$pg_pid" 10 || kill -KILL "$pg_pid" 2>/dev/null
    fi
    pg_started=0
    pg_pid=""
}

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    stop_sampler
    stop_tusk
    stop_pg
    if [ -n "$work" ]; then
        if [ "$keep" = 1 ]; then
            echo "pgbench.sh: --keep: data directories and logs left in $work" >&2
        else
            rm -rf "$work"
        fi
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'echo "pgbench.sh: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

# Run a query; prints the value or nothing.
query() { # system sql
    local port
    port=$(port_of "$1")
    "$PSQL" -h 127.0.0.1 -p "$port" -U postgres -d postgres -XAtq -c "$2" 2>/dev/null
}

port_of() { case "$1" in tusk) echo "$tusk_port" ;; pg) echo "$pg_port" ;; esac; }
pid_of() { case "$1" in tusk) echo "$tusk_pid" ;; pg) echo "$pg_pid" ;; esac; }

# Is SYSTEM's server process still there (and not a zombie waiting to be reaped)?
alive() {
    local pid stat
    pid=$(pid_of "$1")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    read -r stat <"/proc/$pid/stat" 2>/dev/null || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

start_tusk() {
    local attempt i
    mkdir -p "$work/tusk"
    for attempt in 1 2 3 4 5; do
        tusk_port=$(free_port)
        "$TUSK_BIN" serve --data-dir "$work/tusk/data" --port "$tusk_port" --listen 127.0.0.1 \
            --max-connections "$TUSK_MAX_CONNECTIONS" >>"$work/tusk/server.log" 2>&1 &
        tusk_pid=$!
        for ((i = 0; i < 600; i++)); do
            kill -0 "$tusk_pid" 2>/dev/null || break
            if "$PSQL" -h 127.0.0.1 -p "$tusk_port" -U postgres -d postgres -XAtq -c 'select 1' >/dev/null 2>&1; then
                return 0
            fi
            sleep 0.1
        done
        stop_tusk
    done
    echo "pgbench.sh: Tusk did not start; the end of its log:" >&2
    tail -n 30 "$work/tusk/server.log" >&2
    return 1
}

start_pg() {
    local attempt opts s
    mkdir -p "$work/pg-run"
    [ "$(id -u)" = 0 ] && chown "$pg_user" "$work/pg-run"
    if ! as_pg "'$PG_BIN/initdb' -D '$work/pg' -U postgres -A trust --locale=C.UTF-8 --encoding=UTF8" \
            >"$work/pg-run/initdb.log" 2>&1; then
        echo "pgbench.sh: initdb failed:" >&2
        cat "$work/pg-run/initdb.log" >&2
        return 1
    fi
    opts="-c listen_addresses=127.0.0.1 -k '$work/pg-run'"
    for s in "${PG_SETTINGS[@]}"; do opts+=" -c $s"; done
    opts+=" ${PG_EXTRA_OPTS:-}"
    for attempt in 1 2 3 4 5; do
        pg_port=$(free_port)
        pg_started=1
        if as_pg "'$PG_BIN/pg_ctl' -D '$work/pg' -l '$work/pg-run/server.log' -w -t 60 \
                -o \"-p $pg_port $opts\" start" >/dev/null 2>&1; then
            pg_pid=$(head -n 1 "$work/pg/postmaster.pid")
            return 0
        fi
        stop_pg
    done
    echo "pgbench.sh: PostgreSQL did not start; its log:" >&2
    tail -n 30 "$work/pg-run/server.log" >&2
    return 1
}

# ---------------------------------------------------------------- memory sampling
# Sample the memory of SYSTEM's process tree into FILE until stop_sampler.
start_sampler() { # system file
    local pid
    pid=$(pid_of "$1")
    # A sample costs about 1 ms of CPU per process sampled (so more for
    # PostgreSQL); the sampler keeps itself under 5% of one core.
    python3 "$MEMSAMPLE" "$pid" "$2" "$mem_interval" &
    sampler_pid=$!
}

# Read the fields of a sampler file: peak PSS and RSS in MB, and the source.
mem_field() { # file field
    [ -s "$1" ] || return 0
    tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"
}

# The sampler's line with each field prefixed mem_, for the raw results.
mem_raw() { [ -s "$1" ] && sed 's/\([a-z_]*\)=/mem_\1=/g' "$1"; }

declare -A MEM_PSS MEM_RSS MEM_SRC   # key "phase,system" -> max kB over the phase
record_mem() { # phase system file
    local pss rss src key="$1,$2"
    pss=$(mem_field "$3" pss_kb)
    rss=$(mem_field "$3" rss_kb)
    src=$(mem_field "$3" source)
    [ -n "$pss" ] && [ "$pss" -gt 0 ] || return 0   # no sample was taken
    if [ "$pss" -gt "${MEM_PSS[$key]:-0}" ]; then MEM_PSS[$key]=$pss; fi
    if [ "$rss" -gt "${MEM_RSS[$key]:-0}" ]; then MEM_RSS[$key]=$rss; fi
    if [ "$src" = rss ] || [ -z "${MEM_SRC[$key]:-}" ]; then MEM_SRC[$key]=$src; fi
    # also the maximum over every measured phase
    if [ "$pss" -gt "${MEM_PSS[all,$2]:-0}" ]; then MEM_PSS[all,$2]=$pss; fi
    if [ "$rss" -gt "${MEM_RSS[all,$2]:-0}" ]; then MEM_RSS[all,$2]=$rss; fi
    if [ "$src" = rss ] || [ -z "${MEM_SRC[all,$2]:-}" ]; then MEM_SRC[all,$2]=$src; fi
}

# ---------------------------------------------------------------- steps
print_configuration() {
    local s v
    say "== pgbench.sh $stamp"
    say "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
    say "data directories: $work (filesystem: $(df -P "$work" | awk 'NR == 2 { print $1 }'))"
    say "pgbench: $("$PGBENCH" --version)"
    say "runs: -T $duration s, $rounds round(s) interleaved, scale $scale; configurations:"
    for c in "${configs[@]}"; do say "  $(printf '%-16s' "$(label "$c")") pgbench ${CONFIG_ARGS[$c]} -T $duration"; done
    say "init: pgbench -i -s $scale${init_steps:+ -I $init_steps}$( [ "$init_scale" -gt 0 ] && echo "; separately pgbench -i -s $init_scale${init_steps:+ -I $init_steps}" )"
    say "memory: sum over the server's processes of PSS (smaps_rollup), RSS sum alongside, every $mem_interval s (or less often, to keep the sampler under 5% of a core)"
    for s in "${systems[@]}"; do
        case "$s" in
            tusk)
                say "Tusk: $TUSK_BIN serve --data-dir DIR --port $tusk_port --listen 127.0.0.1 --max-connections $TUSK_MAX_CONNECTIONS (RUST_LOG=${RUST_LOG:-default})"
                say "  version: $("$TUSK_BIN" --version 2>/dev/null); git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet HEAD -- crates 2>/dev/null || echo ' (+ local changes)')"
                ;;
            pg)
                say "PostgreSQL: $PG_BIN/postgres -p $pg_port -c listen_addresses=127.0.0.1$(printf -- ' -c %s' "${PG_SETTINGS[@]}")${PG_EXTRA_OPTS:+ $PG_EXTRA_OPTS}"
                say "  initdb --locale=C.UTF-8 --encoding=UTF8 -A trust; other settings at their defaults"
                ;;
        esac
        v=""
        for setting in server_version fsync synchronous_commit wal_sync_method shared_buffers max_connections; do
            v+=" $setting=$(query "$s" "SHOW $setting" || true)"
        done
        say "  reported by the server:$v"
    done
}

# pgbench (through timeout) ended by Ctrl-C: stop the whole benchmark.
interrupted() { if [ "$1" = 130 ]; then echo "pgbench.sh: interrupted" >&2; exit 130; fi; }

declare -A INIT_TIME INIT_STATUS   # key "scale,system"

# Time `pgbench -i -s SCALE` into database DB on SYSTEM (memory sampled during it).
run_init() { # system scale db
    local sys=$1 sc=$2 db=$3 out t0 t1 rc port key="$2,$1" memfile
    port=$(port_of "$sys")
    out="$work/init-$sys-s$sc.log"
    memfile="$work/mem-init-$sys-s$sc"
    if ! alive "$sys"; then
        INIT_STATUS[$key]="server down"
        say "init -s $sc on $(sysname "$sys"): skipped, the server is not running"
        return 1
    fi
    say "init -s $sc on $(sysname "$sys") (database $db) ..."
    start_sampler "$sys" "$memfile"
    t0=$(now)
    timeout --foreground -k 10 "${BENCH_INIT_TIMEOUT:-3600}" \
        "$PGBENCH" -h 127.0.0.1 -p "$port" -U postgres -i -s "$sc" ${init_steps:+-I "$init_steps"} "$db" >"$out" 2>&1
    rc=$?
    t1=$(now)
    stop_sampler
    interrupted "$rc"
    record_mem "init-s$sc" "$sys" "$memfile"
    if [ "$rc" = 0 ]; then
        INIT_TIME[$key]=$(elapsed "$t0" "$t1")
        INIT_STATUS[$key]=ok
        say "  $(sysname "$sys"): ${INIT_TIME[$key]} s ($(grep -m1 '^done in' "$out" || echo 'no timing line'))"
        raw "raw init system=$sys scale=$sc seconds=${INIT_TIME[$key]} status=ok $(mem_raw "$memfile")"
        return 0
    fi
    INIT_STATUS[$key]="failed (exit $rc)"
    [ "$rc" = 124 ] && INIT_STATUS[$key]="timed out"
    say "  $(sysname "$sys"): FAILED (exit $rc after $(elapsed "$t0" "$t1") s); pgbench said:"
    tail -n 15 "$out" | sed 's/^/    | /' | tee -a "$results"
    raw "raw init system=$sys scale=$sc seconds=$(elapsed "$t0" "$t1") status=failed exit=$rc"
    return 1
}

# key "config,system": space-separated tps values, counts of failed and skipped runs
declare -A TPS FAILS SKIPS
# key "config,system": transactions processed, retried after a serialization
# failure, and failed for good (past --max-tries), summed over the rounds
declare -A PROCESSED RETRIED FAILED_TX
declare -A SKIPPED   # system -> why its remaining runs are skipped

# One pgbench run of CONFIG on SYSTEM (memory sampled during it).
run_one() { # config system round
    local cfg=$1 sys=$2 r=$3 key="$1,$2" out port rc tps lat failed memfile mem
    port=$(port_of "$sys")
    out="$work/run-$cfg-$sys-$r.log"
    memfile="$work/mem-$cfg-$sys-$r"
    if [ -n "${SKIPPED[$sys]:-}" ]; then
        SKIPS[$key]=$(( ${SKIPS[$key]:-0} + 1 ))
        say "  $(printf '%-16s round %d  %-10s' "$(label "$cfg")" "$r" "$(sysname "$sys")") skipped: ${SKIPPED[$sys]}"
        raw "raw run config=$(label "$cfg") system=$sys round=$r status=skipped"
        return
    fi
    if ! alive "$sys"; then
        SKIPPED[$sys]="the server is no longer running (see its log)"
        run_one "$@"
        return
    fi
    start_sampler "$sys" "$memfile"
    # shellcheck disable=SC2086  # the configuration's arguments are split on purpose
    timeout --foreground -k 10 $((duration + 120)) \
        env PGOPTIONS="${CONFIG_PGOPTIONS[$cfg]:-}" \
        "$PGBENCH" -h 127.0.0.1 -p "$port" -U postgres ${CONFIG_ARGS[$cfg]} -T "$duration" postgres >"$out" 2>&1
    rc=$?
    stop_sampler
    interrupted "$rc"
    record_mem "$cfg" "$sys" "$memfile"
    tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time).*/\1/p' "$out" | head -n 1)
    lat=$(sed -n 's/^latency average = \([0-9.]*\) ms.*/\1/p' "$out" | head -n 1)
    failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out" | head -n 1)
    retried=$(sed -n 's/^number of transactions retried: \([0-9]*\).*/\1/p' "$out" | head -n 1)
    processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out" | head -n 1)
    if [ -n "$processed" ]; then
        PROCESSED[$key]=$(( ${PROCESSED[$key]:-0} + processed ))
        RETRIED[$key]=$(( ${RETRIED[$key]:-0} + ${retried:-0} ))
        FAILED_TX[$key]=$(( ${FAILED_TX[$key]:-0} + ${failed:-0} ))
    fi
    if [ "$rc" = 0 ] && [ -n "$tps" ]; then
        TPS[$key]="${TPS[$key]:-} $tps"
        mem=$(mem_field "$memfile" pss_kb)
        [ "${mem:-0}" -gt 0 ] && mem=$(mb "$mem") || mem="?"
        say "  $(printf '%-16s round %d  %-10s %10.1f tps  latency %s ms  peak mem %s MB' \
            "$(label "$cfg")" "$r" "$(sysname "$sys")" "$tps" "${lat:-?}" "$mem")"
        raw "raw run config=$(label "$cfg") system=$sys round=$r tps=$tps latency_ms=${lat:-} failed_txns=${failed:-0} retried_txns=${retried:-0} processed_txns=${processed:-0} status=ok $(mem_raw "$memfile")"
    else
        FAILS[$key]=$(( ${FAILS[$key]:-0} + 1 ))
        say "  $(printf '%-16s round %d  %-10s' "$(label "$cfg")" "$r" "$(sysname "$sys")") FAILED (exit $rc$([ "$rc" = 124 ] && echo ', timed out')); pgbench said:"
        grep -v '^progress:' "$out" | tail -n 15 | sed 's/^/    | /' | tee -a "$results"
        raw "raw run config=$(label "$cfg") system=$sys round=$r status=failed exit=$rc"
    fi
}

run_benchmarks() {
    local cfg r sys
    say ""
    say "== runs (interleaved, $rounds round(s) of $duration s)"
    for cfg in "${configs[@]}"; do
        for ((r = 1; r <= rounds; r++)); do
            for sys in "${systems[@]}"; do
                run_one "$cfg" "$sys" "$r"
            done
        done
    done
}

median() {
    printf '%s\n' "$@" | grep . | sort -g | awk '{ v[NR] = $1 }
        END { if (NR == 0) exit; if (NR % 2) printf "%.1f", v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b }'; }
mb() { [ -n "$1" ] && awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

# "median (n/R ok)" cell for the table
tps_cell() { # config system
    local key="$1,$2" vals m n
    vals=${TPS[$key]:-}
    # shellcheck disable=SC2086
    m=$(median $vals)
    n=$(echo $vals | wc -w)
    if [ -z "$m" ]; then
        if [ "${FAILS[$key]:-0}" -gt 0 ]; then echo "failed"; else echo "skipped"; fi
    elif [ "$n" -lt "$rounds" ]; then
        echo "$m ($n/$rounds ok)"
    else
        echo "$m"
    fi
}

has() { [[ " ${systems[*]} " == *" $1 "* ]]; }

print_summary() {
    local cfg sys t p tm pm phase key ph
    say ""
    say "== summary ($stamp; raw numbers in $results)"
    say ""
    say "$(printf '%-16s | %-24s | %-24s | %s' config 'tusk tps (median)' 'pg tps (median)' 'ratio tusk/pg')"
    say "$(printf '%-16s-|-%-24s-|-%-24s-|-%s' '----------------' '------------------------' '------------------------' '-------------')"
    for cfg in "${configs[@]}"; do
        t=""; p=""; tm=""; pm=""
        has tusk && { t=$(tps_cell "$cfg" tusk); tm=$(median ${TPS[$cfg,tusk]:-}); }
        has pg && { p=$(tps_cell "$cfg" pg); pm=$(median ${TPS[$cfg,pg]:-}); }
        say "$(printf '%-16s | %-24s | %-24s | %s' "$(label "$cfg")" "${t:--}" "${p:--}" "$(ratio "$tm" "$pm")")"
    done
    for cfg in "${configs[@]}"; do
        [ -n "${CONFIG_PGOPTIONS[$cfg]:-}" ] || continue
        say ""
        say "$(label "$cfg"): transactions retried after a serialization failure (and failed past --max-tries=$max_tries), over all rounds"
        for sys in "${systems[@]}"; do
            key="$cfg,$sys"
            [ "${PROCESSED[$key]:-0}" -gt 0 ] || continue
            say "  $(printf '%-10s' "$(sysname "$sys")") $(awk -v r="${RETRIED[$key]:-0}" -v f="${FAILED_TX[$key]:-0}" -v n="${PROCESSED[$key]}" \
                'BEGIN { printf "%d retried of %d committed (%.2f%%), %d failed (%.2f%%)", r, n, 100 * r / n, f, 100 * f / (n + f) }')"
        done
    done
    say ""
    say "$(printf '%-16s | %-24s | %-24s | %s' 'init (wall time)' 'tusk' 'pg' 'ratio tusk/pg')"
    say "$(printf '%-16s-|-%-24s-|-%-24s-|-%s' '----------------' '------------------------' '------------------------' '-------------')"
    for sc in "$scale" $([ "$init_scale" -gt 0 ] && [ "$init_scale" != "$scale" ] && echo "$init_scale"); do
        t=""; p=""
        has tusk && t=${INIT_TIME[$sc,tusk]:+${INIT_TIME[$sc,tusk]} s}
        has tusk && [ -z "$t" ] && t=${INIT_STATUS[$sc,tusk]:-not run}
        has pg && p=${INIT_TIME[$sc,pg]:+${INIT_TIME[$sc,pg]} s}
        has pg && [ -z "$p" ] && p=${INIT_STATUS[$sc,pg]:-not run}
        say "$(printf '%-16s | %-24s | %-24s | %s' "pgbench -i -s $sc" "${t:--}" "${p:--}" "$(ratio "${INIT_TIME[$sc,tusk]:-}" "${INIT_TIME[$sc,pg]:-}")")"
    done
    say ""
    say "peak server memory in MB: PSS summed over the server's processes [RSS sum in brackets]"
    say "(PostgreSQL: postmaster + all children; Tusk: its one process; max over the samples of the sum)"
    say "$(printf '%-16s | %-24s | %-24s | %s' phase 'tusk PSS [RSS]' 'pg PSS [RSS]' 'ratio tusk/pg (PSS)')"
    say "$(printf '%-16s-|-%-24s-|-%-24s-|-%s' '----------------' '------------------------' '------------------------' '-------------')"
    local phases=(idle init-s$scale "${configs[@]}")
    [ "$init_scale" -gt 0 ] && [ "$init_scale" != "$scale" ] && phases+=(init-s$init_scale)
    phases+=(all)
    for phase in "${phases[@]}"; do
        t=""; p=""
        for sys in tusk pg; do
            key="$phase,$sys"
            has "$sys" || continue
            if [ -n "${MEM_PSS[$key]:-}" ]; then
                ph="$(mb "${MEM_PSS[$key]}") [$(mb "${MEM_RSS[$key]}")]"
                [ "${MEM_SRC[$key]}" = rss ] && ph="$ph (RSS only)"
            else
                ph="-"
            fi
            if [ "$sys" = tusk ]; then t=$ph; else p=$ph; fi
        done
        case "$phase" in
            all) ph="max of all" ;;
            idle) ph="idle (start)" ;;
            init-s*) ph="pgbench -i -s ${phase#init-s}" ;;
            *) ph=$(label "$phase") ;;
        esac
        say "$(printf '%-16s | %-24s | %-24s | %s' "$ph" "${t:--}" "${p:--}" "$(ratio "${MEM_PSS[$phase,tusk]:-}" "${MEM_PSS[$phase,pg]:-}")")"
    done
}

# Memory of a freshly started, idle server.
sample_idle() { # system
    local f="$work/mem-idle-$1"
    python3 "$MEMSAMPLE" --once "$(pid_of "$1")" >"$f" 2>/dev/null && record_mem idle "$1" "$f"
}

# The separate init timing goes into a fresh database, so that it does not
# include dropping the tables of the runs; it is dropped afterwards.
separate_init() { # system
    local sys=$1 db=bench_init
    alive "$sys" && query "$sys" "DROP DATABASE IF EXISTS $db" >/dev/null
    if ! alive "$sys" || ! "$PSQL" -h 127.0.0.1 -p "$(port_of "$sys")" -U postgres -d postgres -XAtq \
            -c "CREATE DATABASE $db" >"$work/createdb-$sys.log" 2>&1; then
        say "note: CREATE DATABASE $db failed on $(sysname "$sys") ($(head -n 1 "$work/createdb-$sys.log")); using database postgres"
        db=postgres
    fi
    run_init "$sys" "$init_scale" "$db"
    [ "$db" = postgres ] || query "$sys" "DROP DATABASE $db" >/dev/null
}

main() {
    build_tusk
    work=$(mktemp -d "${TMPDIR:-/tmp}/tusk-bench.XXXXXX")
    chmod 755 "$work"
    [ "$(id -u)" = 0 ] && chown "$pg_user" "$work"   # initdb creates $work/pg as that user

    local sys
    # A server that does not start is reported and its steps skipped.
    has tusk && { start_tusk || SKIPPED[tusk]="Tusk did not start"; }
    has pg && { start_pg || SKIPPED[pg]="PostgreSQL did not start"; }
    for sys in "${systems[@]}"; do
        if [ -n "${SKIPPED[$sys]:-}" ]; then say "note: ${SKIPPED[$sys]}; its steps are skipped"; continue; fi
        sample_idle "$sys"
    done

    print_configuration

    say ""
    say "== init at scale $scale"
    for sys in "${systems[@]}"; do
        if ! run_init "$sys" "$scale" postgres && [ -z "${SKIPPED[$sys]:-}" ]; then
            SKIPPED[$sys]="pgbench -i -s $scale failed on this server"
        fi
    done

    run_benchmarks

    if [ "$init_scale" -gt 0 ]; then
        say ""
        say "== separate init timing at scale $init_scale"
        for sys in "${systems[@]}"; do separate_init "$sys"; done
    fi

    for sys in "${systems[@]}"; do
        alive "$sys" || say "note: $(sysname "$sys") is not running at the end (crashed?); see the end of its log above or use --keep"
    done
    alive tusk || { has tusk && tail -n 20 "$work/tusk/server.log" | sed 's/^/    tusk log | /' | tee -a "$results"; }

    print_summary
    echo "results written to $results"
}

main
