#!/usr/bin/env bash
# pgbench_serializable.sh — the cost of SERIALIZABLE: pgbench's tpcb-like
# script with every transaction at SERIALIZABLE (PGOPTIONS sets
# default_transaction_isolation), on Tusk and PostgreSQL 15 interleaved
# round by round, next to the same script at the default READ COMMITTED.
# Serialization failures are retried (pgbench --max-tries) and their rate
# is reported for both servers. It is bench/pgbench.sh with these
# configurations; every option of that script applies.
#
# Usage:
#   bench/pgbench_serializable.sh                    # 3 rounds x 30 s, scale 10, -c 8 -j 2
#   bench/pgbench_serializable.sh -T 20 --rounds 5   # any bench/pgbench.sh option
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec "$ROOT/bench/pgbench.sh" --configs tpcb-serializable,tpcb-prepared --quick --mem-clients 0 "$@"
